"""Tensor.new_empty, new_zeros, new_ones, new_full, new_tensor: factories whose dtype and device
default to self's (never to the default device: torch does not list them).

    x = torch.zeros(2, dtype=torch.int64, device="cuda")
    x.new_zeros(3)          # int64, cuda: one launch (its fill)
    x.new_tensor([1.5])     # int64 [1], cuda: one host-to-device copy
"""

from __future__ import annotations

from typing import Any

from fake_torch._dtype import dtype
from fake_torch._factories import (
    _check_dtype,
    _fill,
    _size_sequence,
    _sizes,
    _tensor_rule,
    finish,
    new_meta,
    tensor,
)
from fake_torch._kernels import _common
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, POINTWISE, Break, data_dependent, method
from fake_torch._tensor import Number, Tensor
from fake_torch._torch_device import DeviceLike, canonical


def _new(self: Tensor, size: tuple[Any, ...], dt: dtype | None, dev: DeviceLike | None,
         fn: str) -> Tensor:
    """An uninitialised tensor of `size` (`new_empty(2, 3)` or `new_empty((2, 3))`)."""
    return _common.new_tensor(_sizes(size, fn), _check_dtype(dt, fn) or self.dtype,
                      self.device if dev is None else canonical(dev))


@method(COMPOSITE)
def new_empty(self: Tensor, *size: Any, dtype: dtype | None = None,
              device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """Uninitialised memory: no launch."""
    return finish(_new(self, size, dtype, device, "new_empty"), requires_grad)


@register_meta("Tensor.new_empty")
def _new_empty_rule(self: Tensor, *size: Any, dtype: dtype | None = None,
                    device: DeviceLike | None = None, requires_grad: bool = False) -> TensorMeta:
    shape = _sizes(size, "new_empty")
    dt = _check_dtype(dtype, "new_empty") or self.dtype
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return TensorMeta(shape, dt, contiguous_strides(shape))


@method(POINTWISE)
def new_zeros(self: Tensor, *size: Any, dtype: dtype | None = None,
              device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    out = _new(self, size, dtype, device, "new_zeros")
    return finish(_fill(out, 0, "new_zeros"), requires_grad)


@method(POINTWISE)
def new_ones(self: Tensor, *size: Any, dtype: dtype | None = None,
             device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    out = _new(self, size, dtype, device, "new_ones")
    return finish(_fill(out, 1, "new_ones"), requires_grad)


@method(POINTWISE)
def new_full(self: Tensor, size: Any, fill_value: Number, *, dtype: dtype | None = None,
             device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    _size_sequence(size, "new_full")
    out = _new(self, (size,), dtype, device, "new_full")
    return finish(_fill(out, fill_value, "new_full"), requires_grad)


def _from_tensor_break(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Break | None:
    """x.new_tensor(t) of a tensor reads its values on the host."""
    data = args[1] if len(args) > 1 else kwargs.get("data")
    if isinstance(data, Tensor):
        return data_dependent("aten._local_scalar_dense.default")
    return None


@method(POINTWISE, aten=(), graph_break=_from_tensor_break)
def new_tensor(self: Tensor, data: Any, *, dtype: dtype | None = None,
               device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """A copy of `data` as self's dtype on self's device (unless given): on cuda one
    host-to-device copy, as torch.tensor."""
    return tensor(data, dtype=_check_dtype(dtype, "new_tensor") or self.dtype,
                  device=self.device if device is None else device, requires_grad=requires_grad)


# --- output rules (fake_torch/_meta_registrations.py): factories defaulting to self's dtype ---

@register_meta("Tensor.new_zeros")
def _new_zeros_rule(self: Tensor, *size: Any, dtype: dtype | None = None,
                    **kwargs: Any) -> TensorMeta:
    return new_meta(size, _check_dtype(dtype, "new_zeros") or self.dtype, "new_zeros")


@register_meta("Tensor.new_ones")
def _new_ones_rule(self: Tensor, *size: Any, dtype: dtype | None = None,
                   **kwargs: Any) -> TensorMeta:
    return new_meta(size, _check_dtype(dtype, "new_ones") or self.dtype, "new_ones")


@register_meta("Tensor.new_full")
def _new_full_rule(self: Tensor, size: Any, fill_value: Number, *,
                   dtype: dtype | None = None, **kwargs: Any) -> TensorMeta:
    _size_sequence(size, "new_full")
    return new_meta((size,), _check_dtype(dtype, "new_full") or self.dtype, "new_full")


@register_meta("Tensor.new_tensor")
def _new_tensor_rule(self: Tensor, data: Any, *, dtype: dtype | None = None,
                     **kwargs: Any) -> TensorMeta:
    return _tensor_rule(data, dtype=_check_dtype(dtype, "new_tensor") or self.dtype)
