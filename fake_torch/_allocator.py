"""The simulated CUDA caching allocator: segments, blocks, pools — with torch's sizes.

Device memory is real host memory (numpy byte buffers), so addresses, reuse and aliasing are
real: a block freed by one tensor and handed to the next has the same `data_ptr()`, and two
graphs sharing a pool really write into each other's freed intermediates.

Sizes follow c10's CUDACachingAllocator: requests round up to 512 bytes; requests up to 1 MiB
come from 2 MiB "small" segments, larger ones from 20 MiB segments below 10 MiB, else from a
segment rounded up to 2 MiB. A free block is split when the rest is >= 512 bytes (small pool)
or > 1 MiB (large pool); freed neighbours in a segment merge.

A tensor's lifetime is its `Storage`'s lifetime: views share one Storage; when the last tensor
goes, the block returns to its pool — even if a captured graph still points at the memory, as
on a GPU.
"""

from __future__ import annotations

import bisect
import itertools
import os
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

KB, MB, GB = 1024, 1024**2, 1024**3
MIN_BLOCK = 512  # kMinBlockSize: every request rounds up to a multiple of this
SMALL_SIZE = 1 * MB  # kSmallSize: requests up to this come from the small pool
SMALL_BUFFER = 2 * MB  # kSmallBuffer: the segment size of the small pool
LARGE_BUFFER = 20 * MB  # kLargeBuffer: the segment size for requests below MIN_LARGE_ALLOC
MIN_LARGE_ALLOC = 10 * MB  # kMinLargeAlloc
ROUND_LARGE = 2 * MB  # kRoundLarge: larger segments round up to this

PoolId = tuple[int, int]
DEFAULT_POOL: PoolId = (0, 0)


