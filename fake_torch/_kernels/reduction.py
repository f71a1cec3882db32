"""Reductions: sum, mean, prod, amax/amin, aminmax, max/min, argmax/argmin, all/any (one launch
each).

The statistics (var, std, norm) are in reduction_stats.py, the ops along one dim (softmax,
log_softmax, cumsum) in reduction_scan.py, sorting (sort, argsort, topk) in reduction_sort.py.

Kernels fold with `keepdims=True` and reshape into the output, so one kernel serves both
`keepdim` settings. float16/bfloat16 accumulate in float32 and round once, as torch does.
"""

from __future__ import annotations

from typing import Any, overload

import numpy as np

from fake_torch import return_types
from fake_torch._dtype import SCALAR_NAME, bool_, dtype, int64, uint8
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels._limited import CHECKED, check_kernel
from fake_torch._kernels._reduce_util import (
    DimArg,
    acc_np,
    check_dim_list_args,
    check_out,
    exact_np,
    numel_of,
    out_shape,
    reduce_dims,
)
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import REDUCTION, op
from fake_torch._tensor import Tensor, wrap_dim


def _reduce(op: str, kernel: Any, x: Tensor, axes: tuple[int, ...], keepdim: bool, dt: dtype,
            **params: Any) -> Tensor:
    """One launch of `kernel` folding `axes` of `x` into a new tensor of dtype `dt`."""
    if x._dtype in CHECKED:  # float8, uint16/32/64: few reductions compiled for them; complex
        check_kernel(op, x._dtype, x)
    out = new_tensor(out_shape(x._a.shape, axes, keepdim), dt, x._device)
    launch(op, kernel, out, (x,), {"axes": axes, **params})
    return out


def _int_to_long(dt: dtype) -> dtype:
    """sum/prod/cumsum of bool or integer tensors accumulate into int64, as in torch."""
    return dt if dt.is_floating_point or dt.is_complex else int64


# --- sum, mean, prod -----------------------------------------------------------------------


@op(REDUCTION, method=True)
def sum(input: Tensor, dim: DimArg = None, keepdim: bool = False, *,
        dtype: dtype | None = None, out: None = None) -> Tensor:
    """Sum over `dim` (all dims when None); ints and bools sum into int64."""
    check_out(out, "sum")
    check_dim_list_args("sum", dim, dtype)
    dt = dtype or _int_to_long(input._dtype)
    axes = reduce_dims(input._a.ndim, dim)
    return _reduce("sum", _sum_kernel, input, axes, keepdim, dt, acc=acc_np(dt))


def _sum_kernel(out: np.ndarray, x: np.ndarray, *, axes: tuple[int, ...],
                acc: np.dtype[Any]) -> None:
    out[...] = np.sum(x.astype(acc, copy=False), axis=axes, keepdims=True).reshape(out.shape)


def _mean_dtype(input: Tensor, dim: DimArg, dtype: dtype | None, out: None) -> dtype:
    """mean's checks (the kernel's and the rule's): the dtype it averages in."""
    check_out(out, "mean")
    check_dim_list_args("mean", dim, dtype)
    dt = dtype or input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        which = "Optional" if dtype is not None else "Input"
        raise RuntimeError("mean(): could not infer output dtype. "
                           f"{which} dtype must be either a floating point or complex dtype. "
                           f"Got: {SCALAR_NAME[dt]}")
    return dt


@op(REDUCTION, method=True)
def mean(input: Tensor, dim: DimArg = None, keepdim: bool = False, *,
         dtype: dtype | None = None, out: None = None) -> Tensor:
    """Mean over `dim`; floating dtypes only (pass `dtype=` to average an integer tensor)."""
    dt = _mean_dtype(input, dim, dtype, out)
    axes = reduce_dims(input.dim(), dim)
    return _reduce("mean", _mean_kernel, input, axes, keepdim, dt, acc=acc_np(dt),
                   count=numel_of(input.shape, axes))


