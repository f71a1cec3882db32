"""LaunchCounter: the one global tally of would-be GPU launches.

Every kernel launch, device memcpy or memset that real torch would issue on a GPU bumps this
counter exactly once. A CUDA graph replay bumps it once for all the kernels inside. The seed's
mini-build (`mini_vllm.cudagraph`) bumps the same class, so both worlds add up in one tally.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ClassVar


class ThreadLaunches:
    """One thread's own launches (`LaunchCounter.this_thread()`): `n`, `by_op`, `by_kind`,
    `reset()`. Only the thread it belongs to adds to it."""

    def __init__(self) -> None:
        self.n = 0
        self.by_op: Counter[str] = Counter()
        self.by_kind: Counter[str] = Counter()

    def reset(self) -> None:
        """Set this thread's tally back to zero (the process-wide one is untouched)."""
        self.n = 0
        self.by_op.clear()
        self.by_kind.clear()

    def __repr__(self) -> str:
        return f"ThreadLaunches(n={self.n}, thread={threading.current_thread().name!r})"


class _Local(threading.local):
    tally: ThreadLaunches | None = None


_local = _Local()


class _Tally(type):
    """The class-level numbers of LaunchCounter, read as attributes (`LaunchCounter.n`).

    The door counts each launch by appending (op, kind) to a queue, which needs no lock (a
    list append is atomic) and no dict work; reading `n`, `by_op` or `by_kind` first folds the
    queued launches in, under the lock. What a reader sees is therefore exactly what a counter
    bumped at every launch would hold."""

    @property
    def n(cls) -> int:
        cls._fold()
        return cls._n

    @n.setter
    def n(cls, value: int) -> None:
        cls._fold()
        cls._n = value

    @property
    def by_op(cls) -> Counter[str]:
        """Launches per aten-style op name ("mm", "add_")."""
        cls._fold()
        return cls._by_op

    @property
    def by_kind(cls) -> Counter[str]:
        """Launches per kind: "kernel", "memcpy", "memset", "graph"."""
        cls._fold()
        return cls._by_kind

    # (declared for the properties: LaunchCounter defines them)
    _n: int
    _by_op: Counter[str]
    _by_kind: Counter[str]
    _fold: Callable[[], None]


class LaunchCounter(metaclass=_Tally):
    """Class-level launch tally: `n`, `reset()`, `bump(k=1)`; safe to bump from several threads.

    The class-level tally is process-wide: it counts every thread's launches, and `reset()`
    zeroes it for all of them. A thread that wants only its own asks `this_thread()`, whose
    tally (with its own `reset()`) counts that thread's launches from the first time any
    thread asked: until then nothing pays for per-thread counting."""

    _n: ClassVar[int] = 0  # `n`, `by_op`, `by_kind`: the metaclass's properties read these
    _by_op: ClassVar[Counter[str]] = Counter()
    _by_kind: ClassVar[Counter[str]] = Counter()
    _queued: ClassVar[list[tuple[str, str]]] = []  # (op, kind) of launches not yet folded in
    _lock: ClassVar[threading.RLock] = threading.RLock()
    _per_thread: ClassVar[bool] = False  # some thread asked for its own tally

    @classmethod
    def _fold(cls) -> None:
        """Move the queued launches into the numbers (other threads may append meanwhile:
        only the ones seen here leave the queue, from its front)."""
        queued = cls._queued
        if not queued:
            return
        with cls._lock:
            count = len(queued)
            batch = queued[:count]
            del queued[:count]
            cls._n += count
            by_op, by_kind = cls._by_op, cls._by_kind
            for op, kind in batch:
                by_kind[kind] += 1
                if op:
                    by_op[op] += 1

    @classmethod
    def this_thread(cls) -> ThreadLaunches:
        """The calling thread's own tally (launches made on this thread only)."""
        cls._per_thread = True
        tally = _local.tally
        if tally is None:
            tally = _local.tally = ThreadLaunches()
        return tally

    @classmethod
    def reset(cls) -> None:
        """Set the tally back to zero (call it at the start of every measurement)."""
        with cls._lock:
            del cls._queued[:]
            cls._n = 0
            cls._by_op.clear()
            cls._by_kind.clear()

    @classmethod
    def bump(cls, k: int = 1, *, op: str = "", kind: str = "kernel") -> None:
        """Count `k` launches (`k` is a non-negative int), under an op name and kind."""
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"LaunchCounter.bump(k): k must be an int, got {type(k).__name__}")
        if k < 0:
            raise ValueError(f"LaunchCounter.bump(k): k must be >= 0, got {k}")
        cls._add(k, op, kind)

    @classmethod
    @contextmanager
    def expect(cls, n: int | None = None, /, **ops: int) -> Iterator[None]:
        """Assert the launches the block makes: `n` in all (when given) and, for each op name
        given, exactly that many of it. The counter is not reset: the block's launches are
        the difference. On a mismatch AssertionError lists what differs, op by op.

            with LaunchCounter.expect(1, cudaGraphLaunch=1):
                g.replay()
        """
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            raise TypeError(f"LaunchCounter.expect(n): n must be an int >= 0, got {n!r}")
        for op, k in ops.items():
            if isinstance(k, bool) or not isinstance(k, int) or k < 0:
                raise TypeError(f"LaunchCounter.expect({op}=...): a count must be an int >= 0, "
                                f"got {k!r}")
        with cls._lock:
            n_before, ops_before = cls.n, Counter(cls.by_op)
        yield
        with cls._lock:
            made = cls.n - n_before
            by_op = Counter(cls.by_op)
        by_op.subtract(ops_before)
        wrong = [f"  {op}: expected {k}, got {by_op[op]}" for op, k in ops.items()
                 if by_op[op] != k]
        if (n is not None and made != n) or wrong:
            seen = ", ".join(f"{op} {k}" for op, k in sorted(by_op.items()) if k) or "none"
            head = (f"expected {n} launches, got {made}" if n is not None
                    else f"{made} launches")
            raise AssertionError("\n".join([f"LaunchCounter.expect: {head}", *wrong,
                                            f"  launched: {seen}"]))

    @classmethod
    def _add(cls, k: int, op: str, kind: str) -> None:
        """`bump` without its argument checks: for the dispatcher, which counts every launch
        and always passes a valid count."""
        with cls._lock:  # `cls._n += k` is a read-modify-write: not atomic across threads
            cls._n += k
            cls._by_kind[kind] += k
            if op:
                cls._by_op[op] += k
        if cls._per_thread:
            cls._add_to_thread(k, op, kind)

    @classmethod
    def _add_to_thread(cls, k: int, op: str, kind: str) -> None:
        tally = _local.tally or cls.this_thread()
        tally.n += k
        tally.by_kind[kind] += k
        if op:
            tally.by_op[op] += k


_queued = LaunchCounter._queued  # (never replaced: folds cut its front)
_queue = _queued.append
_FOLD_AT = 4096  # queued launches folded in even when nobody reads: the queue stays small


def count_launch(op: str, kind: str) -> None:
    """The door's count of one launch (LaunchCounter._add(1, op, kind), without its lock)."""
    _queue((op, kind))
    if len(_queued) >= _FOLD_AT:
        LaunchCounter._fold()
    if LaunchCounter._per_thread:
        LaunchCounter._add_to_thread(1, op, kind)
