"""Sorting along one dim: sort, argsort, topk (one launch each: `sort`, `sort`, `topk`).

Order of equal values: ours is always stable, lowest index first, in both directions (NaN
counts as the largest value, as in torch). That is exactly torch's `stable=True`, and torch
CPU's `stable=False` sort of up to 16 elements (an insertion sort). torch's other unstable
paths (CPU std::sort beyond 16 elements, topk's nth_element/partial_sort, the CUDA kernels)
promise no order among ties, and no rule reproduces theirs; the values always agree.
"""

from __future__ import annotations

import numpy as np

from fake_torch import return_types
from fake_torch._dtype import bool_, int64
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels._reduce_util import check_out, exact_np
from fake_torch._opdef import EXTERN, op
from fake_torch._tensor import Tensor, wrap_dim


@op(EXTERN, method=True)
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False,
         out: None = None) -> return_types.sort:
    """(values, indices) sorted along `dim`; equal values keep their order (see above)."""
    check_out(out, "sort")
    values, indices = _sorted("sort", input, dim, descending, None)
    return return_types.sort((values, indices))


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
    check_out(out, "topk")
    if input.dtype is bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = input.shape[wrap_dim(dim, input.dim())] if input.dim() > 0 else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = _sorted("topk", input, dim, largest, k)
    return return_types.topk((values, indices))


def _sorted(op: str, x: Tensor, dim: int, descending: bool,
            k: int | None) -> tuple[Tensor, Tensor]:
    if x._dtype.is_complex:  # torch's text, with its leading space (its CPU build's)
        raise RuntimeError(f" {'Sort' if op == 'sort' else op} does not support complex dtypes "
                           "on CPU")
    axis = wrap_dim(dim, x.dim())
    shape = list(x.shape)
    if k is not None and shape:
        shape[axis] = k
    values = new_tensor(shape, x.dtype, x.device)
    indices = new_tensor(shape, int64, x.device)
    launch(op, _sort_kernel, (values, indices), (x,),
           {"axis": axis if x.dim() > 0 else None, "descending": descending, "k": k})
    return values, indices


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
