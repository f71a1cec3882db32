"""clamp (and clamp_min / clamp_max / clip), minimum, maximum: one launch each.

Bounds take part in type promotion (an int tensor clamped by 0.5 becomes float); NaN
propagates, and min > max gives max, as in torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import dtype, float64
from fake_torch._kernels._common import result_type
from fake_torch._kernels._elementwise import (
    DTYPE_NAMES,
    can_cast,
    elementwise_meta,
    inplace,
    is_number,
    pointwise,
    tensor_arg,
)
from fake_torch._kernels._strides import checked_convert
from fake_torch._kernels.pointwise_math import cpp_name
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, op
from fake_torch._tensor import Number, Tensor


def _clamp_fn(x: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return x


@op(POINTWISE, method=True, aliases=("clip",))
def clamp(input: Tensor, min: Tensor | Number | None = None,
          max: Tensor | Number | None = None, *, out: Tensor | None = None) -> Tensor:
    return _clamp("clamp", input, min, max, out)


@op(POINTWISE, method=True, aliases=("clip_",))
def clamp_(input: Tensor, min: Tensor | Number | None = None,
           max: Tensor | Number | None = None) -> Tensor:
    return _clamp("clamp_", input, min, max, input)


def _clamp(op: str, input: Any, lo: Any, hi: Any, out: Tensor | None) -> Tensor:
    x = tensor_arg(input, "clamp")
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (lo, hi) if b is not None]
    as_tensors = [isinstance(b, Tensor) for b in bounds]
    if (any(as_tensors) and not all(as_tensors)) or not all(
            isinstance(b, Tensor) or is_number(b) for b in bounds):
        got = "".join(f"{k}={type(v).__name__}, " for k, v in (("max", hi), ("min", lo))
                      if v is not None)
        raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n * (Tensor min = None, Tensor max = None)\n"
                        " * (Number min = None, Number max = None)")
    if not x.dtype.is_complex and any(isinstance(b, complex) for b in bounds):
        # a complex Number bound of a real clamp is read as a double, checked (c10)
        lo, hi = (checked_convert(b, float64) if isinstance(b, complex) else b for b in (lo, hi))
        bounds = [b for b in (lo, hi) if b is not None]
    promo = result_type(x, *bounds)
    if not any(as_tensors):
        for b in bounds:  # c10 converts a Number bound to the op's dtype, checked
            checked_convert(b, promo)
        if out is not None:
            _check_scalar_clamp_cast(promo, out)
    return pointwise(op, _clamp_fn, [x, lo, hi], promo=promo, result=promo, out=out)


def _check_scalar_clamp_cast(promo: dtype, out: Tensor) -> None:
    """The scalar clamp_ family words its cast error with C++ type names ('long int')."""
    if not can_cast(promo, out.dtype):
        raise RuntimeError(f"result type {DTYPE_NAMES[promo]} can't be cast to the desired "
                           f"output type {cpp_name(out.dtype)}")


def _one_bound(op: str, fname: str, fn: np.ufunc, input: Any, bound: Any,
               out: Tensor | None) -> Tensor:
    x = tensor_arg(input, fname)
    if not (isinstance(bound, Tensor) or is_number(bound)):
        raise TypeError(f"{fname}(): argument '{fname[-3:]}' (position 2) must be Tensor or "
                        f"Number, not {type(bound).__name__}")
    promo = result_type(x, bound)
    if not isinstance(bound, Tensor):
        checked_convert(bound, promo)
        if out is not None:
            _check_scalar_clamp_cast(promo, out)
    return pointwise(op, fn, [x, bound], promo=promo, result=promo, out=out)


@op(POINTWISE, method=True)
def clamp_min(input: Tensor, min: Tensor | Number) -> Tensor:
    return _one_bound("clamp_min", "clamp_min", np.maximum, input, min, None)


@op(POINTWISE, method=True)
def clamp_max(input: Tensor, max: Tensor | Number) -> Tensor:
    return _one_bound("clamp_max", "clamp_max", np.minimum, input, max, None)


@op(POINTWISE, method=True)
def clamp_min_(input: Tensor, min: Tensor | Number) -> Tensor:
    return _one_bound("clamp_min_", "clamp_min", np.maximum, input, min, input)


@op(POINTWISE, method=True)
def clamp_max_(input: Tensor, max: Tensor | Number) -> Tensor:
    return _one_bound("clamp_max_", "clamp_max", np.minimum, input, max, input)


def _min_max(op: str, fn: np.ufunc, input: Any, other: Any, out: Tensor | None) -> Tensor:
    x = tensor_arg(input, op)
    y = tensor_arg(other, op, "other", 2)
    promo = result_type(x, y)
    return pointwise(op, fn, [x, y], promo=promo, result=promo, out=out)


@op(POINTWISE, method=True)
def minimum(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Elementwise min; NaN propagates."""
    return _min_max("minimum", np.minimum, input, other, out)


@op(POINTWISE, method=True)
def maximum(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Elementwise max; NaN propagates."""
    return _min_max("maximum", np.maximum, input, other, out)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# minimum, maximum: the pointwise kind's rule

def _bounded(input: Tensor, bounds: list[Any], out: Tensor | None) -> TensorMeta:
    """The bounds promote with the input (a complex Number bound of a real input is read as
    a double, its real part)."""
    if not input.dtype.is_complex:
        bounds = [b.real if isinstance(b, complex) else b for b in bounds]
    return elementwise_meta([input, *bounds], result_type(input, *bounds), out)


@register_meta("torch.clamp")
def _clamp_rule(input: Tensor, min: Tensor | Number | None = None,
                max: Tensor | Number | None = None, *, out: Tensor | None = None) -> TensorMeta:
    return _bounded(input, [b for b in (min, max) if b is not None], out)


@register_meta("torch.clamp_min")
def _clamp_min_rule(input: Tensor, min: Tensor | Number, *,
                    out: Tensor | None = None) -> TensorMeta:
    return _bounded(input, [min], out)


@register_meta("torch.clamp_max")
def _clamp_max_rule(input: Tensor, max: Tensor | Number, *,
                    out: Tensor | None = None) -> TensorMeta:
    return _bounded(input, [max], out)


register_meta("torch.clamp_")(inplace(_clamp_rule))
register_meta("torch.clamp_min_")(inplace(_clamp_min_rule))
register_meta("torch.clamp_max_")(inplace(_clamp_max_rule))
