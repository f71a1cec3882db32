"""torch.profiler._utils: the one helper runner code calls (gpt-fast, before capturing CUDA
graphs while profiling)."""

from __future__ import annotations


def _init_for_cuda_graphs() -> None:
    """Start and stop an empty profile, as torch does so that CUPTI is initialised before any
    graph is captured (profiling during capture would otherwise disturb it)."""
    from fake_torch.profiler import profile

    with profile():
        pass
