"""torch.cuda.nvtx: NVTX ranges and markers, the annotations Nsight Systems shows on its
timeline. fake_torch has no Nsight to send them to: each call keeps torch's signature and
return value (the nesting depth, per thread, as nvtxRangePush/Pop return it) and has no other
effect; use torch.profiler.record_function for ranges that show in fake_torch's profiler."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]

_local = threading.local()
_next_range_id = 0


def _depth() -> int:
    return getattr(_local, "depth", 0)


def range_push(msg: str) -> int:
    """Open a nested range named `msg`; returns its zero-based depth."""
    depth = _depth()
    _local.depth = depth + 1
    return depth


def range_pop() -> int:
    """Close the innermost range; returns its depth, or -1 when none is open (as NVTX)."""
    depth = _depth()
    if depth == 0:
        return -1
    _local.depth = depth - 1
    return depth - 1


def range_start(msg: str) -> int:
    """Open a range that may end on another thread; returns its id for range_end."""
    global _next_range_id
    _next_range_id += 1
    return _next_range_id


def range_end(range_id: int) -> None:
    """Close the range range_start returned `range_id` for."""


def mark(msg: str) -> None:
    """An instantaneous marker named `msg`."""


@contextmanager
def range(msg: str, *args: Any, **kwargs: Any) -> Iterator[None]:
    """A range around a block; `msg` is formatted with `args` and `kwargs` (str.format)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
