"""Shared by the reduction, sorting and linalg modules: dim lists, output shapes, accumulation
dtypes and a `_to_copy` cast."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import CPP_NAME as CPP_NAME  # re-exported for reduction_scan.py
from fake_torch._dtype import SCALAR_NAME as SCALAR_NAME  # re-exported for reduction_scan.py
from fake_torch._dtype import bfloat16, dtype, float16, loaded_np
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._tensor import Tensor, wrap_dim

DimArg = int | Sequence[int] | None


def reduce_dims(ndim: int, dim: DimArg, *, empty_means_all: bool = True) -> tuple[int, ...]:
    """The non-negative dims a reduction over `dim` folds, as numpy axes.

    None means every dim; `()` means every dim for sum/mean/amax/var and none for all/any
    (`empty_means_all=False`), as in torch. A 0-dim tensor accepts dim 0 or -1 and folds nothing.
    """
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return tuple(range(ndim)) if empty_means_all else ()
    wrapped: list[int] = []
    for d in dims:
        w = wrap_dim(int(d), ndim)
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.append(w)
    return tuple(wrapped) if ndim > 0 else ()


def check_dtype_arg(dt: Any, fn: str) -> None:
    """torch's argument parser on a `dtype=` argument."""
    if dt is not None and not isinstance(dt, dtype):
        raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not {type(dt).__name__}")


def check_dim_list_args(fn: str, dim: Any, dt: Any) -> None:
    """torch's argument parser on sum/mean's `dim` (an int or a sequence of ints) and `dtype`
    (their overloads' error, as `x.sum("a")` prints it)."""
    def is_int(d: object) -> bool:
        return isinstance(d, (int, np.integer))

    bad = None
    if not (dim is None or is_int(dim)
            or (isinstance(dim, (list, tuple)) and all(is_int(d) for d in dim))):
        bad = type(dim).__name__
    elif dt is not None and not isinstance(dt, dtype):
        bad = f"dtype={type(dt).__name__}, "
    if bad is not None:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got ({bad}), "
                        "but expected one of:\n * (*, torch.dtype dtype = None)\n"
                        " * (tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)"
                        "\n")


def out_shape(shape: Sequence[int], axes: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    """The shape left after folding `axes` (size 1 there when `keepdim`)."""
    if keepdim:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def numel_of(shape: Sequence[int], axes: Sequence[int]) -> int:
    """How many elements each output element of a reduction over `axes` folds."""
    return math.prod(shape[a] for a in axes)


def acc_np(dt: dtype) -> np.dtype[Any]:
    """The numpy dtype a kernel computes in: float16/bfloat16 accumulate in float32 and round
    once on store, as torch's CPU and CUDA kernels do; every other dtype computes in itself."""
    return np.dtype(np.float32) if dt in (float16, bfloat16) else dt.np


def exact_np(a: np.ndarray) -> np.ndarray:
    """`a` in a dtype numpy compares and sorts correctly: float16/bfloat16 widen (exactly) to
    float32, since ml_dtypes' bfloat16 sorts NaN wrongly."""
    if a.dtype == float16.np or a.dtype == loaded_np(bfloat16):
        return a.astype(np.float32)
    return a


def check_out(out: object, fn: str) -> None:
    """`out=` is accepted for signature parity and refused when given."""
    if out is not None:
        raise NotImplementedError(f"torch.{fn}(..., out=...) is not emulated by fake_torch")


def cast(x: Tensor, dt: dtype) -> Tensor:
    """`x.to(dt)`: one `_to_copy` launch, or `x` itself when it already has dtype `dt`."""
    if x.dtype is dt:
        return x
    out = new_tensor(x.shape, dt, x.device)
    launch("_to_copy", _cast_kernel, out, (x,))
    return out


def _cast_kernel(out: np.ndarray, x: np.ndarray) -> None:
    out[...] = x
