"""Tensor.__getitem__ / __setitem__ with torch's rules, and what they dispatch to.

Basic indices (ints, slices with positive steps, None, Ellipsis) make VIEWS and launch nothing.
Tensor, list and bool indices are "advanced": `x[idx]` is one "index" launch into a fresh
tensor, `x[idx] = v` one "index_put_" launch into x. An assignment through basic indices is one
"fill_" (a Python or 0-dim cpu value) or one "copy_" (a tensor value) into the view.
A bool mask's result size depends on the data: on cuda that is a host sync (as in torch).

The parsing mirrors torch/csrc/autograd/python_variable_indexing.cpp and ATen/TensorIndexing.h,
so the same index raises the same error and dispatches the same ops.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from fake_torch._dtype import bool_, int64, uint8
from fake_torch._kernels import _common
from fake_torch._kernels._strides import (
    Geometry,
    assert_no_internal_overlap,
    assert_no_partial_overlap,
    check_scalar_fits,
    contiguous_strides,
    geometry,
    is_non_overlapping_and_dense,
    same_meta,
    type_string,
    view_meta,
    wrap,
)
from fake_torch._kernels.advanced_index import Plan, index_put_, index_tensor
from fake_torch._kernels.shape import expand, unsqueeze, unsqueeze_geometry, view
from fake_torch._kernels.split import select_geometry, slice_bounds, slice_dim, slice_geometry
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, VIEW, Break, dynamic_shape, method
from fake_torch._simulated import _dispatch
from fake_torch._sym import sym_index
from fake_torch._tensor import Scalar, Tensor, wrap_dim
from fake_torch._torch_device import CPU

_VALID = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
          "valid indices (got {})")
_ZERO_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


# --- basic indices: views -----------------------------------------------------------------------

def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _select(t: Tensor, dim: int, index: int, real_dim: int) -> Tensor:
    """x[..., index, ...] at `dim`: a view without that dim (torch's applySelect)."""
    _check_select(t, dim, index, real_dim)
    return wrap(t, t._a[(slice(None),) * dim + (index, Ellipsis)])


def _check_select(t: Any, dim: int, index: Any, real_dim: int) -> None:
    if index == 0 and dim == 0 and t.dim() == 0:
        raise IndexError(_ZERO_DIM)
    if t.dim() and dim >= t.dim():  # past the last dim (two Ellipses): select's own error
        wrap_dim(dim, t.dim())
    size = t.shape[dim] if dim < t.dim() else 0
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size "
                         f"{size}")


def _slice(t: Tensor, dim: int, s: slice) -> Tensor:
    bounds = _slice_bounds(t, dim, s)
    return t if bounds is None else slice_dim(t, dim, *bounds)


def _slice_bounds(t: Any, dim: int, s: slice) -> tuple[Any, Any, Any] | None:
    """The (start, stop, step) of `s` at `dim`, checked; None: `:`, which keeps the dim."""
    step = 1 if s.step is None else sym_index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    if t.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    wrap_dim(dim, t.dim())
    if s.start is None and s.stop is None and step == 1:
        return None  # `:` keeps the dim as it is (torch skips the slice too)
    start = None if s.start is None else sym_index(s.start)
    stop = None if s.stop is None else sym_index(s.stop)
    return start, stop, step


