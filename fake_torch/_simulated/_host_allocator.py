"""torch's caching allocator of pinned host memory (ATen/core/CachingHostAllocator.h and
ATen/cuda/CachingHostAllocator.cpp), simulated: blocks are real host buffers, so addresses and
their reuse are real.

- A request rounds up to a power of two (c10::llvm::PowerOf2Ceil) and takes the block freed
  last from that size's free list, else a new block (cudaHostAlloc). Blocks are never split.
- A block a non-blocking copy used (`record_event`, from copy_kernel_cuda) is freed behind an
  event of each stream that used it, reached when the simulated device finishes the work that
  stream had queued (fake_torch/_simulated/_timeline.py); the block is free again at the first
  allocation that processes events after that (every allocation, unless
  pinned_use_background_threads leaves that to the background thread: here, once that thread has
  started, it has always run by the next allocation). Events are processed oldest first, up to the
  first not yet reached.
- While a CUDA graph captures, allocations on its streams (the capture stream and those that
  joined it) come from the graph's private pool (its device pool id). A block freed during
  the capture goes back to that pool's free list, unless a copy used it: then it is kept for
  the graph's replays and never reused (c10 "leaks" it on purpose). A pool no graph holds
  gives its free blocks back at empty_cache.
- empty_cache() gives back the free blocks of the default pool and of released pools.

The statistics are torch's numbers (`get_stats`), updated where CachingHostAllocatorImpl
updates them, quirks included: only a block freed behind events lowers the active counts, and
it lowers active_bytes by `size` = -1 (process_events passes -1 as "any size"). cudaHostAlloc
and cudaFreeHost take no simulated time: each adds 0 us to host_alloc_time / host_free_time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fake_torch._simulated import _allocator, _allocator_capture
from fake_torch._simulated._timeline import TIMELINE

PoolId = tuple[int, int]
DEFAULT_POOL: PoolId = (0, 0)
MAX_SIZE_INDEX = 64  # free lists (and bucket statistics) by log2 of the block size
RESERVE_ROUND = 4096  # PinnedReserveSegment rounds every request up to 4 KiB
MB = 1024**2


def size_index(size: int) -> int:
    """c10::llvm::Log2_64_Ceil: the free list of a (power-of-two) block size."""
    return (size - 1).bit_length()


@dataclass
class Stat:
    """c10::CachingAllocator::Stat."""

    current: int = 0
    peak: int = 0
    allocated: int = 0
    freed: int = 0

    def increase(self, amount: int) -> None:
        self.current += amount
        self.peak = max(self.peak, self.current)
        self.allocated += amount

    def decrease(self, amount: int) -> None:
        self.current -= amount
        self.freed += amount

    def as_dict(self) -> dict[str, int]:
        return {"current": self.current, "peak": self.peak, "allocated": self.allocated,
                "freed": self.freed}


@dataclass
class DurationStat:
    """c10::CachingAllocator::DurationStat (microseconds)."""

    total: int = 0
    max: int = 0
    min: int = 0
    count: int = 0

    def increase(self, amount: int) -> None:
        self.total += amount
        self.count += 1
        self.max = max(self.max, amount)
        self.min = amount if self.min == 0 else min(self.min, amount)

    def as_dict(self) -> dict[str, int]:
        return {"total": self.total, "max": self.max, "min": self.min, "count": self.count,
                "avg": self.total // self.count if self.count else 0}


def _stats(n: int) -> list[Stat]:
    return [Stat() for _ in range(n)]


@dataclass
class HostStats:
    """HostStatsStaged: totals over every block ever made, and per-size-bucket counts."""

    allocations: Stat = field(default_factory=Stat)  # blocks (active + cached)
    allocated_bytes: Stat = field(default_factory=Stat)
    active: list[Stat] = field(default_factory=lambda: _stats(MAX_SIZE_INDEX))
    active_bytes: list[Stat] = field(default_factory=lambda: _stats(MAX_SIZE_INDEX))
    bucket_allocations: list[Stat] = field(default_factory=lambda: _stats(MAX_SIZE_INDEX))
    bucket_bytes: list[Stat] = field(default_factory=lambda: _stats(MAX_SIZE_INDEX))
    host_alloc_time: DurationStat = field(default_factory=DurationStat)
    host_free_time: DurationStat = field(default_factory=DurationStat)

    def all_stats(self) -> list[Stat]:
        return [self.allocations, self.allocated_bytes, *self.active, *self.active_bytes,
                *self.bucket_allocations, *self.bucket_bytes]


@dataclass(eq=False)
class HostBlock:
    """One cudaHostAlloc'd block (c10's HostBlock)."""

    size: int
    mem: memoryview  # its bytes
    address: int
    owning_pool: PoolId
    allocated: bool = True
    event_count: int = 0
    streams: set[int] = field(default_factory=set)  # streams that used it (record_event)
    was_allocated_during_capture: bool = False
    reserved: bool = False  # carved from the pinned reserve segment: never given back


@dataclass(eq=False)
class BlockPool:
    """c10's HostBlockPool: its blocks, free lists by size, pending (event, block) pairs."""

    blocks: dict[int, HostBlock] = field(default_factory=dict)  # by address
    free_list: list[list[HostBlock]] = field(
        default_factory=lambda: [[] for _ in range(MAX_SIZE_INDEX)])
    # one entry per recorded event: the block, and when the device reaches the event
    events: deque[tuple[HostBlock, float]] = field(default_factory=deque)


