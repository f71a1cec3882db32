"""allocate_array hands a block's arrays out again to a request of the same bytes, shape and
dtype when nobody else held them. Oracle: `allocate` followed by a fresh view (the path it
replaces) on the same event sequences: the same blocks, offsets and statistics; and the arrays
handed out read and write the block's own memory."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fake_torch as torch
from fake_torch._simulated import _machine
from fake_torch._simulated._allocator import CachingAllocator

F32 = np.dtype(np.float32)
SHAPES = [(64,), (8, 8), (128,), (16, 32), (1000,), (300_000,), (0,)]
event = st.one_of(
    st.tuples(st.just("alloc"), st.sampled_from(SHAPES)),
    st.tuples(st.just("free"), st.integers(0, 31)),
    st.tuples(st.just("hold"), st.integers(0, 31)),  # someone keeps the array past its storage
    st.tuples(st.just("empty_cache")),
)


def _rand(n: int) -> torch.Tensor:
    return torch.tensor(np.random.default_rng(n).standard_normal(n, dtype=np.float32),
                        device="cuda")


def _run(events: list[tuple[Any, ...]], kept_views: bool) -> list[Any]:
    seen: list[Any] = []
    with _machine.fresh(1 << 30) as machine:
        dev = machine.devices[0]
        a = CachingAllocator(1 << 30, timeline=dev.timeline, captures=dev.captures,
                             current_stream=dev.current_stream)
        bases: dict[int, int] = {}
        live: list[Any] = []
        held: list[np.ndarray] = []
        for ev in events:
            if ev[0] == "alloc":
                shape = ev[1]
                nbytes = int(np.prod(shape)) * 4
                if kept_views:
                    view, storage = a.allocate_array(shape, F32, nbytes)
                else:
                    storage = a.allocate(nbytes)
                    view = np.ndarray(shape, F32, buffer=storage.root)
                assert view.shape == shape and view.dtype == F32 and view.base is storage.root
                if storage.block is not None:
                    seg = storage.block.segment
                    start = int(view.__array_interface__["data"][0])
                    assert start == storage.block.address  # the block's own memory
                    view[...] = len(seen)  # (a write the next reader of the block must see)
                    bases.setdefault(id(seg), len(bases))
                    seen.append((bases[id(seg)], storage.block.address - seg.base))
                live.append((view, storage))
            elif ev[0] == "free" and live:
                del live[ev[1] % len(live)]
            elif ev[0] == "hold" and live:
                held.append(live[ev[1] % len(live)][0])
            elif ev[0] == "empty_cache":
                a.empty_cache()
            seen.append(a.stats.as_nested_dict(a.config.max_split_size))
        live.clear()
        seen.append(a.stats.as_nested_dict(a.config.max_split_size))
    return seen


@settings(max_examples=150, deadline=None)
@given(st.lists(event, max_size=60))
def test_same_blocks_and_statistics_as_fresh_views(events: list[tuple[Any, ...]]) -> None:
    assert _run(events, True) == _run(events, False)


def test_an_output_nobody_held_is_handed_out_again() -> None:
    a, b = _rand(64), _rand(64)
    first = a + b
    arr, ptr = weakref.ref(first._a), first.data_ptr()  # (a weak reference holds nothing)
    del first
    second = a + b
    assert second._a is arr() and second.data_ptr() == ptr  # the same block, its arrays kept
    np.testing.assert_array_equal(second.cpu().numpy(), a.cpu().numpy() + b.cpu().numpy())


def test_a_held_array_is_not_handed_out_again() -> None:
    a, b = _rand(64), _rand(64)
    first = a + b
    held, ptr = first._a, first.data_ptr()  # (as a recorded launch holds its arrays)
    del first
    second = a * b
    assert second._a is not held and second.data_ptr() == ptr  # the same block, new arrays
    np.testing.assert_array_equal(held, second._a)  # one memory: the holder sees the new values


def test_empty_cache_lets_the_kept_arrays_go() -> None:
    a = _rand(300_000)  # (a large-pool segment of its own)
    b = a * 2
    del b
    allocator = _machine.current_device().allocator
    assert allocator._kept
    torch.cuda.empty_cache()
    assert not allocator._kept  # no root holds a released segment's memory
