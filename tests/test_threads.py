"""Several threads on the simulated device: the allocator is safe under concurrent use (c10 guards
its state with a mutex), each thread has its own current stream and launch tally, and a capture
on one thread never takes another thread's work.

The oracle for values is numpy (each thread checks what it wrote); for the allocator, that every
block comes back (memory_allocated() returns to its baseline) and that nothing is raised inside a
finalizer (such errors are only printed: `sys.unraisablehook` collects them here)."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter


@pytest.fixture
def unraisable() -> Iterator[list[Any]]:
    """Errors raised in finalizers (Storage.__del__) while the test runs."""
    seen: list[Any] = []
    old = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        yield seen
    finally:
        sys.unraisablehook = old


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads as often as CPython allows, so that races show up in a short run."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _run_threads(target: Callable[[int], None], n: int = 2) -> None:
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            target(k)
        except BaseException as e:  # a thread's failure is the test's
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("run", range(20))
def test_two_threads_allocating_never_share_or_lose_a_block(
        run: int, unraisable: list[Any], fast_switching: None) -> None:
    baseline = torch.cuda.memory_allocated()
    wrong: list[tuple[int, int]] = []

    def work(k: int) -> None:
        for i in range(300):
            a = torch.full((64 + (i % 7) * 100,), float(k + 1), device="cuda")
            b = a * 2 + 1  # fresh blocks of several sizes, freed at once
            c = torch.empty(300, device="cuda").fill_(k + 1)
            expected_b = np.full(a.shape, 2.0 * (k + 1) + 1, np.float32)
            if not (np.array_equal(b.cpu().numpy(), expected_b)
                    and np.array_equal(c.cpu().numpy(), np.full(300, k + 1, np.float32))):
                wrong.append((k, i))

    _run_threads(work)
    gc.collect()
    assert wrong == []
    assert [u.exc_value for u in unraisable] == []
    assert torch.cuda.memory_allocated() == baseline


def test_a_storage_dying_inside_an_allocation_is_freed_after_it() -> None:
    """The cyclic collector may run a Storage's finalizer while the allocator is mid-call on
    the same thread: that free waits for the call's end, then happens."""
    from fake_torch import _allocator

    baseline = torch.cuda.memory_allocated()
    x = torch.empty(1000, device="cuda")
    storage = x._storage
    assert storage is not None
    guard = _allocator._GUARD
    with guard.lock:
        guard.busy = True  # as if an allocation were underway on this thread
        try:
            del x, storage  # the last references: the Storage dies now
            assert torch.cuda.memory_allocated() > baseline  # ... its block is not yet free
            assert len(guard.late) == 1
        finally:
            guard.busy = False
            _allocator._free_late()
    assert guard.late == []
    assert torch.cuda.memory_allocated() == baseline


def test_each_thread_counts_its_own_launches_and_the_class_counts_all() -> None:
    LaunchCounter.reset()
    mine = LaunchCounter.this_thread()
    mine.reset()
    x = torch.ones(4, device="cuda")
    counts: dict[int, int] = {}
    barrier = threading.Barrier(2)

    def work(k: int) -> None:
        tally = LaunchCounter.this_thread()
        tally.reset()
        barrier.wait()
        for _ in range(5 + 10 * k):
            x.add(1)  # one launch each
        barrier.wait()
        counts[k] = tally.n
        assert tally.by_op["add"] == tally.n

    _run_threads(work)
    assert counts == {0: 5, 1: 15}
    assert mine.n == 1  # this thread's torch.ones (a fill), not the others'
    assert LaunchCounter.n == 1 + 5 + 15  # the class-level tally counts every thread
    mine.reset()
    assert mine.n == 0 and LaunchCounter.n == 21


def test_the_current_stream_is_per_thread() -> None:
    side = torch.cuda.Stream()
    seen: list[Any] = []
    with torch.cuda.stream(side):
        t = threading.Thread(target=lambda: seen.append(torch.cuda.current_stream()))
        t.start()
        t.join()
        assert torch.cuda.current_stream() == side
    assert seen == [torch.cuda.default_stream()]
