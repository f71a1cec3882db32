"""Mask ops: masked_fill(_), masked_scatter(_), masked_select, nonzero (and argwhere). One
launch each (masked_scatter: a clone first, as ATen's).

masked_select and nonzero return as many elements as the mask/input holds: sizing the output
reads the data, which on cuda is a host sync (it cannot be captured in a CUDA graph).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from fake_torch import _meta
from fake_torch._dtype import CPP_NAME, bool_, int64
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import is_number, written_rule
from fake_torch._kernels._strides import (
    assert_no_internal_overlap,
    assert_no_partial_overlap,
    checked_convert,
    contiguous_strides,
    scalar_type_name,
)
from fake_torch._kernels.expand import expand
from fake_torch._kernels.shape import clone, contiguous
from fake_torch._memory_format import contiguous_format
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import DATA_DEPENDENT, POINTWISE, dynamic_shape, method, op
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Scalar, Tensor


def _check_fill(self: Tensor, mask: Tensor, value: Any) -> tuple[tuple[Tensor, ...], Any]:
    """torch's masked_fill_ checks; the value as (0-dim tensor,) or a checked Python scalar."""
    if mask.dtype is not bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{CPP_NAME[mask.dtype]}")
    if isinstance(value, Tensor):
        if value.dim():
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.dim()} dimension(s).")
        return (value,), None
    if not is_number(value):
        raise TypeError("masked_fill_() received an invalid combination of arguments - got "
                        f"(Tensor, {type(value).__name__}), but expected one of:\n"
                        " * (Tensor mask, Tensor value)\n * (Tensor mask, Number value)")
    return (), checked_convert(value, self.dtype)


def _masked_fill_kernel(out: np.ndarray, mask: np.ndarray, *value_t: np.ndarray,
                        value: Scalar | None) -> None:
    fill: Any = value_t[0].astype(out.dtype) if value_t else value
    np.copyto(out, fill, where=np.broadcast_to(mask, out.shape), casting="unsafe")


@method(POINTWISE)
def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In place: self where mask (broadcast to self) is True becomes value."""
    value_t, value = _check_fill(self, mask, value)
    shape = _common.broadcast_shapes(self.shape, mask.shape)
    if shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    if any(s > 1 and st == 0 for s, st in zip(self.shape, self.stride(), strict=True)):
        warnings.warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the "
                      "tensor before performing this operation. This also applies to advanced "
                      "indexing e.g. tensor[mask] = scalar", UserWarning, stacklevel=3)
    assert_no_partial_overlap(self, mask)
    _common.launch("masked_fill_", _masked_fill_kernel, self, (mask, *value_t), {"value": value})
    return self


@op(POINTWISE, method=True)
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """A contiguous copy of input (broadcast with mask) where mask is True becomes value."""
    value_t, value = _check_fill(input, mask, value)
    shape = _common.broadcast_shapes(mask.shape, input.shape)
    out = _common.new_tensor(shape, input.dtype, _common.common_device(input, mask))
    _common.launch("masked_fill", _masked_fill_copy_kernel, out, (input, mask, *value_t),
                   {"value": value})
    return out


def _masked_fill_copy_kernel(out: np.ndarray, init: np.ndarray, mask: np.ndarray,
                             *value_t: np.ndarray, value: Scalar | None) -> None:
    np.copyto(out, init)  # init broadcasts to out's (the broadcast) shape
    _masked_fill_kernel(out, mask, *value_t, value=value)


def _masked_scatter_kernel(out: np.ndarray, mask: np.ndarray, src: np.ndarray) -> None:
    count = int(np.count_nonzero(mask))
    if count > src.size:  # (a device-side assert on cuda, after the mask's prefix sum)
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[mask] = src.reshape(-1)[:count]


@method(POINTWISE)
def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In place: the elements of self where mask (broadcast to self) is True become source's
    first elements, in order. CUDA torch makes the (broadcast) mask contiguous, takes its
    prefix sum, checks the count on the device, makes source contiguous and scatters: the
    copies of a strided mask or source are a `clone` each, the rest one "masked_scatter_"
    launch here."""
    assert_no_internal_overlap(self)
    if self.dtype is not source.dtype:  # (the cpu and cuda kernels word it differently)
        head = "masked_scatter_" if self.is_cuda else "masked_scatter"
        raise RuntimeError(f"{head}: expected self and source to have same dtypes but got"
                           f"{' ' if self.is_cuda else ''}{scalar_type_name(self.dtype)} and "
                           f"{scalar_type_name(source.dtype)}")
    if mask.dtype is not bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {scalar_type_name(mask.dtype)}")
    full = expand(mask, *self.shape)
    if self.numel() == 0:
        return self
    _common.launch("masked_scatter_", _masked_scatter_kernel, self,
                   (contiguous(full), contiguous(source)))
    return self


