"""Python operators on tensors (`x + 1`, `1 - x`, `x /= 2`, `x == y`, `~m`), as torch maps them.

Each returns NotImplemented for an operand torch does not take (a list, a string, None), so
Python tries the reflected method and then raises its own TypeError (`x == None` is False).
Reflected forms launch what torch's do: `1 - x` is one "rsub", `2 / x` is reciprocal + mul.
"""

from __future__ import annotations

from typing import Any

from fake_torch._kernels import arith, compare, division, pointwise_math
from fake_torch._kernels._elementwise import is_number
from fake_torch._tensor import Tensor


def _takes(other: object) -> bool:
    return isinstance(other, Tensor) or is_number(other)


def add(self: Tensor, other: Any) -> Any:
    return arith.add(self, other) if _takes(other) else NotImplemented


def iadd(self: Tensor, other: Any) -> Any:
    return arith.add_(self, other) if _takes(other) else NotImplemented


def sub(self: Tensor, other: Any) -> Any:
    return arith.sub(self, other) if _takes(other) else NotImplemented


def rsub(self: Tensor, other: Any) -> Any:
    return arith.rsub(self, other) if _takes(other) else NotImplemented


def isub(self: Tensor, other: Any) -> Any:
    return arith.sub_(self, other) if _takes(other) else NotImplemented


def mul(self: Tensor, other: Any) -> Any:
    return arith.mul(self, other) if _takes(other) else NotImplemented


def imul(self: Tensor, other: Any) -> Any:
    return arith.mul_(self, other) if _takes(other) else NotImplemented


def truediv(self: Tensor, other: Any) -> Any:
    return division.div(self, other) if _takes(other) else NotImplemented


def rtruediv(self: Tensor, other: Any) -> Any:
    """`other / self` is `self.reciprocal() * other` in torch: two launches."""
    if not _takes(other):
        return NotImplemented
    return arith.mul(pointwise_math.reciprocal(self), other)


def itruediv(self: Tensor, other: Any) -> Any:
    return division.div_(self, other) if _takes(other) else NotImplemented


def floordiv(self: Tensor, other: Any) -> Any:
    return division.floor_divide(self, other) if _takes(other) else NotImplemented


def rfloordiv(self: Tensor, other: Any) -> Any:
    return division.floor_divide(other, self) if _takes(other) else NotImplemented


def ifloordiv(self: Tensor, other: Any) -> Any:
    return division.floor_divide_(self, other) if _takes(other) else NotImplemented


def mod(self: Tensor, other: Any) -> Any:
    return division.remainder(self, other) if _takes(other) else NotImplemented


def rmod(self: Tensor, other: Any) -> Any:
    return division.remainder(other, self) if _takes(other) else NotImplemented


def imod(self: Tensor, other: Any) -> Any:
    return division.remainder_(self, other) if _takes(other) else NotImplemented


def pow(self: Tensor, other: Any) -> Any:
    return arith.pow(self, other) if _takes(other) else NotImplemented


def rpow(self: Tensor, other: Any) -> Any:
    return arith.pow(other, self) if _takes(other) else NotImplemented


def ipow(self: Tensor, other: Any) -> Any:
    return arith.pow_(self, other) if _takes(other) else NotImplemented


def and_(self: Tensor, other: Any) -> Any:
    return compare.bitwise_and(self, other) if _takes(other) else NotImplemented


def iand(self: Tensor, other: Any) -> Any:
    return compare.bitwise_and_(self, other) if _takes(other) else NotImplemented


def or_(self: Tensor, other: Any) -> Any:
    return compare.bitwise_or(self, other) if _takes(other) else NotImplemented


def ior(self: Tensor, other: Any) -> Any:
    return compare.bitwise_or_(self, other) if _takes(other) else NotImplemented


def xor(self: Tensor, other: Any) -> Any:
    return compare.bitwise_xor(self, other) if _takes(other) else NotImplemented


def ixor(self: Tensor, other: Any) -> Any:
    return compare.bitwise_xor_(self, other) if _takes(other) else NotImplemented


def lshift(self: Tensor, other: Any) -> Any:
    return compare.lshift_op("__lshift__", self, other) if _takes(other) else NotImplemented


def rlshift(self: Tensor, other: Any) -> Any:
    return compare.bitwise_left_shift(other, self) if _takes(other) else NotImplemented


def ilshift(self: Tensor, other: Any) -> Any:
    return compare.lshift_op("__ilshift__", self, other) if _takes(other) else NotImplemented


def rshift(self: Tensor, other: Any) -> Any:
    return compare.rshift_op("__rshift__", self, other) if _takes(other) else NotImplemented


def rrshift(self: Tensor, other: Any) -> Any:
    return compare.bitwise_right_shift(other, self) if _takes(other) else NotImplemented


def irshift(self: Tensor, other: Any) -> Any:
    return compare.rshift_op("__irshift__", self, other) if _takes(other) else NotImplemented


def invert(self: Tensor) -> Tensor:
    if self.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return compare.bitwise_not(self)


def eq(self: Tensor, other: Any) -> Any:
    return compare.eq(self, other) if _takes(other) else NotImplemented


def ne(self: Tensor, other: Any) -> Any:
    return compare.ne(self, other) if _takes(other) else NotImplemented


def lt(self: Tensor, other: Any) -> Any:
    return compare.lt(self, other) if _takes(other) else NotImplemented


def le(self: Tensor, other: Any) -> Any:
    return compare.le(self, other) if _takes(other) else NotImplemented


def gt(self: Tensor, other: Any) -> Any:
    return compare.gt(self, other) if _takes(other) else NotImplemented


def ge(self: Tensor, other: Any) -> Any:
    return compare.ge(self, other) if _takes(other) else NotImplemented
