"""The native block book (fake_torch/_simulated/_native.c) against the pure-Python one, its oracle
(fake_torch/_simulated/_allocator_book.py).

The same random event sequences (allocations of every size class on three streams, frees,
record_stream, empty_cache, captures into private pools, under several allocator settings, on
a device small enough to run out of memory) go through one allocator on each book; every
allocation's place (segment, offset), every error, the statistics after every event and the
final layout of every segment and free list must be identical.

Skipped when the native core was not built (no C compiler at install)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import warnings
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import fake_torch as torch
from fake_torch._simulated import _allocator, _allocator_book, _machine, _native_core
from fake_torch._simulated._allocator import CachingAllocator, OutOfMemoryError
from fake_torch._simulated._allocator_blocks import DEFAULT_POOL, MB, Segment
from fake_torch._simulated._allocator_config import AllocatorConfig, parse
from fake_torch._simulated._allocator_stats import EVENT_STATS

NATIVE, WHY_NOT = _native_core.built_native()  # (both books, whichever is in use)
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



def _allocator_on(machine: Any, total: int, book: Any, conf: str) -> tuple[Any, Any]:
    """A caching allocator of `total` bytes running `book`, on a new machine's first device
    (its clocks, captures and current stream), with the settings `conf`; and those settings."""
    dev = machine.devices[0]
    a = CachingAllocator(total, timeline=dev.timeline, captures=dev.captures,
                         current_stream=dev.current_stream, book=book)
    config = AllocatorConfig()
    parse(conf, config)
    a._config = config
    a.settings_changed()
    return a, config


def _pool_event(a: Any, kind: str, ev: tuple[Any, ...],
                capture: tuple[int, Any] | None) -> tuple[int, Any] | None:
    """An empty_cache, or a capture's begin (allocating to a new pool on stream ev[1]) or end
    (its pool released): the capture underway after it, as (stream, pool id) or None."""
    if kind == "empty_cache":
        a.empty_cache()
    elif kind == "begin" and capture is None:
        capture = (ev[1], a.new_pool_id(False))
        a.begin_allocate_to_pool(capture[1], capture[0])
    elif kind == "end" and capture is not None:
        a.end_allocate_to_pool(capture[0])
        a.release_pool(capture[1])
        capture = None
    return capture

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
        a, config = _allocator_on(machine, total, book, conf)
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
                elif kind in ("empty_cache", "begin", "end"):
                    capture = _pool_event(a, kind, ev, capture)
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


# --- an op output's allocation and free: the native FastPath against the Python methods -------

DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int8), np.dtype(np.complex64)]
shape = st.one_of(st.sampled_from([(64,), (8, 8), (0,), (1000,), (3, 0, 2), (300_000,)]),
                  st.lists(st.integers(1, 300), min_size=1, max_size=3).map(tuple))
out = st.tuples(st.just("out"), shape, st.sampled_from(DTYPES))
free = st.tuples(st.just("free"), st.integers(0, 63))
output_event = st.one_of(  # (mostly outputs made and dropped, as in a program)
    out, out, out, out, free, free, free,
    st.tuples(st.just("hold"), st.integers(0, 63)),  # someone keeps the view past its storage
    st.tuples(st.just("record"), st.integers(0, 63), st.sampled_from(STREAMS)),
    st.tuples(st.just("stream"), st.sampled_from(STREAMS)),  # the current stream changes
    st.tuples(st.just("empty_cache")),
    st.tuples(st.just("begin"), st.sampled_from(STREAMS)),
    st.tuples(st.just("end")),
    st.tuples(st.just("fraction"), st.sampled_from([None, 0.9])),
)


def _run_outputs(book: Any, events: list[tuple[Any, ...]], conf: str,
                 total: int) -> tuple[list[Any], int]:
    """Op outputs (allocate_array, as the dispatcher makes them) and their deaths; everything
    observable, in order: each output's place, which earlier output's arrays it reused (kept
    views), storage_of, the statistics after every event, the final layout. And how many
    outputs the native fast path made (0 on the pure book)."""
    seen: list[Any] = []
    made = [0]
    with _machine.fresh(total) as machine, _numpy_is(ARENA):
        ARENA.top = 0
        dev = machine.devices[0]
        a, config = _allocator_on(machine, total, book, conf)
        python_path = a._allocate  # (counts the outputs the Python path made)

        def counted(*args: Any) -> Any:
            made[0] += 1
            return python_path(*args)
        a._allocate = counted  # type: ignore[method-assign,assignment]
        segments: dict[int, int] = {}
        kept_alive: list[Any] = []
        views: list[Any] = []  # weak references to every output's view, in order
        live: list[Any] = []  # (view, storage)
        held: list[Any] = []
        capture: tuple[int, Any] | None = None
        for ev in events:
            kind = ev[0]
            try:
                if kind == "out":
                    stream = dev.current_stream()
                    nbytes = int(np.prod(ev[1])) * ev[2].itemsize
                    if capture is not None and capture[0] == stream:  # (the graph's pool)
                        storage = a.allocate(nbytes, capture[1])
                        view = np.ndarray(ev[1], ev[2], buffer=storage.root)
                    else:
                        view, storage = a.allocate_array(ev[1], ev[2], nbytes)
                    reused = [i for i, r in enumerate(views) if r() is view]
                    views.append(weakref.ref(view))
                    b = storage.block
                    place = None
                    if b is not None:
                        if id(b.segment) not in segments:
                            segments[id(b.segment)] = len(segments)
                            kept_alive.append(b.segment)
                        place = (segments[id(b.segment)], b.address - b.segment.base, b.size)
                    seen.append((place, reused, view.shape, str(view.dtype),
                                 a.storage_of(view) is storage, storage.hazard,
                                 storage.span()[1] - storage.span()[0]))
                    live.append((view, storage))
                    del view, storage, b
                elif kind == "free" and live:
                    del live[ev[1] % len(live)]
                elif kind == "hold" and live:
                    held.append(live[ev[1] % len(live)][0])
                elif kind == "record" and live:
                    a.record_stream(live[ev[1] % len(live)][1], ev[2])
                elif kind == "stream":
                    dev.set_current_stream(None, ev[1])
                elif kind in ("empty_cache", "begin", "end"):
                    capture = _pool_event(a, kind, ev, capture)
                elif kind == "fraction":
                    a.memory_fraction = ev[1]
            except (OutOfMemoryError, RuntimeError) as e:
                seen.append((type(e).__name__, str(e)))
            seen.append(a.stats.as_nested_dict(config.max_split_size))
        live.clear()
        seen.append(a.stats.as_nested_dict(config.max_split_size))
        seen.append(len(a._by_root))  # every dead storage's root forgotten
        seen.append([(p.id, [(g.size, g.stream) for g in p.segments], len(p.free_small),
                      len(p.free_large)) for p in a.pools.values()])
        if capture is not None:
            a.end_allocate_to_pool(capture[0])
        outputs = sum(1 for ev in events if ev[0] == "out")
    return seen, outputs - made[0]


# (outputs the fast path made, outputs made) per example (see test_the_fast_path_ran)
FAST_PATH_RUNS: list[tuple[int, int]] = []


@settings(max_examples=int(os.environ.get("FAKE_TORCH_DIFF_EXAMPLES", "300")), deadline=None)
# the common loop: an output dies after the next one is made (two blocks alternate, the
# arrays of each are handed out again); a held view is not reused; record_stream's free waits
@example([("out", (64,), DTYPES[0]), ("out", (64,), DTYPES[0]), ("free", 0),
          ("out", (64,), DTYPES[0]), ("free", 0), ("out", (64,), DTYPES[0]), ("hold", 0),
          ("free", 0), ("out", (64,), DTYPES[0]), ("record", 0, 11), ("free", 0),
          ("out", (8, 8), DTYPES[0])], "", 96 * MB)
@given(st.lists(output_event, min_size=30, max_size=90), st.sampled_from(SETTINGS),
       st.sampled_from([96 * MB, 512 * MB]))
def test_outputs_agree_on_both_cores(events: list[tuple[Any, ...]], conf: str,
                                     total: int) -> None:
    """allocate_array and the storages' deaths: the native core (its FastPath, falling back to
    the Python methods in the rare cases) and the pure one give identical places, reuse of
    kept arrays, registry, statistics and layouts."""
    native, fast = _run_outputs(NATIVE, events, conf, total)
    pure, none = _run_outputs(PURE, events, conf, total)
    assert native == pure
    assert none == 0
    FAST_PATH_RUNS.append((fast, sum(1 for ev in events if ev[0] == "out")))


def test_the_fast_path_ran() -> None:
    """The differential test above exercised the fast path (it is not the Python path twice):
    run after it, in file order."""
    if not FAST_PATH_RUNS:
        pytest.skip("run with test_outputs_agree_on_both_cores")
    assert NATIVE is not None
    if not isinstance(_allocator._LOCK, NATIVE.RLock):
        pytest.skip("FAKE_TORCH_PURE=1: the allocators run without the FastPath")
    fast, outputs = (sum(n) for n in zip(*FAST_PATH_RUNS, strict=True))
    # (9-18%: the rest are new segments, other streams' first outputs, captures underway, a
    # memory fraction, rounding by divisions, pending frees: the Python path's cases)
    assert fast >= outputs // 20, (fast, outputs)


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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**40), min_size=81, max_size=81),
       st.lists(st.one_of(row, st.just("fold")), max_size=120))
def test_rows_agree(v: list[int], steps: list[Any]) -> None:
    """The statistics' queue of block events: the native Rows (eight C integers a row) against
    the pure one (a list of tuples, folded row by row under 48 rows and with numpy's cumsum
    over more), appending and folding in the same order."""
    assert NATIVE is not None
    pure, native = PURE.Rows(), NATIVE.Rows()
    expected, got = list(v), list(v)
    for step in steps:
        if step == "fold":
            pure.fold_into(expected, EVENT_STATS)
            native.fold_into(got, EVENT_STATS)
        else:
            pure.append(step)
            native.append(step)
        assert len(native) == len(pure)
        assert native.tolist() == list(pure)
    pure.fold_into(expected, EVENT_STATS)
    native.fold_into(got, EVENT_STATS)
    assert got == expected and len(native) == 0


def test_rows_refuse_what_is_not_a_row() -> None:
    """A row is a tuple of 8 ints whose pool type is 0 or 4; anything else is refused, and the
    queue is left as it was."""
    assert NATIVE is not None
    rows = NATIVE.Rows()
    with pytest.raises(TypeError, match="a statistics row is a tuple of 8 ints"):
        rows.append((0, 1, 2))
    with pytest.raises(ValueError, match="a row's pool type is 0 or 4"):
        rows.append((2, 0, 0, 0, 0, 0, 0, 0))
    with pytest.raises(ValueError, match="a fold takes a list of 81 numbers"):
        rows.fold_into([0] * 80, EVENT_STATS)
    assert len(rows) == 0


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
    code = ("from fake_torch._simulated import _allocator_book as b, _dispatch as d; "
            "from fake_torch._simulated._native_core import CORE; "
            "from fake_torch._simulated._machine import MACHINE; "
            "print(CORE, MACHINE.devices[0].allocator._book is b.BOOK, "
            "(d.launch is d.PURE_LAUNCH) == (CORE != 'native'))")
    out = subprocess.run([sys.executable, "-c", code],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == (["pure", "Python", "True", "True"] if pure else ["native", "True", "True"])


def test_in_use() -> None:
    """The allocator runs the book selected at import (CI runs the suite on both)."""
    assert _machine.MACHINE.devices[0].allocator._book is _allocator_book.BOOK
    assert (_allocator_book.BOOK is NATIVE) == (os.environ.get("FAKE_TORCH_PURE", "") in
                                                ("", "0"))


# --- the native lock and the fast path's manners with threads ---------------------------------


def test_native_rlock_is_threading_rlock() -> None:
    """The allocator's native RLock against threading.RLock: reentrancy, ownership, releasing
    what is not held, non-blocking and timed acquires from another thread."""
    assert NATIVE is not None

    def from_another_thread(lock: Any, other: list[Any]) -> None:
        other += [lock.acquire(blocking=False), lock.acquire(timeout=0.01), lock._is_owned()]

    locks: tuple[Any, ...] = (NATIVE.RLock(), threading.RLock())
    for lock in locks:
        seen: list[Any] = [lock.acquire(), lock.acquire(blocking=False), lock._is_owned()]
        other: list[Any] = []
        t = threading.Thread(target=from_another_thread, args=(lock, other))
        t.start()
        t.join()
        lock.release()
        seen.append(lock._is_owned())
        lock.release()
        seen.append(lock._is_owned())
        with pytest.raises(RuntimeError, match="cannot release un-acquired lock"):
            lock.release()
        with lock:
            seen.append(lock._is_owned())
        with pytest.raises(ValueError, match="can't specify a timeout for a non-blocking call"):
            lock.acquire(blocking=False, timeout=1)
        assert (seen, other) == ([True, True, True, True, False, True], [False, False, False])


def test_an_output_waits_for_another_threads_allocator_call() -> None:
    """While another thread is inside an allocator call (it holds the lock; the GIL passes
    between threads meanwhile), an output's allocation and a storage's free on this thread
    wait for it, as the Python path does: the fast path never runs beside it."""
    x = torch.empty(1000, device="cuda")
    baseline = torch.cuda.memory_allocated()
    inside, leave = threading.Event(), threading.Event()

    def allocator_call() -> None:
        with _allocator._LOCK:
            inside.set()
            leave.wait(5)

    t = threading.Thread(target=allocator_call)
    t.start()
    inside.wait(5)
    done: list[Any] = []

    def ops() -> None:
        nonlocal x
        done.append(torch.empty(64, device="cuda"))
        del x
        done.append(torch.cuda.memory_allocated())

    worker = threading.Thread(target=ops)
    worker.start()
    worker.join(0.2)
    assert done == []  # waiting for the lock
    leave.set()
    t.join()
    worker.join(5)
    assert done[1] == baseline - 4096 + 512  # x freed, the new output allocated
    done.clear()
    assert torch.cuda.memory_allocated() == baseline - 4096


def test_a_storage_in_a_garbage_cycle_frees_its_block() -> None:
    """A native Storage caught in a reference cycle is freed by the cyclic collector (its
    finalizer runs before anything is cleared, as a Python __del__ does)."""
    gc.collect()
    baseline = torch.cuda.memory_allocated()
    t = torch.empty(1000, device="cuda")
    cycle: list[Any] = [t._storage]
    cycle.append(cycle)
    del t, cycle
    assert torch.cuda.memory_allocated() == baseline + 4096
    gc.collect()
    assert torch.cuda.memory_allocated() == baseline


def test_native_storage_is_a_storage() -> None:
    """The attributes the rest of fake_torch reads and writes behave as the Python class's."""
    assert NATIVE is not None
    t = torch.empty(16, device="cuda")
    s = t._storage
    if not isinstance(_allocator._LOCK, NATIVE.RLock):
        pytest.skip("FAKE_TORCH_PURE=1: the Python Storage is in use")
    assert type(s) is NATIVE.Storage
    start = int(t._a.__array_interface__["data"][0])
    assert s.span() == (start, start + 64) and s.block.address == start
    assert s.hazard is None and s.view is t._a and s.root is t._a.base
    s.hazard = "a capture's output before any replay"
    assert s.hazard == "a capture's output before any replay" and weakref.ref(s)() is s
    with pytest.raises(AttributeError):
        setattr(s, "other", 1)  # noqa: B010  # (no such slot)
    with pytest.raises(TypeError):
        type("Sub", (NATIVE.Storage,), {})(None, np.empty(0, np.uint8))