def _mean_kernel(out: np.ndarray, x: np.ndarray, *, axes: tuple[int, ...], acc: np.dtype[Any],
                 count: int) -> None:
    total = np.sum(x.astype(acc, copy=False), axis=axes, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty mean is nan, as in torch
        out[...] = (total / acc.type(count)).reshape(out.shape)


@op(REDUCTION, method=True)
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None, out: None = None) -> Tensor:
    """Product over one dim (or all); ints and bools multiply into int64."""
    check_out(out, "prod")
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod() received an invalid combination of arguments - got "
                        f"({type(dim).__name__}), but expected one of:\n"
                        " * (*, torch.dtype dtype = None)\n"
                        " * (int dim, bool keepdim = False, *, torch.dtype dtype = None)\n")
    dt = dtype or _int_to_long(input.dtype)
    axes = reduce_dims(input.dim(), dim)
    return _reduce("prod", _prod_kernel, input, axes, keepdim, dt, acc=acc_np(dt))


def _prod_kernel(out: np.ndarray, x: np.ndarray, *, axes: tuple[int, ...],
                 acc: np.dtype[Any]) -> None:
    out[...] = np.prod(x.astype(acc, copy=False), axis=axes, keepdims=True).reshape(out.shape)


# --- amax/amin, max/min, argmax/argmin: need a non-empty reduced dim ------------------------


def _check_nonempty(fn: str, x: Tensor, axes: tuple[int, ...], dim_given: bool) -> None:
    """torch refuses to reduce an empty dim by max/min (there is no identity to return)."""
    if x.numel() != 0:
        return
    if not dim_given:
        if fn.startswith("arg"):
            raise IndexError(f"{fn}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        raise RuntimeError(f"{fn}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for a in axes:
        if x.shape[a] == 0:
            raise IndexError(f"{fn}(): Expected reduction dim {a} to have non-zero size.")


@op(REDUCTION, method=True)
def amax(input: Tensor, dim: DimArg = (), keepdim: bool = False, *,
         out: None = None) -> Tensor:
    """The largest value over `dim` (all dims by default); NaN propagates."""
    return _amax_amin("amax", input, dim, keepdim, out)


@op(REDUCTION, method=True)
def amin(input: Tensor, dim: DimArg = (), keepdim: bool = False, *,
         out: None = None) -> Tensor:
    """The smallest value over `dim` (all dims by default); NaN propagates."""
    return _amax_amin("amin", input, dim, keepdim, out)


def _amax_amin(fn: str, x: Tensor, dim: DimArg, keepdim: bool, out: None) -> Tensor:
    check_out(out, fn)
    axes = reduce_dims(x.dim(), dim)
    _check_nonempty(fn, x, axes, dim_given=dim not in (None, (), []))
    return _reduce(fn, _extreme_kernel, x, axes, keepdim, x.dtype, largest=fn == "amax")


def _extreme_kernel(out: np.ndarray, x: np.ndarray, *, axes: tuple[int, ...],
                    largest: bool) -> None:
    fold = np.max if largest else np.min
    out[...] = fold(exact_np(x), axis=axes, keepdims=True).reshape(out.shape)


@op(REDUCTION, method=True)
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False,
            out: None = None) -> return_types.aminmax:
    """(min, max) over `dim` (every dim when None) in one pass: one `aminmax` launch with two
    outputs; NaN propagates."""
    check_out(out, "aminmax")
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if input._dtype in CHECKED:
        check_kernel("aminmax", input._dtype, input)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        axes = tuple(range(input.dim()))
    else:
        axes = (wrap_dim(dim, input.dim()),) if input.dim() else ()
        for a in axes:
            if input.shape[a] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {a} to have non-zero size.")
    shape = out_shape(input.shape, axes, keepdim)
    low, high = (new_tensor(shape, input.dtype, input.device) for _ in range(2))
    launch("aminmax", _aminmax_kernel, (low, high), (input,), {"axes": axes})
    return return_types.aminmax((low, high))


def _aminmax_kernel(low: np.ndarray, high: np.ndarray, x: np.ndarray, *,
                    axes: tuple[int, ...]) -> None:
    exact = exact_np(x)
    low[...] = np.min(exact, axis=axes, keepdims=True).reshape(low.shape)
    high[...] = np.max(exact, axis=axes, keepdims=True).reshape(high.shape)


