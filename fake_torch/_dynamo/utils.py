"""torch._dynamo.utils: `counters`, the tallies torch.compile keeps (a defaultdict of Counters).

Keys as torch 2.13 fills them: "frames" (total, ok: one per compiled frame, a resume after a
graph break counting as one), "stats" (calls_captured: call nodes in the compiled graphs,
unique_graphs: graphs handed to a backend), "graph_break" and "unimplemented" (reason text ->
count), "resumes". `counters.clear()` empties them; `torch._dynamo.reset()` does not.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# as in torch, importing torch._dynamo loads torch._functorch.config (gpt-fast sets it then)
import fake_torch._functorch.config  # noqa: F401
from fake_torch.fx._utils import lazy_format_graph_code  # (torch's import; in __all__)

counters: defaultdict[str, Counter[str]] = defaultdict(Counter)

_compile_times: defaultdict[str, list[float]] = defaultdict(list)


@contextmanager
def timed(phase: str) -> Iterator[None]:
    """Add the seconds the block took to `phase` in compile_times()."""
    start = time.perf_counter()
    try:
        yield
    finally:
        _compile_times[phase].append(time.perf_counter() - start)


def compile_times(repr: str = "str", aggregate: bool = False) -> str:
    """Seconds spent per compile phase, as torch prints them."""
    del repr
    lines = ["TorchDynamo compilation metrics:", "Function, Runtimes (s)"]
    for phase, times in _compile_times.items():
        values = [sum(times)] if aggregate else times
        lines.append(f"{phase}, " + ", ".join(f"{t:.4f}" for t in values))
    return "\n".join(lines)


def reset_compile_times() -> None:
    _compile_times.clear()




@contextmanager
def dynamo_timed(key: str, phase_name: str | None = None, log_pt2_compile_event: bool = False,
                 metadata: dict[str, object] | None = None,
                 dynamo_compile_column_us: str | None = None, compile_id: Any = None,
                 is_backward: bool | None = None, log_waitcounter: bool = False,
                 waitcounter_name_override: str | None = None) -> Iterator[None]:
    """Time the block under `key` in compile_times() (torch also logs compile events: fake_torch
    keeps only the times)."""
    with timed(key):
        yield


__all__ = ["compile_times", "counters", "dynamo_timed", "lazy_format_graph_code"]
