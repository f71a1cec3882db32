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


ROUNDS = 20  # each stress test runs its two threads this many times (one gc pass each end:
# a full collection in the whole suite's process costs a good part of a second)


def test_two_threads_allocating_never_share_or_lose_a_block(
        unraisable: list[Any], fast_switching: None) -> None:
    gc.collect()
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

    for _ in range(ROUNDS):
        _run_threads(work)
        assert torch.cuda.memory_allocated() == baseline  # every block of the round came back
    gc.collect()
    assert wrong == []
    assert [u.exc_value for u in unraisable] == []
    assert torch.cuda.memory_allocated() == baseline


def test_a_storage_dying_inside_an_allocation_is_freed_after_it() -> None:
    """The cyclic collector may run a Storage's finalizer while the allocator is mid-call on
    the same thread: that free waits for the call's end, then happens."""
    from fake_torch._simulated import _allocator

    baseline = torch.cuda.memory_allocated()
    x = torch.empty(1000, device="cuda")
    with _allocator._LOCK:  # as if an allocator call were underway on this thread
        del x  # the last reference: the Storage dies now
        assert torch.cuda.memory_allocated() > baseline  # ... its block is not yet free
        assert len(_allocator._late) == 1
        _allocator._free_late()  # what the call does as it ends
    assert _allocator._late == []
    assert torch.cuda.memory_allocated() == baseline
    y = torch.empty(1000, device="cuda")  # and a real call frees a late death as it ends
    with _allocator._LOCK:
        del y
        assert len(_allocator._late) == 1
    torch.empty(10, device="cuda")
    assert _allocator._late == [] and torch.cuda.memory_allocated() == baseline


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


MODES = ["global", "thread_local", "relaxed"]


def _capture_while_another_thread_works(mode: str, work: Callable[[], Any]
                                        ) -> tuple[Any, Any, BaseException | None]:
    """Thread A captures `y = x + 1` in `mode`; meanwhile thread B runs `work()`. Returns the
    graph, what B's work returned and what it raised."""
    x = torch.ones(4, device="cuda")
    started, done = threading.Event(), threading.Event()
    result: list[Any] = [None, None]

    def other() -> None:
        started.wait()
        try:
            result[0] = work()
        except BaseException as e:  # what B gets is the test's subject
            result[1] = e
        done.set()

    t = threading.Thread(target=other)
    t.start()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g, capture_error_mode=mode):
            x + 1
            started.set()
            done.wait()
    finally:
        started.set()
        t.join()
    return g, result[0], result[1]



@pytest.mark.parametrize("mode", MODES)
def test_another_threads_kernels_run_eagerly_and_stay_out_of_the_graph(mode: str) -> None:
    y = torch.full((3,), 2.0, device="cuda")

    def work() -> Any:
        return (y * 3 + 1).to("cuda")  # kernels on B's own (default) stream: safe calls

    g, out, error = _capture_while_another_thread_works(mode, work)
    assert error is None
    assert g.kernel_names == ["add"]  # A's op only
    g.replay()
    assert out.cpu().tolist() == [7.0, 7.0, 7.0]  # run at once, on B's stream


@pytest.mark.parametrize("mode", MODES)
def test_another_threads_host_read_is_refused_only_in_global_mode(mode: str) -> None:
    """torch.cuda.graph: "global" errors on actions in other threads, "thread_local" only on
    the capturing thread's, "relaxed" on none (CUDA's cudaStreamCaptureMode*). A host read is
    such an action (a copy to the host and a wait)."""
    y = torch.full((3,), 2.0, device="cuda")
    g, out, error = _capture_while_another_thread_works(mode, lambda: y.sum().item())
    if mode == "global":
        assert isinstance(error, RuntimeError)
        assert str(error).startswith("CUDA error: operation not permitted when stream is "
                                     "capturing")
        g.replay()  # a refused stream-level call leaves A's capture whole
    else:
        assert error is None and out == 6.0