def _slices_view(t: Tensor, items: tuple[Any, ...]) -> Tensor | None:
    """x[a:b, ..., c:d] (the common index of model code): slices of int or None bounds and no
    step, at most one Ellipsis, no more slices than dims, each keeping 2+ elements, as ONE
    numpy slicing: the view `_apply_slicing` makes slice by slice (numpy's slice of 2+
    elements has torch's strides and offset). None: any other index, the general path's."""
    a = t._a
    shape = a.shape
    ndim = len(shape)
    n_items = len(items)
    if not items or n_items > ndim + 1:
        return None
    out: list[Any] = []
    dim = 0
    for obj in items:
        if obj.__class__ is slice:
            start, stop = obj.start, obj.stop
            if obj.step is not None or dim >= ndim:
                return None
            if start is None and stop is None:
                out.append(obj)
            elif ((start is None or start.__class__ is int)
                  and (stop is None or stop.__class__ is int)):
                lo, n = slice_bounds(shape[dim], start, stop, 1)
                if n < 2:
                    return None  # (numpy normalises a 0- or 1-element slice; torch does not)
                out.append(slice(lo, lo + n))
            else:
                return None
            dim += 1
        elif obj is Ellipsis and Ellipsis not in out:
            if n_items - 1 > ndim:
                return None
            dim += ndim - (n_items - 1)
            out.append(obj)
        else:
            return None
    return wrap(t, a[tuple(out)])


def _alias(t: Tensor) -> Tensor:
    return wrap(t, t._a.view())


# --- turning a Python index into (a view, the tensor indices left for aten::index) -------------

def _sequence_index(seq: Any, t: Tensor) -> Tensor:
    """A list index becomes a long (or bool) tensor on t's device (torch: sequenceToVariable)."""
    from fake_torch._factories import tensor

    kind = np.asarray(seq).dtype
    dt = bool_ if kind == np.bool_ else uint8 if kind == np.uint8 else int64
    return tensor(seq, dtype=dt, device=t.device)


def _treat_as_tuple(index: Any) -> bool:
    """numpy's legacy heuristic, kept by torch: a short list holding a slice, None, Ellipsis,
    a sequence or a tensor is a tuple of indices, not one index."""
    if isinstance(index, tuple):
        return True
    if isinstance(index, Tensor) or not isinstance(index, list) or len(index) >= 32:
        return False
    return any(isinstance(x, (Tensor, list, tuple, slice)) or x is None or x is Ellipsis
               for x in index)


def _as_tuple(index: Any) -> tuple[Any, ...]:
    if isinstance(index, tuple):
        return index
    if _treat_as_tuple(index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. "
                      "In pytorch 2.9 this will be interpreted as tensor index, "
                      "x[torch.tensor(seq)], which will result either in an error or a "
                      "different result", UserWarning, stacklevel=4)
        return tuple(index)
    return (index,)


def _count_specified(items: tuple[Any, ...]) -> int:
    """The dims an index tuple names (everything but None, Ellipsis and bools)."""
    n = 0
    for x in items:
        if isinstance(x, Tensor):
            n += x.dim() if x.dtype in (bool_, uint8) else 1
        elif x is not None and x is not Ellipsis and not isinstance(x, bool):
            n += 1
    return n


def _bool_scalar_index(t: Tensor, value: bool) -> Tensor:
    """A bool index adds a size-1 dim indexed by [0] (True) or [] (False): a long tensor made
    on t's device, filled with one "fill_" launch when True."""
    idx = _common.new_tensor((1 if value else 0,), int64, t.device)
    if value:
        fill_(idx, 0)
    return idx


def _record(indices: list[Any], dim: int, idx: Any) -> int:
    """Put a tensor index at `dim` (torch's recordTensorIndex); the next dim to index."""
    if not indices:
        indices.extend([None] * dim)
    indices.append(idx)
    return dim + (idx.dim() if idx.dtype in (bool_, uint8) else 1)


class _Views:
    """What applying basic indices does to the tensor: make views (the kernel's way). The
    output rule's subclass describes the same views instead (`_Described`)."""

    def select(self, t: Any, dim: int, index: int, real_dim: int) -> Any:
        return _select(t, dim, index, real_dim)

    def slice(self, t: Any, dim: int, s: slice) -> Any:
        return _slice(t, dim, s)

    def unsqueeze(self, t: Any, dim: int) -> Any:
        return unsqueeze(t, dim)

    def bool_index(self, t: Any, value: bool) -> Any:
        return _bool_scalar_index(t, value)

    def index(self, obj: Any, t: Any) -> Any:
        return _tensor_or_int(obj, t)

    def item(self, idx: Tensor) -> Any:
        return idx.item()


