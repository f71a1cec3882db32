"""torch.cuda streams and events, simulated: work runs at once, so every stream is idle and every
event complete; what is checked is the API (which stream is current, what each call returns) and
what CUDA forbids while a stream is capturing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

SYNC_ERROR = "CUDA error: operation not permitted when stream is capturing"


def test_the_default_stream_is_current_until_another_is_entered() -> None:
    default = torch.cuda.default_stream()
    assert torch.cuda.current_stream() == default == torch.cuda.default_stream("cuda:0")
    assert default.cuda_stream == 0  # the legacy default stream's handle
    s = torch.cuda.Stream()
    assert s != default and s.cuda_stream != 0 and s.device == torch.device("cuda", 0)
    assert len({s, torch.cuda.Stream(), default}) == 3  # streams hash by identity of the queue
    with torch.cuda.stream(s):
        assert torch.cuda.current_stream() == s
        inner = torch.cuda.Stream(priority=-1)
        with torch.cuda.stream(inner):
            assert torch.cuda.current_stream() == inner
        assert torch.cuda.current_stream() == s
        with torch.cuda.stream(None):  # None: no change
            assert torch.cuda.current_stream() == s
    assert torch.cuda.current_stream() == default
    assert isinstance(torch.cuda.stream(s), torch.cuda.StreamContext)


def test_set_stream_switches_the_current_stream() -> None:
    s = torch.cuda.Stream()
    torch.cuda.set_stream(s)
    try:
        assert torch.cuda.current_stream() == s
    finally:
        torch.cuda.set_stream(torch.cuda.default_stream())
    assert torch.cuda.current_stream() == torch.cuda.default_stream()


def test_work_on_a_side_stream_is_computed_and_counted_the_same() -> None:
    x = torch.tensor([1.0, 2.0], device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())  # the side stream sees x
    LaunchCounter.reset()
    with torch.cuda.stream(s):
        y = x * 3
    torch.cuda.current_stream().wait_stream(s)  # and the default stream sees y
    assert LaunchCounter.n == 1
    np.testing.assert_array_equal(y.numpy(force=True), [3.0, 6.0])


def test_events_record_wait_query_and_synchronize() -> None:
    s = torch.cuda.Stream()
    start = torch.cuda.Event(enable_timing=True)
    assert (start.enable_timing, start.blocking, start.interprocess) == (True, False, False)
    start.record()  # on the current stream
    recorded = s.record_event()  # a new event, recorded on s
    assert isinstance(recorded, torch.cuda.Event)
    mine = torch.cuda.Event()
    assert s.record_event(mine) is mine
    torch.cuda.current_stream().wait_event(recorded)
    mine.wait()  # the current stream waits for it
    mine.wait(s)
    assert start.query() and recorded.query() and s.query()  # all work already done
    start.synchronize()
    s.synchronize()
    torch.cuda.synchronize()


def test_stream_ordering_calls_are_allowed_during_capture_and_syncs_are_not() -> None:
    x = torch.ones(2, device="cuda")
    g = CUDAGraph()
    event = torch.cuda.Event()
    side = torch.cuda.Stream()
    with torch.cuda.graph(g):
        capture_stream = torch.cuda.current_stream()
        event.record()  # records and waits become edges of the graph: allowed
        side.wait_stream(capture_stream)
        capture_stream.wait_event(event)
        y = x + 1
    g.replay()
    np.testing.assert_array_equal(y.numpy(force=True), [2.0, 2.0])
    syncs: list[Callable[[], None]] = [capture_stream.synchronize, event.synchronize,
                                       torch.cuda.synchronize]
    for sync in syncs:
        h = CUDAGraph()
        with pytest.raises(RuntimeError, match="previous error during capture") as info, \
                torch.cuda.graph(h):
            sync()
        assert str(info.value.__context__).startswith(SYNC_ERROR)