@pytest.mark.parametrize("mode", MODES)
def test_another_threads_device_synchronize_in_global_mode_invalidates_the_capture(
        mode: str) -> None:
    if mode != "global":
        _, _, error = _capture_while_another_thread_works(mode, torch.cuda.synchronize)
        assert error is None
        return
    with pytest.raises(RuntimeError, match="operation failed due to a previous error during "
                                           "capture"):
        _, _, error = _capture_while_another_thread_works(mode, torch.cuda.synchronize)


@pytest.mark.parametrize("mode", MODES)
def test_another_threads_cuda_malloc_is_refused_only_in_global_mode(mode: str) -> None:
    """A new segment is a cudaMalloc: potentially unsafe, so refused to other threads while a
    "global" capture is underway (c10's capturing thread makes its own cudaMalloc relaxed)."""
    big = 64 * 1024 * 1024  # bytes: more than any cached free block, a fresh segment
    _, out, error = _capture_while_another_thread_works(
        mode, lambda: torch.empty(big // 4, device="cuda"))
    if mode == "global":
        assert isinstance(error, RuntimeError)
        assert str(error).startswith("CUDA error: operation not permitted when stream is "
                                     "capturing")
    else:
        assert error is None and out.numel() == big // 4


def test_two_threads_capturing_and_working_eagerly(unraisable: list[Any],
                                                   fast_switching: None) -> None:
    """Stress: thread A captures and replays graphs in each mode while thread B computes
    eagerly (safe calls only, no host reads during A's captures); every value checks out."""
    gc.collect()
    baseline = torch.cuda.memory_allocated()
    wrong: list[str] = []
    stop = threading.Event()
    b_results: list[np.ndarray] = []

    def eager() -> None:
        z = torch.arange(8, device="cuda", dtype=torch.float32)
        outs = [z * k for k in range(40)]  # launched while A captures: never in A's graphs
        stop.wait(5)  # host reads once A is done (a "global" capture would refuse them)
        b_results.extend(o.cpu().numpy() for o in outs)

    def capture() -> None:
        x = torch.ones(16, device="cuda")
        for mode in MODES:
            for _ in range(3):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, capture_error_mode=mode):
                    y = x * 2 + 1
                if g.kernel_names != ["mul", "add"]:
                    wrong.append(f"{mode}: {g.kernel_names}")
                g.replay()
                if not np.array_equal(y.cpu().numpy(), np.full(16, 3.0, np.float32)):
                    wrong.append(f"{mode}: values")
        stop.set()

    for _ in range(ROUNDS):
        stop.clear()
        b_results.clear()
        threads = [threading.Thread(target=eager), threading.Thread(target=capture)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert wrong == []
        assert len(b_results) == 40
        for k, r in enumerate(b_results):
            np.testing.assert_array_equal(r, np.arange(8, dtype=np.float32) * k)
    gc.collect()
    assert [u.exc_value for u in unraisable] == []
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() == baseline


def test_the_counter_is_exact_under_threads_and_its_queue_stays_small() -> None:
    """The door queues each launch without a lock; folding it in when read (and every few
    thousand launches) loses none, whatever the threads do meanwhile."""
    from fake_torch._simulated import _counter

    x = torch.ones(2, device="cuda")
    LaunchCounter.reset()

    def work(k: int) -> None:
        for i in range(3000):
            x.add(1)
            if i % 500 == 0:
                assert LaunchCounter.n >= 0  # a read (a fold) racing the other thread's adds

    _run_threads(work)
    assert LaunchCounter.n == 6000 and LaunchCounter.by_op["add"] == 6000
    assert LaunchCounter.by_kind["kernel"] == 6000
    assert len(_counter._queued) == 0  # read: all folded
    for _ in range(10_000):
        x.add(1)
    assert len(_counter._queued) < _counter._FOLD_AT  # unread, yet bounded
    assert LaunchCounter.n == 16_000
