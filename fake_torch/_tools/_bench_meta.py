"""`python -m fake_torch bench`, the meta device: build an 8B Llama without memory.

The model has Llama 3 8B's shapes (32 layers, dim 4096, ffn 14336, 32 heads / 8 kv heads,
vocab 128256, bfloat16: 8.03e9 parameters, 16 GB of weights) and is built under
`with torch.device("meta")`, as loaders do before `load_state_dict(assign=True)` or
`to_empty`. The figures: the build's wall time, its launches (none), the memory it made
resident (none of the 16 GB: every meta tensor lies over untouched zero pages), and, when real
torch is importable, the same build on torch's meta device.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TextIO

DIM, FFN, HEADS, KV_HEADS, VOCAB, LAYERS = 4096, 14336, 32, 8, 128256, 32


def build_llama_8b(torch: ModuleType) -> Any:
    """An 8B Llama's modules on meta in `torch` (fake_torch or real torch), bfloat16."""
    nn = torch.nn
    head_dim = DIM // HEADS

    class Attention(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.wq = nn.Linear(DIM, HEADS * head_dim, bias=False)
            self.wk = nn.Linear(DIM, KV_HEADS * head_dim, bias=False)
            self.wv = nn.Linear(DIM, KV_HEADS * head_dim, bias=False)
            self.wo = nn.Linear(HEADS * head_dim, DIM, bias=False)

    class FeedForward(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.w1 = nn.Linear(DIM, FFN, bias=False)
            self.w2 = nn.Linear(FFN, DIM, bias=False)
            self.w3 = nn.Linear(DIM, FFN, bias=False)

    class Block(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.attention, self.feed_forward = Attention(), FeedForward()
            self.attention_norm = nn.RMSNorm(DIM, eps=1e-5)
            self.ffn_norm = nn.RMSNorm(DIM, eps=1e-5)

    class Transformer(nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.tok_embeddings = nn.Embedding(VOCAB, DIM)
            self.layers = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.norm = nn.RMSNorm(DIM, eps=1e-5)
            self.output = nn.Linear(DIM, VOCAB, bias=False)

    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("meta"):
            return Transformer()
    finally:
        torch.set_default_dtype(before)


@dataclass
class MetaBench:
    """One build of the 8B model on meta."""

    num_params: int
    nominal_bytes: int  # what the weights would hold
    resident_bytes: int  # the memory the build made resident
    launches: int
    seconds: float
    torch_seconds: float | None  # real torch's meta build; None without torch


def _resident_bytes() -> int:
    """This process's resident memory (Linux: /proc/self/statm); 0 where that is unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _best_build(torch: ModuleType, repeat: int) -> tuple[float, Any]:
    """The fastest of `repeat` builds (the first pays one-time costs), and the last model."""
    best, model = float("inf"), None
    for _ in range(repeat):
        model = None  # the previous build's tensors go first
        start = time.perf_counter()
        model = build_llama_8b(torch)
        best = min(best, time.perf_counter() - start)
    return best, model


def measure_meta(*, repeat: int = 3, with_torch: bool = True) -> MetaBench:
    import fake_torch

    fake_torch.bfloat16.np  # noqa: B018 (ml_dtypes loaded first: its import is not the build)
    counted = fake_torch.LaunchCounter.n
    before = _resident_bytes()
    seconds, model = _best_build(fake_torch, repeat)
    # what the builds made resident: the growth, never below zero (the process's resident
    # size can fall meanwhile, as the earlier builds' pages go back)
    resident = max(0, _resident_bytes() - before)
    launches = (fake_torch.LaunchCounter.n - counted) // repeat
    params = list(model.parameters())
    torch_seconds = None
    if with_torch and importlib.util.find_spec("torch") is not None:
        import torch

        if torch is not fake_torch:  # (under `python -m fake_torch run`, torch is us)
            torch_seconds = _best_build(torch, repeat)[0]
    return MetaBench(sum(p.numel() for p in params), sum(p.nbytes for p in params), resident,
                     launches, seconds, torch_seconds)


def report_meta(result: MetaBench, out: TextIO) -> None:
    theirs = ("torch: not installed" if result.torch_seconds is None
              else f"torch's meta: {result.torch_seconds:.2f} s")
    print(f"meta build (Llama 3 8B shapes, bf16: {result.num_params / 1e9:.2f}e9 parameters, "
          f"{result.nominal_bytes / 2**30:.1f} GiB nominal): {result.seconds:.2f} s, "
          f"{result.launches} launches, {result.resident_bytes / 2**20:.0f} MiB resident "
          f"({theirs})", file=out)


def run_meta_bench(*, out: TextIO | None = None) -> MetaBench:
    result = measure_meta()
    report_meta(result, out or sys.stdout)
    return result


__all__ = ["MetaBench", "build_llama_8b", "measure_meta", "report_meta", "run_meta_bench"]
