"""Division: div (true, or rounded by rounding_mode "trunc" / "floor"), true_divide,
floor_divide, remainder. One launch each.

Integers divide like Python (floor) or C (trunc) and raise torch's ZeroDivisionError on a zero
divisor; true division promotes them to the default float dtype. For float16/bfloat16 the
rounded modes follow torch's kernels step by step (see _div_floor).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import bool_, dtype, get_default_dtype
from fake_torch._kernels._common import result_type
from fake_torch._kernels._elementwise import (
    Operand,
    binary_operands,
    elementwise_meta,
    error_tensor,
    inplace,
    not_implemented,
    opmath,
    pointwise,
    pointwise_rule,
    promote,
)
from fake_torch._kernels.pointwise_math import kernel_name
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, method, op
from fake_torch._tensor import Number, Tensor


def _zero_check(b: Any) -> None:
    if np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _div_trunc(a: Any, b: Any, dt: np.dtype[Any]) -> Any:
    """C division for integers; for floats trunc(a / b), the quotient first rounded to the
    tensor's dtype `dt` (as torch's 16-bit kernels do)."""
    if np.asarray(a).dtype.kind in "iu":
        _zero_check(b)
        q = np.floor_divide(a, b)
        return q + ((q * b != a) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)))
    q = np.asarray(a / b)
    return np.trunc(q.astype(dt).astype(q.dtype))


def _div_floor(a: Any, b: Any, dt: np.dtype[Any]) -> Any:
    """Python's floor division. Floats follow torch's div_floor_floating; for float16/bfloat16
    every step rounds to `dt`, as torch computes it in the 16-bit type itself."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iu":
        _zero_check(b)
        return np.floor_divide(a, b)
    if a.dtype == dt:
        return np.floor_divide(a, b)

    def r(x: Any) -> Any:
        return np.asarray(x).astype(dt).astype(a.dtype)

    mod = np.fmod(a, b)
    div = r(r(a - mod) / b)
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), r(div - 1), div)
    floor = np.floor(div)
    floor = np.where(div - floor > 0.5, floor + 1, floor)
    floor = np.where(div == 0, np.copysign(0.0, a / b), floor)
    return np.where(b == 0, a / b, floor)


def _remainder(a: Any, b: Any) -> Any:
    if np.asarray(a).dtype.kind in "iu":
        _zero_check(b)
        return np.remainder(a, b)
    mod = np.fmod(a, b)  # torch keeps fmod's zero sign; numpy's remainder would use b's
    return np.where((mod != 0) & ((np.asarray(b) < 0) != (mod < 0)), mod + b, mod)


def _rounding_dtype(promo: dtype, divisor: Operand) -> np.dtype[Any]:
    """The dtype the steps of a 16-bit rounded division round to: torch computes them in the
    16-bit type itself for a tensor divisor, in float32 (no rounding) for a scalar divisor."""
    if isinstance(divisor, Tensor) and divisor._a.size != 1:
        return promo.np
    return opmath(promo).np


def _div(op: str, input: Any, other: Any, rounding_mode: Any, out: Tensor | None) -> Tensor:
    a, b = binary_operands("div", input, other)
    promo = promote(a, b)
    if rounding_mode is None:
        if not (promo.is_floating_point or promo.is_complex):
            promo = get_default_dtype()
        return pointwise(op, np.true_divide, [a, b], promo=promo, result=promo, out=out,
                         opmath_arg=1)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    if promo is bool_:
        t = error_tensor(a, b)
        raise not_implemented(kernel_name(t, f"div_{rounding_mode}_cpu",
                                          f"div_{rounding_mode}_cuda"), promo)
    fn = _div_trunc if rounding_mode == "trunc" else _div_floor
    return pointwise(op, fn, [a, b], promo=promo, result=promo, out=out, opmath_arg=1,
                     kw={"dt": _rounding_dtype(promo, b)})


@op(POINTWISE, method=True, aliases=("divide",))
def div(input: Tensor | Number, other: Tensor | Number, *, rounding_mode: str | None = None,
        out: Tensor | None = None) -> Tensor:
    """True division (integers promote to the default float dtype), or rounded by
    rounding_mode "trunc" / "floor" (integers stay integers)."""
    return _div("div", input, other, rounding_mode, out)


@method(POINTWISE, aliases=("divide_",))
def div_(self: Tensor, other: Tensor | Number, *, rounding_mode: str | None = None) -> Tensor:
    return _div("div_", self, other, rounding_mode, self)


@op(POINTWISE, method=True, aten=())
def true_divide(dividend: Tensor | Number, divisor: Tensor | Number, *,
                out: Tensor | None = None) -> Tensor:
    return _div("div", dividend, divisor, None, out)


@method(POINTWISE, aten=())
def true_divide_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _div("div_", self, other, None, self)


def _floor_divide(op: str, input: Any, other: Any, out: Tensor | None) -> Tensor:
    a, b = binary_operands("floor_divide", input, other)
    promo = promote(a, b)
    if promo is bool_:
        raise not_implemented(kernel_name(error_tensor(a, b), "div_floor_cpu", "div_floor_cuda"),
                              promo)
    return pointwise(op, _div_floor, [a, b], promo=promo, result=promo, out=out, opmath_arg=1,
                     kw={"dt": _rounding_dtype(promo, b)})


@op(POINTWISE, method=True)
def floor_divide(input: Tensor | Number, other: Tensor | Number, *,
                 out: Tensor | None = None) -> Tensor:
    """Division rounded toward negative infinity (Python's //)."""
    return _floor_divide("floor_divide", input, other, out)


@method(POINTWISE)
def floor_divide_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _floor_divide("floor_divide_", self, other, self)


def _remainder_op(op: str, input: Any, other: Any, out: Tensor | None) -> Tensor:
    a, b = binary_operands("remainder", input, other)
    promo = promote(a, b)
    if promo is bool_:
        raise not_implemented(kernel_name(error_tensor(a, b), "remainder_cpu", "remainder_cuda"),
                              promo)
    return pointwise(op, _remainder, [a, b], promo=promo, result=promo, out=out)


@op(POINTWISE, method=True)
def remainder(input: Tensor | Number, other: Tensor | Number, *,
              out: Tensor | None = None) -> Tensor:
    """Python's modulus: the result takes the divisor's sign."""
    return _remainder_op("remainder", input, other, out)


@method(POINTWISE)
def remainder_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _remainder_op("remainder_", self, other, self)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# floor_divide, remainder: the pointwise kind's rule (their operands promote)

@register_meta("torch.div", "torch.true_divide")
def _div_rule(input: Tensor | Number, other: Tensor | Number, *,
              rounding_mode: str | None = None, out: Tensor | None = None) -> TensorMeta:
    """True division of integers gives the default dtype; rounded division promotes."""
    promo = result_type(input, other)
    if rounding_mode is None and not (promo.is_floating_point or promo.is_complex):
        promo = get_default_dtype()
    return elementwise_meta([input, other], promo, out)


register_meta("Tensor.div_", "Tensor.true_divide_")(inplace(_div_rule))
register_meta("Tensor.floor_divide_", "Tensor.remainder_")(inplace(pointwise_rule))