def _quiet_state() -> tuple[Any, Any]:
    """numpy's error-state context variable and its "ignore everything" value."""
    try:
        from numpy._core._ufunc_config import (  # type: ignore[attr-defined]
            _extobj_contextvar,
            _make_extobj,
        )
    except ImportError:
        pytest.skip("numpy's error state is not a context variable here")
    return _extobj_contextvar, _make_extobj(all="ignore")


def _pure_ufunc_kernel(fn: np.ufunc) -> Any:
    """The pure core's kernel for `fn` (what ufunc_kernel_of makes without the native core)."""
    from fake_torch._kernels._elementwise import ufunc_kernel
    return lambda out, *xs: ufunc_kernel(out, *xs, fn=fn)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([np.add, np.multiply, np.subtract, np.divide, np.exp, np.negative,
                        np.maximum, np.fmod, np.logaddexp]),
       st.sampled_from([np.float32, np.float64, np.int32]),
       st.lists(st.sampled_from([0.0, -1.5, 2.0, 3e38, -3e38, np.inf, -np.inf, np.nan, 7.0]),
                min_size=1, max_size=9))
def test_quiet_ufunc_agrees(fn: np.ufunc, dtype: Any, values: list[float]) -> None:
    """The native ufunc kernel against the pure one: the same output bits, no warning either
    way (overflow, 0/0, inf - inf), and numpy's error state the caller's again after."""
    assert NATIVE is not None
    native = NATIVE.QuietUfunc(fn, *_quiet_state(), fn.nin)
    pure = _pure_ufunc_kernel(fn)
    with np.errstate(all="ignore"):
        x = np.array(values).astype(dtype)
    inputs = [x, x[::-1].copy()][:fn.nin]
    before = np.geterr()

    def outcome(kernel: Any) -> tuple[Any, ...]:
        out = np.empty_like(x)
        try:
            kernel(out, *inputs)
        except Exception as e:  # (an int output of divide: numpy's casting error, both ways)
            return type(e), str(e)
        return ("ran", out.tobytes())

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert outcome(native) == outcome(pure)
    assert np.geterr() == before


