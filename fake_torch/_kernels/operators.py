"""Python operators on tensors (`x + 1`, `1 - x`, `x /= 2`, `x == y`, `~m`), as torch maps them.

Each returns NotImplemented for an operand torch does not take (a list, a string, None), so
Python tries the reflected method and then raises its own TypeError (`x == None` is False).
Reflected forms launch what torch's do: `1 - x` is one "rsub", `2 / x` is reciprocal + mul.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from fake_torch._kernels import arith, compare, division, linalg, pointwise_math
from fake_torch._kernels._elementwise import is_number, plain_binary, ufunc_kernel_of
from fake_torch._kernels._strides import same_meta
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import register_meta
from fake_torch._opdef import COMPOSITE, method
from fake_torch._tensor import Tensor


def _takes(other: object) -> bool:
    return isinstance(other, Tensor) or is_number(other)


# `x + y`, `x - y`, `x * y` of two alike tensors (or a tensor and a float) first try
# `plain_binary`, the op's own common case in one call; these are its kernels
_ADD, _SUB, _MUL = (ufunc_kernel_of(fn, 2) for fn in (np.add, np.subtract, np.multiply))


@method(COMPOSITE, name="__radd__", torch_function="add", fx_target=operator.add, reflected=True)
@method(COMPOSITE, name="__add__", torch_function="add", fx_target=operator.add)
def add(self: Tensor, other: Any) -> Any:
    fast = plain_binary("add", _ADD, self, other)
    if fast is not None:
        return fast
    return arith.add(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__iadd__", torch_function="add_", fx_target=operator.iadd)
def iadd(self: Tensor, other: Any) -> Any:
    return arith.add_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__sub__", torch_function="sub", fx_target=operator.sub)
def sub(self: Tensor, other: Any) -> Any:
    fast = plain_binary("sub", _SUB, self, other)
    if fast is not None:
        return fast
    return arith.sub(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rsub__", fx_target=operator.sub, reflected=True)
def rsub(self: Tensor, other: Any) -> Any:
    return arith.rsub(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__isub__", torch_function="sub_", fx_target=operator.isub)
def isub(self: Tensor, other: Any) -> Any:
    return arith.sub_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rmul__", torch_function="mul", fx_target=operator.mul, reflected=True)
@method(COMPOSITE, name="__mul__", torch_function="mul", fx_target=operator.mul)
def mul(self: Tensor, other: Any) -> Any:
    fast = plain_binary("mul", _MUL, self, other)
    if fast is not None:
        return fast
    return arith.mul(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__imul__", torch_function="mul_", fx_target=operator.imul)
def imul(self: Tensor, other: Any) -> Any:
    return arith.mul_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__truediv__", torch_function="div", fx_target=operator.truediv)
def truediv(self: Tensor, other: Any) -> Any:
    return division.div(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rtruediv__", fx_target=operator.truediv, reflected=True)
def rtruediv(self: Tensor, other: Any) -> Any:
    """`other / self` is `self.reciprocal() * other` in torch: two launches."""
    if not _takes(other):
        return NotImplemented
    return arith.mul(pointwise_math.reciprocal(self), other)


@method(COMPOSITE, name="__itruediv__", torch_function="div_", fx_target=operator.itruediv)
def itruediv(self: Tensor, other: Any) -> Any:
    return division.div_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__floordiv__", fx_target=operator.floordiv)
def floordiv(self: Tensor, other: Any) -> Any:
    return division.floor_divide(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rfloordiv__", fx_target=operator.floordiv, reflected=True)
def rfloordiv(self: Tensor, other: Any) -> Any:
    return division.floor_divide(other, self) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__ifloordiv__", torch_function="floor_divide_",
        fx_target=operator.ifloordiv)
def ifloordiv(self: Tensor, other: Any) -> Any:
    return division.floor_divide_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__mod__", torch_function="remainder", fx_target=operator.mod)
def mod(self: Tensor, other: Any) -> Any:
    return division.remainder(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rmod__", fx_target=operator.mod, reflected=True)
def rmod(self: Tensor, other: Any) -> Any:
    return division.remainder(other, self) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__imod__", torch_function="remainder_", fx_target=operator.imod)
def imod(self: Tensor, other: Any) -> Any:
    return division.remainder_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__pow__", torch_function="pow", fx_target=operator.pow)
def pow(self: Tensor, other: Any) -> Any:
    return arith.pow(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rpow__", fx_target=operator.pow, reflected=True)
def rpow(self: Tensor, other: Any) -> Any:
    return arith.pow(other, self) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__ipow__", torch_function="pow_", fx_target=operator.ipow)
def ipow(self: Tensor, other: Any) -> Any:
    return arith.pow_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rand__", fx_target=operator.and_, reflected=True)
@method(COMPOSITE, name="__and__", fx_target=operator.and_)
def and_(self: Tensor, other: Any) -> Any:
    return compare.bitwise_and(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__iand__", fx_target=operator.iand)
def iand(self: Tensor, other: Any) -> Any:
    return compare.bitwise_and_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__ror__", fx_target=operator.or_, reflected=True)
@method(COMPOSITE, name="__or__", fx_target=operator.or_)
def or_(self: Tensor, other: Any) -> Any:
    return compare.bitwise_or(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__ior__", fx_target=operator.ior)
def ior(self: Tensor, other: Any) -> Any:
    return compare.bitwise_or_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rxor__", fx_target=operator.xor, reflected=True)
@method(COMPOSITE, name="__xor__", fx_target=operator.xor)
def xor(self: Tensor, other: Any) -> Any:
    return compare.bitwise_xor(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__ixor__", fx_target=operator.ixor)
def ixor(self: Tensor, other: Any) -> Any:
    return compare.bitwise_xor_(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__lshift__", fx_target=operator.lshift)
def lshift(self: Tensor, other: Any) -> Any:
    return compare.lshift_op("__lshift__", self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rlshift__", fx_target=operator.lshift, reflected=True)
def rlshift(self: Tensor, other: Any) -> Any:
    return compare.bitwise_left_shift(other, self) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__ilshift__", fx_target=operator.ilshift)
def ilshift(self: Tensor, other: Any) -> Any:
    return compare.lshift_op("__ilshift__", self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rshift__", fx_target=operator.rshift)
def rshift(self: Tensor, other: Any) -> Any:
    return compare.rshift_op("__rshift__", self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__rrshift__", fx_target=operator.rshift, reflected=True)
def rrshift(self: Tensor, other: Any) -> Any:
    return compare.bitwise_right_shift(other, self) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__irshift__", fx_target=operator.irshift)
def irshift(self: Tensor, other: Any) -> Any:
    return compare.rshift_op("__irshift__", self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__invert__", fx_target=operator.invert)
def invert(self: Tensor) -> Tensor:
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return compare.bitwise_not(self)


@method(COMPOSITE, name="__eq__", fx_target=operator.eq)
def eq(self: Tensor, other: Any) -> Any:
    return compare.eq(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__ne__", torch_function="ne", fx_target=operator.ne)
def ne(self: Tensor, other: Any) -> Any:
    return compare.ne(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__lt__", torch_function="lt", fx_target=operator.lt)
def lt(self: Tensor, other: Any) -> Any:
    return compare.lt(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__le__", torch_function="le", fx_target=operator.le)
def le(self: Tensor, other: Any) -> Any:
    return compare.le(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__gt__", torch_function="gt", fx_target=operator.gt)
def gt(self: Tensor, other: Any) -> Any:
    return compare.gt(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__ge__", torch_function="ge", fx_target=operator.ge)
def ge(self: Tensor, other: Any) -> Any:
    return compare.ge(self, other) if _takes(other) else NotImplemented


@method(COMPOSITE, name="__neg__", torch_function="neg", fx_target=operator.neg)
def neg(self: Tensor) -> Tensor:
    return pointwise_math.neg(self)


@method(COMPOSITE, name="__pos__", torch_function="positive", fx_target=operator.pos)
def pos(self: Tensor) -> Tensor:
    return arith.positive(self)


@method(COMPOSITE, name="__abs__", torch_function="abs", fx_target=operator.abs)
def abs(self: Tensor) -> Tensor:
    return pointwise_math.abs(self)


@method(COMPOSITE, name="__matmul__", torch_function="matmul", fx_target=operator.matmul)
def matmul(self: Tensor, other: Any) -> Any:
    return linalg.matmul(self, other) if isinstance(other, Tensor) else NotImplemented


@register_meta("Tensor.__matmul__")
def _matmul_rule(self: Tensor, other: Any) -> Any:
    return linalg._matmul_rule(self, other) if isinstance(other, Tensor) else NotImplemented


@method(COMPOSITE, name="__rmatmul__", fx_target=operator.matmul, reflected=True)
def rmatmul(self: Tensor, other: Any) -> Any:
    return linalg.rmatmul(self, other)


@register_meta("Tensor.__rmatmul__")
def _rmatmul_rule(self: Tensor, other: Any) -> Any:
    return linalg._matmul_rule(other, self) if isinstance(other, Tensor) else NotImplemented


# --- output rules (fake_torch/_meta_registrations.py) ------------------------------------------
# Each operator's rule is the rule of the op its body calls, on the same arguments (the
# operand it does not take: NotImplemented, as the operator returns).

def _rule_of(impl: Callable[..., Any], swapped: bool = False) -> Callable[..., Any]:
    """The operator's rule: `impl`'s op's rule on (self, other), or (other, self)."""
    def rule(self: Tensor, other: Any) -> Any:
        if not _takes(other):
            return NotImplemented
        return call_rule(impl, *((other, self) if swapped else (self, other)))
    rule.__qualname__ = f"operator rule of {impl.__module__}.{impl.__qualname__}"
    return rule


