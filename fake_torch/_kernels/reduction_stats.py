"""Statistics over dims: var, std, var_mean, std_mean (one launch each, named so) and norms
(launch `linalg_vector_norm`, which torch.norm and Tensor.norm also reach for vector and
Frobenius norms).

var/std accumulate in float64 (torch's CPU accumulation type for them) and round once.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, dtype, promote_types
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels._reduce_util import (
    DimArg,
    acc_np,
    check_out,
    numel_of,
    out_shape,
    reduce_dims,
)
from fake_torch._kernels.arith import add
from fake_torch._kernels.complex_ops import imag_, real_
from fake_torch._kernels.pointwise_math import sqrt_
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import REDUCTION, op
from fake_torch._tensor import Number, Tensor


@op(REDUCTION, method=True)
def var(input: Tensor, dim: DimArg | bool = None, unbiased: bool | None = None,
        keepdim: bool = False, *, correction: Number | None = None,
        out: None = None) -> Tensor:
    """Variance over `dim` with `correction` (default 1; `unbiased=False` means 0)."""
    return _var_std("var", input, dim, unbiased, keepdim, correction, out)


@op(REDUCTION, method=True)
def std(input: Tensor, dim: DimArg | bool = None, unbiased: bool | None = None,
        keepdim: bool = False, *, correction: Number | None = None,
        out: None = None) -> Tensor:
    """Standard deviation over `dim` with `correction` (default 1)."""
    return _var_std("std", input, dim, unbiased, keepdim, correction, out)


@op(REDUCTION)
def var_mean(input: Tensor, dim: DimArg | bool = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None) -> tuple[Tensor, Tensor]:
    """(variance, mean) over `dim` in one pass: one `var_mean` launch."""
    return _moments("var_mean", input, dim, unbiased, keepdim, correction)


@op(REDUCTION)
def std_mean(input: Tensor, dim: DimArg | bool = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None) -> tuple[Tensor, Tensor]:
    """(standard deviation, mean) over `dim` in one pass: one `std_mean` launch."""
    return _moments("std_mean", input, dim, unbiased, keepdim, correction)


def _moments(fn: str, x: Tensor, dim: DimArg | bool, unbiased: bool | None, keepdim: bool,
             correction: Number | None) -> tuple[Tensor, Tensor]:
    dim, correction = _parse(fn, x, dim, unbiased, correction)
    if x.dtype.is_complex:
        raise NotImplementedError(f"torch.{fn} of a complex tensor is not emulated by fake_torch")
    axes, dof = _axes_dof(fn, x, dim, correction)
    shape = out_shape(x.shape, axes, keepdim)
    spread, mean = (new_tensor(shape, x.dtype, x.device) for _ in range(2))
    launch(fn, _moments_kernel, (spread, mean), (x,),
           {"axes": axes, "dof": dof, "root": fn == "std_mean"})
    return spread, mean


def _moments_kernel(spread: np.ndarray, mean: np.ndarray, x: np.ndarray, *,
                    axes: tuple[int, ...], dof: float, root: bool) -> None:
    _var_kernel(spread, x, axes=axes, dof=dof, root=root)
    with np.errstate(invalid="ignore"):  # an empty reduction: nan, as in torch
        mean[...] = np.mean(x.astype(np.float64), axis=axes, keepdims=True).reshape(mean.shape)


def _var_std(fn: str, x: Tensor, dim: DimArg | bool, unbiased: bool | None, keepdim: bool,
             correction: Number | None, out: None) -> Tensor:
    check_out(out, fn)
    dim, correction = _parse(fn, x, dim, unbiased, correction)
    if x.dtype.is_complex:  # torch: the variances of the real and imaginary parts, added (then
        # a square root for std): 3 or 4 launches (an H200 ran var's 3 kernels, 2026-12-04)
        parts = [_var_std("var", part(x), dim, None, keepdim, correction, None)
                 for part in (real_, imag_)]
        total = add(*parts)
        return sqrt_(total) if fn == "std" else total
    axes, dof = _axes_dof(fn, x, dim, correction)
    result = new_tensor(out_shape(x.shape, axes, keepdim), x.dtype, x.device)
    launch(fn, _var_kernel, result, (x,), {"axes": axes, "dof": dof, "root": fn == "std"})
    return result


def _parse(fn: str, x: Tensor, dim: DimArg | bool, unbiased: bool | None,
           correction: Number | None) -> tuple[DimArg, Number]:
    """torch's argument checks of var/std (and their _mean forms): the dims and the
    correction they mean."""
    if isinstance(dim, bool):  # torch.var(x, False): the (input, unbiased) overload
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got both "
                        "'unbiased' and 'correction'; pass only one")
    if correction is None:
        correction = 0 if unbiased is False else 1
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        what = fn if fn.endswith("_mean") else "std and var"
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    return dim, correction


def _axes_dof(fn: str, x: Tensor, dim: DimArg,
              correction: Number) -> tuple[tuple[int, ...], float]:
    """The dims a var/std folds and the degrees of freedom it divides by (torch's warning when
    there are none left)."""
    axes = reduce_dims(x.dim(), dim)
    count = numel_of(x.shape, axes)
    if count - correction <= 0:
        warnings.warn(f"{fn}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=4)
    return axes, max(0.0, float(count - correction))


def _var_kernel(out: np.ndarray, x: np.ndarray, *, axes: tuple[int, ...], dof: float,
                root: bool) -> None:
    a = x.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):  # dof 0: inf or nan, as in torch
        centred = a - np.mean(a, axis=axes, keepdims=True) if a.size else a
        v = np.sum(centred * centred, axis=axes, keepdims=True) / dof
        out[...] = (np.sqrt(v) if root else v).reshape(out.shape)


@op(REDUCTION, method=True, aten=("linalg_vector_norm",))
def norm(input: Tensor, p: float | str | None = "fro", dim: DimArg = None,
         keepdim: bool = False, out: None = None, dtype: dtype | None = None) -> Tensor:
    """torch.norm: a vector p-norm over `dim` ("fro" is the 2-norm over at most two dims)."""
    check_out(out, "norm")
    return vector_norm(input, _norm_ord(input, p, dim), dim, keepdim, dtype=dtype)


def _norm_ord(input: Tensor, p: float | str | None, dim: DimArg) -> float:
    """torch.norm's p as the vector norm's ord (a matrix norm refused)."""
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return 2
        dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) \
            else list(dim)
        if len(dims) != 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(str(d) for d in dims))
        if p == "nuc":
            raise NotImplementedError("torch.norm(p='nuc') (torch.linalg.matrix_norm) is not "
                                      "emulated by fake_torch")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return 2.0 if p is None else p


@op(REDUCTION, namespace="torch.linalg", aten=("linalg_vector_norm",))
def vector_norm(x: Tensor, ord: float = 2, dim: DimArg = None,
                keepdim: bool = False, *, dtype: dtype | None = None,
                out: None = None) -> Tensor:
    """torch.linalg.vector_norm: (sum |x|^ord)^(1/ord) over `dim`; ord may be inf, -inf, 0."""
    check_out(out, "linalg.vector_norm")
    axes, dt = _vector_norm_plan(x, ord, dim, dtype)
    result = new_tensor(out_shape(x.shape, axes, keepdim), dt, x.device)
    launch("linalg_vector_norm", _vector_norm_kernel, result, (x,),
           {"axes": axes, "ord": float(ord), "acc": acc_np(dt)})
    return result


def _vector_norm_plan(x: Tensor, ord: float, dim: DimArg, dtype: dtype | None
                      ) -> tuple[tuple[int, ...], dtype]:
    """vector_norm's checks; its (folded dims, output dtype)."""
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {SCALAR_NAME[x.dtype]}")
    if dtype is not None and promote_types(x.dtype, dtype) is not dtype:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({SCALAR_NAME[x.dtype]}) "
                           "should be convertible without narrowing to the specified dtype "
                           f"({SCALAR_NAME[dtype]})")
    axes = reduce_dims(x.dim(), dim)
    if x.numel() == 0 and (ord < 0 or ord == math.inf):  # max/min-like: no identity
        if dim is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
                               "tensor because the operation does not have an identity")
        for a in axes:
            if x.shape[a] == 0:  # (torch's text lacks the space before "because")
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on the "
                                   f"dimension {a}because this dimension is empty and the "
                                   "operation does not have an identity")
    return axes, (dtype or x.dtype).to_real()  # the norm of complex numbers is real