class _Layout:
    """A view described, not made: its geometry, read as a Tensor's metadata is."""

    def __init__(self, base: Tensor, g: Geometry) -> None:
        self.base, self.g, self.shape, self.dtype = base, g, g[0], base.dtype
        self.device, self._device, self.is_cuda = base.device, base.device, base.is_cuda

    def dim(self) -> int:
        return len(self.g[0])


class _IndexLayout:
    """An index tensor the kernel would make (from a list, or for a bool): its metadata."""

    def __init__(self, shape: tuple[int, ...], dt: Any, device: Any) -> None:
        self.shape, self.dtype, self.device = shape, dt, device

    def dim(self) -> int:
        return len(self.shape)


class _Described(_Views):
    def select(self, t: Any, dim: int, index: int, real_dim: int) -> Any:
        _check_select(t, dim, index, real_dim)
        return _Layout(t.base, select_geometry(t.g, dim, index))

    def slice(self, t: Any, dim: int, s: slice) -> Any:
        bounds = _slice_bounds(t, dim, s)
        return t if bounds is None else _Layout(t.base, slice_geometry(t.g, dim, *bounds))

    def unsqueeze(self, t: Any, dim: int) -> Any:
        return _Layout(t.base, unsqueeze_geometry(t.g, dim))

    def bool_index(self, t: Any, value: bool) -> Any:
        return _IndexLayout((1 if value else 0,), int64, t.device)

    def index(self, obj: Any, t: Any) -> Any:
        if isinstance(obj, (list, tuple, np.ndarray)):
            kind = np.asarray(obj).dtype
            dt = bool_ if kind == np.bool_ else uint8 if kind == np.uint8 else int64
            return _IndexLayout(np.shape(obj), dt, t.device)
        return _tensor_or_int(obj, t)

    def item(self, idx: Tensor) -> Any:
        raise NotImplementedError("Tensor.__getitem__: a 0-dim index tensor is a value; no "
                                  "output rule describes the result without reading it")


class _Checked(_Described):
    """The views described for an assignment's checks only: a 0-dim index tensor's value is
    not read (the rule of `x[i] = v` describes no tensor: it returns None)."""

    def item(self, idx: Tensor) -> Any:
        return 0


_VIEWS, _DESCRIBED, _CHECKED = _Views(), _Described(), _Checked()


