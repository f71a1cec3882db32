"""The native door (fake_torch/_simulated/_native_door.c) against the pure-Python door, its
oracle (fake_torch/_simulated/_dispatch.py `launch`, kept as `_dispatch.PURE_LAUNCH`).

The same random sequences of launches (light kernels of every size, with and without params,
with a scalar operand, heavy and special ops, empty outputs, on three streams and from a second
thread), events recorded and waited on, stream and device synchronizations, CUDA graph replays,
with and without a profiler listening, an observer or a per-thread tally, run on a fresh machine
through each door; the launch counts (total, by op, by kind, per thread), the simulated clocks
(host, busy, every stream's ready time, every event's time, each step's correlation id), the
profiler's spans and the order the kernels ran in must be identical after every step.

Skipped when the native door was not built (no C compiler at install)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import fake_torch as torch
from fake_torch._simulated import _counter, _dispatch, _machine, _native_core
from fake_torch._simulated._counter import LaunchCounter
from fake_torch._simulated._timeline import Span

NATIVE, WHY_NOT = _native_core.built_native()
pytestmark = pytest.mark.skipif(NATIVE is None, reason=f"no native door: {WHY_NOT}")

STREAMS = 3  # the default stream and two side streams
EVENTS = 3
SIZES = (1, 64, 4096, 1 << 21)  # the last: ~25 MB moved, longer than a launch call (a queue)

launch_step = st.tuples(st.just("launch"), st.sampled_from(("add", "mul", "mm", "_sleep")),
                        st.sampled_from((*SIZES, 0)), st.integers(0, STREAMS - 1),
                        st.booleans())  # (op, size, stream, with params or a scalar)
step = st.one_of(
    launch_step, launch_step, launch_step,
    st.tuples(st.just("record"), st.integers(0, EVENTS - 1), st.integers(0, STREAMS - 1)),
    st.tuples(st.just("wait_event"), st.integers(0, STREAMS - 1), st.integers(0, EVENTS - 1)),
    st.tuples(st.just("wait_stream"), st.integers(0, STREAMS - 1), st.integers(0, STREAMS - 1)),
    st.tuples(st.just("sync_stream"), st.integers(0, STREAMS - 1)),
    st.tuples(st.just("sync_event"), st.integers(0, EVENTS - 1)),
    st.tuples(st.just("sync")),
    st.tuples(st.just("replay"), st.integers(0, STREAMS - 1)),
    st.tuples(st.just("profiler")),  # a listener on, or off again
    st.tuples(st.just("observer")),
    st.tuples(st.just("per_thread")),
    st.tuples(st.just("thread"), st.sampled_from(SIZES)),  # a launch from another thread
    st.tuples(st.just("device"), st.integers(0, 1)),  # the current device (two on the machine)
)


class _Run:
    """One run of a sequence on a fresh machine: what it observed, step by step."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, int]] = []  # (op, launch number) as the kernels ran
        self.spans: list[tuple[Any, ...]] = []
        self.observed: list[str] = []
        self.trace: list[tuple[Any, ...]] = []
        self.streams = [torch.cuda.current_stream()] + [torch.cuda.Stream()
                                                        for _ in range(STREAMS - 1)]
        self.handles = {s.handle: i for i, s in enumerate(self.streams)}
        self.handles[_machine.MACHINE.devices[1].default_handle] = 10  # cuda:1's default
        self.device = 0
        self.events = [torch.cuda.Event(enable_timing=True) for _ in range(EVENTS)]
        self.buffers: dict[int, tuple[np.ndarray, ...]] = {
            n: (np.full(n, 1.5, np.float32), np.full(n, 2.0, np.float32),
                np.empty(n, np.float32)) for n in (*SIZES, 0)}
        self.square: tuple[np.ndarray, ...] = (
            np.ones((16, 16), np.float32), np.ones((16, 16), np.float32),
            np.empty((16, 16), np.float32))
        self.launches = 0
        self.remove_listener: Any = None
        self.observer: Any = None
        self.tally: Any = None
        zeros: Any = torch.zeros  # (typed as it is once the package's stubs are regenerated)
        x = zeros(64, device="cuda")
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):  # (captured outside the compared steps' counts)
            (x * 2 + 1).sum()
        for h in sorted(_machine.MACHINE.timeline.ready):  # the capture's own stream
            self.handles.setdefault(h, len(self.handles))

    def kernel(self, op: str) -> Any:
        self.launches += 1
        number = self.launches
        ran = self.ran

        def run(*args: Any, **params: Any) -> None:
            ran.append((op, number))
            if len(args) == 3:  # (out, a, b): what the kernel does matters little, only when
                np.add(args[1], args[2], out=args[0])  # it runs
        return run

    def launch(self, op: str, n: int, extra: bool) -> None:
        a, b, out = self.square if op == "mm" else self.buffers[n]
        if op == "_sleep":
            _dispatch.launch("_sleep", self.kernel(op), (), (), {"cycles": 20_000 * (1 + extra)},
                             on_cuda=True)
        elif op == "mul" and extra:  # a scalar operand
            _dispatch.launch(op, self.kernel(op), (out,), (a, 3.0), on_cuda=True)
        elif extra:
            _dispatch.launch(op, self.kernel(op), (out,), (a, b), {"alpha": 1}, on_cuda=True)
        else:
            _dispatch.launch(op, self.kernel(op), (out,), (a, b), None, on_cuda=True)

    def do(self, s: tuple[Any, ...]) -> None:
        what = s[0]
        if what == "launch":
            _, op, n, stream, extra = s
            if self.device:  # on cuda:1's default stream
                self.launch(op, n, extra)
                return
            with torch.cuda.stream(self.streams[stream]):
                self.launch(op, n, extra)
        elif what == "record":
            self.events[s[1]].record(self.streams[s[2]])
        elif what == "wait_event":
            self.streams[s[1]].wait_event(self.events[s[2]])
        elif what == "wait_stream":
            self.streams[s[1]].wait_stream(self.streams[s[2]])
        elif what == "sync_stream":
            self.streams[s[1]].synchronize()
        elif what == "sync_event":
            self.events[s[1]].synchronize()
        elif what == "sync":
            torch.cuda.synchronize()
        elif what == "replay":
            with torch.cuda.stream(self.streams[s[1]]):
                self.graph.replay()
        elif what == "profiler":
            if self.remove_listener is None:
                self.remove_listener = _machine.add_listener(self.span)
            else:
                self.remove_listener()
                self.remove_listener = None
        elif what == "observer":
            if self.observer is None:
                self.observer = _dispatch.add_observer(lambda op, kind: self.observed.append(op))
            else:
                self.observer.remove()
                self.observer = None
        elif what == "per_thread":
            self.tally = LaunchCounter.this_thread()
        elif what == "device":
            self.device = s[1]
            _machine.MACHINE.set_current(s[1])
        elif what == "thread":
            worker = threading.Thread(target=self.launch, args=("add", s[1], False))
            worker.start()
            worker.join()

    def span(self, span: Span) -> None:
        self.spans.append((span.track, span.name, span.kind, span.start_ns, span.end_ns,
                           self.handles.get(span.stream, span.stream), span.correlation))

    def snapshot(self) -> tuple[Any, ...]:
        tl = _machine.MACHINE.timeline
        return (tl.host_ns, tl.busy_ns,
                sorted((self.handles[h], t) for h, t in tl.ready.items()),
                [tl.event_time(e) for e in self.events], len(tl._heap),
                LaunchCounter.n, dict(LaunchCounter.by_op), dict(LaunchCounter.by_kind),
                None if self.tally is None else (self.tally.n, dict(self.tally.by_op)),
                _dispatch._local.correlation)

    def close(self) -> None:
        _machine.MACHINE.set_current(0)
        if self.remove_listener is not None:
            self.remove_listener()
        if self.observer is not None:
            self.observer.remove()
        torch.cuda.synchronize()


