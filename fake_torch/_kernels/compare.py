"""Comparisons, logical and bitwise ops, isnan/isinf/isfinite, where.

Comparisons promote both sides to their common dtype (a Python scalar wraps into it, as in
torch: int8 == 1000 compares with -24) and return bool tensors. Composite ops launch what
torch's decomposition launches: isfinite on floats is abs, ne, eq, mul (4 launches);
`torch.where(c, x, 0.)` adds a scalar_tensor launch for the 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fake_torch._dtype import bool_, dtype
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import (
    DTYPE_NAMES,
    can_cast,
    elementwise_meta,
    inplace,
    not_implemented,
    operand,
    pointwise,
    pointwise_rule,
    promote,
    tensor_arg,
)
from fake_torch._kernels.arith import mul
from fake_torch._kernels.cast import check_fits, scalar_tensor, to
from fake_torch._kernels.complex_ops import imag_, real_
from fake_torch._kernels.pointwise_math import abs as abs_
from fake_torch._kernels.pointwise_math import kernel_name
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, POINTWISE, aten_op, method, op
from fake_torch._tensor import Number, Scalar, Tensor
from fake_torch._torch_device import CPU

# --- comparisons -------------------------------------------------------------------------------


def _compare(op: str, fn: np.ufunc, input: Any, other: Any, out: Tensor | None) -> Tensor:
    fname = op.rstrip("_")
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected one "
                        "of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)")
    y = other if isinstance(other, Tensor) else operand(other, fname, "other", 2)
    promo = promote(input, y)
    return pointwise(op, fn, [input, y], promo=promo, result=bool_, out=out, bool_result=True)


@op(POINTWISE, method=True)
def eq(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _compare("eq", np.equal, input, other, out)


@op(POINTWISE, method=True, aliases=("not_equal",))
def ne(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _compare("ne", np.not_equal, input, other, out)


@op(POINTWISE, method=True, aliases=("less",))
def lt(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _compare("lt", np.less, input, other, out)


@op(POINTWISE, method=True, aliases=("less_equal",))
def le(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _compare("le", np.less_equal, input, other, out)


@op(POINTWISE, method=True, aliases=("greater",))
def gt(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _compare("gt", np.greater, input, other, out)


@op(POINTWISE, method=True, aliases=("greater_equal",))
def ge(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _compare("ge", np.greater_equal, input, other, out)


@method(POINTWISE)
def eq_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _compare("eq_", np.equal, self, other, self)


@method(POINTWISE, aliases=("not_equal_",))
def ne_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _compare("ne_", np.not_equal, self, other, self)


@method(POINTWISE, aliases=("less_",))
def lt_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _compare("lt_", np.less, self, other, self)


@method(POINTWISE, aliases=("less_equal_",))
def le_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _compare("le_", np.less_equal, self, other, self)


@method(POINTWISE, aliases=("greater_",))
def gt_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _compare("gt_", np.greater, self, other, self)


@method(POINTWISE, aliases=("greater_equal_",))
def ge_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _compare("ge_", np.greater_equal, self, other, self)


# --- logical: any dtype in, bool out -----------------------------------------------------------

def _truth(x: Any) -> Any:
    return x if getattr(x, "dtype", None) == np.bool_ else x != 0


def _and(a: Any, b: Any) -> Any:
    return np.logical_and(_truth(a), _truth(b))


def _or(a: Any, b: Any) -> Any:
    return np.logical_or(_truth(a), _truth(b))


def _xor(a: Any, b: Any) -> Any:
    return np.logical_xor(_truth(a), _truth(b))


def _not(a: Any) -> Any:
    return np.logical_not(_truth(a))


def _logical(op: str, fn: Any, input: Any, other: Any, out: Tensor | None) -> Tensor:
    fname = op.rstrip("_")
    x = tensor_arg(input, fname)
    y = tensor_arg(other, fname, "other", 2)
    return pointwise(op, fn, [x, y], promo=x.dtype, result=bool_, out=out, keep=(0, 1))


@op(POINTWISE, method=True)
def logical_and(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _logical("logical_and", _and, input, other, out)


@op(POINTWISE, method=True)
def logical_or(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _logical("logical_or", _or, input, other, out)


@op(POINTWISE, method=True)
def logical_xor(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _logical("logical_xor", _xor, input, other, out)


@op(POINTWISE, method=True)
def logical_not(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    x = tensor_arg(input, "logical_not")
    return pointwise("logical_not", _not, [x], promo=x.dtype, result=bool_, out=out, keep=(0,))


@method(POINTWISE)
def logical_and_(self: Tensor, other: Tensor) -> Tensor:
    return _logical("logical_and_", _and, self, other, self)


@method(POINTWISE)
def logical_or_(self: Tensor, other: Tensor) -> Tensor:
    return _logical("logical_or_", _or, self, other, self)


@method(POINTWISE)
def logical_xor_(self: Tensor, other: Tensor) -> Tensor:
    return _logical("logical_xor_", _xor, self, other, self)


@method(POINTWISE)
def logical_not_(self: Tensor) -> Tensor:
    x = tensor_arg(self, "logical_not_")
    return pointwise("logical_not_", _not, [x], promo=x.dtype, result=bool_, out=x, keep=(0,))


# --- bitwise: bool and integers only -----------------------------------------------------------

def _lshift(a: Any, b: Any) -> Any:
    """C shift with torch's edges: a shift by a negative or >= bit-width amount gives 0."""
    bits = np.asarray(a).dtype.itemsize * 8
    b = np.asarray(b)
    r = np.left_shift(a, np.clip(b, 0, bits - 1).astype(b.dtype))
    return np.where((b < 0) | (b >= bits), 0, r)


