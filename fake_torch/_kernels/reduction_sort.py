"""Sorting along one dim: sort, argsort, topk (one launch each: `sort`, `sort`, `topk`).

Order of equal values: ours is always stable, lowest index first, in both directions (NaN
counts as the largest value, as in torch). That is exactly torch's `stable=True`, and torch
CPU's `stable=False` sort of up to 16 elements (an insertion sort). torch's other unstable
paths (CPU std::sort beyond 16 elements, topk's nth_element/partial_sort, the CUDA kernels)
promise no order among ties, and no rule reproduces theirs; the values always agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch import return_types
from fake_torch._dtype import bool_, int64
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels._reduce_util import check_out, exact_np
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import EXTERN, op
from fake_torch._tensor import Tensor, wrap_dim


@op(EXTERN, method=True)
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False,
         out: None = None) -> return_types.sort:
    """(values, indices) sorted along `dim`; equal values keep their order (see above)."""
    check_out(out, "sort")
    values, indices = _sorted("sort", input, dim, descending, None)
    return return_types.sort((values, indices))


@register_meta("torch.sort")
def _sort_rule(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False,
               out: None = None) -> Any:
    check_out(out, "sort")
    return _named(return_types.sort, _pair(input, _sorted_shape("sort", input, dim, None)[0]))


@register_meta("torch.argsort")
def _argsort_rule(input: Tensor, dim: int = -1, descending: bool = False, *,
                  stable: bool = False) -> TensorMeta:
    return _pair(input, _sorted_shape("sort", input, dim, None)[0])[1]


def _named(kind: Any, pair: tuple[TensorMeta, TensorMeta]) -> Any:
    """The pair described, as the kernel's named tuple (return_types.sort, ...) holds it."""
    return kind(pair)


def _pair(x: Tensor, shape: tuple[Any, ...]) -> tuple[TensorMeta, TensorMeta]:
    """(values, indices): two fresh contiguous tensors of `shape`."""
    strides = contiguous_strides(shape)
    return TensorMeta(shape, x.dtype, strides), TensorMeta(shape, int64, strides)


@op(EXTERN, method=True, aten=())
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,
            stable: bool = False) -> Tensor:
    """The indices that sort `input` along `dim` (torch launches a full `sort`)."""
    return _sorted("sort", input, dim, descending, None)[1]


@op(EXTERN, method=True)
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out: None = None) -> return_types.topk:
    """The `k` largest (or smallest) values along `dim` and their indices, best first; with
    `sorted=False` torch promises no order, and ours is still sorted."""
    _check_topk(input, k, dim, out)
    values, indices = _sorted("topk", input, dim, largest, k)
    return return_types.topk((values, indices))


@register_meta("torch.topk")
def _topk_rule(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True,
               *, out: None = None) -> Any:
    _check_topk(input, k, dim, out)
    return _named(return_types.topk, _pair(input, _sorted_shape("topk", input, dim, k)[0]))


def _check_topk(input: Tensor, k: int, dim: int, out: None) -> None:
    check_out(out, "topk")
    if input.dtype is bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = input.shape[wrap_dim(dim, input.dim())] if input.dim() > 0 else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")


@op(EXTERN, method=True)
def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *,
         out: None = None) -> return_types.mode:
    """(values, indices) along `dim`: the most frequent value (the smallest of those equally
    frequent) and the index of its last occurrence, as torch's CPU kernel finds them for
    slices of up to 16 elements (beyond, its unstable sort may pick another occurrence; a NaN
    never equals another, so NaNs count once each). One "mode" launch."""
    d, shape = _mode_shape(input, dim, keepdim, out)
    values = new_tensor(shape, input.dtype, input.device)
    indices = new_tensor(shape, int64, input.device)
    launch("mode", _mode_kernel, (values, indices), (input,),
           {"axis": d if input.dim() else None})
    return return_types.mode((values, indices))


@register_meta("torch.mode")
def _mode_rule(input: Tensor, dim: int = -1, keepdim: bool = False, *,
               out: None = None) -> Any:
    return _named(return_types.mode, _pair(input, tuple(_mode_shape(input, dim, keepdim, out)[1])))


def _mode_shape(input: Tensor, dim: int, keepdim: bool, out: None) -> tuple[int, list[Any]]:
    check_out(out, "mode")
    d = wrap_dim(dim, input.dim())
    if input.dim() and input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    shape = [s for i, s in enumerate(input.shape) if i != d or keepdim] if input.dim() else []
    if keepdim and input.dim():
        shape[d] = 1
    return d, shape


def _mode_kernel(values: np.ndarray, indices: np.ndarray, x: np.ndarray, *,
                 axis: int | None) -> None:
    if axis is None:  # a 0-dim input is its own mode
        values[...], indices[...] = x, 0
        return
    rows = np.moveaxis(exact_np(x), axis, -1).reshape(-1, x.shape[axis])
    best_values, best_indices = [], []
    for row in rows:
        order = np.argsort(row, kind="stable")  # NaN last
        ordered = row[order]
        ends = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))  # last of each run
        counts = np.diff(np.append(-1, ends))
        end = ends[int(np.argmax(counts))]  # the first (smallest) of the most frequent
        best_values.append(ordered[end])
        best_indices.append(order[end])
    out_shape = values.shape
    values[...] = np.asarray(best_values, dtype=values.dtype).reshape(out_shape)
    indices[...] = np.asarray(best_indices).reshape(out_shape)


def _sorted(op: str, x: Tensor, dim: int, descending: bool,
            k: int | None) -> tuple[Tensor, Tensor]:
    shape, axis = _sorted_shape(op, x, dim, k)
    values = new_tensor(shape, x.dtype, x.device)
    indices = new_tensor(shape, int64, x.device)
    launch(op, _sort_kernel, (values, indices), (x,),
           {"axis": axis if x.dim() > 0 else None, "descending": descending, "k": k})
    return values, indices


def _sorted_shape(op: str, x: Tensor, dim: int, k: Any) -> tuple[tuple[Any, ...], int]:
    """The shape of sort's (or topk's) outputs, and the dim sorted along."""
    if x.dtype.is_complex:  # torch's text, with its leading space (its CPU build's)
        raise RuntimeError(f" {'Sort' if op == 'sort' else op} does not support complex dtypes "
                           "on CPU")
    axis = wrap_dim(dim, x.dim())
    shape = list(x.shape)
    if k is not None and shape:
        shape[axis] = k
    return tuple(shape), axis


def _sort_kernel(values: np.ndarray, indices: np.ndarray, x: np.ndarray, *, axis: int | None,
                 descending: bool, k: int | None) -> None:
    if axis is None:  # a 0-dim input is its own sort
        values[...] = x
        indices[...] = 0
        return
    order = _stable_order(exact_np(x), axis, descending)
    if k is not None:
        order = np.take(order, np.arange(k), axis=axis)
    indices[...] = order
    values[...] = np.take_along_axis(x, order, axis)


def _stable_order(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """argsort along `axis`, stable in both directions, NaN largest."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")  # NaN sorts last
    if a.dtype.kind == "f":  # NaN first, then by falling value; lexsort is stable
        return np.lexsort((-a, ~np.isnan(a)), axis=axis)
    return np.argsort(~a, axis=axis, kind="stable")  # ~ reverses ints (and bools), no overflow