def _unary_rule_of(impl: Callable[..., Any]) -> Callable[..., Any]:
    def rule(self: Tensor) -> Any:
        return call_rule(impl, self)
    rule.__qualname__ = f"operator rule of {impl.__module__}.{impl.__qualname__}"
    return rule


for _impl, _names in (
        (arith.add, ("__add__", "__radd__")), (arith.add_, ("__iadd__",)),
        (arith.sub, ("__sub__",)), (arith.rsub, ("__rsub__",)), (arith.sub_, ("__isub__",)),
        (arith.mul, ("__mul__", "__rmul__")), (arith.mul_, ("__imul__",)),
        (division.div, ("__truediv__",)), (division.div_, ("__itruediv__",)),
        (division.floor_divide, ("__floordiv__",)),
        (division.floor_divide_, ("__ifloordiv__",)),
        (division.remainder, ("__mod__",)), (division.remainder_, ("__imod__",)),
        (arith.pow, ("__pow__",)), (arith.pow_, ("__ipow__",)),
        (compare.bitwise_and, ("__and__", "__rand__")), (compare.bitwise_and_, ("__iand__",)),
        (compare.bitwise_or, ("__or__", "__ror__")), (compare.bitwise_or_, ("__ior__",)),
        (compare.bitwise_xor, ("__xor__", "__rxor__")), (compare.bitwise_xor_, ("__ixor__",)),
        (compare.bitwise_left_shift, ("__lshift__",)),
        (compare.bitwise_right_shift, ("__rshift__",)),
        (compare.eq, ("__eq__",)), (compare.ne, ("__ne__",)), (compare.lt, ("__lt__",)),
        (compare.le, ("__le__",)), (compare.gt, ("__gt__",)), (compare.ge, ("__ge__",))):
    register_meta(*(f"Tensor.{n}" for n in _names))(_rule_of(_impl))