@pytest.fixture
def restore_counter() -> Iterator[None]:
    per_thread = LaunchCounter._per_thread
    yield
    LaunchCounter._per_thread = per_thread


def run(steps: list[tuple[Any, ...]], door: Any, monkeypatch: pytest.MonkeyPatch) -> _Run:
    """`steps` on a fresh machine through `door`, observed after each."""
    monkeypatch.setattr(_dispatch, "launch", door)
    LaunchCounter._per_thread = False
    try:
        with _machine.fresh(num_devices=2):
            r = _Run()
            LaunchCounter.reset()
            if _counter._local.tally is not None:  # (this thread's, from an earlier run)
                _counter._local.tally.reset()
            _dispatch._local.correlation = 0
            for s in steps:
                r.do(s)
                r.trace.append((s, *r.snapshot()))
            r.close()
            r.trace.append(("end", *r.snapshot()))
            return r
    finally:
        monkeypatch.undo()


def compare(steps: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch) -> None:
    native_door = _native_door()
    pure, native = run(steps, _dispatch.PURE_LAUNCH, monkeypatch), run(steps, native_door,
                                                                        monkeypatch)
    for p, n in zip(pure.trace, native.trace, strict=True):
        assert p == n, f"after {p[0]}: pure {p[1:]} != native {n[1:]}"
    assert pure.ran == native.ran
    assert pure.spans == native.spans
    assert pure.observed == native.observed