def _rshift(a: Any, b: Any) -> Any:
    """Arithmetic shift; by >= bit-width gives 0 or -1 (the sign), as in torch."""
    bits = np.asarray(a).dtype.itemsize * 8
    b = np.asarray(b)
    r = np.right_shift(a, np.clip(b, 0, bits - 1).astype(b.dtype))
    return np.where((b < 0) | (b >= bits), np.where(np.asarray(a) < 0, -1, 0), r)


def _bitwise(op: str, kernel: str, fn: Any, input: Any, other: Any,
             out: Tensor | None) -> Tensor:
    fname = op.rstrip("_")
    a = operand(input, fname, "input", 1)
    b = operand(other, fname, "other", 2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = Tensor._make(np.array(a, dtype=_common.scalar_dtype(a).np), CPU)
    promo = _common.result_type(a, b)
    if out is not None and not can_cast(promo, out.dtype):  # (TensorIterator checks it first)
        raise RuntimeError(f"result type {DTYPE_NAMES[promo]} can't be cast to the desired "
                           f"output type {DTYPE_NAMES[out.dtype]}")
    if promo.is_floating_point or (promo is bool_ and kernel in ("lshift", "rshift")):
        t = a if isinstance(a, Tensor) else b
        assert isinstance(t, Tensor)
        raise not_implemented(kernel_name(t, f"{kernel}_cpu", f"{kernel}_cuda"), promo)
    return pointwise(op, fn, [a, b], promo=promo, result=promo, out=out)


@op(POINTWISE, method=True)
def bitwise_and(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _bitwise("bitwise_and", "bitwise_and", np.bitwise_and, input, other, out)


@op(POINTWISE, method=True)
def bitwise_or(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _bitwise("bitwise_or", "bitwise_or", np.bitwise_or, input, other, out)


@op(POINTWISE, method=True)
def bitwise_xor(input: Tensor, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
    return _bitwise("bitwise_xor", "bitwise_xor", np.bitwise_xor, input, other, out)


@op(POINTWISE, method=True)
def bitwise_left_shift(input: Tensor | Number, other: Tensor | Number, *,
                       out: Tensor | None = None) -> Tensor:
    return _bitwise("bitwise_left_shift", "lshift", _lshift, input, other, out)


@op(POINTWISE, method=True)
def bitwise_right_shift(input: Tensor | Number, other: Tensor | Number, *,
                        out: Tensor | None = None) -> Tensor:
    return _bitwise("bitwise_right_shift", "rshift", _rshift, input, other, out)


def lshift_op(op: str, input: Any, other: Any) -> Tensor:
    """The `<<` operator ("__lshift__" in torch's dispatcher)."""
    return _bitwise(op, "lshift", _lshift, input, other, input if op.startswith("__i") else None)


def rshift_op(op: str, input: Any, other: Any) -> Tensor:
    """The `>>` operator ("__rshift__" in torch's dispatcher)."""
    return _bitwise(op, "rshift", _rshift, input, other, input if op.startswith("__i") else None)


for _name in ("__lshift__", "__ilshift__", "__rshift__", "__irshift__"):  # the shift operators'
    aten_op(_name, POINTWISE)  # launches, named as torch's dispatcher names them


@method(POINTWISE)
def bitwise_and_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _bitwise("bitwise_and_", "bitwise_and", np.bitwise_and, self, other, self)


@method(POINTWISE)
def bitwise_or_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _bitwise("bitwise_or_", "bitwise_or", np.bitwise_or, self, other, self)


@method(POINTWISE)
def bitwise_xor_(self: Tensor, other: Tensor | Number) -> Tensor:
    return _bitwise("bitwise_xor_", "bitwise_xor", np.bitwise_xor, self, other, self)


def _bitwise_not(op: str, input: Any, out: Tensor | None) -> Tensor:
    x = tensor_arg(input, "bitwise_not")
    if x.dtype.is_floating_point:
        raise not_implemented(kernel_name(x, "bitwise_not_cpu", "bitwise_not_cuda"), x.dtype)
    fn = np.logical_not if x.dtype is bool_ else np.invert
    return pointwise(op, fn, [x], promo=x.dtype, result=x.dtype, out=out)


@op(POINTWISE, method=True)
def bitwise_not(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _bitwise_not("bitwise_not", input, out)


@method(POINTWISE)
def bitwise_not_(self: Tensor) -> Tensor:
    return _bitwise_not("bitwise_not_", self, self)


# --- isnan, isinf, isfinite --------------------------------------------------------------------

@op(POINTWISE, method=True)
def isnan(input: Tensor) -> Tensor:
    x = tensor_arg(input, "isnan")
    return pointwise("isnan", np.isnan, [x], promo=x.dtype, result=bool_, bool_result=True)


@op(POINTWISE, method=True)
def isinf(input: Tensor) -> Tensor:
    x = tensor_arg(input, "isinf")
    return pointwise("isinf", np.isinf, [x], promo=x.dtype, result=bool_, bool_result=True)


@op(COMPOSITE, method=True)
def isfinite(input: Tensor) -> Tensor:
    """torch's composite: (x == x) * (x.abs() != inf) for floats (4 launches, abs first);
    integers are always finite (one ones_like launch)."""
    x = tensor_arg(input, "isfinite")
    if x.dtype.is_complex:  # torch: both parts finite (two real isfinites and an in-place &)
        return bitwise_and_(isfinite(real_(x)), isfinite(imag_(x)))
    if not x.dtype.is_floating_point:
        from fake_torch._factories import ones_like  # the factories import the op modules

        return ones_like(x, dtype=bool_)
    finite_magnitude = ne(abs_(x), math.inf)
    return mul(eq(x, x), finite_magnitude)


@register_meta("torch.isfinite")
def _isfinite_rule(input: Tensor) -> Output:
    """Every path (the comparisons' product; ones_like; the parts' and) ends in a bool tensor
    laid out as a comparison of x with itself."""
    x = tensor_arg(input, "isfinite")
    return call_rule(eq, x, x)


# --- where -------------------------------------------------------------------------------------

def _where_fn(c: np.ndarray, a: Any, b: Any) -> Any:
    return np.where(c, a, b)


@op(POINTWISE)
def where(condition: Tensor, input: Tensor | Number | None = None,
          other: Tensor | Number | None = None, *, out: Tensor | None = None) -> Any:
    """Elementwise `input if condition else other`. A Python scalar becomes a scalar_tensor
    launch and the tensor side a _to_copy when its dtype differs, as torch's where.Scalar does.
    With only `condition`: torch.nonzero(condition, as_tuple=True)."""
    cond = tensor_arg(condition, "where", "condition", 1)
    if input is None and other is None:
        from fake_torch._kernels.masked import nonzero  # on use: keeps the op modules acyclic

        return nonzero(cond, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() missing required argument 'input' or 'other'")
    if cond.dtype is not bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {DTYPE_NAMES[cond.dtype]}")
    x = operand(input, "where", "input", 2)
    y = operand(other, "where", "other", 3)
    if not (isinstance(x, Tensor) and isinstance(y, Tensor)):
        # torch's where.Scalar*: scalar_tensor launches first, then the tensor side's .to()
        rt = _common.result_type(x, y)
        ref = x if isinstance(x, Tensor) else y if isinstance(y, Tensor) else cond
        x = x if isinstance(x, Tensor) else _scalar_operand(x, rt, ref)
        y = y if isinstance(y, Tensor) else _scalar_operand(y, rt, ref)
        x, y = to(x, rt), to(y, rt)
    promo = _common.result_type(x, y)
    return pointwise("where", _where_fn, [cond, x, y], promo=promo, result=promo, out=out,
                     keep=(0,))


@method(POINTWISE, name="where", aten=())
def where_method(self: Tensor, condition: Tensor, other: Tensor | Number) -> Tensor:
    """Tensor.where(condition, other): `self` where condition holds, else other."""
    return where(condition, self, other)  # type: ignore[no-any-return]


def _scalar_operand(v: Scalar, rt: dtype, ref: Tensor) -> Tensor:
    check_fits(v, rt)
    return scalar_tensor(v, dtype=rt, device=ref.device)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# bitwise_*, shifts, bitwise_not: the pointwise kind's rule (their operands promote)

_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
_LOGICAL = ("logical_and", "logical_or", "logical_xor", "logical_not")


@register_meta(*(f"torch.{name}" for name in _COMPARISONS + _LOGICAL), "torch.isnan",
               "torch.isinf")
def _bool_rule(input: Tensor, *others: Tensor | Number,
               out: Tensor | None = None) -> TensorMeta:
    """Comparisons and logical ops: bool (in place: written into self, in its dtype)."""
    return elementwise_meta([input, *others], bool_, out)


register_meta(*(f"Tensor.{name}_" for name in _COMPARISONS + _LOGICAL))(inplace(_bool_rule))
register_meta("Tensor.bitwise_and_", "Tensor.bitwise_or_", "Tensor.bitwise_xor_",
              "Tensor.bitwise_not_")(inplace(pointwise_rule))


@register_meta("torch.where")
def _where_rule(condition: Tensor, input: Tensor | Number | None = None,
                other: Tensor | Number | None = None, *,
                out: Tensor | None = None) -> TensorMeta:
    """input and other promote; the condition only broadcasts. where(condition) alone is
    nonzero's: its size is the count of Trues."""
    if input is None and other is None:
        raise NotImplementedError("torch.where(condition): the output size depends on the "
                                  "values (torch.nonzero); no output rule")
    if input is None or other is None:
        raise TypeError("where() missing required argument 'input' or 'other'")
    return elementwise_meta([condition, input, other], _common.result_type(input, other), out)


@register_meta("Tensor.where")
def _where_method_rule(self: Tensor, condition: Tensor, other: Tensor | Number) -> TensorMeta:
    return _where_rule(condition, self, other)
