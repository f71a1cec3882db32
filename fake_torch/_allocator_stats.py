"""The caching allocator's statistics, kept as c10's DeviceStats keeps them.

Each statistic has `current`, `peak` (the most `current` has been since the last peak reset),
`allocated` (everything ever added) and `freed` (everything ever taken away), for all pools
together (`all`) and per pool type: `small_pool` (blocks of at most 1 MiB) and `large_pool`.
torch.cuda.memory_stats() flattens `as_nested_dict()` into "allocated_bytes.all.current" keys.

The numbers live in one flat list, nine per statistic: the small pool's four, the large
pool's four, then the peak of `all` (whose other three are the sums of the two pools'). The
updates every allocation and free make are written out straight, without a call per number:
the allocator runs once per op output, and this is most of its cost.
"""

from __future__ import annotations

from typing import Any

PoolId = tuple[int, int]
ARRAYS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
          "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes")
(ALLOCATION, SEGMENT, ACTIVE, INACTIVE_SPLIT, ALLOCATED_BYTES, RESERVED_BYTES, ACTIVE_BYTES,
 INACTIVE_SPLIT_BYTES, REQUESTED_BYTES) = (9 * i for i in range(len(ARRAYS)))
assert (INACTIVE_SPLIT, INACTIVE_SPLIT_BYTES) == (27, 63)  # offsets inactive_split writes out
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

    def __init__(self) -> None:
        self.v = [0] * (9 * len(ARRAYS))  # the nine statistics
        self.oversize = [0] * 8  # oversize_allocations, oversize_segments: 4 fields each
        self.private_pools: dict[PoolId, list[int]] = {}  # reserved bytes per private pool
        self.num_alloc_retries = 0  # cudaMalloc retried after freeing the cache
        self.num_ooms = 0
        self.num_oom_rejections = 0
        self.num_sync_all_streams = 0  # waits for every stream's outstanding frees
        self.num_device_alloc = 0  # cudaMalloc calls
        self.num_device_free = 0  # cudaFree calls

    def current(self, stat: int) -> int:
        """`current` of one statistic over all pools ("allocated_bytes.all.current")."""
        return self.v[stat] + self.v[stat + 4]

    def peak(self, stat: int) -> int:
        return self.v[stat + 8]

    # --- the rare updates ------------------------------------------------------------------------

    def add(self, stat: int, small: bool, n: int, values: list[int] | None = None) -> None:
        """Add n (n < 0: take away) to one statistic of a pool type (and so to `all`)."""
        v = self.v if values is None else values
        i = stat if small else stat + 4
        if n >= 0:
            v[i] += n
            v[i + 2] += n
            v[i + 1] = max(v[i + 1], v[i])
            v[stat + 8] = max(v[stat + 8], v[stat] + v[stat + 4])
        else:
            v[i] += n
            v[i + 3] -= n

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

    # --- the updates of every allocation and free -------------------------------------------------

    def inactive_split(self, small: bool, blocks: int, nbytes: int) -> None:
        """Free pieces of split segments: `blocks` more (or fewer), `nbytes` more (or fewer)."""
        v, k = self.v, (0 if small else 4)
        # written out for INACTIVE_SPLIT (27) and INACTIVE_SPLIT_BYTES (63): no loop, no tuples
        if blocks > 0:
            c = v[27 + k] + blocks
            v[27 + k] = c
            v[29 + k] += blocks
            if c > v[28 + k]:
                v[28 + k] = c
            c = v[27] + v[31]  # all pools: this type's and the other's
            if c > v[35]:
                v[35] = c
        elif blocks < 0:
            v[27 + k] += blocks
            v[30 + k] -= blocks
        if nbytes > 0:
            c = v[63 + k] + nbytes
            v[63 + k] = c
            v[65 + k] += nbytes
            if c > v[64 + k]:
                v[64 + k] = c
            c = v[63] + v[67]
            if c > v[71]:
                v[71] = c
        elif nbytes < 0:
            v[63 + k] += nbytes
            v[66 + k] -= nbytes

    def block_allocated(self, small: bool, size: int, requested: int) -> None:
        """A block handed out: allocation, active (+1) and their bytes (+size), requested."""
        v, k = self.v, (0 if small else 4)
        c = v[0 + k] + 1
        v[0 + k] = c
        v[2 + k] += 1
        if c > v[1 + k]:
            v[1 + k] = c
        c = v[0] + v[4]
        if c > v[8]:
            v[8] = c
        c = v[18 + k] + 1
        v[18 + k] = c
        v[20 + k] += 1
        if c > v[19 + k]:
            v[19 + k] = c
        c = v[18] + v[22]
        if c > v[26]:
            v[26] = c
        c = v[36 + k] + size
        v[36 + k] = c
        v[38 + k] += size
        if c > v[37 + k]:
            v[37 + k] = c
        c = v[36] + v[40]
        if c > v[44]:
            v[44] = c
        c = v[54 + k] + size
        v[54 + k] = c
        v[56 + k] += size
        if c > v[55 + k]:
            v[55 + k] = c
        c = v[54] + v[58]
        if c > v[62]:
            v[62] = c
        c = v[72 + k] + requested
        v[72 + k] = c
        v[74 + k] += requested
        if c > v[73 + k]:
            v[73 + k] = c
        c = v[72] + v[76]
        if c > v[80]:
            v[80] = c

    def block_freed(self, small: bool, size: int) -> None:
        """The block's tensor died: allocation (-1) and allocated bytes (-size)."""
        v, k = self.v, (0 if small else 4)
        v[0 + k] -= 1
        v[3 + k] += 1
        v[36 + k] -= size
        v[39 + k] += size

    def block_inactive(self, small: bool, size: int, requested: int) -> None:
        """The block is back in its pool: active (-1), active bytes, requested bytes."""
        v, k = self.v, (0 if small else 4)
        v[18 + k] -= 1
        v[21 + k] += 1
        v[54 + k] -= size
        v[57 + k] += size
        v[72 + k] -= requested
        v[75 + k] += requested


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
