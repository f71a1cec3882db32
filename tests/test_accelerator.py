"""torch.Stream, torch.Event and torch.accelerator (the device-generic API) over the simulated
CUDA device, and torch.cuda._sleep. Real torch's CPU build is the oracle for what it can run
(cpu streams and events, the accelerator module's names and signatures, through
test_api_conformance.py); the rest follows torch's Python source (torch/accelerator).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

SYNC_ERROR = "CUDA error: operation not permitted when stream is capturing"


def test_cpu_streams_and_events_read_as_torchs() -> None:
    real = pytest.importorskip("torch")
    for make in (lambda lib: lib.Stream(device="cpu"), lambda lib: lib.Event(device="cpu")):
        theirs, ours = make(real), make(torch)
        assert repr(ours) == repr(theirs)
        assert ours.query() is theirs.query() is True
    s = torch.Stream(device="cpu")
    t = real.Stream(device="cpu")
    assert (s.device_type, s.device_index, s.stream_id) == (t.device_type, t.device_index,
                                                            t.stream_id)
    assert s.is_capturing() is t.is_capturing() is False


def test_a_torch_stream_is_the_current_cuda_stream_inside_its_block() -> None:
    s = torch.Stream()  # the current accelerator's: cuda
    assert s.device == torch.device("cuda", 0) and s.device_type == 1
    assert s.native_handle() != 0
    with s as entered:
        assert entered is s
        assert torch.cuda.current_stream().stream_id == s.stream_id
        assert torch.accelerator.current_stream() == s
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    assert isinstance(torch.cuda.Stream(), torch.Stream)  # cuda's streams are torch.Streams
    torch.accelerator.set_stream(s)
    try:
        assert torch.cuda.current_stream().cuda_stream == s.native_handle()
    finally:
        torch.accelerator.set_stream(torch.cuda.default_stream())


def test_events_and_is_capturing() -> None:
    e = torch.Event(enable_timing=True)
    assert e.device == torch.device("cuda", 0) and e.event_id == 0
    side = torch.Stream()
    side.record_event(e)
    assert e.event_id > 0 and e.query()
    ce = torch.cuda.Event(external=True)  # torch 2.13's signature
    assert ce.external and repr(ce) == "<torch.cuda.Event uninitialized>"
    g = CUDAGraph()
    with torch.cuda.graph(g):
        capturing = torch.cuda.current_stream()
        assert capturing.is_capturing() and torch.cuda.is_current_stream_capturing()
        assert not side.is_capturing()
        ce.record()  # an external event node: allowed in capture
        y = torch.ones(1, device="cuda") + 1
    assert not capturing.is_capturing()
    g.replay()
    np.testing.assert_array_equal(y.numpy(force=True), [2.0])


def test_the_accelerator_is_the_simulated_cuda_device() -> None:
    acc = torch.accelerator
    assert acc.current_accelerator() == torch.device("cuda") and acc.is_available()
    assert (acc.device_count(), acc.current_device_index()) == (1, 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert acc.current_device_idx() == 0
    assert caught[0].category is FutureWarning
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    acc.set_device_index("cuda:0")
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator"):
        acc.set_device_index("cpu")
    assert torch.float32 in acc.get_device_capability()["supported_dtypes"]
    t = torch.empty(1000, device="cuda")
    assert acc.memory_allocated() == torch.cuda.memory_allocated() == 4096
    assert acc.get_memory_info() == torch.cuda.mem_get_info()
    del t
    acc.empty_cache()
    acc.empty_host_cache()
    assert acc.memory_reserved() == 0 and acc.max_memory_reserved() == 2 * 1024**2
    acc.reset_peak_memory_stats()
    assert acc.max_memory_reserved() == 0
    acc.synchronize()
    with pytest.raises(RuntimeError, match="previous error during capture") as info, \
            torch.cuda.graph(CUDAGraph()):
        acc.synchronize()
    assert str(info.value.__context__).startswith(SYNC_ERROR)


def test_accelerator_graph_captures_the_current_stream() -> None:
    x = torch.ones(3, device="cuda")
    g = torch.accelerator.Graph(pool=torch.cuda.graph_pool_handle())
    with torch.Stream(), g:
        y = x * 4
    LaunchCounter.reset()
    g.replay()
    assert LaunchCounter.n == 1
    np.testing.assert_array_equal(y.numpy(force=True), [4.0] * 3)
    with pytest.raises(RuntimeError, match="Unknown capture error mode"), torch.Stream():
        torch.accelerator.Graph(capture_error_mode="loud").capture_begin()


def test_cuda_sleep_is_one_launch_and_capturable() -> None:
    LaunchCounter.reset()
    torch.cuda._sleep(1000)
    assert dict(LaunchCounter.by_op) == {"_sleep": 1}
    g = CUDAGraph()
    with torch.cuda.graph(g):
        torch.cuda._sleep(50)
    assert g.kernel_names == ["_sleep"]
    LaunchCounter.reset()
    g.replay()
    assert LaunchCounter.n == 1
    with pytest.raises(TypeError, match="incompatible function arguments"):
        torch.cuda._sleep(1.5)  # type: ignore[arg-type]