for _impl, _names in ((division.floor_divide, ("__rfloordiv__",)),
                      (division.remainder, ("__rmod__",)), (arith.pow, ("__rpow__",)),
                      (compare.bitwise_left_shift, ("__rlshift__",)),
                      (compare.bitwise_right_shift, ("__rrshift__",))):
    register_meta(*(f"Tensor.{n}" for n in _names))(_rule_of(_impl, swapped=True))
register_meta("Tensor.__neg__")(_unary_rule_of(pointwise_math.neg))
register_meta("Tensor.__pos__")(_unary_rule_of(arith.positive))
register_meta("Tensor.__abs__")(_unary_rule_of(pointwise_math.abs))


@register_meta("Tensor.__rtruediv__")
def _rtruediv_rule(self: Tensor, other: Any) -> Any:
    """`other / self` is `self.reciprocal() * other`: the reciprocal is floating and laid out
    as self's pointwise output, so the product is typed and laid out as `self / other`."""
    if not _takes(other):
        return NotImplemented
    return call_rule(division.div, self, other)


@register_meta("Tensor.__invert__")
def _invert_rule(self: Tensor) -> Any:
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return call_rule(compare.bitwise_not, self)


@register_meta("Tensor.__ilshift__", "Tensor.__irshift__")
def _ishift_rule(self: Tensor, other: Any) -> Any:
    """`x <<= n`: the shift's checks, written into self."""
    if not _takes(other):
        return NotImplemented
    call_rule(compare.bitwise_left_shift, self, other)
    return same_meta(self)
