"""Torch names vLLM's model loader and kernels import: torch.multiprocessing.reductions (tensor
sharing; CUDA IPC within one process), torch.nn.parameter's lazy parameters, the global module
registration hooks, torch.utils._python_dispatch and torch.library.triton_op / wrap_triton; each
against real torch (CPU build) where it runs there."""

from __future__ import annotations

import inspect
import pickle
from typing import Any

import numpy as np
import pytest

import fake_torch as ft
from fake_torch.multiprocessing import reductions
from fake_torch.nn import parameter
from fake_torch.nn.modules import module as ft_module
from fake_torch.utils import _python_dispatch as ft_pd


def _torch() -> Any:
    return pytest.importorskip("torch")


# --- torch.multiprocessing.reductions -----------------------------------------------------------

def test_multiprocessing_is_a_package_with_reductions() -> None:
    assert hasattr(ft.multiprocessing, "__path__")
    assert ft.multiprocessing.reductions is reductions
    assert callable(ft.multiprocessing.spawn) and callable(ft.multiprocessing.get_context)


def test_reduce_cpu_tensor_rebuilds_equal_view_as_torch() -> None:
    torch = _torch()
    for lib in (torch, ft):
        x = lib.arange(6, dtype=lib.float32).reshape(2, 3).t()
        fn, args = lib.multiprocessing.reductions.reduce_tensor(x)
        y = fn(*args)
        assert fn.__name__ == "rebuild_tensor" and type(y) is lib.Tensor
        assert y.data_ptr() == x.data_ptr() and y.stride() == x.stride() == (1, 3)
        np.testing.assert_array_equal(y.numpy(), x.numpy())
        p = lib.nn.Parameter(lib.ones(2), requires_grad=False)
        fn, args = lib.multiprocessing.reductions.reduce_tensor(p)
        q = fn(*args)
        assert type(q) is lib.nn.Parameter and q.requires_grad is False


def test_reduce_cuda_tensor_args_and_same_process_alias() -> None:
    x = ft.arange(12, dtype=ft.float32, device="cuda").reshape(3, 4)[1:]
    fn, args = reductions.reduce_tensor(x)
    assert fn is reductions.rebuild_cuda_tensor and len(args) == 15
    assert args[0] is ft.Tensor and tuple(args[1]) == (2, 4) and args[3] == 4
    assert args[5] is ft.float32 and args[6] == 0 and isinstance(args[7], bytes)
    args = pickle.loads(pickle.dumps(args))  # what vLLM sends over its socket
    with ft.LaunchCounter.expect(0):  # sharing is metadata
        y = reductions.rebuild_cuda_tensor(*args)
    assert y.data_ptr() == x.data_ptr() and y.device == x.device
    y[0, 0] = 100.0  # the same simulated memory
    assert x[0, 0].item() == 100.0
    del x  # the rebuilt tensor keeps the block allocated
    assert reductions.rebuild_cuda_tensor(*args)[0, 0].item() == 100.0


def test_rebuild_cuda_tensor_from_another_process_is_refused() -> None:
    _, args = reductions.reduce_tensor(ft.ones(4, device="cuda"))
    args = list(args)
    args[7] = args[7].replace(b"ipc:", b"ipc:9", 1)
    with pytest.raises(NotImplementedError, match="rebuild_cuda_tensor of a handle from another"):
        reductions.rebuild_cuda_tensor(*args)


def test_reductions_signatures_match_torch() -> None:
    torch = _torch()
    from torch.multiprocessing import reductions as real

    for name in ("reduce_tensor", "rebuild_cuda_tensor", "rebuild_tensor", "init_reductions"):
        assert (list(inspect.signature(getattr(reductions, name)).parameters)
                == list(inspect.signature(getattr(real, name)).parameters)), name
    x = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf"):
        real.reduce_tensor(x)


# --- torch.nn.parameter ------------------------------------------------------------------------

def test_uninitialized_parameter_as_torch() -> None:
    torch = _torch()
    for lib in (torch, ft):
        nnp = lib.nn.parameter
        p = nnp.UninitializedParameter(dtype=lib.float16)
        assert repr(p) == "<UninitializedParameter>" and nnp.is_lazy(p)
        assert isinstance(p, lib.nn.Parameter) and p.requires_grad and p.dtype == lib.float16
        assert p.size() == (0,) and type(p.cpu()) is nnp.UninitializedParameter
        assert type(p.to(lib.float32)) is lib.Tensor
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
            p.shape  # noqa: B018
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in"):
            lib.add(p, 1)
        assert repr(pickle.loads(pickle.dumps(p))) == "<UninitializedParameter>"
        p.materialize((2, 3))
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3)
        assert p.dtype == lib.float16 and not nnp.is_lazy(p)
        b = nnp.UninitializedBuffer()
        assert type(b.to(lib.float16)) is nnp.UninitializedBuffer and not b.requires_grad
        b.materialize((4,), dtype=lib.int32)
        assert type(b) is lib.Tensor and b.dtype == lib.int32
        m = lib.nn.Module()
        m.w = nnp.UninitializedParameter()
        assert list(dict(m.named_parameters())) == ["w"]


