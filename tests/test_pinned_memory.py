"""Pinned host memory: Tensor.pin_memory(), is_pinned(), `pin_memory=True` on the factories, and
what pinning changes for a CUDA graph: a host<->device copy of pinned memory may be captured,
and the graph then reads (or writes) the host bytes at every replay, as a GPU's DMA does.

Real torch's CPU build cannot pin (no accelerator), so the oracle for pinning itself is ATen's
source (Memory.cpp, Copy.cu, tensor_new.cpp), cited per test; what the CPU build can answer
(unpinned tensors, warnings, error texts, values) is compared with it directly.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import fake_torch as ft
from fake_torch import LaunchCounter
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

SYNC_ERROR = "CUDA error: operation not permitted when stream is capturing"
FAILED_CAPTURE = "CUDA error: operation failed due to a previous error during capture"
COPY_ERROR = ("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU "
              "tensor is pinned. Please use tensor.pin_memory() or allocate the tensor with "
              "pin_memory=True.")


def _np(t: ft.Tensor) -> np.ndarray:
    return np.asarray(t.numpy(force=True))


# --- Tensor.pin_memory / is_pinned --------------------------------------------------------------

def test_pin_memory_copies_into_pinned_memory_keeping_the_strides() -> None:
    x = ft.arange(6.0).reshape(2, 3).t()  # column-major: torch's _pin_memory keeps strides
    LaunchCounter.reset()
    p = x.pin_memory()
    assert LaunchCounter.n == 0  # a host memcpy, no device launch
    assert p.is_pinned() and not x.is_pinned()
    assert p.stride() == x.stride() == (1, 3) and p.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(_np(p), _np(x))
    assert p.pin_memory() is p  # already pinned: itself
    assert p[1:].is_pinned() and p.t().is_pinned()  # views look into the same pinned memory
    assert p.clone().is_pinned() is False  # a new buffer is ordinary host memory
    b = ft.ones(3, dtype=ft.bfloat16).pin_memory()
    assert b.dtype is ft.bfloat16 and b.is_pinned()


def test_unpinned_tensors_and_the_deprecated_device_argument_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for lib in (torch, ft):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert lib.empty(3).is_pinned(device="cpu") is False
        (warning,) = caught
        assert warning.category is DeprecationWarning
        assert str(warning.message).startswith("The argument 'device' of Tensor.is_pinned() is "
                                               "deprecated. Please do not pass this argument.")
    assert ft.ones(2, device="cuda").is_pinned() is False  # device memory is never "pinned"


def test_pin_memory_of_a_device_tensor_raises_atens_error() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:
        torch.empty(3, device="meta").pin_memory()  # the CPU build's device tensor
    with pytest.raises(RuntimeError) as ours:
        ft.empty(3, device="cuda").pin_memory()
    # ATen's _pin_memory: "cannot pin '" + self.toString() + "' only dense CPU tensors ..."
    assert str(ours.value) == str(theirs.value).replace("MetaFloatType", "CUDAFloatType")


# --- pin_memory=True on the factories -------------------------------------------------------------

FACTORIES: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "tensor": lambda lib, kw: lib.tensor([[1.0, 2.0], [3.0, 4.0]], **kw),
    "empty": lambda lib, kw: lib.empty(2, 3, **kw).fill_(7),
    "zeros": lambda lib, kw: lib.zeros(2, 3, **kw),
    "ones": lambda lib, kw: lib.ones(4, dtype=lib.int32, **kw),
    "full": lambda lib, kw: lib.full((2,), 3.5, **kw),
    "arange": lambda lib, kw: lib.arange(5, **kw),
    "linspace": lambda lib, kw: lib.linspace(0.0, 1.0, 5, **kw),
    "eye": lambda lib, kw: lib.eye(3, **kw),
    "empty_like": lambda lib, kw: lib.empty_like(lib.ones(2), **kw).fill_(2),
    "zeros_like": lambda lib, kw: lib.zeros_like(lib.ones(2, 2), **kw),
    "ones_like": lambda lib, kw: lib.ones_like(lib.ones(3), **kw),
    "full_like": lambda lib, kw: lib.full_like(lib.ones(3), 9, **kw),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories_take_pin_memory(name: str) -> None:
    torch = pytest.importorskip("torch")
    make = FACTORIES[name]
    theirs = make(torch, {"pin_memory": False})  # torch takes the keyword (pinning needs a GPU)
    plain = make(ft, {"pin_memory": False})
    LaunchCounter.reset()
    pinned = make(ft, {"pin_memory": True})
    assert LaunchCounter.n == 0  # host memory: no device launch
    assert pinned.is_pinned() and not plain.is_pinned()
    assert pinned.dtype == plain.dtype and str(theirs.dtype) == str(plain.dtype).replace(
        "fake_torch", "torch")
    np.testing.assert_array_equal(_np(pinned), theirs.numpy())


def test_pin_memory_errors_as_torch() -> None:
    torch = pytest.importorskip("torch")
    # tensor_new.cpp refuses before pinning, so the CPU build raises these exact errors too
    sources: list[Callable[[Any], Any]] = [lambda lib: np.zeros(2), lambda lib: lib.zeros(2)]
    for source in sources:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as theirs:
                torch.tensor(source(torch), pin_memory=True)
            with pytest.raises(RuntimeError) as ours:
                ft.tensor(source(ft), pin_memory=True)
        assert str(ours.value) == str(theirs.value)
    # ATen's empty_cuda: "Only dense CPU tensors can be pinned"
    for make in (lambda: ft.zeros(2, device="cuda", pin_memory=True),
                 lambda: ft.empty_like(ft.ones(2, device="cuda"), pin_memory=True)):
        with pytest.raises(RuntimeError, match=r"^Only dense CPU tensors can be pinned$"):
            make()


def test_tensor_on_cuda_with_pin_memory_is_one_copy_from_pinned_memory() -> None:
    LaunchCounter.reset()
    t = ft.tensor([1.0, 2.0], device="cuda", pin_memory=True)
    assert (LaunchCounter.n, dict(LaunchCounter.by_kind)) == (1, {"memcpy_h2d": 1})
    np.testing.assert_array_equal(_np(t), [1.0, 2.0])


# --- copies in a CUDA graph capture ---------------------------------------------------------------

def test_a_pinned_h2d_copy_is_captured_and_reads_host_memory_at_each_replay() -> None:
    host = ft.zeros(4).pin_memory()
    static = ft.zeros(4, device="cuda")
    g = CUDAGraph()
    with ft.cuda.graph(g):
        static.copy_(host, non_blocking=True)  # a cudaMemcpyAsync node of the graph
        y = static * 2
    assert g.kernel_names == ["copy_", "mul"]
    for values in ([1.0, 2.0, 3.0, 4.0], [5.0, 5.0, 5.0, 5.0]):
        host.copy_(ft.tensor(values))  # the host writes its pinned buffer ...
        LaunchCounter.reset()
        g.replay()  # ... and the replay's DMA reads what is there now
        assert LaunchCounter.n == 1
        np.testing.assert_array_equal(_np(y), np.array(values) * 2)


def test_cuda_non_blocking_of_a_pinned_tensor_stays_one_memcpy_in_and_out_of_capture() -> None:
    host = ft.arange(3.0).pin_memory()
    LaunchCounter.reset()
    d = host.cuda(non_blocking=True)
    assert (LaunchCounter.n, dict(LaunchCounter.by_kind)) == (1, {"memcpy_h2d": 1})
    np.testing.assert_array_equal(_np(d), [0.0, 1.0, 2.0])
    g = CUDAGraph()
    with ft.cuda.graph(g):
        LaunchCounter.reset()
        d2 = host.cuda(non_blocking=True)
        assert dict(LaunchCounter.by_kind) == {"memcpy_h2d": 1}
    host.fill_(8.0)
    g.replay()
    np.testing.assert_array_equal(_np(d2), [8.0, 8.0, 8.0])


def test_a_pinned_d2h_copy_is_captured_and_writes_host_memory_at_each_replay() -> None:
    x = ft.tensor([1.0, 2.0, 3.0], device="cuda")
    host = ft.empty(3, pin_memory=True)
    g = CUDAGraph()
    with ft.cuda.graph(g):
        host.copy_(x * 10, non_blocking=True)
    x.copy_(ft.tensor([4.0, 5.0, 6.0]))
    before = host.numpy().copy()
    g.replay()  # asynchronous: the copy lands when the device gets there
    assert not ft.cuda.current_stream().query()
    np.testing.assert_array_equal(host.numpy(), before)  # read too early: not there yet
    ft.cuda.synchronize()
    np.testing.assert_array_equal(host.numpy(), [40.0, 50.0, 60.0])


HOST_COPIES: dict[str, Callable[[ft.Tensor, ft.Tensor], object]] = {
    "pageable source": lambda dev, pinned: dev.copy_(ft.ones(4), non_blocking=True),
    "pageable destination": lambda dev, pinned: ft.empty(4).copy_(dev, non_blocking=True),
    # a blocking copy converts on the host first, into a fresh (pageable) temporary
    "blocking dtype conversion": lambda dev, pinned: dev.copy_(pinned.double()
                                                               .pin_memory()),
    # a non-contiguous host tensor is made contiguous in a fresh temporary first
    "non-contiguous pinned": lambda dev, pinned: dev.view(2, 2).copy_(
        pinned.view(2, 2).t(), non_blocking=True),
    "tensor(list, device=cuda)": lambda dev, pinned: ft.tensor([1.0], device="cuda"),
    "cpu()": lambda dev, pinned: dev.cpu(),
}


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
@pytest.mark.parametrize("copy", HOST_COPIES.values(), ids=HOST_COPIES.keys())
def test_a_copy_whose_host_side_is_pageable_raises_during_capture(
        copy: Callable[[ft.Tensor, ft.Tensor], object]) -> None:
    dev = ft.zeros(4, device="cuda")
    pinned = ft.ones(4).pin_memory()
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match="^" + re.escape(COPY_ERROR) + "$"), \
            ft.cuda.graph(g):
        copy(dev, pinned)


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_a_blocking_copy_of_pinned_memory_syncs_and_fails_the_capture() -> None:
    """memcpy_and_sync: the copy is fine, the stream synchronize after it is not."""
    dev = ft.zeros(4, device="cuda")
    pinned = ft.ones(4).pin_memory()
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match="^" + re.escape(FAILED_CAPTURE)) as info, \
            ft.cuda.graph(g):
        dev.copy_(pinned)  # non_blocking=False
    assert str(info.value.__context__).startswith(SYNC_ERROR)
    with pytest.raises(RuntimeError, match=re.escape(FAILED_CAPTURE)), ft.cuda.graph(CUDAGraph()):
        ft.tensor([1.0], device="cuda", pin_memory=True)  # tensor() copies blocking, too


def test_converting_non_blocking_copies_of_pinned_memory_are_legal_in_capture() -> None:
    """With non_blocking the conversion runs on the device, so the DMA reads the pinned
    tensor itself (ATen's copy_kernel_cuda)."""
    pinned = ft.tensor([1.5, 2.5], dtype=ft.float64).pin_memory()
    dev = ft.zeros(2, device="cuda")
    g = CUDAGraph()
    with ft.cuda.graph(g):
        dev.copy_(pinned, non_blocking=True)
    pinned.fill_(3.25)
    g.replay()
    np.testing.assert_array_equal(_np(dev), [3.25, 3.25])


def test_to_cpu_non_blocking_returns_pinned_memory() -> None:
    """ATen's _to_copy pins the output of a non-blocking device-to-host copy."""
    x = ft.tensor([1.0, 2.0], device="cuda")
    LaunchCounter.reset()
    y = x.to("cpu", non_blocking=True)
    assert (LaunchCounter.n, dict(LaunchCounter.by_kind)) == (1, {"memcpy_d2h": 1})
    assert y.is_pinned() and not x.cpu().is_pinned()
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])