def _apply_slicing(t: Any, items: tuple[Any, ...], v: _Views = _VIEWS
                   ) -> tuple[Any, list[Any]]:
    """Apply the basic indices as views; collect the tensor indices, positioned on the dims of
    the resulting view (None = that dim is not indexed)."""
    ndim = t.dim()
    specified = _count_specified(items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result, dim = t, 0
    indices: list[Tensor | None] = []
    for real_dim, obj in enumerate(items):
        if _is_int(obj):
            result = v.select(result, dim, int(obj), real_dim)
        elif isinstance(obj, slice):
            result = v.slice(result, dim, obj)
            dim += 1
            if indices:
                indices.append(None)
        elif obj is Ellipsis:
            n = ndim - specified
            dim += n
            if indices:
                indices.extend([None] * n)
        elif obj is None:
            result = v.unsqueeze(result, dim)
            dim += 1
            if indices:
                indices.append(None)
        elif isinstance(obj, bool):
            result = v.unsqueeze(result, dim)
            dim = _record(indices, dim, v.bool_index(result, obj))
        else:
            idx = obj if isinstance(obj, Tensor) else v.index(obj, t)
            if isinstance(idx, int):
                result = v.select(result, dim, idx, real_dim)
            elif idx.dim() == 0 and (idx.dtype is bool_ or not idx.dtype.is_floating_point):
                if idx.dtype in (bool_, uint8):  # reading it is a host sync on cuda
                    result = v.unsqueeze(result, dim)
                    dim = _record(indices, dim, v.bool_index(result, bool(v.item(idx))))
                else:
                    result = v.select(result, dim, int(v.item(idx)), real_dim)
            else:
                dim = _record(indices, dim, idx)
    return result, indices


def _tensor_or_int(obj: Any, t: Tensor) -> Tensor | int:
    if isinstance(obj, (list, tuple, np.ndarray)):
        return _sequence_index(obj, t)
    if isinstance(obj, str):
        raise TypeError("new(): invalid data type 'str'")
    try:
        index: int = sym_index(obj)
        return index
    except TypeError:
        raise IndexError(_VALID.format(type(obj).__name__)) from None


# --- copy_ and fill_ into a view (what `view[...] = value` launches) --------------------------

def _copy_kernel(out: np.ndarray, src: np.ndarray) -> None:
    np.copyto(out, src, casting="unsafe")


def _fill_kernel(out: np.ndarray, *, value: Scalar) -> None:
    out[...] = value


def copy_(dst: Tensor, src: Tensor) -> Tensor:
    """dst.copy_(src) for a src already of dst's shape: one "copy_" launch (a memcpy when both
    are dense alike, a host<->device memcpy across devices, else a copy kernel)."""
    assert_no_internal_overlap(dst)
    assert_no_partial_overlap(dst, src)
    if src.device.type == "cpu" and dst.is_cuda:
        kind = "memcpy_h2d"
    elif src.is_cuda and dst.device.type == "cpu":
        kind = "memcpy_d2h"
    elif (src.dtype is dst.dtype and src.stride() == dst.stride() and
          is_non_overlapping_and_dense(dst.shape, dst.stride())):
        kind = "memcpy_d2d"
    else:
        kind = "kernel"
    _common.launch("copy_", _copy_kernel, dst, (src,), kind=kind,
                   dev=src.device if src.is_cuda else dst.device)
    if kind == "memcpy_d2h":
        _dispatch.host_sync("copy_")
    return dst


def fill_(dst: Tensor, value: Scalar) -> Tensor:
    """dst.fill_(value): one "fill_" launch (a memset when the value is zero)."""
    assert_no_internal_overlap(dst)
    _common.launch("fill_", _fill_kernel, dst, (), {"value": value},
                   kind="memset" if value == 0 else "kernel")
    return dst


def _strip_leading_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return shape[i:]


def _copy_to(dst: Tensor, src: Tensor) -> None:
    """torch's copy_to: copy_ for equal shapes, fill_ for a 0-dim cpu value, else copy_ from
    src broadcast (leading 1s dropped) to dst's shape."""
    if dst.shape == src.shape:
        copy_(dst, src)
    elif src.dim() == 0 and src.device.type == "cpu":
        fill_(dst, src._a.item())
    else:
        stripped = _strip_leading_ones(src.shape)
        src = view(src, stripped) if stripped != src.shape else src
        copy_(dst, expand(src, dst.shape))


def _value_tensor(t: Tensor, value: Any) -> Tensor:
    """The assigned value as a tensor: a Python scalar becomes a 0-dim cpu tensor of t's dtype
    (no launch; torch: scalar_tensor_static)."""
    if isinstance(value, Tensor):
        return value
    return Tensor._make(np.array(_scalar_value(t, value)).astype(t.dtype.np), CPU)


def _scalar_value(t: Any, value: Any) -> bool | int | float | complex:
    """An assigned Python scalar, checked against t's dtype, as t's dtype will hold it."""
    if isinstance(value, (bool, int, float, complex, np.generic)):
        py = value.item() if isinstance(value, np.generic) else value
        check_scalar_fits(py, t.dtype)
        if isinstance(py, complex) and not t.dtype.is_complex:
            py = py.real  # (its imaginary part is 0: check_scalar_fits refused any other)
        return py
    raise TypeError(f"can't assign a {type(value).__name__} to a {type_string(t)}")


# --- the two entry points -----------------------------------------------------------------------

def _mask_break(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Break | None:
    """A bool (or uint8) mask among the indices: the result's size depends on its values."""
    index = args[1] if len(args) > 1 else kwargs.get("index")
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, Tensor) and i.dtype in (bool_, uint8) for i in items):
        return dynamic_shape("aten.nonzero.default")
    return None


