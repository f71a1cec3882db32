"""The caching allocator's statistics, kept as c10's DeviceStats keeps them.

Each statistic has `current`, `peak` (the most `current` has been since the last peak reset),
`allocated` (everything ever added) and `freed` (everything ever taken away), for all pools
together (`all`) and per pool type: `small_pool` (blocks of at most 1 MiB) and `large_pool`.
torch.cuda.memory_stats() flattens `as_nested_dict()` into "allocated_bytes.all.current" keys.

The numbers live in one flat list, nine per statistic: the small pool's four, the large
pool's four, then the peak of `all` (whose other three are the sums of the two pools').

Every allocation and free changes five to seven of them. Those changes are not applied one by
one: the allocator appends each block event as one row of changes to `events` (a `Rows`: a list
append, where applying costs ~1.5 us per op output; the native core's Rows keeps a row as eight
C integers), and the rows are folded in, in order, when anything reads the numbers (or every
4096 rows). The fold is exact: a statistic's `current` is the sum of its changes, `peak` the
most any running sum reached (a peak between two reads is kept), `allocated` and `freed` the
sums of the rises and the falls: row by row for a few rows, with numpy's cumsum and max over
many.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

import numpy as np

PoolId = tuple[int, int]
ARRAYS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
          "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes")
(ALLOCATION, SEGMENT, ACTIVE, INACTIVE_SPLIT, ALLOCATED_BYTES, RESERVED_BYTES, ACTIVE_BYTES,
 INACTIVE_SPLIT_BYTES, REQUESTED_BYTES) = (9 * i for i in range(len(ARRAYS)))
# the statistics a block event changes, in the order of an event row's changes:
# (pool offset: 0 small / 4 large, allocation, active, allocated_bytes, active_bytes,
#  requested_bytes, inactive_split, inactive_split_bytes)
EVENT_STATS = (ALLOCATION, ACTIVE, ALLOCATED_BYTES, ACTIVE_BYTES, REQUESTED_BYTES, INACTIVE_SPLIT,
               INACTIVE_SPLIT_BYTES)
Event = tuple[int, int, int, int, int, int, int, int]
_CHANGED_BY_EVENTS = frozenset(EVENT_STATS)
FOLD_AT = 4096  # rows folded in even when nobody reads: the list stays small
_FOLD_IN_NUMPY = 48  # fewer rows are applied one by one: numpy's fixed cost is ~60 us


def _change(v: list[int], stat: int, k: int, n: int) -> None:
    """Add n (n < 0: take away) to `stat` of pool type k (0 small, 4 large): a rise adds to
    current and allocated and may raise the peaks (this pool type's, and all pools'), a fall
    takes from current and adds to freed."""
    i = stat + k
    if n > 0:
        c = v[i] = v[i] + n
        v[i + 2] += n
        if c > v[i + 1]:
            v[i + 1] = c
        c = v[stat] + v[stat + 4]
        if c > v[stat + 8]:
            v[stat + 8] = c
    elif n < 0:
        v[i] += n
        v[i + 3] -= n


def apply_rows(v: list[int], rows: list[Event],
               event_stats: tuple[int, ...] = EVENT_STATS) -> None:
    """Apply event rows one at a time, in order (the pure book's fold step; the native core
    has its own, which tests/test_native_core.py holds to this one)."""
    for row in rows:
        k = row[0]
        for j, stat in enumerate(event_stats):
            _change(v, stat, k, row[j + 1])


class RowQueue(Protocol):
    """The queued block events: `Rows` below, or the native core's (`_native.Rows`)."""

    def append(self, row: Event, /) -> None: ...
    def __len__(self) -> int: ...
    def fold_into(self, v: list[int], event_stats: tuple[int, ...], /) -> None: ...


class Rows(list[Event]):
    """The pure core's queued block events: a list of rows."""

    def fold_into(self, v: list[int], event_stats: tuple[int, ...] = EVENT_STATS) -> None:
        """Apply every queued row to v, in order, and forget them (appends may go on meanwhile:
        only the rows taken are cut)."""
        n = len(self)
        if not n:
            return
        taken = self[:n]
        del self[:n]
        if n < _FOLD_IN_NUMPY:
            apply_rows(v, taken, event_stats)
            return
        rows = np.array(taken, dtype=np.int64)
        changes = rows[:, 1:]
        start = np.array([v[s] + v[s + 4] for s in event_stats], dtype=np.int64)
        highest = (np.cumsum(changes, axis=0) + start).max(axis=0)
        for k in (0, 4):
            mine = changes[rows[:, 0] == k]
            if not len(mine):
                continue
            start = np.array([v[s + k] for s in event_stats], dtype=np.int64)
            running = np.cumsum(mine, axis=0) + start
            top = running.max(axis=0)
            rises = np.where(mine > 0, mine, 0).sum(axis=0)
            falls = np.where(mine < 0, -mine, 0).sum(axis=0)
            for j, s in enumerate(event_stats):
                i = s + k
                v[i] = int(running[-1, j])
                v[i + 1] = max(v[i + 1], int(top[j]))
                v[i + 2] += int(rises[j])
                v[i + 3] += int(falls[j])
        for j, s in enumerate(event_stats):
            v[s + 8] = max(v[s + 8], int(highest[j]))


_COUNTS = ("num_alloc_retries", "num_ooms", "num_oom_rejections", "num_sync_all_streams",
           "num_device_alloc", "num_device_free")