# --- the caching host allocator under them (fake_torch/_simulated/_host_allocator.py) -------------

@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_torch_cuda_graph_gives_cached_pinned_blocks_back_before_capturing() -> None:
    ft.cuda.init()
    address = ft.ones(4).pin_memory().data_ptr()  # freed at once: cached in the default pool
    assert ft.ones(4).pin_memory().data_ptr() == address  # ... and handed out again
    with ft.cuda.graph(CUDAGraph()):  # torch.cuda.graph.__enter__: torch._C._host_emptyCache()
        pass
    stats = ft.cuda.host_memory_stats()
    assert (stats["allocations.current"], stats["num_host_free"]) == (0, 1)


def test_the_pinned_output_of_a_non_blocking_d2h_copy_waits_for_the_stream() -> None:
    """copy_kernel_cuda records an event on the pinned side of a non-blocking copy: freed,
    the block is reused only after the allocator processed that event."""
    ft.cuda.init()
    y = ft.tensor([1.0, 2.0], device="cuda").to("cpu", non_blocking=True)
    address = y.data_ptr()
    del y
    assert ft.cuda.host_memory_stats()["active_requests.current"] == 1  # behind its event
    ft.cuda.synchronize()  # the device reaches the event
    assert ft.empty(2).pin_memory().data_ptr() == address  # processed first, then reused
    assert ft.cuda.host_memory_stats()["active_requests.freed"] == 1
