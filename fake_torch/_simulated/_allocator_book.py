"""The caching allocator's block book: the operations every allocation and free pays, on the
blocks, free lists and statistics rows of fake_torch/_simulated/_allocator_blocks.py.

Two implementations with one interface: this module's pure Python (the oracle), and the native
core fake_torch._simulated._native (its source: _native.c here) when it was built. `BOOK` is the
one in use: the native core unless it is absent or FAKE_TORCH_PURE=1 (_native_core.py chooses
and says why).
tests/test_native_core.py runs both on the same event sequences and compares them.

  take(free, size, stream, max_split_size, max_non_split_rounding_size) -> Block | None
  push_free(block, track_age), remove_free(block)
  hand_out(block, size, nbytes, max_split_size, track_age, stats)
  free_block(block, freed, track_age, stats)
  apply_rows(v, rows, event_stats)   (the statistics fold's row-by-row step)
  Rows()                             (the statistics' queue of block event rows)
  Storage(block, root, on_death)     (the owner of a block: _allocator_blocks.Storage)
The native core adds FastPath, an allocator's allocate_array and storage free in C (its
common cases; the allocator's Python methods otherwise): _native_storage.c.
`track_age`: a memory fraction is set, so garbage collection reads the free blocks' ages.
"""

from __future__ import annotations

import bisect
import sys
from typing import Any

from fake_torch._simulated._allocator_blocks import MIN_BLOCK, SMALL_SIZE, Block, FreeEntry
from fake_torch._simulated._allocator_blocks import Storage as Storage
from fake_torch._simulated._allocator_stats import FOLD_AT, DeviceStats
from fake_torch._simulated._allocator_stats import Rows as Rows
from fake_torch._simulated._allocator_stats import apply_rows as apply_rows
from fake_torch._simulated._native_core import NATIVE


def take(free: list[FreeEntry], size: int, stream: int, max_split_size: int,
         max_non_split_rounding_size: int) -> Block | None:
    """The smallest free block of this stream that fits, the lowest address among equals
    (c10's get_free_block), off its free list; None when there is none or max_split_size rules
    it out."""
    i = bisect.bisect_left(free, (stream, size, -1))
    if i == len(free) or free[i][0] != stream:
        return None
    block = free[i][3]
    if size < max_split_size <= block.size:  # an oversize block never serves a small request
        return None
    if size >= max_split_size and block.size >= size + max_non_split_rounding_size:
        return None  # ... nor a large one it would waste too much of
    del free[i]
    return block


def push_free(block: Block, track_age: bool) -> None:
    seg = block.segment
    if track_age:  # only garbage collection reads the ages
        block.gc_base = seg.pool.searches
    bisect.insort(seg.free, (seg.stream, block.size, block.address, block))


def remove_free(block: Block) -> None:
    seg = block.segment
    free = seg.free
    i = bisect.bisect_left(free, (seg.stream, block.size, block.address))
    assert i < len(free) and free[i][3] is block, "a free block is not on its free list"
    del free[i]


def hand_out(block: Block, size: int, nbytes: int, max_split_size: int, track_age: bool,
             stats: DeviceStats) -> None:
    """c10's alloc_found_block: split off the rest when worth it; count the block."""
    seg = block.segment
    small = seg.is_small
    already_split = block.is_split()
    rest = block.size - size
    split = rest >= MIN_BLOCK if small else (size < max_split_size and rest > SMALL_SIZE)
    splits = split_bytes = 0  # the change in inactive splits (free pieces of split segments)
    if split:
        tail = Block(seg, block.address + size, rest, prev=block, next=block.next)
        if tail.next is not None:
            tail.next.prev = tail
        block.next = tail
        block.size = size
        push_free(tail, track_age)
        if already_split:  # a free piece of a split segment shrinks by `size`
            split_bytes = -size
        else:  # the segment is split from now on: its free rest is an inactive split
            splits, split_bytes = 1, rest
    elif already_split:  # a free piece of a split segment becomes active, whole
        splits, split_bytes = -1, -block.size
    block.allocated, block.requested = True, nbytes
    size = block.size
    # one more allocation and active block, their bytes, the requested bytes
    events = stats.events
    events.append((0 if small else 4, 1, 1, size, size, nbytes, splits, split_bytes))
    if len(events) >= FOLD_AT:
        stats.fold()
    if size >= max_split_size:
        stats.add_oversize(0, 1)


def free_block(block: Block, freed: bool, track_age: bool, stats: DeviceStats) -> None:
    """c10's free_block: merged with free neighbours, back on its pool's free list.
    `freed`: the block's tensor died just now (its allocation is counted off here too)."""
    seg = block.segment
    small = seg.is_small
    size, requested = block.size, block.requested
    net_blocks = net_bytes = 0
    after, before = block.next, block.prev
    if after is not None and not after.allocated and not after.pending:
        remove_free(after)  # block absorbs its free neighbours
        block.size += after.size
        block.next = after.next
        if block.next is not None:
            block.next.prev = block
        net_blocks, net_bytes = net_blocks - 1, net_bytes - after.size
    if before is not None and not before.allocated and not before.pending:
        remove_free(before)
        block.address = before.address
        block.size += before.size
        block.prev = before.prev
        if block.prev is not None:
            block.prev.next = block
        else:
            seg.head = block
        net_blocks, net_bytes = net_blocks - 1, net_bytes - before.size
    block.pending = False
    push_free(block, track_age)
    if block.is_split():
        net_blocks, net_bytes = net_blocks + 1, net_bytes + block.size
    # one active block fewer (and, when `freed`, one allocation), their bytes, the
    # requested bytes; the inactive splits' change
    events = stats.events
    events.append((0 if small else 4, -1 if freed else 0, -1, -size if freed else 0, -size,
                   -requested, net_blocks, net_bytes))
    if len(events) >= FOLD_AT:
        stats.fold()


PURE: Any = sys.modules[__name__]  # this module is the pure book
BOOK: Any = NATIVE if NATIVE is not None else PURE  # (which core: _native_core.py)