class _NoDim:
    """The default of max/min's `dim`: called without one. torch's overloads take no `dim=None`
    (an explicit None is its argument parser's TypeError)."""

    def __repr__(self) -> str:
        return "<no dim>"


_NO_DIM = _NoDim()


def _explicit_none_dim(fn: str, dim: Any, keepdim: bool) -> None:
    """torch's argument parser's errors for a `dim` none of max/min's overloads takes: None
    given (as `x.max(dim=None)` prints it), or neither an int nor a tensor."""
    if dim is None and keepdim:  # (keepdim picks the overload with an int dim)
        raise TypeError(f"{fn}(): argument 'dim' must be int, not NoneType")
    if dim is None or not isinstance(dim, (int, np.integer, Tensor, _NoDim)):
        got = "dim=NoneType, " if dim is None else type(dim).__name__
        raise TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but "
                        "expected one of:\n * ()\n * (Tensor other)\n"
                        " * (int dim, bool keepdim = False)\n"
                        " * (name dim, bool keepdim = False)")


@overload
def max(input: Tensor) -> Tensor: ...
@overload
def max(input: Tensor, dim: Tensor) -> Tensor: ...
@overload
def max(input: Tensor, dim: int, keepdim: bool = False, *,
        out: None = None) -> return_types.max: ...
@op(REDUCTION, method=True)
def max(input: Tensor, dim: int | Tensor | _NoDim | None = _NO_DIM, keepdim: bool = False, *,
        out: None = None) -> Tensor | return_types.max:
    """max(input) -> the largest value; max(input, dim) -> (values, indices) with the first
    maximal index; max(input, other) -> maximum(input, other)."""
    _explicit_none_dim("max", dim, keepdim)
    if isinstance(dim, Tensor):
        from fake_torch._kernels.clamp import maximum  # the binary form is a pointwise op

        result: Tensor = maximum(input, dim)
        return result
    values, indices = _max_min("max", input, None if isinstance(dim, _NoDim) else dim, keepdim,
                               out)
    return values if indices is None else return_types.max((values, indices))


@overload
def min(input: Tensor) -> Tensor: ...
@overload
def min(input: Tensor, dim: Tensor) -> Tensor: ...
@overload
def min(input: Tensor, dim: int, keepdim: bool = False, *,
        out: None = None) -> return_types.min: ...
@op(REDUCTION, method=True)
def min(input: Tensor, dim: int | Tensor | _NoDim | None = _NO_DIM, keepdim: bool = False, *,
        out: None = None) -> Tensor | return_types.min:
    """min(input) -> the smallest value; min(input, dim) -> (values, indices) with the first
    minimal index; min(input, other) -> minimum(input, other)."""
    _explicit_none_dim("min", dim, keepdim)
    if isinstance(dim, Tensor):
        from fake_torch._kernels.clamp import minimum  # the binary form is a pointwise op

        result: Tensor = minimum(input, dim)
        return result
    values, indices = _max_min("min", input, None if isinstance(dim, _NoDim) else dim, keepdim,
                               out)
    return values if indices is None else return_types.min((values, indices))


def _max_min(fn: str, x: Tensor, dim: int | None, keepdim: bool,
             out: None) -> tuple[Tensor, Tensor | None]:
    check_out(out, fn)
    if dim is None:  # the full reduction: one value, no index
        axes = tuple(range(x.dim()))
        _check_nonempty(fn, x, axes, dim_given=False)
        return _reduce(fn, _extreme_kernel, x, axes, False, x.dtype, largest=fn == "max"), None
    if x._dtype.is_complex:
        raise RuntimeError(f"{fn}(): does not support complex input")
    axis = wrap_dim(dim, x.dim())
    axes = (axis,) if x.dim() > 0 else ()
    _check_nonempty(fn, x, axes, dim_given=True)
    shape = out_shape(x.shape, axes, keepdim)
    values = new_tensor(shape, x.dtype, x.device)
    indices = new_tensor(shape, int64, x.device)
    launch(fn, _extreme_dim_kernel, (values, indices), (x,),
           {"axis": axis if axes else None, "largest": fn == "max"})
    return values, indices