@dataclass(eq=False)
class PrivatePool:
    id: PoolId
    use_count: int = 1
    blocks: BlockPool = field(default_factory=BlockPool)


CaptureFilter = Callable[[int], bool]  # does this capture take allocations on this stream


class CachingHostAllocator:
    """The process's pinned host memory: a default pool plus one private pool per graph pool."""

    def __init__(self) -> None:
        self.default_pool = BlockPool()
        self.graph_pools: dict[PoolId, PrivatePool] = {}
        self.graph_pools_freeable: dict[PoolId, PrivatePool] = {}
        self.captures_underway: list[tuple[PoolId, CaptureFilter]] = []
        self.stats = HostStats()
        self.background_thread_started = False
        self._reserve: tuple[np.ndarray, int] | None = None  # (segment, next free offset)
        self._reserve_checked = False

    # --- allocate / free ----------------------------------------------------------------------

    def allocate(self, size: int) -> HostBlock | None:
        """A block of at least `size` bytes for the current stream (None for 0 bytes: torch's
        null pointer)."""
        if size == 0:
            return None
        pool_id, pool = self._allocation_pool()
        background = _allocator.DEVICE.config.pinned_use_background_threads
        if not (background and pool_id == DEFAULT_POOL) or self.background_thread_started:
            self._process_events(pool)  # (a started background thread has run meanwhile)
        round_size = 1 << (size - 1).bit_length()
        block = self._get_free_block(round_size, pool)
        if block is not None:
            block.was_allocated_during_capture = self._capturing()
            return block
        if background:
            self.background_thread_started = True
        block = self._allocate_host_memory(round_size, pool_id)
        block.was_allocated_during_capture = self._capturing()
        self._add_allocated_block(block, pool)
        return block

    def free(self, block: HostBlock) -> None:
        """The last tensor of the block is gone: back on its free list now, behind the events
        of the streams that used it, or, if a capture used it, never."""
        pool = self._pool_of(block)
        if pool is None:  # a block of the state a fresh device replaced: gone with it
            return
        block.allocated = False
        streams, block.streams = block.streams, set()
        if not streams:
            pool.free_list[size_index(block.size)].append(block)
            return
        block.event_count += len(streams)
        if block.was_allocated_during_capture:
            return  # no event is recorded during capture: the block stays in use for good
        pool.events.extendleft(  # (events_.emplace_front per stream)
            (block, TIMELINE.stream_end(s)) for s in sorted(streams))

    def record_event(self, block: HostBlock, stream: int) -> bool:
        """copy_kernel_cuda's CachingHostAllocator_recordEvent: a non-blocking copy on `stream`
        used the block."""
        if self._pool_of(block) is None:
            return False
        block.streams.add(stream)
        return True

    def _get_free_block(self, size: int, pool: BlockPool) -> HostBlock | None:
        index = size_index(size)
        free = pool.free_list[index]
        if not free:
            return None
        block = free.pop()
        block.allocated = True
        self.stats.active[index].increase(1)
        self.stats.active_bytes[index].increase(size)
        return block

    def _process_events(self, pool: BlockPool) -> None:
        """Oldest first, each event the device has reached: a block whose last event this is
        goes back on its free list. The first event not reached yet stops the walk."""
        stats = self.stats
        while pool.events:
            if pool.events[-1][1] > TIMELINE.host_ns:
                break
            block, _ = pool.events.pop()
            block.event_count -= 1
            if block.event_count == 0:
                index = size_index(block.size)
                pool.free_list[index].append(block)
                stats.active[index].decrease(1)
                stats.active_bytes[index].decrease(-1)  # c10 passes its "any size" -1 here

    def _add_allocated_block(self, block: HostBlock, pool: BlockPool) -> None:
        pool.blocks[block.address] = block
        stats, index = self.stats, size_index(block.size)
        stats.allocations.increase(1)
        stats.allocated_bytes.increase(block.size)
        stats.bucket_allocations[index].increase(1)
        stats.bucket_bytes[index].increase(block.size)
        stats.active[index].increase(1)
        stats.active_bytes[index].increase(block.size)

    def _allocate_host_memory(self, size: int, pool_id: PoolId) -> HostBlock:
        """cudaHostAlloc (or a piece of the pinned reserve segment, which takes no time)."""
        reserved = self._reserve_piece(size)
        if reserved is not None:
            return HostBlock(size, reserved, _address(reserved), pool_id, reserved=True)
        mem = np.empty(size, np.uint8).data
        self.stats.host_alloc_time.increase(0)
        return HostBlock(size, mem, _address(mem), pool_id)

    def _reserve_piece(self, size: int) -> memoryview | None:
        """PinnedReserveSegment: made (cudaHostAlloc) at the first new block when
        pinned_reserve_segment_size_mb is set; requests take 4 KiB-rounded pieces of it in
        order while it lasts. Freed pieces are cached, never given back."""
        if not self._reserve_checked:
            self._reserve_checked = True
            mb = _allocator.DEVICE.config.pinned_reserve_segment_size_mb
            if mb > 0:
                self.stats.host_alloc_time.increase(0)
                self._reserve = (np.empty(mb * MB, np.uint8), 0)
        if self._reserve is None:
            return None
        segment, offset = self._reserve
        rounded = -(-size // RESERVE_ROUND) * RESERVE_ROUND
        if offset + rounded > segment.shape[0]:
            return None
        self._reserve = (segment, offset + rounded)
        return segment.data[offset:offset + size]

    # --- giving memory back ---------------------------------------------------------------------

    def empty_cache(self) -> None:
        """Give back the free blocks of the default pool and of the pools no graph holds (a
        released pool with no block left is forgotten)."""
        self._process_events(self.default_pool)
        self._free_from_pool(self.default_pool)
        for pool_id, private in list(self.graph_pools_freeable.items()):
            self._process_events(private.blocks)
            self._free_from_pool(private.blocks)
            if not private.blocks.blocks:
                del self.graph_pools[pool_id]
                del self.graph_pools_freeable[pool_id]

    def _free_from_pool(self, pool: BlockPool) -> None:
        stats = self.stats
        for index, free in enumerate(pool.free_list):
            for block in free:
                del pool.blocks[block.address]
                if not block.reserved:
                    stats.host_free_time.increase(0)  # cudaFreeHost
                stats.allocations.decrease(1)
                stats.allocated_bytes.decrease(block.size)
                stats.bucket_allocations[index].decrease(1)
                stats.bucket_bytes[index].decrease(block.size)
            free.clear()

    # --- CUDA graph private pools ---------------------------------------------------------------

    def begin_allocate_to_pool(self, pool_id: PoolId, takes: CaptureFilter) -> None:
        """capture_begin: allocations on the streams `takes` accepts come from `pool_id` (made,
        or held once more) until end_allocate_to_pool."""
        private = self.graph_pools.get(pool_id)
        if private is None:
            self.graph_pools[pool_id] = PrivatePool(pool_id)
        else:
            private.use_count += 1
        if any(underway == pool_id for underway, _ in self.captures_underway):
            raise RuntimeError("beginAllocateToPool: already recording to mempool_id")
        self.captures_underway.append((pool_id, takes))

    def end_allocate_to_pool(self, pool_id: PoolId) -> None:
        for i, (underway, _) in enumerate(self.captures_underway):
            if underway == pool_id:
                del self.captures_underway[i]
                return
        raise RuntimeError("endAllocatePool: not currently recording to mempool_id")

    def release_pool(self, pool_id: PoolId) -> None:
        """A graph holding the pool is gone; after the last one, empty_cache may free it."""
        private = self.graph_pools.get(pool_id)
        if private is None:
            return
        private.use_count -= 1
        if private.use_count == 0:
            self.graph_pools_freeable[pool_id] = private

    def _allocation_pool(self) -> tuple[PoolId, BlockPool]:
        if self.captures_underway:
            stream = _allocator._current_stream()
            for pool_id, takes in self.captures_underway:
                if takes(stream):
                    return pool_id, self.graph_pools[pool_id].blocks
        return DEFAULT_POOL, self.default_pool

    def _capturing(self) -> bool:
        """current_stream_is_capturing_fast_path."""
        return bool(self.captures_underway) and _allocator_capture.is_capturing(
            _allocator._current_stream())

    def _pool_of(self, block: HostBlock) -> BlockPool | None:
        """The block's pool, if the block is one of this allocator's."""
        if block.owning_pool == DEFAULT_POOL:
            pool = self.default_pool
        else:
            private = self.graph_pools.get(block.owning_pool)
            if private is None:
                return None
            pool = private.blocks
        return pool if pool.blocks.get(block.address) is block else None

    # --- statistics -----------------------------------------------------------------------------

    def get_stats(self) -> dict[str, Any]:
        """torch._C._cuda_hostMemoryStats(): active counts summed over the size buckets."""
        stats = self.stats
        active, active_bytes = Stat(), Stat()
        for total, buckets in ((active, stats.active), (active_bytes, stats.active_bytes)):
            for b in buckets:  # peaks add up too: c10's best-effort estimate of the peak
                total.current += b.current
                total.peak += b.peak
                total.allocated += b.allocated
                total.freed += b.freed
        return {"num_host_alloc": stats.allocations.allocated,
                "num_host_free": stats.allocations.freed,
                "allocations": stats.allocations.as_dict(),
                "active_requests": active.as_dict(),
                "allocated_bytes": stats.allocated_bytes.as_dict(),
                "active_bytes": active_bytes.as_dict(),
                "host_alloc_time": stats.host_alloc_time.as_dict(),
                "host_free_time": stats.host_free_time.as_dict()}

    def reset_accumulated_stats(self) -> None:
        for stat in self.stats.all_stats():
            stat.allocated = stat.freed = 0
        for duration in (self.stats.host_alloc_time, self.stats.host_free_time):
            duration.total = duration.count = 0

    def reset_peak_stats(self) -> None:
        for stat in self.stats.all_stats():
            stat.peak = stat.current
        for duration in (self.stats.host_alloc_time, self.stats.host_free_time):
            duration.min = duration.max = 0

    # --- a fresh process (tests) ----------------------------------------------------------------

    @contextmanager
    def fresh(self) -> Iterator[CachingHostAllocator]:
        """Inside the block: the allocator of a new process; the old state after it. Blocks
        made before and freed inside never reach the old state."""
        saved = dict(self.__dict__)
        self.__dict__.update(CachingHostAllocator().__dict__)
        try:
            yield self
        finally:
            self.__dict__.clear()
            self.__dict__.update(saved)


def _address(mem: memoryview) -> int:
    return int(np.frombuffer(mem, np.uint8).__array_interface__["data"][0])


HOST = CachingHostAllocator()