def round_size(nbytes: int) -> int:
    """The bytes a request really takes: at least 512, a multiple of 512."""
    return MIN_BLOCK if nbytes < MIN_BLOCK else -(-nbytes // MIN_BLOCK) * MIN_BLOCK


def segment_size(size: int) -> int:
    """The size of the segment cudaMalloc'd for a (rounded) request that found no free block."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-size // ROUND_LARGE) * ROUND_LARGE


class OutOfMemoryError(RuntimeError):
    """torch.cuda.OutOfMemoryError (torch.OutOfMemoryError)."""


@dataclass(eq=False)
class Segment:
    buf: np.ndarray  # (size,) uint8: the "device" memory itself
    pool: Pool
    is_small: bool
    # looked up once: a segment never moves or changes pool, and every allocation needs these
    base: int = field(init=False)  # the address of its first byte
    mem: memoryview = field(init=False)  # buf's bytes, sliced for each block's root
    free: list[tuple[int, int, Block]] = field(init=False, repr=False)  # its pool's free list

    def __post_init__(self) -> None:
        self.base = int(self.buf.__array_interface__["data"][0])
        self.mem = self.buf.data
        self.free = self.pool.free_list(self.is_small)

    @property
    def size(self) -> int:
        return int(self.buf.shape[0])


@dataclass(eq=False, slots=True)
class Block:
    """A piece of a segment. A segment's blocks tile it as a list linked in address order
    (c10's Block::prev / Block::next), so a split or a merge with a neighbour is O(1)."""

    segment: Segment
    address: int  # of its first byte (the segment's base + its offset in the segment)
    size: int
    allocated: bool = False
    requested: int = 0
    prev: Block | None = field(default=None, repr=False)
    next: Block | None = field(default=None, repr=False)


@dataclass(eq=False)
class Pool:
    id: PoolId
    segments: list[Segment] = field(default_factory=list)
    free_small: list[tuple[int, int, Block]] = field(default_factory=list)  # (size, addr, b)
    free_large: list[tuple[int, int, Block]] = field(default_factory=list)
    use_count: int = 0  # graphs capturing into or owning this pool
    released: bool = False  # its last owner let go: empty_cache gives its free segments back

    def free_list(self, small: bool) -> list[tuple[int, int, Block]]:
        return self.free_small if small else self.free_large


class Storage:
    """The owner of one block. Tensors (and views) hold it; its death frees the block.

    `hazard` is set by the sanitizer when reading the memory would read garbage on a GPU (a
    capture's output before any replay, an output another graph's replay overwrote)."""

    __slots__ = ("__weakref__", "_on_death", "block", "hazard", "root")

    def __init__(self, block: Block | None, root: np.ndarray,
                 on_death: Callable[[Storage], None] | None = None) -> None:
        self.block = block
        self.root = root
        self.hazard: str | None = None
        self._on_death = on_death  # the allocator's bookkeeping for a storage that is gone

    def __del__(self) -> None:
        # the last tensor or view holding this storage is gone (a __del__, not a
        # weakref.finalize: one of those per allocation cost more than the allocation itself)
        if self._on_death is not None:
            self._on_death(self)

    def span(self) -> tuple[int, int]:
        """[start, end) addresses of the bytes this storage owns."""
        start = int(self.root.__array_interface__["data"][0])
        return start, start + int(self.root.nbytes)


@dataclass
class Stats:
    allocated: int = 0
    allocated_peak: int = 0
    reserved: int = 0
    reserved_peak: int = 0
    requested: int = 0
    num_allocs: int = 0
    num_frees: int = 0
    num_segments: int = 0
    num_ooms: int = 0
    num_alloc_retries: int = 0


def _default_device_bytes() -> int:
    env = os.environ.get("FAKE_TORCH_DEVICE_MEMORY")
    return int(env) if env else 80 * GB


class CachingAllocator:
    """One simulated device's memory: a default pool plus graph pools."""

    def __init__(self, total_bytes: int | None = None) -> None:
        self.total_bytes = _default_device_bytes() if total_bytes is None else total_bytes
        self.stats = Stats()
        self.pools: dict[PoolId, Pool] = {DEFAULT_POOL: Pool(DEFAULT_POOL)}
        # id(root) -> its live Storage, weakly (the tensors own a Storage, not this map); a
        # Storage takes its entry out when it dies (`_release`)
        self._by_root: dict[int, weakref.ref[Storage]] = {}
        self._user_pool_ids = itertools.count(1)  # c10 MemPool::uid_: graph_pool_handle()
        self._graph_pool_ids = itertools.count(1)  # c10 MemPool::uuid_: a graph's own pool

    # --- pools ------------------------------------------------------------------------------

    def new_pool_id(self, user_created: bool) -> PoolId:
        """torch's ids: (0, n) from graph_pool_handle(), (n, 0) for a graph's private pool,
        each kind numbered by its own counter from 1."""
        if user_created:
            return (0, next(self._user_pool_ids))
        return (next(self._graph_pool_ids), 0)

    def use_pool(self, pool_id: PoolId) -> Pool:
        pool = self.pools.setdefault(pool_id, Pool(pool_id))
        pool.use_count += 1
        pool.released = False
        return pool

    def release_pool(self, pool_id: PoolId) -> None:
        """A graph that owned or shared the pool is gone. After the last one, the pool's free
        segments go back to the device at the next empty_cache (or OOM retry), as in c10's
        releasePool: memory_reserved() does not drop when a graph is deleted."""
        pool = self.pools.get(pool_id)
        if pool is None:
            return
        pool.use_count -= 1
        if pool.use_count <= 0:
            pool.released = True

    # --- allocate / free --------------------------------------------------------------------

    def allocate(self, nbytes: int, pool_id: PoolId = DEFAULT_POOL) -> Storage:
        """A block of at least `nbytes` from `pool_id`; OutOfMemoryError past the device."""
        if nbytes == 0:  # torch hands out a null pointer: no block
            return self._register(Storage(None, np.empty(0, np.uint8), self._release))
        size = round_size(nbytes)
        pool = self.pools.get(pool_id) or self.use_pool(pool_id)
        small = size <= SMALL_SIZE
        block = self._best_fit(pool, size, small) or self._new_segment(pool, size, small, nbytes)
        self._split(block, size)
        block.allocated, block.requested = True, nbytes
        s = self.stats
        s.allocated += block.size
        s.requested += nbytes
        s.num_allocs += 1
        if s.allocated > s.allocated_peak:
            s.allocated_peak = s.allocated
        # a root whose base is a memoryview, not the segment array: numpy then keeps views'
        # `.base` pointing at this root, so a view finds its Storage (`storage_of`)
        seg = block.segment
        root = np.frombuffer(seg.mem, np.uint8, nbytes, block.address - seg.base)
        return self._register(Storage(block, root, self._release))

    def storage_of(self, a: np.ndarray) -> Storage | None:
        """The Storage a numpy view of device memory belongs to (walks the view's bases)."""
        base: Any = a
        while base is not None:
            ref = self._by_root.get(id(base))
            found = ref() if ref is not None else None
            if found is not None and found.root is base:
                return found
            base = getattr(base, "base", None)
        return None

    def _register(self, storage: Storage) -> Storage:
        self._by_root[id(storage.root)] = weakref.ref(storage)
        return storage

    def _release(self, storage: Storage) -> None:
        """A Storage died: forget its root, and its block goes back to its pool (unless the
        block is of a device state `fresh()` has since replaced: that memory is gone)."""
        # the key is this storage's own: its root is alive until now, so no other root has its id
        self._by_root.pop(id(storage.root), None)
        block = storage.block
        if block is not None and self.pools.get(block.segment.pool.id) is block.segment.pool:
            self._free(block)

    def _best_fit(self, pool: Pool, size: int, small: bool) -> Block | None:
        """The smallest free block that fits, the lowest address among equals (c10's
        get_free_block: the free set is ordered by size, then address)."""
        free = pool.free_small if small else pool.free_large
        i = bisect.bisect_left(free, (size, -1))
        if i == len(free):
            return None
        return free.pop(i)[2]

    def _new_segment(self, pool: Pool, size: int, small: bool, nbytes: int) -> Block:
        seg_bytes = segment_size(size)
        if self.stats.reserved + seg_bytes > self.total_bytes:
            self.stats.num_alloc_retries += 1
            self.empty_cache()  # torch frees cached segments and retries once
            if self.stats.reserved + seg_bytes > self.total_bytes:
                self.stats.num_ooms += 1
                raise OutOfMemoryError(self._oom_message(seg_bytes))
        seg = Segment(np.empty(seg_bytes, np.uint8), pool, small)
        block = Block(seg, seg.base, seg_bytes)  # the segment's only block, for now
        pool.segments.append(seg)
        self.stats.reserved += seg_bytes
        self.stats.reserved_peak = max(self.stats.reserved_peak, self.stats.reserved)
        self.stats.num_segments += 1
        return block

    def _split(self, block: Block, size: int) -> None:
        rest = block.size - size
        if rest < MIN_BLOCK or (not block.segment.is_small and rest <= SMALL_SIZE):
            return  # torch keeps the whole block (the rest is too small to be worth a block)
        tail = Block(block.segment, block.address + size, rest, prev=block, next=block.next)
        if tail.next is not None:
            tail.next.prev = tail
        block.next = tail
        block.size = size
        self._push_free(tail)

    def _push_free(self, block: Block) -> None:
        bisect.insort(block.segment.free, (block.size, block.address, block))

    def _remove_free(self, block: Block) -> None:
        free = block.segment.free
        i = bisect.bisect_left(free, (block.size, block.address))  # (size, addr) sorts first
        assert i < len(free) and free[i][2] is block, "a free block is not on its free list"
        del free[i]

    def _free(self, block: Block) -> None:
        """The block's last tensor died: back to its pool, merged with free neighbours."""
        block.allocated = False
        self.stats.allocated -= block.size
        self.stats.requested -= block.requested
        self.stats.num_frees += 1
        after, before = block.next, block.prev
        if after is not None and not after.allocated:  # block absorbs its free neighbours
            self._remove_free(after)
            block.size += after.size
            block.next = after.next
            if block.next is not None:
                block.next.prev = block
        if before is not None and not before.allocated:
            self._remove_free(before)
            block.address = before.address
            block.size += before.size
            block.prev = before.prev
            if block.prev is not None:
                block.prev.next = block
        self._push_free(block)

    # --- a fresh device (tests) ----------------------------------------------------------------

    @contextmanager
    def fresh(self, total_bytes: int | None = None) -> Iterator[CachingAllocator]:
        """Inside the block: an empty device, as a new process sees it (no segments, pool ids
        from 1, zero statistics). Tensors made before keep their memory but the fresh device
        does not count them, and blocks freed inside the block never reach the old state;
        after it the old state is back, as it was."""
        saved = dict(self.__dict__)
        size = self.total_bytes if total_bytes is None else total_bytes
        self.__dict__.clear()
        self.__init__(size)  # type: ignore[misc]
        try:
            yield self
        finally:
            self.__dict__.clear()
            self.__dict__.update(saved)

    # --- the cache ----------------------------------------------------------------------------

    def empty_cache(self) -> None:
        """Give back every fully free segment of the default pool and of released pools."""
        for pool in self.pools.values():
            if pool.id == DEFAULT_POOL or pool.released:
                self._release_free_segments(pool)

    def _release_free_segments(self, pool: Pool) -> None:
        for free in (pool.free_small, pool.free_large):
            for _, _, block in list(free):
                if block.prev is None and block.next is None:  # one free block spans its segment
                    self._remove_free(block)
                    pool.segments.remove(block.segment)
                    self.stats.reserved -= block.segment.size
                    self.stats.num_segments -= 1

    def _oom_message(self, alloc_size: int) -> str:
        """torch's text; like c10 it names the segment it failed to cudaMalloc, not the request."""
        free = self.total_bytes - self.stats.reserved
        return (f"CUDA out of memory. Tried to allocate {_fmt(alloc_size)}. GPU 0 has a total "
                f"capacity of {_fmt(self.total_bytes)} of which {_fmt(free)} is free. Of the "
                f"allocated memory {_fmt(self.stats.allocated)} is allocated by PyTorch, and "
                f"{_fmt(self.stats.reserved - self.stats.allocated)} is reserved by PyTorch but "
                "unallocated. (fake_torch simulated device; set FAKE_TORCH_DEVICE_MEMORY or "
                "torch.cuda.set_simulated_device_memory to change its size)")


def _fmt(nbytes: int) -> str:
    """c10's format_size: up to 1024 in bytes, then KiB/MiB/GiB with two decimals (a unit
    holds sizes up to 1024 of itself: 1 MiB prints as "1024.00 KiB")."""
    if nbytes <= KB:
        return f"{nbytes} bytes"
    for unit, scale, limit in (("KiB", KB, MB), ("MiB", MB, GB)):
        if nbytes <= limit:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes / GB:.2f} GiB"


DEVICE = CachingAllocator()