def _vector_norm_kernel(out: np.ndarray, x: np.ndarray, *, axes: tuple[int, ...], ord: float,
                        acc: np.dtype[Any]) -> None:
    a = (np.abs(x).astype(acc, copy=False) if x.dtype.kind == "c"  # |z| before the cast
         else np.abs(x.astype(acc, copy=False)))
    kw: dict[str, Any] = {"axis": axes, "keepdims": True}
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if ord == math.inf:
            r = np.max(a, **kw)
        elif ord == -math.inf:
            r = np.min(a, **kw)
        elif ord == 0:
            r = np.sum(a != 0, **kw).astype(acc)
        elif ord == 1:
            r = np.sum(a, **kw)
        elif ord == 2:
            r = np.sqrt(np.sum(a * a, **kw))
        else:
            r = np.sum(a ** acc.type(ord), **kw) ** acc.type(1.0 / ord)
    out[...] = r.reshape(out.shape)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# new row-major tensors of the reduced shape (a complex var/std: the real parts' dtype)

def _reduced(x: Tensor, dim: DimArg, keepdim: bool, dt: dtype) -> TensorMeta:
    shape = out_shape(tuple(x.shape), reduce_dims(x.dim(), dim), keepdim)
    return TensorMeta(shape, dt, contiguous_strides(shape))