def _array(v: list[int], b: int) -> dict[str, dict[str, int]]:
    """One statistic as c10 reports it: all, small_pool, large_pool."""
    small = {"current": v[b], "peak": v[b + 1], "allocated": v[b + 2], "freed": v[b + 3]}
    large = {"current": v[b + 4], "peak": v[b + 5], "allocated": v[b + 6], "freed": v[b + 7]}
    every = {"current": v[b] + v[b + 4], "peak": v[b + 8], "allocated": v[b + 2] + v[b + 6],
             "freed": v[b + 3] + v[b + 7]}
    return {"all": every, "small_pool": small, "large_pool": large}


def _single(o: list[int], i: int) -> dict[str, int]:
    return {"current": o[i], "peak": o[i + 1], "allocated": o[i + 2], "freed": o[i + 3]}


class DeviceStats:
    """Everything torch.cuda.memory_stats() reports for one device."""

    def __init__(self, events: RowQueue | None = None) -> None:
        self._v = [0] * (9 * len(ARRAYS))  # the nine statistics, as of the last fold
        # block events not folded in yet (the allocator appends them under its lock; never
        # rebound: the native core keeps it): `Rows`, or the native core's
        self.events: RowQueue = Rows() if events is None else events
        self._fold_lock = threading.Lock()
        self.oversize = [0] * 8  # oversize_allocations, oversize_segments: 4 fields each
        self.private_pools: dict[PoolId, list[int]] = {}  # reserved bytes per private pool
        self.num_alloc_retries = 0  # cudaMalloc retried after freeing the cache
        self.num_ooms = 0
        self.num_oom_rejections = 0
        self.num_sync_all_streams = 0  # waits for every stream's outstanding frees
        self.num_device_alloc = 0  # cudaMalloc calls
        self.num_device_free = 0  # cudaFree calls

    @property
    def v(self) -> list[int]:
        """The nine statistics' numbers, every queued block event folded in."""
        if len(self.events):
            self.fold()
        return self._v

    def fold(self) -> None:
        """Apply the queued block events to the numbers, in order (see the module's doc)."""
        with self._fold_lock:
            self.events.fold_into(self._v, EVENT_STATS)

    def current(self, stat: int) -> int:
        """`current` of one statistic over all pools ("allocated_bytes.all.current")."""
        v = self.v if stat in _CHANGED_BY_EVENTS else self._v  # (reserved bytes: no fold)
        return v[stat] + v[stat + 4]

    def peak(self, stat: int) -> int:
        return (self.v if stat in _CHANGED_BY_EVENTS else self._v)[stat + 8]

    # --- the rare updates ------------------------------------------------------------------------

    def add(self, stat: int, small: bool, n: int, values: list[int] | None = None) -> None:
        """Add n (n < 0: take away) to one statistic of a pool type (and so to `all`): one
        that block events never change (segments, reserved bytes), so no fold is needed."""
        if values is None:
            assert stat not in _CHANGED_BY_EVENTS, "a block event statistic is queued, not added"
            v = self._v
        else:  # a private pool's reserved bytes
            v = values
        _change(v, stat, 0 if small else 4, n)

    def add_oversize(self, which: int, n: int) -> None:
        """oversize_allocations (which=0) or oversize_segments (which=4) by +1 / -1."""
        o, i = self.oversize, which
        o[i] += n
        if n > 0:
            o[i + 2] += n
            o[i + 1] = max(o[i + 1], o[i])
        else:
            o[i + 3] -= n

    def private_pool(self, pool: PoolId) -> list[int]:
        """The reserved-bytes statistic (nine numbers) of one private pool."""
        found = self.private_pools.get(pool)
        if found is None:
            found = self.private_pools[pool] = [0] * 9
        return found

    # --- resets and the report ------------------------------------------------------------------

    def _all_values(self) -> list[list[int]]:
        return [self.v, *self.private_pools.values()]

    def reset_peak(self) -> None:
        """Every peak back to its current value (torch.cuda.reset_peak_memory_stats)."""
        for v in self._all_values():
            for b in range(0, len(v), 9):
                v[b + 1], v[b + 5], v[b + 8] = v[b], v[b + 4], v[b] + v[b + 4]
        o = self.oversize
        o[1], o[5] = o[0], o[4]

    def reset_accumulated(self) -> None:
        """Every `allocated` and `freed` and the event counts back to zero."""
        for v in self._all_values():
            for b in range(0, len(v), 9):
                v[b + 2] = v[b + 3] = v[b + 6] = v[b + 7] = 0
        o = self.oversize
        o[2] = o[3] = o[6] = o[7] = 0
        for name in _COUNTS:
            setattr(self, name, 0)

    def as_nested_dict(self, max_split_size: int) -> dict[str, Any]:
        """torch.cuda.memory_stats_as_nested_dict(): c10's keys, in its order."""
        result: dict[str, Any] = {
            "num_alloc_retries": self.num_alloc_retries,
            "num_ooms": self.num_ooms,
            "num_oom_rejections": self.num_oom_rejections,
            # c10 casts its size_t to int64: "no limit" (SIZE_MAX) reads -1
            "max_split_size": max_split_size if max_split_size < 2**63 else -1,
            "num_sync_all_streams": self.num_sync_all_streams,
            "num_device_alloc": self.num_device_alloc,
            "num_device_free": self.num_device_free,
        }
        for a, name in enumerate(ARRAYS):
            result[name] = _array(self.v, 9 * a)
        result["oversize_allocations"] = _single(self.oversize, 0)
        result["oversize_segments"] = _single(self.oversize, 4)
        result["reserved_bytes_by_private_pools"] = {
            pool: _array(v, 0) for pool, v in self.private_pools.items()}
        return result