def test_parameter_module_names_match_torch() -> None:
    torch = _torch()
    for name in ("UninitializedParameter", "UninitializedBuffer"):
        real = getattr(torch.nn.parameter, name)
        ours = getattr(parameter, name)
        assert str(inspect.signature(ours.__new__)).split(" ->")[0].replace(
            "DeviceLike | None", "").count(",") == str(inspect.signature(real.__new__)).count(",")
        assert inspect.signature(ours.materialize).parameters.keys() == (
            inspect.signature(real.materialize).parameters.keys())


# --- global registration hooks -----------------------------------------------------------------

@pytest.mark.parametrize("lib_name", ["torch", "fake_torch"])
def test_module_registration_hooks_as_torch(lib_name: str) -> None:
    lib = _torch() if lib_name == "torch" else ft
    mod = lib.nn.modules.module
    seen: list[tuple[str, str]] = []

    def on_module(m: Any, name: str, sub: Any) -> Any:
        seen.append(("module", name))
        return lib.nn.Identity() if name == "swap" else None

    def on_param(m: Any, name: str, p: Any) -> None:
        seen.append(("param", name))

    def on_buffer(m: Any, name: str, b: Any) -> Any:
        seen.append(("buffer", name))
        return b * 2

    handles = [mod.register_module_module_registration_hook(on_module),
               mod.register_module_parameter_registration_hook(on_param),
               mod.register_module_buffer_registration_hook(on_buffer)]
    try:
        root = lib.nn.Module()
        root.lin = lib.nn.Linear(2, 2)
        root.add_module("swap", lib.nn.ReLU())
        root.register_buffer("buf", lib.ones(2))
        assert type(root.swap).__name__ == "Identity"
        assert root.buf.tolist() == [2.0, 2.0]
    finally:
        for h in handles:
            h.remove()
    assert seen == [("param", "weight"), ("param", "bias"), ("module", "lin"),
                    ("module", "swap"), ("buffer", "buf")]
    lib.nn.Module().x = lib.nn.ReLU()
    assert len(seen) == 5  # removed


# --- torch.utils._python_dispatch --------------------------------------------------------------

def test_python_dispatch_names() -> None:
    torch = _torch()
    from torch.utils import _python_dispatch as real

    class Sub(ft.Tensor):
        __tensor_flatten__ = __tensor_unflatten__ = None

    class RealSub(torch.Tensor):
        __tensor_flatten__ = __tensor_unflatten__ = None

    for pd, lib, sub in ((real, torch, RealSub), (ft_pd, ft, Sub)):
        assert not pd.is_traceable_wrapper_subclass(lib.ones(1))
        assert not pd.is_traceable_wrapper_subclass(lib.nn.Parameter(lib.ones(1)))
        assert pd.is_traceable_wrapper_subclass(lib.ones(1).as_subclass(sub))
        assert pd.is_traceable_wrapper_subclass_type(sub)
        assert not pd.is_traceable_wrapper_subclass(1)
        assert pd._get_current_dispatch_mode() is None
    assert (inspect.signature(ft_pd.TorchDispatchMode.__init__).parameters.keys()
            == inspect.signature(real.TorchDispatchMode.__init__).parameters.keys())


def test_entering_a_dispatch_mode_is_refused() -> None:
    class CopyCounter(ft_pd.TorchDispatchMode):  # subclassing works, as vLLM does at import
        def __init__(self) -> None:
            super().__init__()
            self.copied = 0

    mode = CopyCounter()
    with pytest.raises(NotImplementedError,
                       match=r"torch\.utils\._python_dispatch\.TorchDispatchMode is not emul"):
        with mode:
            pass


# --- torch.library.triton_op / wrap_triton -----------------------------------------------------

def test_triton_op_registers_and_wrap_triton_is_refused() -> None:
    torch = _torch()
    from fake_torch._tools import _api

    for name in ("triton_op", "wrap_triton"):
        assert (_api.signature_of(getattr(ft.library, name))
                == _api.signature_of(getattr(torch.library, name))), name

    @ft.library.triton_op("t14names3::scaled", mutates_args=())
    def scaled(x: ft.Tensor, k: float) -> ft.Tensor:
        out = ft.empty_like(x)
        ft.library.wrap_triton(_kernel)[(1,)](x, out, k)
        return out

    assert ft.ops.t14names3.scaled.default is not None
    with pytest.raises(NotImplementedError, match=r"torch\.library\.wrap_triton .*_kernel"):
        scaled(ft.ones(2), 2.0)


def _kernel() -> None:
    """Stands in for a triton.jit kernel."""


def test_new_modules_listed_in_api_report() -> None:
    from fake_torch._tools import _api

    for name in ("torch.multiprocessing.reductions", "torch.nn.parameter",
                 "torch.utils._python_dispatch"):
        assert name in _api.MODULES
    assert "register_module_module_registration_hook" in ft_module.__all__
