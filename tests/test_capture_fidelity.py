"""What a capture records, as CUDA records it: host operands by value, only the streams that
joined the capture, forks that must be joined back, and the calls a capture forbids.

Real torch here is a CPU build that cannot capture, so each test's oracle is the CUDA or torch
source it cites, plus numpy and the same code run eagerly. Every test runs on a fresh simulated
device (the `fresh_device` fixture in conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

SYNC_ERROR = "CUDA error: operation not permitted when stream is capturing"
FAILED_CAPTURE = "CUDA error: operation failed due to a previous error during capture"
UNJOINED = "CUDA error: capturing stream has unjoined work"
NO_CAPTURE = "Called CUDAGraph::replay without a preceding successful capture."


def _starts(text: str) -> str:
    return "^" + re.escape(text)


def _np(t: torch.Tensor) -> np.ndarray:
    return t.numpy(force=True)


# --- a 0-dim cpu tensor operand is baked at capture ----------------------------------------------
# On a GPU a 0-dim cpu tensor joins a cuda op as a scalar that the host reads at launch and
# passes to the kernel by value (TensorIterator's cpu scalar: `iter.is_cpu_scalar(i)` /
# `iter.scalar_value(i)` in aten/src/ATen/native/cuda/Loops.cuh). A graph records the launch,
# so it replays the value the scalar had at capture, whatever the cpu tensor holds later.

SCALAR_OPS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "mul": lambda x, s: x * s,
    "add": lambda x, s: x + s,
    "rsub": lambda x, s: s - x,
    "div": lambda x, s: x / s,
    "maximum": torch.maximum,
    "where": lambda x, s: torch.where(x > 1, s, x),
}


@pytest.mark.parametrize("op", SCALAR_OPS.values(), ids=SCALAR_OPS.keys())
def test_a_cpu_scalar_operand_is_baked_at_capture(
        op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    x = torch.tensor([0.5, 1.0, 2.0, 3.0], device="cuda")
    s = torch.tensor(2.0)
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = op(x, s)
    expected = _np(op(x, torch.tensor(2.0)))  # eager, with the value at capture
    s.fill_(5.0)  # the cpu tensor changes after capture: the graph does not see it
    g.replay()
    np.testing.assert_array_equal(_np(y), expected)
    s += 1.0
    g.replay()
    np.testing.assert_array_equal(_np(y), expected)
    np.testing.assert_array_equal(_np(op(x, s)), _np(op(x, torch.tensor(6.0))))  # eager: now


def test_an_in_place_update_by_a_cpu_scalar_is_baked_too() -> None:
    acc = torch.zeros(3, device="cuda")
    step = torch.tensor(1.0)
    g = CUDAGraph()
    with torch.cuda.graph(g):
        acc.add_(step)
    step.fill_(10.0)
    g.replay()
    g.replay()
    assert acc.tolist() == [2.0, 2.0, 2.0]  # two replays of "add 1"


def test_a_cuda_scalar_is_read_at_every_replay_the_fix() -> None:
    """The fix for a value that must change between replays: a cuda tensor the graph reads."""
    x = torch.tensor([1.0, 2.0], device="cuda")
    s = torch.tensor(2.0, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x * s
    s.fill_(5.0)
    g.replay()
    assert y.tolist() == [5.0, 10.0]


# --- which streams a capture records -------------------------------------------------------------
# CUDA (programming guide, "Cross-stream Dependencies and Events"): a stream joins a capture by
# waiting on an event recorded in it (torch's `wait_stream` records one and waits on it); work
# on any other stream is not captured but enqueued for execution as usual. PyTorch's CUDA
# semantics notes ("CUDA Graphs", "Usage with multiple streams") fork side streams with
# `side.wait_stream(torch.cuda.current_stream())` inside the capture and join them back with
# `torch.cuda.current_stream().wait_stream(side)` before it ends.

def test_work_on_a_stream_that_never_waited_runs_eagerly_outside_the_graph() -> None:
    a = torch.ones(3, device="cuda")
    side = torch.cuda.Stream()
    g = CUDAGraph()
    LaunchCounter.reset()
    with torch.cuda.graph(g):
        b = a * 2
        with torch.cuda.stream(side):
            assert not torch.cuda.is_current_stream_capturing()
            c = a * 3  # launched now, on `side`: its values are there at once
        assert torch.cuda.is_current_stream_capturing()
    assert dict(LaunchCounter.by_op) == {"fill_": 2, "mul": 2}  # both launched at capture
    assert g.kernel_names == ["mul"]  # but only the capture stream's kernel is in the graph
    side.synchronize()
    assert c.tolist() == [3.0, 3.0, 3.0]
    assert np.isnan(_np(b)).all()  # the captured kernel has not run yet
    LaunchCounter.reset()
    g.replay()
    assert dict(LaunchCounter.by_op) == {"cudaGraphLaunch": 1}
    assert b.tolist() == [2.0, 2.0, 2.0]


def _pool_of(t: torch.Tensor) -> tuple[int, int]:
    """The memory pool of the segment holding `t` (torch.cuda.memory_snapshot's layout)."""
    for seg in torch.cuda.memory_snapshot():
        if seg["address"] <= t.data_ptr() < seg["address"] + seg["total_size"]:
            return tuple(seg["segment_pool_id"])  # type: ignore[return-value]
    raise AssertionError("no segment holds the tensor")


def test_an_eager_side_stream_allocates_from_the_default_pool() -> None:
    """c10's get_pool: only a stream taking part in a capture allocates from its pool."""
    a = torch.ones(1024, device="cuda")
    side = torch.cuda.Stream()
    g = CUDAGraph()
    with torch.cuda.graph(g):
        with torch.cuda.stream(side):
            c = a * 3
        b = a * 2
    assert _pool_of(b) == g.pool() and _pool_of(c) == (0, 0)


def test_a_forked_and_joined_side_stream_is_captured() -> None:
    a = torch.ones(3, device="cuda")
    side = torch.cuda.Stream()
    g = CUDAGraph()
    with torch.cuda.graph(g):
        capture = torch.cuda.current_stream()
        b = a * 2
        side.wait_stream(capture)  # fork: side joins the capture
        with torch.cuda.stream(side):
            assert torch.cuda.is_current_stream_capturing()
            c = b * 3
        capture.wait_stream(side)  # join back
        d = b + c
    assert g.kernel_names == ["mul", "mul", "add"]
    g.replay()
    assert d.tolist() == [8.0, 8.0, 8.0]


def test_a_fork_joined_through_events_is_captured() -> None:
    a = torch.ones(2, device="cuda")
    side = torch.cuda.Stream()
    forked, done = torch.cuda.Event(), torch.cuda.Event()
    g = CUDAGraph()
    with torch.cuda.graph(g):
        forked.record()
        side.wait_event(forked)
        with torch.cuda.stream(side):
            c = a * 5
            done.record()
        torch.cuda.current_stream().wait_event(done)
    assert g.kernel_names == ["mul"]
    g.replay()
    assert c.tolist() == [5.0, 5.0]


@pytest.mark.parametrize("fork", ["wait_stream", "event"])
def test_a_fork_never_joined_back_fails_capture_end_with_cudas_error(fork: str) -> None:
    """cudaStreamEndCapture fails with cudaErrorStreamCaptureUnjoined ("capturing stream has
    unjoined work"), which torch's capture_end raises through AT_CUDA_CHECK."""
    a = torch.ones(2, device="cuda")
    side = torch.cuda.Stream()
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match=_starts(UNJOINED)):
        with torch.cuda.graph(g):
            capture = torch.cuda.current_stream()
            if fork == "wait_stream":
                side.wait_stream(capture)
            else:
                side.wait_event(capture.record_event())
            with torch.cuda.stream(side):
                _ = a * 3  # captured on the fork, never waited for
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    assert not side.is_capturing() and not torch.cuda.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match=_starts(NO_CAPTURE)):
        g.replay()
    with torch.cuda.stream(side):  # the side stream is out of the capture: eager again
        assert (a * 2).tolist() == [2.0, 2.0]


