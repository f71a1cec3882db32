"""LaunchCounter: the one global tally of would-be GPU launches.

Every kernel launch, device memcpy or memset that real torch would issue on a GPU bumps this
counter exactly once. A CUDA graph replay bumps it once for all the kernels inside. The seed's
mini-build (`mini_vllm.cudagraph`) bumps the same class, so both worlds add up in one tally.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import ClassVar


class LaunchCounter:
    """Class-level launch tally: `n`, `reset()`, `bump(k=1)`; safe to bump from several threads."""

    n: ClassVar[int] = 0
    by_op: ClassVar[Counter[str]] = Counter()  # launches per aten-style op name ("mm", "add_")
    by_kind: ClassVar[Counter[str]] = Counter()  # "kernel", "memcpy", "memset", "graph"
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def reset(cls) -> None:
        """Set the tally back to zero (call it at the start of every measurement)."""
        with cls._lock:
            cls.n = 0
            cls.by_op.clear()
            cls.by_kind.clear()

    @classmethod
    def bump(cls, k: int = 1, *, op: str = "", kind: str = "kernel") -> None:
        """Count `k` launches (`k` is a non-negative int), under an op name and kind."""
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"LaunchCounter.bump(k): k must be an int, got {type(k).__name__}")
        if k < 0:
            raise ValueError(f"LaunchCounter.bump(k): k must be >= 0, got {k}")
        cls._add(k, op, kind)

    @classmethod
    def _add(cls, k: int, op: str, kind: str) -> None:
        """`bump` without its argument checks: for the dispatcher, which counts every launch
        and always passes a valid count."""
        with cls._lock:  # `cls.n += k` is a read-modify-write: not atomic across threads
            cls.n += k
            cls.by_kind[kind] += k
            if op:
                cls.by_op[op] += k