@method(VIEW, name="__getitem__", fx_target=operator.getitem, graph_break=_mask_break)
def getitem(self: Tensor, index: Any) -> Tensor:
    """Tensor.__getitem__."""
    if index is None:
        return unsqueeze(self, 0)
    if index is Ellipsis:
        return _alias(self)
    if _is_int(index):
        return _select(self, 0, int(index), 0)
    if isinstance(index, slice):
        return _slice(self, 0, index)
    if isinstance(index, bool):
        result = unsqueeze(self, 0)
        return index_tensor(result, [_bool_scalar_index(result, index)])
    if index.__class__ is tuple:
        view = _slices_view(self, index)
        if view is not None:
            return view
    sliced, indices = _apply_slicing(self, _as_tuple(index))
    if not indices:
        return _alias(sliced) if sliced is self else sliced
    return index_tensor(sliced, indices)


@register_meta("Tensor.__getitem__")
def _getitem_rule(self: Tensor, index: Any) -> TensorMeta:
    """Basic indices describe a view of self; tensor indices a fresh (contiguous) tensor of
    advanced indexing's shape (a bool mask's size is its count of Trues: refused)."""
    if index is None or index is Ellipsis or _is_int(index) or isinstance(index, slice):
        index = (index,)  # (the kernel's shortcuts for these agree with the general path)
    items = _as_tuple(index)
    if isinstance(index, bool):
        items = (index,)
    base = _Layout(self, geometry(self))
    sliced, indices = _apply_slicing(base, items, _DESCRIBED)
    if not indices:
        return same_meta(self) if sliced is base else view_meta(self, sliced.g)
    plan = Plan(sliced, indices)
    if plan.has_mask:
        raise NotImplementedError("Tensor.__getitem__ with a bool mask: the result's size is "
                                  "the mask's count of Trues (data-dependent), no output rule")
    shape = plan.result_shape(sliced)
    return TensorMeta(shape, self.dtype, contiguous_strides(shape))


@method(COMPOSITE, name="__setitem__", fx_target=operator.setitem, graph_break=_mask_break)
def setitem(self: Tensor, index: Any, value: Any) -> None:
    """Tensor.__setitem__."""
    v = _value_tensor(self, value)
    if index is False:
        return
    if index is Ellipsis:
        _copy_to(self, v)
    elif index is None or index is True:
        _copy_to(unsqueeze(self, 0), v)
    elif _is_int(index):
        _copy_to(_select(self, 0, int(index), 0), v)
    elif isinstance(index, slice):
        _copy_to(_slice(self, 0, index), v)
    else:
        sliced, indices = _apply_slicing(self, _as_tuple(index))
        if not indices:
            _copy_to(sliced, v)
            return
        stripped = _strip_leading_ones(v.shape)
        index_put_(sliced, indices, view(v, stripped) if stripped != v.shape else v)


@register_meta("Tensor.__setitem__")
def _setitem_rule(self: Tensor, index: Any, value: Any) -> None:
    """`x[index] = value` writes x and returns None: the rule checks the value and the index
    as the kernel does, and describes no output."""
    if not isinstance(value, Tensor):
        _scalar_value(self, value)
    if index is False or index is Ellipsis or index is None or index is True:
        return None
    items = (index,) if _is_int(index) or isinstance(index, slice) else _as_tuple(index)
    _apply_slicing(_Layout(self, geometry(self)), items, _CHECKED)
    return None