def test_work_forked_after_the_last_join_is_unjoined() -> None:
    a = torch.ones(2, device="cuda")
    side = torch.cuda.Stream()
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match=_starts(UNJOINED)):
        with torch.cuda.graph(g):
            capture = torch.cuda.current_stream()
            side.wait_stream(capture)
            with torch.cuda.stream(side):
                b = a * 3
            capture.wait_stream(side)  # joined ...
            with torch.cuda.stream(side):
                _ = b + 1  # ... but this came after the join
    del b


# --- calls a capture forbids ---------------------------------------------------------------------
# aten/src/ATen/cuda/CUDAGeneratorImpl.cpp guards the cuda generator with assertNotCapturing
# ("<what> during CUDA graph capture. If you need this call to be captured, please file an
# issue. Current cudaStreamCaptureStatus: ..."): its constructor ("Cannot construct a new
# CUDAGeneratorImpl"), and get_state / set_state through the Philox offset they read and write.
# Those checks raise before CUDA is called: the capture itself goes on.

NOT_CAPTURING = ("during CUDA graph capture. If you need this call to be captured, please file "
                 "an issue.")

GENERATOR_CALLS: dict[str, tuple[Callable[[], object], str]] = {
    "get_rng_state": (torch.cuda.get_rng_state,
                      "Cannot call CUDAGeneratorImpl::philox_offset_per_thread"),
    "set_rng_state": (lambda: torch.cuda.set_rng_state(torch.cuda.get_rng_state()),
                      "Cannot call CUDAGeneratorImpl::philox_offset_per_thread"),
    "Generator": (lambda: torch.Generator("cuda"), "Cannot construct a new CUDAGeneratorImpl"),
    "Generator(device=)": (lambda: torch.Generator(device="cuda"),
                           "Cannot construct a new CUDAGeneratorImpl"),
}