@op(POINTWISE, method=True)
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A contiguous copy of input (broadcast with mask: one "clone"), then masked_scatter_."""
    shape = _common.broadcast_shapes(mask.shape, input.shape)
    full = expand(input, *shape)
    return masked_scatter_(clone(full, memory_format=contiguous_format), mask, source)


def _data_dependent(t: Tensor, op: str, counted: Tensor) -> None:
    """The output size depends on the data (the count of `counted`'s non-zeros): on cuda the
    host must wait to read it; a meta tensor has none (torch's meta kernels refuse)."""
    if t._device.type == "meta":
        raise NotImplementedError(_meta.NONZERO) if op == "nonzero" else _meta.no_kernel(op)
    if t.is_cuda:
        _dispatch.host_sync(op, reads=(counted._a,))


def _masked_select_kernel(out: np.ndarray, src: np.ndarray, mask: np.ndarray) -> None:
    shape = np.broadcast_shapes(src.shape, mask.shape)
    out[...] = np.broadcast_to(src, shape)[np.broadcast_to(mask, shape)]


@op(DATA_DEPENDENT, method=True, graph_break=dynamic_shape("aten.masked_select.default"))
def masked_select(input: Tensor, mask: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The elements of input (broadcast with mask) where mask is True, as a 1-D tensor."""
    if out is not None:
        raise NotImplementedError("torch.masked_select(..., out=...) is not emulated by "
                                  "fake_torch")
    if mask.dtype is not bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _common.broadcast_shapes(mask.shape, input.shape)
    dev = _common.common_device(input, mask)
    _data_dependent(input, "masked_select", mask)
    count = int(np.count_nonzero(np.broadcast_to(mask._a, shape)))
    result = _common.new_tensor((count,), input.dtype, dev)
    _common.launch("masked_select", _masked_select_kernel, result, (input, mask))
    return result


def _nonzero_kernel(out: np.ndarray, src: np.ndarray) -> None:
    out[...] = np.argwhere(src)


@op(DATA_DEPENDENT, method=True, graph_break=dynamic_shape("aten.nonzero.default"))
def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False) -> Any:
    """The (n, ndim) int64 indices of the non-zero elements; as_tuple: one 1-D tensor per dim
    (views of that result)."""
    if out is not None:
        raise NotImplementedError("torch.nonzero(..., out=...) is not emulated by fake_torch")
    from fake_torch._kernels.shape import unsqueeze
    from fake_torch._kernels.split import unbind

    src = unsqueeze(input, 0) if as_tuple and input.dim() == 0 else input
    _data_dependent(src, "nonzero", src)
    count = int(np.count_nonzero(src._a))
    result = _common.new_tensor((count, src.dim()), int64, src.device)
    _common.launch("nonzero", _nonzero_kernel, result, (src,))
    return unbind(result, 1) if as_tuple else result


@op(DATA_DEPENDENT, method=True, aten=(), graph_break=dynamic_shape("aten.nonzero.default"))
def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)  # type: ignore[no-any-return]


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

@register_meta("torch.masked_fill", "torch.masked_scatter")
def _masked_copy_rule(input: Tensor, mask: Tensor, value: Any) -> TensorMeta:
    """A fresh row-major copy of input broadcast with mask."""
    shape = _common.broadcast_shapes(mask.shape, input.shape)
    return TensorMeta(shape, input.dtype, contiguous_strides(shape))


register_meta("Tensor.masked_fill_", "Tensor.masked_scatter_")(written_rule)