def _native_door() -> Any:
    """The door `_dispatch` installs when the native core is in use (made here also when
    FAKE_TORCH_PURE keeps it out of `_dispatch`)."""
    if _dispatch.launch is not _dispatch.PURE_LAUNCH:
        return _dispatch.launch
    return _dispatch.native_door(NATIVE, _dispatch.PURE_LAUNCH)


EXAMPLES = 200


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@example(steps=[("launch", "add", 64, 0, False)] * 3)
@example(steps=[("launch", "add", 1 << 21, 1, False), ("launch", "mul", 64, 1, True),  # queued
          ("launch", "add", 64, 0, True), ("record", 0, 1), ("wait_event", 0, 0),
          ("launch", "add", 64, 0, False), ("sync",)])
@example(steps=[("profiler",), ("launch", "add", 64, 0, False), ("profiler",),
          ("launch", "add", 64, 1, False), ("replay", 1), ("launch", "add", 64, 1, False),
          ("per_thread",), ("launch", "add", 64, 2, False), ("thread", 64)])
@example(steps=[("launch", "add", 64, 1, False), ("device", 1), ("launch", "add", 64, 0, False),
                ("thread", 64), ("launch", "add", 64, 0, False), ("device", 0),
                ("launch", "add", 64, 2, False), ("thread", 1), ("launch", "add", 64, 2, False)])
@example(steps=[("launch", "_sleep", 0, 1, True), ("launch", "add", 64, 1, False),
          ("launch", "mm", 64, 1, False), ("launch", "add", 0, 1, False), ("sync_stream", 1)])
@given(steps=st.lists(step, max_size=40))
def test_both_doors_agree(steps: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch,
                          restore_counter: None) -> None:
    compare(steps, monkeypatch)


def test_the_common_launch_takes_the_native_branch(restore_counter: None) -> None:
    """The launch the door is for does not reach the pure door (else the differential test
    would compare the pure door with itself)."""
    calls: list[str] = []

    def pure(*args: Any, **kwargs: Any) -> None:
        calls.append(args[0])
        _dispatch.PURE_LAUNCH(*args, **kwargs)

    spy = _dispatch.native_door(NATIVE, pure)
    a, out = np.ones(64, np.float32), np.empty(64, np.float32)
    LaunchCounter._per_thread = False
    with _machine.fresh():
        LaunchCounter.reset()
        spy("add", lambda o, x, y: np.add(x, y, out=o), (out,), (a, a), None, on_cuda=True)
        spy("add", lambda o, x, y: None, (out,), (a, a), on_cuda=True, kind="kernel")
        assert calls == []
        spy("mm", lambda o, x, y: None, (out,), (a, a), on_cuda=True)  # heavy: _cost's time
        assert calls == []
        spy("_sleep", lambda o, cycles: None, (out,), (), {"cycles": 10}, on_cuda=True)  # Python's
        spy("add", lambda o, x, y: None, (out,), (a, a), on_cuda=False)  # cpu: Python's
        assert calls == ["_sleep", "add"]
        assert LaunchCounter.n == 4  # (the cpu launch is not counted)
    np.testing.assert_array_equal(out, 2 * a)
    with _machine.fresh(num_devices=2):  # another device, another thread: still native
        _machine.MACHINE.set_current(1)
        spy("add", lambda o, x, y: None, (out,), (a, a), on_cuda=True)
        _machine.MACHINE.set_current(0)
        worker = threading.Thread(target=lambda: spy("add", lambda o, x, y: None, (out,),
                                                     (a, a), on_cuda=True))
        worker.start()
        worker.join()
        assert calls == ["_sleep", "add"]
        assert sorted(_machine.MACHINE.timeline.ready) == [-1, 0]