@pytest.mark.parametrize(("call", "what"), GENERATOR_CALLS.values(), ids=GENERATOR_CALLS.keys())
def test_generator_state_calls_raise_torchs_error_during_capture(
        call: Callable[[], object], what: str) -> None:
    state = torch.cuda.get_rng_state()  # before: allowed
    x = torch.ones(2, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        with pytest.raises(RuntimeError, match=_starts(f"{what} {NOT_CAPTURING}")):
            call()
    g.replay()  # the check raised before CUDA saw anything: the capture stands
    assert y.tolist() == [2.0, 2.0]
    torch.cuda.set_rng_state(state)  # after: allowed again
    call()


def test_set_rng_state_to_another_seed_is_refused_during_capture() -> None:
    other = torch.cuda.get_rng_state().clone()
    other[0] += 1  # another seed
    x = torch.ones(2, device="cuda")
    with torch.cuda.graph(CUDAGraph()):
        _ = x * 2
        with pytest.raises(RuntimeError, match="set_current_seed can be called during stream "
                                               "capture only if new seed is the same"):
            torch.cuda.set_rng_state(other)


# cudaStreamQuery and cudaEventQuery are illegal while capturing (CUDA programming guide,
# "Prohibited and Unhandled Operations": querying a capturing stream or a captured event; and
# c10's caching allocator defers its own event queries past every capture because "process_events
# involves cudaEventQueries, illegal during CUDA graph capture", CUDACachingAllocator.cpp). torch's
# Stream.query / Event.query raise the CUDA error through C10_CUDA_CHECK, and the capture is
# invalidated. An event never recorded was never created: c10's CUDAEvent::query returns True
# without asking CUDA.

def _recorded_before() -> torch.cuda.Event:
    e = torch.cuda.Event()
    e.record()
    return e


QUERIES: dict[str, Callable[[], object]] = {
    "capture Stream.query": lambda: torch.cuda.current_stream().query(),
    "other Stream.query": lambda: torch.cuda.default_stream().query(),
    "captured Event.query": lambda: torch.cuda.current_stream().record_event().query(),
    "Event.query recorded before": lambda: _EVENT[0].query(),
    "torch.Stream.query": lambda: torch.Stream("cuda").query(),
}
_EVENT: list[torch.cuda.Event] = []


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
def test_a_query_during_capture_raises_cudas_error_and_invalidates_the_capture(
        query: Callable[[], object]) -> None:
    _EVENT[:] = [_recorded_before()]
    x = torch.ones(2, device="cuda")
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match=_starts(FAILED_CAPTURE)) as info:
        with torch.cuda.graph(g):
            _ = x * 2
            query()
    first = info.value.__context__
    assert isinstance(first, RuntimeError) and str(first).startswith(SYNC_ERROR)
    with pytest.raises(RuntimeError, match=_starts(NO_CAPTURE)):
        g.replay()
    assert torch.cuda.current_stream().query() and _EVENT[0].query()  # after: fine


def test_an_unrecorded_event_answers_without_asking_cuda() -> None:
    e = torch.cuda.Event()
    x = torch.ones(2, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        assert e.query() is True
        e.synchronize()  # c10's CUDAEvent::synchronize of an event never created: nothing
    g.replay()
    assert y.tolist() == [2.0, 2.0]


def test_an_eager_kernel_reads_a_cpu_scalar_operand_at_launch() -> None:
    """The device runs a queued kernel later than the host launched it; a 0-dim cpu operand
    was passed by value at launch (TensorIterator's cpu scalar), so writing it afterwards
    changes nothing. torch on a GPU gives 2.0 here (the host is far ahead of the device
    after the 1-second `_sleep`)."""
    x = torch.ones(4, device="cuda")
    s = torch.tensor(2.0)
    torch.cuda._sleep(10**9)  # the device is busy: the mul below waits in the queue
    y = x * s
    s.fill_(5.0)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), [2.0] * 4)
