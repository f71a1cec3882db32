"""torch._inductor.runtime.triton_heuristics: `CachingAutotuner`, the launcher of a compiled
Triton kernel. fake_torch compiles no Triton: its fused kernels are counted launches, never
CachingAutotuners, so `isinstance(obj, CachingAutotuner)` is False for everything it makes."""

from __future__ import annotations

from typing import Any


class CachingAutotuner:
    """A compiled Triton kernel with its launch configurations (not emulated)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "torch._inductor.runtime.triton_heuristics.CachingAutotuner is not emulated by "
            "fake_torch: it compiles no Triton kernels")


__all__ = ["CachingAutotuner"]
