"""torch.SymInt, SymFloat, SymBool: the symbolic scalars of dynamic shapes, and torch's
sym_* functions (sym_int, sym_float, sym_max, sym_min, sym_not, sym_ite, sym_sum).

Each wraps a SymNode (fx/experimental/sym_node.py): an expression over a ShapeEnv's
symbols and its hint. As in torch they are not int/float/bool subclasses
(`isinstance(s, int)` is False): arithmetic gives new symbolic values, and Python asking for
a concrete value (`if n > 8:`, `int(n)`, `range(n)`) evaluates with the hint and records a
guard in the ShapeEnv. This module imports no sympy: only building a node does."""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable
from typing import Any


def _not_registered(*args: Any) -> Any:
    raise RuntimeError("fake_torch/fx/experimental/sym_node.py registers a SymNode's helpers "
                       "when it is imported, and a Sym* value with a node was made there")


# a Sym* value's node is a SymNode (fake_torch/fx/experimental/sym_node.py), which registers its
# wrap_node (node -> SymInt/SymFloat/SymBool) and to_node (value -> node beside another) here
# when imported, so that this module (torch.SymInt, ...) imports nothing from fx
wrap_node: Callable[[Any], Any] = _not_registered
to_node: Callable[[Any, Any], Any] = _not_registered

__all__ = ["SymBool", "SymFloat", "SymInt", "sym_float", "sym_index", "sym_int", "sym_ite",
           "sym_max", "sym_min", "sym_not", "sym_sum"]

_Num = (builtins.int, builtins.float, builtins.bool)


class _SymArith:
    """The operators SymInt and SymFloat share: each builds a node, wrapped back."""

    node: Any

    def __add__(self, other: Any) -> Any:
        return _binary("add", self, other)

    def __radd__(self, other: Any) -> Any:
        return _binary("add", self, other, reflected=True)

    def __sub__(self, other: Any) -> Any:
        return _binary("sub", self, other)

    def __rsub__(self, other: Any) -> Any:
        return _binary("sub", self, other, reflected=True)

    def __mul__(self, other: Any) -> Any:
        return _binary("mul", self, other)

    def __rmul__(self, other: Any) -> Any:
        return _binary("mul", self, other, reflected=True)

    def __eq__(self, other: object) -> Any:
        return _binary("eq", self, other)

    def __ne__(self, other: object) -> Any:
        return _binary("ne", self, other)

    def __lt__(self, other: Any) -> Any:
        return _binary("lt", self, other)

    def __le__(self, other: Any) -> Any:
        return _binary("le", self, other)

    def __gt__(self, other: Any) -> Any:
        return _binary("gt", self, other)

    def __ge__(self, other: Any) -> Any:
        return _binary("ge", self, other)

    def __neg__(self) -> Any:
        return _unary("neg", self)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Any:
        return _unary("abs", self)

    def __sym_max__(self, other: Any) -> Any:
        return _binary("sym_max", self, other)

    def __sym_min__(self, other: Any) -> Any:
        return _binary("sym_min", self, other)


