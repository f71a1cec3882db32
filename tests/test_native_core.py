"""The native block book (fake_torch/_simulated/_native.c) against the pure-Python one, its oracle
(fake_torch/_simulated/_allocator_book.py).

The same random event sequences (allocations of every size class on three streams, frees,
record_stream, empty_cache, captures into private pools, under several allocator settings, on
a device small enough to run out of memory) go through one allocator on each book; every
allocation's place (segment, offset), every error, the statistics after every event and the
final layout of every segment and free list must be identical.

Skipped when the native core was not built (no C compiler at install)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fake_torch._simulated import _allocator, _allocator_book, _machine
from fake_torch._simulated._allocator import CachingAllocator, OutOfMemoryError
from fake_torch._simulated._allocator_blocks import DEFAULT_POOL, MB, Segment
from fake_torch._simulated._allocator_config import AllocatorConfig, parse
from fake_torch._simulated._allocator_stats import EVENT_STATS

NATIVE, WHY_NOT = _allocator_book.built_native()  # (both books, whichever is in use)
PURE = _allocator_book.PURE
pytestmark = pytest.mark.skipif(NATIVE is None, reason=f"no native core: {WHY_NOT}")

SETTINGS = ["", "max_split_size_mb:20", "roundup_power2_divisions:4",
            "garbage_collection_threshold:0.5", "max_split_size_mb:24,max_non_split_rounding_mb:20",
            "graph_capture_record_stream_reuse:True"]
STREAMS = (0, 11, 12)

# sizes on the rules' edges too: a rest of exactly 512 bytes, exactly 1 MiB, a segment's size
edges = [512, MB - 512, MB, MB + 1, 2 * MB - 1024, 2 * MB - 512, 2 * MB, 10 * MB, 19 * MB,
         20 * MB, 20 * MB + 1, 24 * MB]
size = st.one_of(st.integers(0, 4096), st.integers(4096, 2 * MB), st.integers(MB, 40 * MB),
                 st.sampled_from(edges))
event = st.one_of(
    st.tuples(st.just("alloc"), size, st.sampled_from(STREAMS)),
    st.tuples(st.just("free"), st.integers(0, 63)),
    st.tuples(st.just("record"), st.integers(0, 63), st.sampled_from(STREAMS)),
    st.tuples(st.just("empty_cache")),
    st.tuples(st.just("begin"), st.sampled_from(STREAMS)),
    st.tuples(st.just("end")),
)


class _Arena:
    """Segments' memory cut from one buffer in order, from its start again for each run (and
    when it is used up): both books' runs see the same addresses, so where the lowest address
    among equal blocks decides, it decides alike. Stands in for numpy in _allocator."""

    def __init__(self, nbytes: int) -> None:
        self.buf = np.empty(nbytes, np.uint8)  # (virtual until touched)
        self.top = 0

    def take(self, n: int) -> np.ndarray:
        if self.top + n > len(self.buf):
            self.top = 0
        out = self.buf[self.top:self.top + n]
        self.top += -(-n // 4096) * 4096
        return out

    def empty(self, shape: Any, dtype: Any = None) -> np.ndarray:
        if isinstance(shape, int) and shape >= MB:  # a segment
            return self.take(shape)
        return np.empty(shape, dtype)

    def full(self, shape: Any, value: Any, dtype: Any = None) -> np.ndarray:
        out = self.empty(shape, dtype)
        out[...] = value
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


ARENA = _Arena(2048 * MB)
ARENA_BASE = int(ARENA.buf.__array_interface__["data"][0])


def _run(book: Any, events: list[tuple[Any, ...]], conf: str, fraction: float | None,
         total: int) -> list[Any]:
    """Run `events` on a fresh allocator with `book`; everything observable, in order."""
    seen: list[Any] = []
    segments: dict[int, int] = {}  # id(segment) -> its number, in order of first sight
    kept: list[Segment] = []  # (keeps ids unique)

    def number(seg: Segment) -> int:
        if id(seg) not in segments:
            segments[id(seg)] = len(segments)
            kept.append(seg)
        return segments[id(seg)]

    def layout(a: CachingAllocator) -> list[Any]:
        out: list[Any] = []
        for pool_id, pool in sorted(a.pools.items()):
            segs: list[Any] = []
            for seg in pool.segments:
                blocks: list[Any] = []
                b: Any = seg.head  # (a native or a pure Block)
                while b is not None:
                    blocks.append((b.address - seg.base, b.size, b.allocated, b.requested,
                                   b.pending, b.gc_base))
                    b = b.next
                segs.append((seg.base - ARENA_BASE, seg.size, seg.stream, blocks))
            free = [[(s, z, number(e.segment), addr - e.segment.base) for s, z, addr, e in lst]
                    for lst in (pool.free_small, pool.free_large)]
            out.append((pool_id, segs, free, pool.searches))
        return out

    ARENA.top = 0
    with _machine.fresh(total) as machine, _numpy_is(ARENA):
        dev = machine.devices[0]  # (the clocks, captures and current stream of a new device)
        a = CachingAllocator(total, timeline=dev.timeline, captures=dev.captures,
                             current_stream=dev.current_stream, book=book)
        config = AllocatorConfig()
        parse(conf, config)
        a._config = config
        a.settings_changed()
        a.memory_fraction = fraction
        live: list[Any] = []
        capture: tuple[int, Any] | None = None  # (stream, pool id)
        for ev in events:
            kind = ev[0]
            try:
                if kind == "alloc":
                    stream = ev[2]
                    pool = capture[1] if capture and capture[0] == stream else DEFAULT_POOL
                    live.append(a.allocate(ev[1], pool, stream))
                    seen.append(_place(live[-1].block, number))  # (no local keeps it alive)
                elif kind == "free" and live:
                    del live[ev[1] % len(live)]
                elif kind == "record" and live:
                    a.record_stream(live[ev[1] % len(live)], ev[2])
                elif kind == "empty_cache":
                    a.empty_cache()
                elif kind == "begin" and capture is None:
                    capture = (ev[1], a.new_pool_id(False))
                    a.begin_allocate_to_pool(capture[1], capture[0])
                elif kind == "end" and capture is not None:
                    a.end_allocate_to_pool(capture[0])
                    a.release_pool(capture[1])
                    capture = None
            except (OutOfMemoryError, RuntimeError) as e:
                seen.append((type(e).__name__, str(e)))
            seen.append(a.stats.as_nested_dict(config.max_split_size))
        live.clear()
        seen.append(a.stats.as_nested_dict(config.max_split_size))
        seen.append(layout(a))
        if capture is not None:
            a.end_allocate_to_pool(capture[0])
    return seen


def _place(b: Any, number: Any) -> tuple[int, int, int] | None:
    return None if b is None else (number(b.segment), b.address - b.segment.base, b.size)


@contextmanager
def _numpy_is(shim: Any) -> Iterator[None]:
    saved = _allocator.np  # type: ignore[attr-defined]
    _allocator.np = shim  # type: ignore[attr-defined]
    try:
        yield
    finally:
        _allocator.np = saved  # type: ignore[attr-defined]


# (FAKE_TORCH_DIFF_EXAMPLES=5000 for a longer run than the suite's)
@settings(max_examples=int(os.environ.get("FAKE_TORCH_DIFF_EXAMPLES", "300")), deadline=None)
# the edges random sequences rarely hit: a rest of exactly kMinBlockSize (split), a cached block
# of exactly max_split_size (never serves a smaller request), an oversize block just within
# max_non_split_rounding_size of the request, a pending block (record_stream) next to a free one
@example([("alloc", MB, 0), ("alloc", MB - 512, 0), ("free", 0), ("alloc", 512, 0)], "", None,
         96 * MB)
@example([("alloc", 20 * MB, 0), ("free", 0), ("alloc", 5 * MB, 0)], "max_split_size_mb:20",
         None, 96 * MB)
@example([("alloc", 44 * MB, 0), ("free", 0), ("alloc", 24 * MB, 0)],
         "max_split_size_mb:24,max_non_split_rounding_mb:20", None, 96 * MB)
@example([("alloc", 4096, 0), ("alloc", 4096, 0), ("record", 0, 11), ("free", 0), ("free", 0),
          ("alloc", 100, 0)], "", None, 96 * MB)
@given(st.lists(event, max_size=60), st.sampled_from(SETTINGS),
       st.sampled_from([None, 0.5]), st.sampled_from([96 * MB, 512 * MB]))
def test_both_books_agree(events: list[tuple[Any, ...]], conf: str, fraction: float | None,
                          total: int) -> None:
    assert _run(NATIVE, events, conf, fraction, total) == _run(PURE, events, conf, fraction,
                                                               total)


change = st.integers(-(2**40), 2**40)
row = st.tuples(st.sampled_from([0, 4]), change, change, change, change, change, change, change)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**40), min_size=81, max_size=81), st.lists(row, max_size=60))
def test_apply_rows_agrees(v: list[int], rows: list[Any]) -> None:
    """The statistics fold, row by row: the native folder against the pure one."""
    expected, got = list(v), list(v)
    PURE.apply_rows(expected, rows, EVENT_STATS)
    assert NATIVE is not None
    NATIVE.apply_rows(got, rows, EVENT_STATS)
    assert got == expected


def test_native_block_is_a_block() -> None:
    """The attributes the rest of fake_torch reads (snapshots, the capture code) behave as the
    dataclass's do."""
    assert NATIVE is not None
    seg = object()
    b = NATIVE.Block(seg, 4096, 512)
    assert (b.segment, b.address, b.size, b.allocated, b.requested, b.prev, b.next,
            b.stream_uses, b.pending, b.gc_base) == (seg, 4096, 512, False, 0, None, None,
                                                     None, False, 0)
    assert not b.is_split()
    b.next = NATIVE.Block(seg, 4608, 512, prev=b)
    assert b.is_split() and b.next.prev is b
    b.stream_uses = {3}
    b.allocated = True
    assert b.stream_uses == {3} and b.allocated is True
    with pytest.raises(TypeError):
        NATIVE.hand_out(object(), 512, 512, 2**64 - 1, False, None)


@pytest.mark.parametrize("pure", ["1", ""])
def test_core_selection(pure: str) -> None:
    """FAKE_TORCH_PURE=1 selects the pure book; unset, the native one (built here)."""
    env = {**os.environ, "FAKE_TORCH_PURE": pure}
    code = ("from fake_torch._simulated import _allocator_book as b; "
            "from fake_torch._simulated._machine import MACHINE; "
            "print(b.CORE, MACHINE.devices[0].allocator._book is b.BOOK)")
    out = subprocess.run([sys.executable, "-c", code],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == (["pure", "Python", "True"] if pure else ["native", "True"])


def test_in_use() -> None:
    """The allocator runs the book selected at import (CI runs the suite on both)."""
    assert _machine.MACHINE.devices[0].allocator._book is _allocator_book.BOOK
    assert (_allocator_book.BOOK is NATIVE) == (os.environ.get("FAKE_TORCH_PURE", "") in
                                                ("", "0"))
