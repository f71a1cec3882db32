"""Host reads: the Tensor methods that copy values to the host and wait for them (`item`,
`tolist`, `numpy`, `bool(x)`, `float(x)`, `repr(x)`).

On cuda each is a device-to-host copy (`_to_copy`, or `_local_scalar_dense` for one element)
and a host sync: forbidden while a CUDA graph captures, a graph break while torch.compile
traces. On cpu they read the memory directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch import _meta
from fake_torch._opdef import HOST, aten_op, method
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Tensor

aten_op("_local_scalar_dense", HOST)  # one element to the host


def _noop(*arrays: np.ndarray) -> None:
    """The kernel of a launch whose data movement happens on the host side (a D2H read)."""


def host_array(t: Tensor, what: str) -> np.ndarray:
    """t's values on the host: on cuda a device-to-host copy into pageable memory, then the
    host waits; on cpu t's own memory; a meta tensor has none to give."""
    if t._device.type == "meta":
        raise NotImplementedError(_meta.NO_DATA)
    if t.is_cuda:
        host = np.empty(t._a.shape, t._a.dtype)
        _dispatch.launch("_to_copy", np.copyto, (host,), (t._a,), on_cuda=True,
                         kind="memcpy_d2h")
        _dispatch.host_sync(what)
        return host
    return t._a


@method(HOST, aten=("_local_scalar_dense",))
def item(self: Tensor) -> Any:
    """The one element as a Python number."""
    return scalar(self, "item")


def scalar(t: Tensor, what: str) -> Any:
    """`t.item()` as an op reads a value inside it (one_hot's class count): `what` names the
    read for the host sync (the graph break tracing makes of it)."""
    if t._a.size != 1:
        raise RuntimeError(f"a Tensor with {t._a.size} elements cannot be converted to Scalar")
    if t._device.type == "meta":
        raise RuntimeError(_meta.ITEM)
    if t.is_cuda:
        _dispatch.host_sync(what)
        _dispatch.launch("_local_scalar_dense", _noop, (), (t._a,), on_cuda=True,
                         kind="memcpy_d2h")
    return t._a.item()


@method(HOST, aten=())
def tolist(self: Tensor) -> Any:
    return host_array(self, "tolist").tolist()


@method(HOST, aten=())
def numpy(self: Tensor, *, force: bool = False) -> np.ndarray:
    if self._device.type != "cpu" and not force:
        raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                        "Tensor.cpu() to copy the tensor to host memory first.")
    return host_array(self, "numpy")


@method(HOST, name="__array__", aten=())
def array(self: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    a = numpy(self)
    return a if dtype is None else a.astype(dtype)


@method(HOST, name="__bool__", aten=())
def bool_(self: Tensor) -> bool:
    if self.numel() != 1:
        how_many = "no values" if self.numel() == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {how_many} is ambiguous")
    return bool(item(self))


def _one_element(self: Tensor) -> None:
    """The Python number protocol (float(t), int(t)) takes one element (torch's ValueError)."""
    if self.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")


def _real_value(value: Any, ctype: str) -> Any:
    """A complex element read as a real number: its real part, if its imaginary part is 0
    (c10's checked conversion); a real element as it is."""
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return value.real
    return value


@method(HOST, name="__float__", aten=())
def float_(self: Tensor) -> float:
    _one_element(self)
    return float(_real_value(item(self), "double"))


@method(HOST, name="__int__", aten=())
def int_(self: Tensor) -> int:
    _one_element(self)
    return int(_real_value(item(self), "int64_t"))


@method(HOST, name="__complex__", aten=())
def complex_(self: Tensor) -> complex:
    _one_element(self)
    return complex(item(self))


@method(HOST, name="__index__", aten=())
def index(self: Tensor) -> int:
    if self.dtype.is_floating_point or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(item(self))


@method(HOST, name="__repr__", aten=())
def repr_(self: Tensor) -> str:
    from fake_torch._repr import tensor_repr

    return tensor_repr(self)


@method(HOST, name="__format__", aten=())
def format_(self: Tensor, format_spec: str) -> str:
    """A 0-d tensor formats as its element (`f"{loss:.3f}"`, an `item()`); any other tensor, and
    a subclass's, as object formats it (its str, for an empty spec only)."""
    if self.dim() == 0 and self._device.type != "meta" and type(self) is Tensor:
        return format(item(self), format_spec)
    return object.__format__(self, format_spec)