class SymInt(_SymArith):
    """A symbolic int: `node` holds its expression (str(s + 1) == "s77 + 1") and hint."""

    def __init__(self, node: Any) -> None:
        self.node = node

    def __bool__(self) -> bool:
        return builtins.bool(self != 0)

    def __int__(self) -> int:
        return self.node.int_()  # type: ignore[no-any-return]

    def __index__(self) -> int:
        return self.node.int_()  # type: ignore[no-any-return]

    def __round__(self, ndigits: int | None = None) -> SymInt:
        return self

    def __truediv__(self, other: Any) -> Any:
        if isinstance(other, (builtins.float, SymFloat)):
            return sym_float(self).__truediv__(other)
        if not isinstance(other, (builtins.int, SymInt)):
            return NotImplemented
        return _binary("int_truediv", self, other)

    def __rtruediv__(self, other: Any) -> Any:
        if isinstance(other, (builtins.float, SymFloat)):
            return sym_float(self).__rtruediv__(other)
        if not isinstance(other, (builtins.int, SymInt)):
            return NotImplemented
        return _binary("int_truediv", self, other, reflected=True)

    def __floordiv__(self, other: Any) -> Any:
        if isinstance(other, (builtins.float, SymFloat)):
            return sym_float(math.floor(sym_float(self) / other))
        if not isinstance(other, (builtins.int, SymInt)):
            return NotImplemented
        return _binary("int_floordiv", self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        if isinstance(other, (builtins.float, SymFloat)):
            return sym_float(math.floor(other / sym_float(self)))
        if not isinstance(other, (builtins.int, SymInt)):
            return NotImplemented
        return _binary("int_floordiv", self, other, reflected=True)

    def __pow__(self, other: Any) -> Any:
        if isinstance(other, (builtins.float, SymFloat)):
            return sym_float(self).__pow__(other)
        if not isinstance(other, (builtins.int, SymInt)):
            return NotImplemented
        if other >= 0:  # a guard when the exponent is symbolic, as in torch
            return _binary("pow_by_natural", self, other)
        return sym_float(self).__pow__(sym_float(other))

    def __rpow__(self, other: Any) -> Any:
        if isinstance(other, (builtins.float, SymFloat)):
            return sym_float(self).__rpow__(other)
        if not isinstance(other, (builtins.int, SymInt)):
            return NotImplemented
        if self >= 0:
            return _binary("pow_by_natural", self, other, reflected=True)
        return sym_float(self).__rpow__(sym_float(other))

    def __mod__(self, other: Any) -> Any:
        return _binary("mod", self, other)

    def __rmod__(self, other: Any) -> Any:
        return _binary("mod", self, other, reflected=True)

    def __lshift__(self, other: Any) -> Any:
        return _binary("lshift", self, other)

    def __rshift__(self, other: Any) -> Any:
        return _binary("rshift", self, other)

    def __and__(self, other: Any) -> Any:
        raise NotImplementedError("SymInt & int (torch's BitwiseFn_bitwise_and) is not "
                                  "emulated by fake_torch")

    def __or__(self, other: Any) -> Any:
        raise NotImplementedError("SymInt | int (torch's BitwiseFn_bitwise_or) is not "
                                  "emulated by fake_torch")

    def __xor__(self, other: Any) -> Any:
        raise NotImplementedError("SymInt ^ int (torch's BitwiseFn_bitwise_xor) is not "
                                  "emulated by fake_torch")

    def __hash__(self) -> int:
        raise TypeError("unhashable type: non-nested SymInt")

    def __repr__(self) -> str:
        return self.node.str()  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self.node.str()  # type: ignore[no-any-return]

    def _sympy_(self) -> Any:
        return self.node.expr

    def __sym_float__(self) -> SymFloat:
        return _unary("sym_float", self)  # type: ignore[no-any-return]

    def __trunc__(self) -> Any:
        return _unary("trunc", self)

    def __floor__(self) -> Any:
        return _unary("floor", self)

    def __ceil__(self) -> Any:
        return _unary("ceil", self)

    def as_integer_ratio(self) -> tuple[SymInt, int]:
        return self, 1

    def bit_length(self) -> int:
        return builtins.int(self).bit_length()

    def conjugate(self) -> SymInt:
        return self


class SymFloat(_SymArith):
    """A symbolic float (a SymInt divided, `sym_float(n)`, a float-typed symbol)."""

    def __init__(self, node: Any) -> None:
        self.node = node

    def __truediv__(self, other: Any) -> Any:
        if not isinstance(other, (*_Num, SymInt, SymFloat)):
            return NotImplemented
        return _binary("float_truediv", self, sym_float(other))

    def __rtruediv__(self, other: Any) -> Any:
        if not isinstance(other, (*_Num, SymInt, SymFloat)):
            return NotImplemented
        return _binary("float_truediv", self, sym_float(other), reflected=True)

    def __floordiv__(self, other: Any) -> Any:
        if not isinstance(other, (*_Num, SymInt, SymFloat)):
            return NotImplemented
        return sym_float(math.floor(self / sym_float(other)))

    def __rfloordiv__(self, other: Any) -> Any:
        if not isinstance(other, (*_Num, SymInt, SymFloat)):
            return NotImplemented
        return sym_float(math.floor(sym_float(other) / self))

    def __pow__(self, other: Any) -> Any:
        if not isinstance(other, (*_Num, SymInt, SymFloat)):
            return NotImplemented
        from fake_torch._checks import _check
        _check(self >= 0)  # FloatPow assumes a non-negative base (a guard, as in torch)
        return _binary("float_pow", self, other)

    def __rpow__(self, other: Any) -> Any:
        if not isinstance(other, (*_Num, SymInt, SymFloat)):
            return NotImplemented
        from fake_torch._checks import _check
        _check(other >= 0)
        return _binary("float_pow", self, other, reflected=True)

    def __bool__(self) -> bool:
        return self.node.bool_()  # type: ignore[no-any-return]

    def __float__(self) -> float:
        return self.node.guard_float("", 0)  # type: ignore[no-any-return]

    def __int__(self) -> int:
        return builtins.int(self.__trunc__())

    def __trunc__(self) -> Any:
        return _unary("sym_int", self)

    def __floor__(self) -> Any:
        return _unary("floor", self)

    def __ceil__(self) -> Any:
        return _unary("ceil", self)

    def __sym_int__(self) -> Any:
        return _unary("sym_int", self)

    def __round__(self, ndigits: int | None = None) -> Any:
        return wrap_node(self.node.round(ndigits))

    def __hash__(self) -> int:
        return hash(builtins.float(self))

    def __repr__(self) -> str:
        return self.node.str()  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self.node.str()  # type: ignore[no-any-return]

    def _sympy_(self) -> Any:
        return self.node.expr

    def as_integer_ratio(self) -> tuple[int, int]:
        return builtins.float(self).as_integer_ratio()

    def conjugate(self) -> SymFloat:
        return self


class SymBool:
    """A symbolic bool (a comparison of symbolic values): `bool()` of it guards."""

    def __init__(self, node: Any) -> None:
        self.node = node

    def __bool__(self) -> bool:
        return self.node.bool_()  # type: ignore[no-any-return]

    def __int__(self) -> int:
        return builtins.int(self.node.bool_())

    def __and__(self, other: Any) -> Any:
        return _binary("sym_and", self, other) if isinstance(other, (bool, SymBool)) \
            else NotImplemented

    def __rand__(self, other: Any) -> Any:
        return _binary("sym_and", self, other, reflected=True) \
            if isinstance(other, (bool, SymBool)) else NotImplemented

    def __or__(self, other: Any) -> Any:
        return _binary("sym_or", self, other) if isinstance(other, (bool, SymBool)) \
            else NotImplemented

    def __ror__(self, other: Any) -> Any:
        return _binary("sym_or", self, other, reflected=True) \
            if isinstance(other, (bool, SymBool)) else NotImplemented

    def __eq__(self, other: object) -> Any:
        return _binary("eq", self, other)

    def __ne__(self, other: object) -> Any:
        return _binary("ne", self, other)

    # True + 1: Python's bools are ints; the SymBool's value is needed (a guard)
    def __add__(self, other: Any) -> Any:
        return builtins.int(self) + other

    def __radd__(self, other: Any) -> Any:
        return other + builtins.int(self)

    def __sub__(self, other: Any) -> Any:
        return builtins.int(self) - other

    def __rsub__(self, other: Any) -> Any:
        return other - builtins.int(self)

    def __mul__(self, other: Any) -> Any:
        return builtins.int(self) * other

    def __rmul__(self, other: Any) -> Any:
        return other * builtins.int(self)

    def __sym_not__(self) -> Any:
        return _unary("sym_not", self)

    def __sym_ite__(self, then_val: Any, else_val: Any) -> Any:
        then_node, else_node = to_node(self.node, then_val), to_node(self.node, else_val)
        return wrap_node(self.node.sym_ite(then_node, else_node))

    def __hash__(self) -> int:
        return hash(builtins.bool(self))

    def __repr__(self) -> str:
        return self.node.str()  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self.node.str()  # type: ignore[no-any-return]

    def _sympy_(self) -> Any:
        return self.node.expr


_SymTypes = (SymInt, SymFloat, SymBool)

# operations whose mixed int/float operands are both made floats first (Python's promotion)
_PROMOTES = {"add", "sub", "mul", "mod", "float_pow", "float_truediv", "int_floordiv",
             "sym_min", "sym_max", "eq", "ne", "lt", "le", "gt", "ge"}


def _binary(method: str, self: Any, other: Any, reflected: bool = False) -> Any:
    """`self <method> other` (or `other <method> self` when reflected) on nodes: the other
    operand is wrapped as a node; the result wrapped back as a Sym* value."""
    if not isinstance(other, (*_Num, *_SymTypes)):
        return NotImplemented
    if method in _BOOL_BECOMES_INT:
        if isinstance(other, SymBool):
            other = builtins.int(other)
        elif type(other) is bool:
            other = builtins.int(other)
    if method in _PROMOTES:
        f_self = isinstance(self, SymFloat)
        f_other = isinstance(other, (builtins.float, SymFloat))
        if f_self != f_other:
            if not f_self:
                return _binary(method, sym_float(self), other, reflected)
            other = sym_float(other)
    other_node = to_node(self.node, other)
    if other_node is NotImplemented:
        return NotImplemented
    a, b = (other_node, self.node) if reflected else (self.node, other_node)
    return wrap_node(getattr(a, method)(b))


_BOOL_BECOMES_INT = {"add", "sub", "mul", "mod", "int_floordiv", "int_truediv",
                     "pow_by_natural", "lshift", "rshift"}


def _unary(method: str, self: Any) -> Any:
    return wrap_node(getattr(self.node, method)())


# -- torch.sym_* -----------------------------------------------------------------------------
def sym_not(a: Any) -> Any:
    """`not a`, kept symbolic for a SymBool."""
    if isinstance(a, SymBool):
        return a.__sym_not__()
    return not a


def sym_float(a: Any) -> Any:
    """`float(a)`, kept symbolic for a SymInt."""
    if isinstance(a, SymFloat):
        return a
    if isinstance(a, SymInt):
        return a.__sym_float__()
    return builtins.float(a)


def sym_int(a: Any) -> Any:
    """`int(a)` (truncation), kept symbolic for a SymFloat."""
    if isinstance(a, SymInt):
        return a
    if isinstance(a, SymFloat):
        return math.trunc(a)
    return builtins.int(a)


def sym_max(a: Any, b: Any) -> Any:
    """`max(a, b)` without a guard when either is symbolic."""
    if isinstance(a, (SymInt, SymFloat)):
        return a.__sym_max__(b)
    if isinstance(b, (SymInt, SymFloat)):
        return b.__sym_max__(a)
    if not isinstance(a, (builtins.int, builtins.float)) or \
            not isinstance(b, (builtins.int, builtins.float)):
        raise AssertionError(f"sym_max: expected ints or floats, got {type(a)} and {type(b)}")
    if isinstance(a, builtins.float) or isinstance(b, builtins.float):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a: Any, b: Any) -> Any:
    """`min(a, b)` without a guard when either is symbolic."""
    if isinstance(a, (SymInt, SymFloat)):
        return a.__sym_min__(b)
    if isinstance(b, (SymInt, SymFloat)):
        return b.__sym_min__(a)
    if not isinstance(a, (builtins.int, builtins.float)) or \
            not isinstance(b, (builtins.int, builtins.float)):
        raise AssertionError(f"sym_min: expected ints or floats, got {type(a)} and {type(b)}")
    if isinstance(a, builtins.float) or isinstance(b, builtins.float):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """`t if b else f`, kept symbolic for a SymBool `b`."""
    if isinstance(b, SymBool):
        return b.__sym_ite__(t, f)
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"sym_ite: expected a bool condition, got {type(b)}")
    return t if b else f


def sym_sum(*args: Any) -> Any:
    """The sum of the arguments, `sym_sum(a, b, c)` or `sym_sum([a, b, c])`: one flat
    expression when any is a SymInt (faster than adding one by one)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    found = None
    for a in args:
        if not isinstance(a, (SymInt, builtins.int)):
            return builtins.sum(args)
        if isinstance(a, SymInt):
            found = a.node
    if found is None:
        return builtins.sum(args)
    return wrap_node(found.sym_sum(tuple(to_node(found, a) for a in args)))


def sym_index(value: Any) -> Any:
    """operator.index, except that a SymInt stays symbolic: what an op's argument checks use
    where torch's accept a SymInt (a slice bound, a split size, a repeat count)."""
    return value if isinstance(value, SymInt) else operator.index(value)