def test_quiet_ufunc_raises_as_the_ufunc_and_restores_the_error_state() -> None:
    """A ufunc that raises (shapes that do not broadcast into out) raises the same through
    the native kernel, numpy's error state restored; a wrong call is refused."""
    assert NATIVE is not None
    native = NATIVE.QuietUfunc(np.add, *_quiet_state(), 2)
    before = np.geterr()
    with pytest.raises(ValueError) as got:
        native(np.empty(3), np.ones(4), np.ones(4))
    with pytest.raises(ValueError) as expected:
        _pure_ufunc_kernel(np.add)(np.empty(3), np.ones(4), np.ones(4))
    assert str(got.value) == str(expected.value)
    assert np.geterr() == before
    with pytest.raises(TypeError, match="a ufunc kernel takes out and 2 inputs"):
        native(np.empty(3), np.ones(3))
    with pytest.raises(ValueError, match="a ufunc kernel takes 1 to 8 inputs"):
        NATIVE.QuietUfunc(np.add, *_quiet_state(), 0)


def test_tensor_maker_makes_what_make_makes() -> None:
    """The native TensorMaker's Tensor against Tensor._make's: the same class and attributes,
    set in the same order (a Tensor frees them in that order: its array before its storage,
    which the allocator's kept views rely on); None storage or dtype, or a watcher set (the
    sanitizer's), are _make's own."""
    from fake_torch import _tensor
    from fake_torch._tensor import Tensor
    assert NATIVE is not None
    maker = NATIVE.TensorMaker(Tensor, vars(_tensor), Tensor._make)
    x = torch.randn(8, device="cuda")
    args = (x._a, x._device, x._storage, x._dtype)
    native, pure = maker(*args), Tensor._make(*args)
    assert type(native) is type(pure) is Tensor
    assert list(vars(native)) == list(vars(pure))
    assert all(vars(native)[k] is vars(pure)[k] for k in vars(pure))
    cpu = torch.ones(3)
    made = maker(cpu._a, cpu._device, None, None)  # (no storage, no dtype: _make's)
    assert made._dtype is torch.float32 and made._storage is None
    seen: list[Any] = []
    saved = _tensor._watch
    _tensor._watch = seen.append
    try:
        watched = maker(*args)
    finally:
        _tensor._watch = saved
    assert seen == [watched]
    with pytest.raises(TypeError):
        maker(*args, extra=1)
