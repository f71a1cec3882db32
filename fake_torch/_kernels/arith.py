"""Binary arithmetic: add, sub, rsub, mul, pow, lerp (division lives in division.py).

One launch each, named as torch's dispatcher names it ("add", "add_", "rsub", "pow").
Python scalars take part in type promotion as wrapped numbers; integer math wraps like C.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import bfloat16, bool_
from fake_torch._kernels._common import result_type
from fake_torch._kernels._elementwise import (
    Operand,
    binary_operands,
    elementwise_meta,
    fma,
    inplace,
    is_number,
    not_implemented,
    operand,
    opmath,
    plain_binary,
    pointwise,
    pointwise_rule,
    promote,
    tensor_arg,
    ufunc_kernel_of,
)
from fake_torch._kernels._strides import checked_convert, same_meta
from fake_torch._kernels.cast import check_fits
from fake_torch._kernels.pointwise_math import cpp_name, kernel_name
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, VIEW, method, op
from fake_torch._tensor import Number, Scalar, Tensor


def _is_bool(x: Operand) -> bool:
    return x.dtype is bool_ if isinstance(x, Tensor) else isinstance(x, bool)


# --- add, sub, rsub ---------------------------------------------------------------------------

def _check_alpha(alpha: Any, promo: Any, fname: str) -> None:
    if not is_number(alpha):
        raise TypeError(f"{fname}(): argument 'alpha' must be Number, not "
                        f"{type(alpha).__name__}")
    if isinstance(alpha, (bool, np.bool_)) and promo is not bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not promo.is_complex and isinstance(alpha, (complex, np.complexfloating)):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    if (not (promo.is_floating_point or promo.is_complex)
            and isinstance(alpha, (float, np.floating))):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")


def _check_sub(a: Operand, b: Operand) -> None:
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _alpha_times(a: Any, b: Any, alpha: Any) -> Any:
    """a + alpha * b as torch's vectorized kernels compute it: one fused multiply-add for
    floats (in float32 for the 16-bit floats, whose product is exact there); integers wrap.
    (torch's CPU loop tail rounds the 16-bit product first, so its last few elements of a
    16-bit tensor can differ by an ulp; a GPU fuses everywhere, as we do.)"""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind != "f":
        return a + alpha * b
    return fma(np.asarray(alpha, dtype=a.dtype), b, a)


def _add_alpha(a: Any, b: Any, alpha: Any) -> Any:
    return _alpha_times(a, b, alpha)


def _sub_alpha(a: Any, b: Any, alpha: Any) -> Any:
    return _alpha_times(a, b, -alpha)


def _rsub_alpha(a: Any, b: Any, alpha: Any) -> Any:
    return _alpha_times(b, a, -alpha)


# torch.add(x, y), x.mul(y), ...: `plain_binary` first, for two alike tensors (or a tensor and a
# float) with no alpha and no out; these are its kernels
_ADD, _SUB, _MUL = (ufunc_kernel_of(fn, 2) for fn in (np.add, np.subtract, np.multiply))


def _add_sub(op: str, fname: str, input: Any, other: Any, alpha: Any,
             out: Tensor | None) -> Tensor:
    a, b = binary_operands(fname, input, other)
    promo = promote(a, b)
    if type(alpha) is not int:  # an int alpha is always fine
        _check_alpha(alpha, promo, fname)
    if fname != "add":
        _check_sub(a, b)
    if fname == "rsub":
        fn: Any = _rsub_alpha
    elif alpha == 1:  # the common case: one numpy ufunc straight into the output
        fn = np.add if fname == "add" else np.subtract
        return pointwise(op, fn, [a, b], promo=promo, result=promo, out=out)
    else:
        fn = _add_alpha if fname == "add" else _sub_alpha
    alpha = alpha.item() if isinstance(alpha, np.generic) else alpha
    return pointwise(op, fn, [a, b, alpha], promo=promo, result=promo, out=out)


@op(POINTWISE, method=True)
def add(input: Tensor | Number, other: Tensor | Number, *, alpha: Number = 1,
        out: Tensor | None = None) -> Tensor:
    """input + alpha * other."""
    if out is None and alpha.__class__ is int and alpha == 1 and isinstance(input, Tensor):
        fast = plain_binary("add", _ADD, input, other)
        if fast is not None:
            return fast
    return _add_sub("add", "add", input, other, alpha, out)


@op(POINTWISE, method=True, aliases=("subtract",))
def sub(input: Tensor | Number, other: Tensor | Number, *, alpha: Number = 1,
        out: Tensor | None = None) -> Tensor:
    """input - alpha * other."""
    if out is None and alpha.__class__ is int and alpha == 1 and isinstance(input, Tensor):
        fast = plain_binary("sub", _SUB, input, other)
        if fast is not None:
            return fast
    return _add_sub("sub", "sub", input, other, alpha, out)


@op(POINTWISE)
def rsub(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """other - alpha * input (what `1 - x` dispatches to)."""
    return _add_sub("rsub", "rsub", tensor_arg(input, "rsub"), other, alpha, None)


@method(POINTWISE)
def add_(self: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    return _add_sub("add_", "add", self, other, alpha, self)


@method(POINTWISE, aliases=("subtract_",))
def sub_(self: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    return _add_sub("sub_", "sub", self, other, alpha, self)


# --- mul ---------------------------------------------------------------------------------------

def _mul(op: str, input: Any, other: Any, out: Tensor | None) -> Tensor:
    a, b = binary_operands("mul", input, other)
    promo = promote(a, b)
    return pointwise(op, np.multiply, [a, b], promo=promo, result=promo, out=out,
                     opmath_arg=1)


@op(POINTWISE, method=True, aliases=("multiply",))
def mul(input: Tensor | Number, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    if out is None and isinstance(input, Tensor):
        fast = plain_binary("mul", _MUL, input, other)
        if fast is not None:
            return fast
    return _mul("mul", input, other, out)


@method(POINTWISE, aliases=("multiply_",))
def mul_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _mul("mul_", self, other, self)


# --- pow ---------------------------------------------------------------------------------------

def _int_pow(base: Any, exponent: Any) -> np.ndarray:
    """Integer power with C wraparound; a negative exponent gives 0 (1 and -1 excepted)."""
    b = np.asarray(base).astype(np.int64)
    e = np.asarray(exponent).astype(np.int64)
    r = np.power(b, np.maximum(e, 0))
    negative = e < 0
    if np.any(negative):
        ones = np.where(b == -1, np.where(e % 2 == 0, 1, -1), np.where(b == 1, 1, 0))
        r = np.where(negative, ones, r)
    return r


def _pow_scalar_exponent(x: np.ndarray, e: Any, dt: np.dtype[Any]) -> Any:
    """torch's pow_tensor_scalar fast paths (x*x for 2, sqrt for 0.5, ...), else np.power.
    Products round to `dt` between steps (torch's bfloat16 kernel works in bfloat16)."""
    if x.dtype.kind in "iub":
        return _int_pow(x, e)

    def r(v: np.ndarray) -> np.ndarray:
        return v if dt == v.dtype else v.astype(dt).astype(v.dtype)

    if e == 2:
        return x * x
    if e == 3:
        return r(x * x) * x
    if e == 0.5:
        return np.sqrt(x)
    if e == -0.5:
        return np.reciprocal(np.sqrt(x))
    if e == -1:
        return np.reciprocal(x)
    if e == -2:
        return np.reciprocal(r(x * x))
    return np.power(x, x.dtype.type(e))


def _pow_tensors(a: Any, b: Any) -> Any:
    if np.asarray(a).dtype.kind in "iub":
        return _int_pow(a, b)
    return np.power(a, b)


def _pow(op: str, input: Any, exponent: Any, out: Tensor | None) -> Tensor:
    if isinstance(input, Tensor) and is_number(exponent):
        e: Scalar = exponent.item() if isinstance(exponent, np.generic) else exponent
        promo = result_type(input, e)
        if promo.is_complex:  # rounded to the common dtype first, as a float exponent is
            e = complex(np.array(e).astype(promo.np))
        elif not promo.is_floating_point:
            if isinstance(e, int) and not isinstance(e, bool) and e < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            check_fits(e, promo)
        else:  # the exponent is rounded to the common dtype first, as torch does
            e = float(np.array(e).astype(promo.np))
        dt = promo.np if promo is bfloat16 else opmath(promo).np
        return pointwise(op, _pow_scalar_exponent, [input], promo=promo, result=promo,
                         out=out, kw={"e": e, "dt": dt})
    if is_number(input) and isinstance(exponent, Tensor):
        a, b = operand(input, "pow", "self", 1), exponent
    elif isinstance(input, Tensor) and isinstance(exponent, Tensor):
        a, b = input, exponent
    else:
        raise TypeError(f"pow() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__}), but expected "
                        "one of:\n * (Tensor input, Tensor exponent)\n * (Number self, Tensor "
                        "exponent)\n * (Tensor input, Number exponent)")
    promo = result_type(a, b)
    if promo is bool_:
        raise not_implemented("pow", promo)
    return pointwise(op, _pow_tensors, [a, b], promo=promo, result=promo, out=out)


@op(POINTWISE, method=True)
def pow(input: Tensor | Number, exponent: Tensor | Number, *,
        out: Tensor | None = None) -> Tensor:
    """input ** exponent; either side may be a Python number."""
    return _pow("pow", input, exponent, out)


@method(POINTWISE)
def pow_(self: Tensor, exponent: Tensor | Number) -> Tensor:
    return _pow("pow_", self, exponent, self)


@op(POINTWISE, method=True, aten=())
def square(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """input ** 2 (a "pow" launch, as in torch; bool squares to int64)."""
    return _pow("pow", tensor_arg(input, "square"), 2, out)


@op(POINTWISE, method=True, aten=())
def square_(input: Tensor) -> Tensor:
    return _pow("pow_", input, 2, input)


# --- lerp, unary plus --------------------------------------------------------------------------

def _lerp_fn(a: Any, b: Any, w: Any) -> Any:
    """torch's two-sided lerp, exact at both ends: fma(w, b - a, a) for |w| < 0.5, else
    fma(w - 1, b - a, b)."""
    diff = b - a
    w = np.asarray(w, dtype=diff.dtype)
    small = np.abs(w) < 0.5
    return np.where(small, fma(w, diff, a), fma(w - 1, diff, b))


def _lerp(op: str, input: Any, end: Any, weight: Any, out: Tensor | None) -> Tensor:
    x = tensor_arg(input, "lerp")
    e = tensor_arg(end, "lerp", "end", 2)
    if e.dtype is not x.dtype:
        raise RuntimeError(f"expected dtype {cpp_name(x.dtype)} for `end` but got dtype "
                           f"{cpp_name(e.dtype)}")
    w = operand(weight, "lerp", "weight", 3)
    if isinstance(w, complex) and not x.dtype.is_complex:  # read in x's dtype, checked (c10)
        w = checked_convert(w, x.dtype)
    if isinstance(w, Tensor) and w.dim() > 0 and w.dtype is not x.dtype:
        raise RuntimeError(f"expected dtype {cpp_name(x.dtype)} for `weight` but got dtype "
                           f"{cpp_name(w.dtype)}")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        cpu = "lerp_kernel_tensor" if isinstance(w, Tensor) else "lerp_kernel_scalar"
        raise not_implemented(kernel_name(x, cpu, "lerp_cuda"), x.dtype)
    return pointwise(op, _lerp_fn, [x, e, w], promo=x.dtype, result=x.dtype, out=out,
                     opmath_arg=2)


@op(POINTWISE, method=True)
def lerp(input: Tensor, end: Tensor, weight: Tensor | Number, *,
         out: Tensor | None = None) -> Tensor:
    """input + weight * (end - input)."""
    return _lerp("lerp", input, end, weight, out)


@method(POINTWISE)
def lerp_(self: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
    return _lerp("lerp_", self, end, weight, self)


@op(VIEW, method=True)
def positive(input: Tensor) -> Tensor:
    """`+x`: x itself (no launch); refused for bool, as in torch."""
    x = tensor_arg(input, "positive")
    if x.dtype is bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


@register_meta("torch.positive")
def _positive_rule(input: Tensor) -> TensorMeta:
    return same_meta(positive(input))  # (positive only checks, and is its input)
# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# add, sub, rsub, mul, pow: the pointwise kind's rule (their operands promote)

register_meta("Tensor.add_", "Tensor.sub_", "Tensor.mul_", "Tensor.pow_")(inplace(pointwise_rule))


@register_meta("torch.square")
def _square_rule(input: Tensor, *, out: Tensor | None = None) -> TensorMeta:
    """pow(input, 2): the exponent promotes (bool squares to int64)."""
    return elementwise_meta([input, 2], result_type(input, 2), out)


@register_meta("torch.lerp")
def _lerp_rule(input: Tensor, end: Tensor, weight: Tensor | Number, *,
               out: Tensor | None = None) -> TensorMeta:
    """In input's dtype (end and a tensor weight must have it)."""
    return elementwise_meta([input, end, weight], input.dtype, out)


register_meta("torch.square_")(inplace(_square_rule))
register_meta("Tensor.lerp_")(inplace(_lerp_rule))
