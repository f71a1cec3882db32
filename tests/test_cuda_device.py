"""torch.cuda device queries for the one simulated GPU (cuda:0), and the cuda random state.

Real torch here is a CPU build, so these are checked against torch's documented behaviour and
its Python-side argument errors (which a CPU build still raises before touching a driver)."""

from __future__ import annotations

from typing import Any

import pytest
from oracles import NoHostSync

import fake_torch as ft
import fake_torch.cuda as cuda
from fake_torch._simulated import _dispatch
from fake_torch._simulated._allocator import DEVICE


def test_availability_and_counts() -> None:
    assert cuda.is_available() is True
    assert cuda.device_count() == 1
    assert cuda.current_device() == 0
    assert cuda.is_initialized()  # current_device() initialises, as in torch
    cuda.init()
    assert cuda.is_initialized()
    assert cuda.is_bf16_supported()


def test_device_properties() -> None:
    props = cuda.get_device_properties(0)
    assert props is not None and props == cuda.get_device_properties()
    assert props.name == cuda.get_device_name() == cuda.get_device_name(0)
    assert "fake_torch simulated" in props.name
    assert (props.major, props.minor) == cuda.get_device_capability() == (9, 0)
    assert props.total_memory == DEVICE.total_bytes  # the simulated allocator's capacity
    assert props.multi_processor_count == 132 and props.warp_size == 32
    assert repr(props).startswith(f"_CudaDeviceProperties(name='{props.name}', major=9, minor=0")
    for spelled in ("cuda", "cuda:0", ft.device("cuda", 0), ft.device("cuda")):
        assert cuda.get_device_properties(spelled) == props


@pytest.mark.parametrize("bad", [1, 7, "cuda:1", -1])
def test_properties_of_a_missing_device(bad: Any) -> None:
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda.get_device_properties(bad)


def test_cpu_is_not_a_cuda_device() -> None:
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.get_device_name("cpu")
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.set_device(ft.device("cpu"))
    with pytest.raises(ValueError, match=r"Expected a torch\.device with a specified index or "
                                         r"an integer, but got:cuda"):
        cuda.set_device("cuda")


def test_set_device() -> None:
    cuda.set_device(0)
    cuda.set_device("cuda:0")
    cuda.set_device(-1)  # negative: a no-op
    assert cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        cuda.set_device(1)


def test_device_context_manager() -> None:
    with cuda.device(0):
        assert cuda.current_device() == 0
    with cuda.device(None), cuda.device(-1), cuda.device("cuda:0"):
        assert cuda.current_device() == 0
    ctx = cuda.device(1)  # like torch: the index is checked on entry
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"), ctx:
        pass
    with cuda.device_of(ft.zeros(1, device="cuda")), cuda.device_of(ft.zeros(1)):
        assert cuda.current_device() == 0


def test_synchronize_is_a_host_sync() -> None:
    ft.LaunchCounter.reset()
    cuda.synchronize()
    cuda.synchronize(0)
    assert ft.LaunchCounter.n == 0
    with _dispatch.push_mode(NoHostSync()), pytest.raises(RuntimeError, match="synchronize"):
        cuda.synchronize()


def test_cuda_seeding_api() -> None:
    cuda.manual_seed(3)
    a = ft.rand(2, device="cuda").numpy(force=True)
    cuda.manual_seed_all(3)
    assert (ft.rand(2, device="cuda").numpy(force=True) == a).all()
    assert cuda.initial_seed() == 3
    cuda.seed()  # a non-deterministic seed: 63 random bits
    assert cuda.initial_seed() != 3
    cuda.seed_all()
    assert isinstance(cuda.initial_seed(), int)
    state = cuda.get_rng_state("cuda:0")
    b = ft.rand(2, device="cuda").numpy(force=True)
    cuda.set_rng_state_all([state])
    assert (ft.rand(2, device="cuda").numpy(force=True) == b).all()
    assert len(cuda.default_generators) == 1
    assert cuda.default_generators[0].device == ft.device("cuda", 0)


def test_graphs_streams_and_memory_come_from_their_own_modules() -> None:
    """torch.cuda re-exports them; each lives in the module torch keeps it in."""
    from fake_torch.cuda import graphs, memory, streams

    assert cuda.CUDAGraph is graphs.CUDAGraph and cuda.graph is graphs.graph
    assert cuda.Stream is streams.Stream
    assert cuda.memory_allocated is memory.memory_allocated