def _var_std_rule(fn: str) -> Any:
    def rule(input: Tensor, dim: DimArg | bool = None, unbiased: bool | None = None,
             keepdim: bool = False, *, correction: Number | None = None,
             out: None = None) -> TensorMeta:
        check_out(out, fn)
        dim, _ = _parse(fn, input, dim, unbiased, correction)
        return _reduced(input, dim, keepdim, input.dtype.to_real())
    return rule


def _moments_rule(fn: str) -> Any:
    def rule(input: Tensor, dim: DimArg | bool = None, unbiased: bool | None = None,
             keepdim: bool = False, *,
             correction: Number | None = None) -> tuple[TensorMeta, TensorMeta]:
        dim, _ = _parse(fn, input, dim, unbiased, correction)
        if input.dtype.is_complex:
            raise NotImplementedError(f"torch.{fn} of a complex tensor is not emulated by "
                                      "fake_torch")
        one = _reduced(input, dim, keepdim, input.dtype)
        return one, one
    return rule


for _fn in ("var", "std"):
    register_meta(f"torch.{_fn}")(_var_std_rule(_fn))
    register_meta(f"torch.{_fn}_mean")(_moments_rule(f"{_fn}_mean"))


@register_meta("torch.linalg.vector_norm")
def _vector_norm_rule(x: Tensor, ord: float = 2, dim: DimArg = None, keepdim: bool = False, *,
                      dtype: dtype | None = None, out: None = None) -> TensorMeta:
    check_out(out, "linalg.vector_norm")
    axes, dt = _vector_norm_plan(x, ord, dim, dtype)
    shape = out_shape(tuple(x.shape), axes, keepdim)
    return TensorMeta(shape, dt, contiguous_strides(shape))


@register_meta("torch.norm")
def _norm_rule(input: Tensor, p: float | str | None = "fro", dim: DimArg = None,
               keepdim: bool = False, out: None = None,
               dtype: dtype | None = None) -> TensorMeta:
    check_out(out, "norm")
    return _vector_norm_rule(input, _norm_ord(input, p, dim), dim, keepdim, dtype=dtype)
