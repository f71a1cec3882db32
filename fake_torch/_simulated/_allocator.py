"""The simulated CUDA caching allocator: segments, blocks, pools, streams, with c10's rules.

Device memory is real host memory (numpy byte buffers), so addresses, reuse and aliasing are
real: a block freed by one tensor and handed to the next has the same `data_ptr()`, and two
graphs sharing a pool really write into each other's freed intermediates.

Sizes follow c10's CUDACachingAllocator: requests round up to 512 bytes (or to a power-of-two
division, `roundup_power2_divisions`); requests up to 1 MiB come from 2 MiB "small" segments,
larger ones from 20 MiB segments (`large_segment_size_mb`) below 10 MiB, else from a segment
rounded up to 2 MiB. A free block is split when the rest is >= 512 bytes (small pool) or
> 1 MiB (large pool, and only below `max_split_size_mb`); freed neighbours in a segment merge.
A free block is reused only by a request on the stream it was allocated on, as in c10.

A tensor's lifetime is its `Storage`'s lifetime: views share one Storage; when the last tensor
goes, the block returns to its pool (even if a captured graph still points at the memory, as on
a GPU), unless `record_stream` marked it used on another stream: then it waits, "active pending
free", until the allocator next looks at its events (the next allocation, or empty_cache) and
finds that the simulated device has reached them.
Streams never lag here, so that wait ends at the first look. Freed during a capture, such a
block waits for the capture's end, or, with graph_capture_record_stream_reuse, until the
capture joined the streams that used it back (fake_torch/_simulated/_allocator_capture.py).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import os
import sys
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from fake_torch._simulated._allocator_blocks import (
    DEFAULT_POOL,
    GB,
    KB,
    MB,
    MIN_BLOCK,
    SMALL_SIZE,
    Block,
    Pool,
    Segment,
    round_size,
    segment_size,
)
from fake_torch._simulated._allocator_blocks import PoolId as PoolId
from fake_torch._simulated._allocator_blocks import Storage as Storage
from fake_torch._simulated._allocator_book import BOOK, PURE
from fake_torch._simulated._allocator_capture import CAPTURE_UNSUPPORTED_ERROR, StreamCaptures
from fake_torch._simulated._allocator_config import SIZE_MAX, AllocatorConfig, from_environment
from fake_torch._simulated._allocator_stats import (
    ALLOCATED_BYTES,
    RESERVED_BYTES,
    SEGMENT,
    DeviceStats,
)
from fake_torch._simulated._native_core import new_rlock
from fake_torch._simulated._timeline import Timeline


class OutOfMemoryError(RuntimeError):
    """torch.cuda.OutOfMemoryError (torch.OutOfMemoryError)."""


def _default_device_bytes() -> int:
    env = os.environ.get("FAKE_TORCH_DEVICE_MEMORY")
    if env:
        return int(env)
    from fake_torch._simulated import _gpus  # (a leaf module: the simulated GPU's published size)

    return _gpus.current().total_memory


# One lock for the device's allocator state, as c10 guards its own with a mutex: tensors made
# and freed on several threads at once never see a half-moved free list. A locked method never
# calls another locked one (each is a whole call), so each frees the late deaths as it ends.
#
# A Storage can also die INSIDE an allocator call of its own thread (the cyclic garbage
# collector runs finalizers at any object allocation): the lock being reentrant, that free would
# rearrange the free lists under the call. So a death on the thread that holds the lock is put
# in `_late`, and freed as the call ends.
# (The native core's RLock when it is built: the same lock, whose state its fast path reads.)
_LOCK: Any = new_rlock()
_held_here = _LOCK._is_owned  # (CPython's RLock, and the native one: this thread's?)
_acquire, _release_lock = _LOCK.acquire, _LOCK.release  # (bound once: `with` costs ~2x more)
_late: list[tuple[CachingAllocator, int, Block | None]] = []  # (allocator, root id, block)
_refcount = sys.getrefcount
# what getrefcount reads in `_release` of an array only the dying Storage holds; CPython 3.14
# may read less while others still hold it (borrowed stack references): never keep there
_ALONE = 3 if sys.version_info < (3, 14) else -1
_KEPT_LIMIT = 4096  # free blocks remembered with their arrays (then forgotten all at once)
F = TypeVar("F", bound=Callable[..., Any])


def _locked(method: F) -> F:
    """Run an allocator method under the lock, then free what died meanwhile."""
    @functools.wraps(method)
    def locked(self: CachingAllocator, *args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            result = method(self, *args, **kwargs)
            if _late:
                _free_late()
            return result
    return locked  # type: ignore[return-value]


def _free_late() -> None:
    """Free the blocks of storages that died during an allocator call (the lock is held)."""
    while _late:
        allocator, key, block = _late.pop()
        allocator._release_parts(key, block)


class CachingAllocator:
    """One simulated device's memory: a default pool plus graph pools. Safe to use from
    several threads (see _LOCK). Its device gives it the clocks (`timeline`), the captures
    underway on its streams, and how to read the calling thread's current stream
    (`current_stream`; `stream_local`: the thread-local it reads, if it reads one's
    `handle`)."""

    def __init__(self, total_bytes: int | None = None, *, timeline: Timeline,
                 captures: StreamCaptures, current_stream: Callable[[], int],
                 index: int = 0, book: Any = None, stream_local: Any = None) -> None:
        self.total_bytes = _default_device_bytes() if total_bytes is None else total_bytes
        self.index = index  # cuda:index
        self.timeline = timeline
        self.captures = captures
        self.current_stream = current_stream
        # the thread-local whose `handle` current_stream() returns, when the device has one:
        # the native fast path reads it (a call of current_stream costs twice that)
        self._stream_local = stream_local
        # the block book (_allocator_book.py): the native core or the pure one
        self._book = BOOK if book is None else book
        # (stats, pools, _by_root and _kept are never rebound: the native FastPath keeps them)
        self.stats = DeviceStats(self._book.Rows())  # (its block event queue: the book's)
        self.pools: dict[PoolId, Pool] = {DEFAULT_POOL: Pool(DEFAULT_POOL, device=index)}
        # id(root) -> its live Storage, weakly (the tensors own a Storage, not this map); a
        # Storage takes its entry out when it dies (`_release`)
        self._by_root: dict[int, weakref.ref[Storage]] = {}
        self._user_pool_ids = itertools.count(1)  # c10 MemPool::uid_: graph_pool_handle()
        self._graph_pool_ids = itertools.count(1)  # c10 MemPool::uuid_: a graph's own pool
        self._config: AllocatorConfig | None = None  # read from the environment at first use
        self.captures_underway = 0
        self.memory_fraction: float | None = None  # set_per_process_memory_fraction
        self._pending: list[Block] = []  # freed with stream uses: their events are recorded
        self._deferred: list[Block] = []  # ... freed during a capture: events wait for its end
        self._pending_until: dict[Block, float] = {}  # pending block -> when its events are done
        self._deferred_uses: dict[Block, set[int]] = {}  # deferred block -> streams that used it
        # ... of those, the ones with free markers (graph_capture_record_stream_reuse)
        self._free_markers: dict[Block, frozenset[int]] = {}
        self.raw: dict[int, Storage] = {}  # caching_allocator_alloc's blocks, by address
        # dead outputs' arrays that nobody else held: (address, nbytes) -> (root, typed view),
        # handed out again to a request of the same bytes, shape and dtype given that address
        # (see `allocate_array`); the memory is a segment's as long as the segment is here, so
        # this is emptied when one goes back (the roots would hold its memory)
        self._kept: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        # the Storage type and what its death calls: with the native core, its Storage and its
        # FastPath, which allocates an op's output and frees a storage in C in the common case
        # (fake_torch/_simulated/_native_storage.c) and calls the methods here otherwise
        self._storage_type: Callable[..., Storage] = self._book.Storage
        self._on_death: Callable[[Storage], None] = self._release
        if self._book is not PURE and isinstance(_LOCK, self._book.RLock):
            fast = self._book.FastPath(self, _LOCK, _late, _free_late, self.allocate_array,
                                       self._release)
            self._on_death = fast
            self.allocate_array = fast.allocate_array  # type: ignore[method-assign]

    @property
    def config(self) -> AllocatorConfig:
        """The allocator settings (PYTORCH_CUDA_ALLOC_CONF is read, and checked, at first use)."""
        if self._config is None:
            self._config = from_environment()
            self.settings_changed()
        return self._config

    def settings_changed(self) -> None:
        """The settings were parsed again: a per_process_memory_fraction in them caps memory."""
        fraction = self.config.per_process_memory_fraction
        if fraction < 1.0:
            self.memory_fraction = fraction

    @property
    def allowed_bytes(self) -> int | None:
        """The per-process cap on reserved memory, when a fraction is set."""
        fraction = self.memory_fraction
        return None if fraction is None else int(fraction * self.total_bytes)

    # --- pools ------------------------------------------------------------------------------

    @_locked
    def new_pool_id(self, user_created: bool) -> PoolId:
        """torch's ids: (0, n) from graph_pool_handle(), (n, 0) for a graph's private pool,
        each kind numbered by its own counter from 1."""
        if user_created:
            return (0, next(self._user_pool_ids))
        return (next(self._graph_pool_ids), 0)

    @_locked
    def use_pool(self, pool_id: PoolId) -> Pool:
        """One more user (a graph capturing into it or owning it) of the pool `pool_id`."""
        return self._use_pool(pool_id)

    def _use_pool(self, pool_id: PoolId) -> Pool:
        pool = self.pools.get(pool_id)
        if pool is None:
            pool = self.pools[pool_id] = Pool(pool_id, device=self.index)
        pool.use_count += 1
        pool.released = False
        return pool

    @_locked
    def begin_allocate_to_pool(self, pool_id: PoolId, stream: int,
                               global_thread: int | None = None) -> None:
        """capture_begin: a capture on `stream` allocates from `pool_id` until
        end_allocate_to_pool (c10's beginAllocateToPool, then cudaStreamBeginCapture);
        `global_thread`: the capturing thread, in capture_error_mode "global"."""
        self._use_pool(pool_id)
        self.captures_underway += 1
        self.captures.begin(stream, pool_id, global_thread)

    @_locked
    def end_allocate_to_pool(self, stream: int) -> None:
        """capture_end: the capture on `stream` is over."""
        self.captures.end(stream)
        self.captures_underway -= 1

    @_locked
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

    # --- allocate -----------------------------------------------------------------------------

    def allocate(self, nbytes: int, pool_id: PoolId = DEFAULT_POOL,
                 stream: int | None = None) -> Storage:
        """A block of at least `nbytes` from `pool_id` for `stream` (the current stream unless
        given); OutOfMemoryError past the device (or the per-process fraction)."""
        _acquire()  # (the _locked wrapper, written out: this runs once per op output)
        try:
            storage = self._allocate(nbytes, pool_id, stream)
            if _late:
                _free_late()
            return storage
        finally:
            _release_lock()

    def allocate_array(self, shape: tuple[int, ...], np_dtype: np.dtype[Any],
                       nbytes: int) -> tuple[np.ndarray, Storage]:
        """`allocate` from the default pool for the current stream, as a typed array of
        `shape` over the block (its `.base` the Storage's root). The commonest allocation, an
        op's output: when the block found was last handed out for the same bytes, shape and
        dtype, and the arrays made then died with their Storage (nobody else held them), those
        arrays are handed out again instead of building two views (measured, callgrind: 7.2k
        instructions a new root and view). Addresses, blocks and statistics are those of
        `allocate`."""
        _acquire()
        try:
            storage = self._allocate(nbytes, DEFAULT_POOL, None, shape, np_dtype)
            if _late:
                _free_late()
        finally:
            _release_lock()
        return storage.view, storage  # type: ignore[return-value]  # (set for a shape)

    def _allocate(self, nbytes: int, pool_id: PoolId, stream: int | None,
                  shape: tuple[int, ...] | None = None,
                  np_dtype: np.dtype[Any] | None = None) -> Storage:
        if nbytes == 0:  # torch hands out a null pointer: no block
            storage = self._register(self._storage_type(None, np.empty(0, np.uint8),
                                                        self._on_death))
            if shape is not None:
                storage.view = np.ndarray(shape, np_dtype, buffer=storage.root)
            return storage
        if stream is None:
            stream = self.current_stream()
        config = self._config or self.config
        if not self.captures_underway:
            if self._pending or self._deferred:
                self._process_events()
        elif config.graph_capture_record_stream_reuse and self._free_markers:
            self._free_safe_blocks_in_capture(stream)
        # round_size, its commonest case (no roundup_power2_divisions) written out
        size = (-(-nbytes // MIN_BLOCK) * MIN_BLOCK if not config.rounds_up
                else round_size(nbytes, config))
        pool = self.pools.get(pool_id) or self._use_pool(pool_id)
        small = size <= SMALL_SIZE
        if not small and self.memory_fraction is not None:
            pool.searches += 1  # (c10's get_free_blocks_call_count, for garbage collection)
        book, limit = self._book, config.max_split_size
        # the smallest free block of this stream that fits (c10's get_free_block), else a new
        # segment; then c10's alloc_found_block: split off the rest when worth it, count it
        block = (book.take(pool.free_small if small else pool.free_large, size, stream, limit,
                           config.max_non_split_rounding_size)
                 or self._alloc_block(pool, size, small, stream, config))
        book.hand_out(block, size, nbytes, limit, self.memory_fraction is not None, self.stats)
        # a root whose base is a memoryview, not the segment array: numpy then keeps views'
        # `.base` pointing at this root, so a view finds its Storage (`storage_of`)
        kept = self._kept.pop((block.address, nbytes), None) if shape is not None else None
        if kept is not None:
            root, view = kept
            if view.shape == shape and view.dtype is np_dtype:  # (as made: nobody held it)
                storage = self._storage_type(block, root, self._on_death)
                storage.view = view
                self._by_root[id(root)] = weakref.ref(storage)
                return storage
        seg = block.segment
        root = np.frombuffer(seg.mem, np.uint8, nbytes, block.address - seg.base)
        storage = self._storage_type(block, root, self._on_death)
        self._by_root[id(root)] = weakref.ref(storage)  # (`_register`, written out)
        if shape is not None:
            storage.view = np.ndarray(shape, np_dtype, buffer=root)
        return storage

    def _alloc_block(self, pool: Pool, size: int, small: bool, stream: int,
                     config: AllocatorConfig) -> Block:
        """A new segment for the request, after c10's tries to make room: garbage collection
        (with a memory fraction), releasing oversize cached blocks, then the whole cache.
        While another thread captures in "global" mode, cudaMalloc fails as CUDA refuses it."""
        if self.captures.refuses_unsafe_calls():
            raise RuntimeError(CAPTURE_UNSUPPORTED_ERROR)
        seg_bytes = segment_size(size, config)
        if self.memory_fraction is not None and config.garbage_collection_threshold > 0:
            self._garbage_collect(config)
        if self._fits(seg_bytes):
            return self._new_segment(pool, small, stream, seg_bytes, config)
        if self._release_oversize_blocks(pool, size, stream, config) and self._fits(seg_bytes):
            return self._new_segment(pool, small, stream, seg_bytes, config)
        if not self.captures_underway:
            self._release_cached_blocks()
            self.stats.num_alloc_retries += 1
            if self._fits(seg_bytes):
                return self._new_segment(pool, small, stream, seg_bytes, config)
        self.stats.num_ooms += 1
        raise OutOfMemoryError(self._oom_message(seg_bytes))

    def _fits(self, seg_bytes: int) -> bool:
        reserved = self.stats.current(RESERVED_BYTES) + seg_bytes
        allowed = self.allowed_bytes
        return reserved <= self.total_bytes and (allowed is None or reserved <= allowed)

    def _new_segment(self, pool: Pool, small: bool, stream: int, seg_bytes: int,
                     config: AllocatorConfig) -> Block:
        # a private pool's (a CUDA graph's) memory reads as garbage until a replay writes it:
        # all-ones bytes, NaN in every float dtype, -1 / the maximum in the integers. Poisoned
        # once per segment, not per block: a block reused within the pool holds what the pool's
        # last writer left there, as on a GPU
        buf = (np.empty(seg_bytes, np.uint8) if pool.id == DEFAULT_POOL
               else np.full(seg_bytes, 0xFF, np.uint8))
        seg = Segment(buf, pool, small, stream)
        block: Block = self._book.Block(seg, seg.base, seg_bytes)  # its only block, for now
        seg.head = block
        pool.segments.append(seg)
        stats = self.stats
        stats.add(SEGMENT, small, 1)
        stats.add(RESERVED_BYTES, small, seg_bytes)
        if pool.id != DEFAULT_POOL:
            stats.add(0, small, seg_bytes, stats.private_pool(pool.id))
        if seg_bytes >= config.max_split_size:
            stats.add_oversize(4, 1)
        stats.num_device_alloc += 1
        return block

    @_locked
    def raw_alloc(self, nbytes: int, stream: int) -> int:
        """c10's raw_alloc_with_stream: the address of a block for `stream` (from its
        capture's pool while it captures), held until raw_delete; 0 for 0 bytes."""
        if nbytes == 0:
            return 0
        storage = self._allocate(nbytes, self.captures.pool_of(stream), stream)
        address = storage.span()[0]
        self.raw[address] = storage
        return address

    @_locked
    def raw_delete(self, address: int) -> None:
        """c10's raw_delete: free a block raw_alloc handed out (nothing for 0)."""
        if address and self.raw.pop(address, None) is None:
            raise RuntimeError(f"invalid device pointer: {address:#x}")

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

    # --- free -----------------------------------------------------------------------------------

    @_locked
    def record_stream(self, storage: Storage, stream: int) -> None:
        """The block was used on `stream` (not its own): when freed, it waits for that
        stream's work before anything reuses it (c10's recordStream)."""
        block = storage.block
        if block is None or stream == block.segment.stream:
            return
        if block.stream_uses is None:
            block.stream_uses = set()
        block.stream_uses.add(stream)

    def _release(self, storage: Storage) -> None:
        """A Storage died (its __del__, on whatever thread dropped the last reference)."""
        key, block = id(storage.root), storage.block
        if _held_here():  # inside an allocator call of this thread: freed as it ends
            _late.append((self, key, block))
            return
        _acquire()
        try:
            address = block.address if block is not None else 0  # (before a merge moves it)
            self._release_parts(key, block, storage)
            view = storage.view
            # an output's arrays that only this storage holds (the view: its slot, `view` and
            # getrefcount's argument; the root: its slot, the view's base, the argument),
            # kept with the block if it is free for reuse now (see `allocate_array`)
            if (view is not None and _refcount(view) == _ALONE
                    and _refcount(storage.root) == _ALONE
                    and block is not None and not block.allocated and not block.pending):
                if len(self._kept) >= _KEPT_LIMIT:
                    self._kept.clear()
                self._kept[address, storage.root.nbytes] = (storage.root, view)
            if _late:
                _free_late()
        finally:
            _release_lock()

    def _release_parts(self, key: int, block: Block | None,
                       storage: Storage | None = None) -> None:
        """Forget a dead `storage`'s root (`key`: its id), and free its block (unless the block
        is of a pool this allocator no longer has). A late free
        passes no storage: its weak reference is dead by then, and a newer root may have
        taken its id."""
        ref = self._by_root.get(key)
        if ref is not None:
            found = ref()  # (within __del__ the reference still reaches the dying storage)
            if found is None or found is storage:
                del self._by_root[key]
        if block is not None and self.pools.get(block.segment.pool.id) is block.segment.pool:
            if block.stream_uses or block.size >= (self._config or self.config).max_split_size:
                self._free(block)
            else:  # `_free` without its rare cases, written out: this runs once per op output
                block.allocated = False
                self._book.free_block(block, True, self.memory_fraction is not None, self.stats)

    def _free(self, block: Block) -> None:
        """c10's free: no longer allocated; back to the pool now, or after the events of the
        other streams that used it."""
        block.allocated = False
        if block.size >= (self._config or self.config).max_split_size:  # (never, by default)
            self.stats.add_oversize(0, -1)
        if block.stream_uses:
            # one allocation fewer, and its bytes; it stays active until its events are done
            self.stats.events.append((0 if block.segment.is_small else 4, -1, 0, -block.size,
                                      0, 0, 0, 0))
            uses, block.stream_uses, block.pending = block.stream_uses, None, True
            if not self.captures_underway:
                # c10 records an event on each stream that used it: done when all are reached
                self._pending_until[block] = max(self.timeline.stream_end(s) for s in uses)
                self._pending.append(block)
                return
            self._deferred_uses[block] = uses
            self._deferred.append(block)
            if (self._config or self.config).graph_capture_record_stream_reuse:
                markers = self.captures.free_markers([block.segment.stream, *uses])
                if markers:  # (none: a stream that used it is not capturing)
                    self._free_markers[block] = markers
        else:
            self._book.free_block(block, True, self.memory_fraction is not None, self.stats)

    def _free_block(self, block: Block, freed: bool = False) -> None:
        """c10's free_block: merged with free neighbours, back on its pool's free list.
        `freed`: the block's tensor died just now (its allocation is counted off here too)."""
        self._book.free_block(block, freed, self.memory_fraction is not None, self.stats)

    def _remove_free(self, block: Block) -> None:
        self._book.remove_free(block)

    # --- events of other streams ----------------------------------------------------------------

    def _free_safe_blocks_in_capture(self, stream: int) -> None:
        """c10's free_safe_blocks_in_capture: a block freed during the capture, allocated on
        `stream`, is free again once all its free markers are ancestors of `stream`'s
        terminals: every later node of the capture runs after its last use on every stream."""
        seen = self.captures.visited(stream)
        if seen is None:
            return
        safe = [b for b, markers in self._free_markers.items()
                if b.segment.stream == stream and markers <= seen]
        for block in safe:
            del self._free_markers[block]
            self._deferred.remove(block)
            self._deferred_uses.pop(block, None)
            self._free_block(block)

    def _process_events(self) -> None:
        """At an allocation outside any capture: the events of blocks freed during a capture
        are recorded now; a block whose events the simulated device has reached is free again
        (c10's cudaEventQuery), the others stay pending."""
        for block in self._deferred:
            uses = self._deferred_uses.pop(block, set())
            self._pending_until[block] = max((self.timeline.stream_end(s) for s in uses),
                                             default=0.0)
        self._pending.extend(self._deferred)
        self._deferred.clear()
        self._free_markers.clear()
        now = self.timeline.host_ns
        done = [b for b in self._pending if self._pending_until.get(b, 0.0) <= now]
        self._pending = [b for b in self._pending if self._pending_until.get(b, 0.0) > now]
        for block in done:
            self._pending_until.pop(block, None)
            self._free_block(block)

    def _synchronize_and_free_events(self) -> None:
        """c10's synchronize_and_free_events: wait for every outstanding event, free its block."""
        self.stats.num_sync_all_streams += 1
        if self._pending:
            self.timeline.wait_until(max(self._pending_until.get(b, 0.0) for b in self._pending))
        self._process_events()

    # --- giving memory back ---------------------------------------------------------------------

    @_locked
    def empty_cache(self) -> None:
        """Give back every fully free segment of the default pool (after waiting for the
        frees other streams hold up) and of released graph pools."""
        self._release_cached_blocks()

    def _release_cached_blocks(self) -> None:
        """empty_cache's work (also the OOM retry's flush)."""
        if not self.captures_underway:
            self._synchronize_and_free_events()
            self._release_whole_segments(self.pools[DEFAULT_POOL])
        for pool in list(self.pools.values()):
            if pool.id != DEFAULT_POOL and pool.released:
                self._release_whole_segments(pool)
                if not pool.segments:  # c10's release_cached_blocks erases an emptied pool
                    del self.pools[pool.id]  # (a later capture into its id starts a new one)
                    self.stats.private_pools.pop(pool.id, None)

    def _release_whole_segments(self, pool: Pool) -> None:
        for free in (pool.free_small, pool.free_large):
            for entry in list(free):
                if not entry[3].is_split():  # one free block spans its segment
                    self._release_segment(entry[3])

    def _release_segment(self, block: Block) -> None:
        """cudaFree the segment of a free, unsplit block (c10's release_block)."""
        self._kept.clear()  # (kept roots would hold the segment's memory)
        self._remove_free(block)
        seg = block.segment
        seg.pool.segments.remove(seg)
        stats = self.stats
        stats.add(SEGMENT, seg.is_small, -1)
        stats.add(RESERVED_BYTES, seg.is_small, -seg.size)
        if seg.pool.id != DEFAULT_POOL:
            stats.add(0, seg.is_small, -seg.size, stats.private_pool(seg.pool.id))
        if seg.size >= self.config.max_split_size:
            stats.add_oversize(4, -1)
        stats.num_device_free += 1

    def _release_oversize_blocks(self, pool: Pool, size: int, stream: int,
                                 config: AllocatorConfig) -> bool:
        """c10's release_available_cached_blocks: with max_split_size set, give back one cached
        oversize block that fits the request, else the largest ones until enough is free."""
        limit = config.max_split_size
        if limit == SIZE_MAX:
            return False
        wanted = max(size, limit)
        free = pool.free_large
        i = bisect.bisect_left(free, (stream, wanted, -1))
        if i < len(free) and free[i][0] == stream:
            if free[i][3].is_split():
                return False
            self._release_segment(free[i][3])
            return True
        released = 0
        i -= 1
        while (released < wanted and i >= 0 and free[i][0] == stream
               and free[i][3].size >= limit):
            block = free[i][3]
            if not block.is_split():
                released += block.size
                self._release_segment(block)
            i -= 1
        return released >= wanted

    def _garbage_collect(self, config: AllocatorConfig) -> None:
        """c10's garbage_collect_cached_blocks: past garbage_collection_threshold of the allowed
        memory, give back cached whole segments of the default large pool, the longest unused
        first (age: the pool's block searches since the block was cached), until under it."""
        allowed = self.allowed_bytes
        assert allowed is not None
        threshold = int(config.garbage_collection_threshold * allowed)
        reserved = self.stats.current(RESERVED_BYTES)
        if reserved <= threshold:
            return
        pool = self.pools[DEFAULT_POOL]
        ages = {id(e[3]): pool.searches - e[3].gc_base for e in pool.free_large
                if not e[3].is_split()}
        total_age, count = sum(ages.values()), len(ages)
        reclaimed, freed = 0, True
        while reclaimed < reserved - threshold and freed and count > 0:
            average = total_age / count
            freed = False
            for entry in list(pool.free_large):
                block = entry[3]
                age = ages.get(id(block))
                if age is not None and age >= average and not block.is_split():
                    freed = True
                    reclaimed += block.size
                    total_age -= age
                    count -= 1
                    del ages[id(block)]
                    self._release_segment(block)

    def _oom_message(self, alloc_size: int) -> str:
        """torch's text; like c10 it names the segment it failed to cudaMalloc, not the request."""
        reserved = self.stats.current(RESERVED_BYTES)
        allocated = self.stats.current(ALLOCATED_BYTES)
        allowed = self.allowed_bytes
        allowed_info = "" if allowed is None else f"{_fmt(allowed)} allowed; "
        return (f"CUDA out of memory. Tried to allocate {_fmt(alloc_size)}. GPU {self.index} has "
                f"a total capacity of {_fmt(self.total_bytes)} of which "
                f"{_fmt(self.total_bytes - reserved)} is free. {allowed_info}Of the allocated "
                f"memory {_fmt(allocated)} is allocated by PyTorch, and "
                f"{_fmt(reserved - allocated)} is reserved by PyTorch but "
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