def _extreme_dim_kernel(values: np.ndarray, indices: np.ndarray, x: np.ndarray, *,
                        axis: int | None, largest: bool) -> None:
    if axis is None:  # a 0-dim input: its only element, at index 0
        values[...] = x
        indices[...] = 0
        return
    pick = np.argmax if largest else np.argmin  # the first extreme (or first NaN), as torch
    idx = pick(exact_np(x), axis=axis, keepdims=True)
    indices[...] = idx.reshape(indices.shape)
    values[...] = np.take_along_axis(x, idx, axis).reshape(values.shape)


@op(REDUCTION, method=True)
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the first maximal value over `dim` (of the flattened tensor when None)."""
    return _arg_extreme("argmax", input, dim, keepdim)


@op(REDUCTION, method=True)
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the first minimal value over `dim` (of the flattened tensor when None)."""
    return _arg_extreme("argmin", input, dim, keepdim)


def _arg_extreme(fn: str, x: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    if x.dtype is bool_ or x.dtype.is_complex:
        raise RuntimeError(f"{fn}(): does not support {'bool' if x.dtype is bool_ else 'complex'}"
                           " input")
    axes = reduce_dims(x.dim(), dim)
    _check_nonempty(fn, x, axes, dim_given=dim is not None)
    shape = out_shape(x.shape, axes, keepdim) if dim is not None or keepdim else ()
    out = new_tensor(shape, int64, x.device)
    axis = axes[0] if dim is not None and axes else None
    launch(fn, _arg_extreme_kernel, out, (x,), {"axis": axis, "largest": fn == "argmax"})
    return out


def _arg_extreme_kernel(out: np.ndarray, x: np.ndarray, *, axis: int | None,
                        largest: bool) -> None:
    pick = np.argmax if largest else np.argmin
    out[...] = np.reshape(pick(exact_np(x), axis=axis), out.shape)


# --- all, any --------------------------------------------------------------------------------


@op(REDUCTION, method=True)
def all(input: Tensor, dim: DimArg = None, keepdim: bool = False, *,
        out: None = None) -> Tensor:
    """True where every element over `dim` is non-zero (uint8 in, uint8 out)."""
    return _all_any("all", input, dim, keepdim, out)


@op(REDUCTION, method=True)
def any(input: Tensor, dim: DimArg = None, keepdim: bool = False, *,
        out: None = None) -> Tensor:
    """True where some element over `dim` is non-zero (uint8 in, uint8 out)."""
    return _all_any("any", input, dim, keepdim, out)


def _all_any(fn: str, x: Tensor, dim: DimArg, keepdim: bool, out: None) -> Tensor:
    check_out(out, fn)
    axes = reduce_dims(x.dim(), dim, empty_means_all=False)
    dt = uint8 if x.dtype is uint8 else bool_
    return _reduce(fn, _all_any_kernel, x, axes, keepdim, dt, every=fn == "all")


def _all_any_kernel(out: np.ndarray, x: np.ndarray, *, axes: tuple[int, ...],
                    every: bool) -> None:
    fold = np.all if every else np.any
    out[...] = fold(x, axis=axes, keepdims=True).reshape(out.shape)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# Each states its op's dtype and folded dims with the helpers its kernel path uses; every
# output is a new row-major tensor (`_reduce`'s new_tensor).

def reduced_meta(x: Tensor, axes: tuple[int, ...], keepdim: bool, dt: dtype) -> TensorMeta:
    """What `_reduce` allocates: x's shape with `axes` folded, row-major."""
    shape = out_shape(tuple(x.shape), axes, keepdim)
    return TensorMeta(shape, dt, contiguous_strides(shape))


@register_meta("torch.sum")
def _sum_rule(input: Tensor, dim: DimArg = None, keepdim: bool = False, *,
              dtype: dtype | None = None, out: None = None) -> TensorMeta:
    check_out(out, "sum")
    check_dim_list_args("sum", dim, dtype)
    return reduced_meta(input, reduce_dims(input.dim(), dim), keepdim,
                        dtype or _int_to_long(input.dtype))


@register_meta("torch.mean")
def _mean_rule(input: Tensor, dim: DimArg = None, keepdim: bool = False, *,
               dtype: dtype | None = None, out: None = None) -> TensorMeta:
    dt = _mean_dtype(input, dim, dtype, out)
    return reduced_meta(input, reduce_dims(input.dim(), dim), keepdim, dt)


@register_meta("torch.prod")
def _prod_rule(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
               dtype: dtype | None = None, out: None = None) -> TensorMeta:
    check_out(out, "prod")
    return reduced_meta(input, reduce_dims(input.dim(), dim), keepdim,
                        dtype or _int_to_long(input.dtype))


def _amax_amin_rule(fn: str) -> Any:
    def rule(input: Tensor, dim: DimArg = (), keepdim: bool = False, *,
             out: None = None) -> TensorMeta:
        check_out(out, fn)
        axes = reduce_dims(input.dim(), dim)
        _check_nonempty(fn, input, axes, dim_given=dim not in (None, (), []))
        return reduced_meta(input, axes, keepdim, input.dtype)
    return rule


register_meta("torch.amax")(_amax_amin_rule("amax"))
register_meta("torch.amin")(_amax_amin_rule("amin"))


@register_meta("torch.aminmax")
def _aminmax_rule(input: Tensor, *, dim: int | None = None, keepdim: bool = False,
                  out: None = None) -> return_types.aminmax:
    check_out(out, "aminmax")
    axes = tuple(range(input.dim())) if dim is None else \
        (wrap_dim(dim, input.dim()),) if input.dim() else ()
    one: Any = reduced_meta(input, axes, keepdim, input.dtype)  # (as the kernel's pair)
    return return_types.aminmax((one, one))


def _max_min_rule(fn: str) -> Any:
    def rule(input: Tensor, dim: int | Tensor | _NoDim | None = _NO_DIM, keepdim: bool = False,
             *, out: None = None) -> Any:
        """The full reduction: one value; along a dim: (values, indices); with a tensor:
        the binary maximum/minimum (a pointwise op)."""
        _explicit_none_dim(fn, dim, keepdim)
        check_out(out, fn)
        if isinstance(dim, Tensor):
            from fake_torch._kernels._elementwise import pointwise_rule

            return pointwise_rule(input, dim)
        if isinstance(dim, _NoDim) or dim is None:
            axes = tuple(range(input.dim()))
            _check_nonempty(fn, input, axes, dim_given=False)
            return reduced_meta(input, axes, False, input.dtype)
        axes = (wrap_dim(dim, input.dim()),) if input.dim() > 0 else ()
        _check_nonempty(fn, input, axes, dim_given=True)
        pair: Any = (reduced_meta(input, axes, keepdim, input.dtype),
                     reduced_meta(input, axes, keepdim, int64))
        return return_types.max(pair) if fn == "max" else return_types.min(pair)
    return rule


register_meta("torch.max")(_max_min_rule("max"))
register_meta("torch.min")(_max_min_rule("min"))


def _arg_extreme_rule(fn: str) -> Any:
    def rule(input: Tensor, dim: int | None = None, keepdim: bool = False) -> TensorMeta:
        axes = reduce_dims(input.dim(), dim)
        _check_nonempty(fn, input, axes, dim_given=dim is not None)
        shape = out_shape(tuple(input.shape), axes, keepdim) if dim is not None or keepdim \
            else ()
        return TensorMeta(shape, int64, contiguous_strides(shape))
    return rule


register_meta("torch.argmax")(_arg_extreme_rule("argmax"))
register_meta("torch.argmin")(_arg_extreme_rule("argmin"))


def _all_any_rule(fn: str) -> Any:
    def rule(input: Tensor, dim: DimArg = None, keepdim: bool = False, *,
             out: None = None) -> TensorMeta:
        check_out(out, fn)
        axes = reduce_dims(input.dim(), dim, empty_means_all=False)
        return reduced_meta(input, axes, keepdim, uint8 if input.dtype is uint8 else bool_)
    return rule


register_meta("torch.all")(_all_any_rule("all"))
register_meta("torch.any")(_all_any_rule("any"))