def test_a_launch_waits_for_the_timeline_lock_held_on_another_thread() -> None:
    """The timeline's lock held by a Python-level timeline call on another thread: the launch
    waits for it (the native door does not step around it)."""
    ran = threading.Event()
    a, out = np.ones(64, np.float32), np.empty(64, np.float32)
    with _machine.fresh():
        lock = _machine.MACHINE.timeline.lock
        lock.acquire()
        try:
            worker = threading.Thread(target=lambda: _dispatch.launch(
                "add", lambda o, x, y: ran.set(), (out,), (a, a), on_cuda=True))
            worker.start()
            time.sleep(0.2)
            assert not ran.is_set()
        finally:
            lock.release()
        worker.join()
        assert ran.is_set()


def test_a_failing_kernel_is_counted_and_releases_the_lock() -> None:
    """A kernel that raises: the launch was counted and placed (as the pure door does), the
    error reaches the caller, and the timeline's lock is free again."""
    a, out = np.ones(64, np.float32), np.empty(64, np.float32)

    def boom(o: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
        raise ValueError("boom")

    seen = []
    for door in (_dispatch.PURE_LAUNCH, _native_door()):
        with _machine.fresh():
            LaunchCounter.reset()
            with pytest.raises(ValueError, match=r"^boom$"):
                door("add", boom, (out,), (a, a), on_cuda=True)
            tl = _machine.MACHINE.timeline
            assert tl.lock.acquire(blocking=False)
            tl.lock.release()
            seen.append((LaunchCounter.n, tl.host_ns, tl.busy_ns, dict(tl.ready)))
    assert seen[0] == seen[1]


# --- the timeline's lock ------------------------------------------------------------------------

def _locks() -> list[Any]:
    assert NATIVE is not None
    return [threading.RLock(), NATIVE.RLock()]


@pytest.mark.parametrize("which", ["RLock", "native"])
def test_the_native_lock_behaves_as_an_rlock(which: str) -> None:
    """Re-entry by its owner, release errors, a non-blocking or timed acquire failing while
    another thread holds it: threading.RLock's behaviour (the oracle), on both."""
    lock = _locks()[which == "native"]
    with lock:
        assert lock.acquire() is True  # re-entry
        lock.release()
        assert lock._is_owned()
        seen: list[Any] = []
        other = threading.Thread(target=lambda: seen.extend(
            [lock.acquire(False), lock.acquire(timeout=0.05), lock._is_owned()]))
        other.start()
        other.join()
        assert seen == [False, False, False]
    assert not lock._is_owned()
    with pytest.raises(RuntimeError, match=r"^cannot release un-acquired lock$"):
        lock.release()
    with pytest.raises(ValueError, match=r"^can't specify a timeout for a non-blocking call$"):
        lock.acquire(False, 1.0)


@pytest.mark.parametrize("which", ["RLock", "native"])
def test_the_native_lock_excludes_and_wakes_waiters(which: str) -> None:
    """Threads that wait for it are woken when it is released, and only one holds it at a
    time: four threads adding under it lose no update."""
    lock = _locks()[which == "native"]
    total = [0]

    def add() -> None:
        for _ in range(2000):
            with lock:
                value = total[0]
                if value % 97 == 0:
                    time.sleep(0)  # (the others try meanwhile)
                total[0] = value + 1

    workers = [threading.Thread(target=add) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert total[0] == 8000
    assert lock.acquire(False)
    lock.release()


def test_the_timeline_uses_the_cores_lock() -> None:
    expected = threading.RLock if _native_core.NATIVE is None else _native_core.NATIVE.RLock
    assert type(_machine.MACHINE.timeline.lock) is type(expected())
