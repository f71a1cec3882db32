"""torch.utils._sympy.value_ranges: intervals [lower, upper] of a symbol's possible values,
and `bound_sympy`, the interval an expression can take given its symbols' intervals.

An int interval's infinite ends print `int_oo` (torch's integer infinity); here they are
sympy's oo, which compares and adds the same way."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import sympy

from fake_torch.utils._sympy import functions as F

__all__ = ["ValueRanges", "bound_sympy"]


def _sym(x: Any) -> Any:
    if isinstance(x, bool):
        return sympy.true if x else sympy.false
    if isinstance(x, int):
        return sympy.Integer(x)
    if isinstance(x, float):
        return sympy.oo if x == math.inf else -sympy.oo if x == -math.inf else sympy.Float(x)
    return sympy.sympify(x)


class ValueRanges:
    """The closed interval [lower, upper] (sympy numbers, possibly infinite; for a boolean
    expression, sympy.false/true)."""

    __slots__ = ("is_bool", "is_float", "is_int", "lower", "upper")

    def __init__(self, lower: Any, upper: Any, *, is_int: bool | None = None) -> None:
        """`is_int` when not given: an int range unless an end is a float (two infinite
        ends make an int range, the unknown int's [-int_oo, int_oo])."""
        self.lower = _sym(lower)
        self.upper = _sym(upper)
        self.is_bool = isinstance(self.lower, sympy.logic.boolalg.BooleanAtom)
        if is_int is None:
            is_int = all(v.is_Integer or v in (sympy.oo, -sympy.oo)
                         for v in (self.lower, self.upper))
        self.is_int = not self.is_bool and is_int
        self.is_float = not self.is_bool and not self.is_int

    @classmethod
    def unknown(cls) -> ValueRanges:
        return cls(-sympy.oo, sympy.oo, is_int=False)

    @classmethod
    def unknown_int(cls) -> ValueRanges:
        return cls(-sympy.oo, sympy.oo)

    @classmethod
    def unknown_bool(cls) -> ValueRanges:
        return cls(sympy.false, sympy.true)

    @classmethod
    def wrap(cls, v: Any) -> ValueRanges:
        return cls(v, v)

    def is_singleton(self) -> bool:
        return bool(self.lower == self.upper)

    def __contains__(self, x: Any) -> bool:
        x = _sym(x)
        return bool(self.lower <= x <= self.upper) if not self.is_bool else \
            x in (self.lower, self.upper)

    def __and__(self, other: ValueRanges) -> ValueRanges:
        if self.is_bool:
            return other
        return ValueRanges(sympy.Max(self.lower, other.lower), sympy.Min(self.upper, other.upper),
                           is_int=self.is_int and other.is_int)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ValueRanges) and self.lower == other.lower and \
            self.upper == other.upper

    def __hash__(self) -> int:
        return hash((self.lower, self.upper))

    def __repr__(self) -> str:
        def end(v: Any) -> str:
            if self.is_int and v in (sympy.oo, -sympy.oo):
                return "int_oo" if v == sympy.oo else "-int_oo"
            return str(v)
        return f"VR[{end(self.lower)}, {end(self.upper)}]"


_UNKNOWN = (-sympy.oo, sympy.oo)


def _mul(a: Any, b: Any) -> Any:
    return sympy.S.Zero if a == 0 or b == 0 else a * b  # 0 * oo is 0 for bounds


def _mul_range(x: tuple[Any, Any], y: tuple[Any, Any]) -> tuple[Any, Any]:
    products = [_mul(a, b) for a in x for b in y]
    return sympy.Min(*products), sympy.Max(*products)


def _pow_range(x: tuple[Any, Any], n: int) -> tuple[Any, Any]:
    lo, hi = x
    if n == 0:
        return sympy.S.One, sympy.S.One
    if n > 0 and (n % 2 == 1 or lo >= 0):
        return lo**n, hi**n
    if n > 0:  # even power of a range that reaches below 0
        top = sympy.Max(lo**n, hi**n)
        return (sympy.S.Zero if hi >= 0 else hi**n), top
    return _UNKNOWN


def _floordiv_range(x: tuple[Any, Any], y: tuple[Any, Any]) -> tuple[Any, Any]:
    if y[0] <= 0 <= y[1]:
        return _UNKNOWN
    quotients = []
    for a in x:
        for b in y:
            if a in (sympy.oo, -sympy.oo) and b in (sympy.oo, -sympy.oo):
                return _UNKNOWN
            q = a / b if a in (sympy.oo, -sympy.oo) else sympy.floor(a / b)
            quotients.append(q)
    return sympy.Min(*quotients), sympy.Max(*quotients)


def _mod_range(x: tuple[Any, Any], y: tuple[Any, Any]) -> tuple[Any, Any]:
    if y[0] > 0:  # result in [0, divisor - 1]; and x itself when x is known below y
        top = y[1] - 1
        if x[0] >= 0 and x[1] < y[0]:
            return x
        return sympy.S.Zero, sympy.Min(top, x[1]) if x[0] >= 0 else top
    return _UNKNOWN


def _range(e: Any, env: Mapping[Any, ValueRanges]) -> tuple[Any, Any]:
    """The (lower, upper) an integer/float expression can take."""
    if e.is_Number:
        return e, e
    if e.is_Symbol:
        vr = env.get(e)
        return (vr.lower, vr.upper) if vr is not None else _UNKNOWN
    args = [_range(a, env) for a in e.args]
    if isinstance(e, sympy.Add):
        return sympy.Add(*(a[0] for a in args)), sympy.Add(*(a[1] for a in args))
    if isinstance(e, sympy.Mul):
        acc = args[0]
        for a in args[1:]:
            acc = _mul_range(acc, a)
        return acc
    if isinstance(e, sympy.Pow) and e.exp.is_Integer:
        return _pow_range(args[0], int(e.exp))
    if isinstance(e, F.PowByNatural) and e.args[1].is_Integer:
        return _pow_range(args[0], int(e.args[1]))
    if isinstance(e, F.FloorDiv):
        return _floordiv_range(args[0], args[1])
    if isinstance(e, (F.Mod, F.PythonMod)):
        return _mod_range(args[0], args[1])
    if isinstance(e, sympy.Max):
        return sympy.Max(*(a[0] for a in args)), sympy.Max(*(a[1] for a in args))
    if isinstance(e, sympy.Min):
        return sympy.Min(*(a[0] for a in args)), sympy.Min(*(a[1] for a in args))
    monotone: dict[type, Callable[[Any], Any]] = {
        F.ToFloat: lambda v: v, F.TruncToInt: _trunc, F.FloorToInt: sympy.floor,
        F.CeilToInt: sympy.ceiling}
    for cls, fn in monotone.items():
        if isinstance(e, cls):
            return fn(args[0][0]), fn(args[0][1])
    if isinstance(e, sympy.Abs):
        lo, hi = args[0]
        if lo >= 0:
            return lo, hi
        if hi <= 0:
            return -hi, -lo
        return sympy.S.Zero, sympy.Max(-lo, hi)
    return _UNKNOWN


def _trunc(v: Any) -> Any:
    if v in (sympy.oo, -sympy.oo):
        return v
    return sympy.Integer(math.trunc(float(v)))


def _truth(e: Any, env: Mapping[Any, ValueRanges]) -> tuple[Any, Any]:
    """(false, true) bounds of a boolean expression: decided when it is one value."""
    unknown = (sympy.false, sympy.true)
    if e in (sympy.true, sympy.false):
        return e, e
    if isinstance(e, sympy.Not):
        lo, hi = _truth(e.args[0], env)
        return sympy.Not(hi), sympy.Not(lo)
    if isinstance(e, (sympy.And, sympy.Or)):
        parts = [_truth(a, env) for a in e.args]
        op = sympy.And if isinstance(e, sympy.And) else sympy.Or
        return op(*(p[0] for p in parts)), op(*(p[1] for p in parts))
    if isinstance(e, sympy.core.relational.Relational):
        lo, hi = _range(sympy.expand(e.lhs - e.rhs), env)
        decide: dict[type, tuple[bool, bool]] = {
            sympy.StrictGreaterThan: (bool(lo > 0), bool(hi <= 0)),
            sympy.GreaterThan: (bool(lo >= 0), bool(hi < 0)),
            sympy.StrictLessThan: (bool(hi < 0), bool(lo >= 0)),
            sympy.LessThan: (bool(hi <= 0), bool(lo > 0)),
            sympy.Equality: (bool(lo == hi == 0), bool(lo > 0 or hi < 0)),
            sympy.Unequality: (bool(lo > 0 or hi < 0), bool(lo == hi == 0)),
        }
        true, false = decide.get(type(e), (False, False))
        if true:
            return sympy.true, sympy.true
        if false:
            return sympy.false, sympy.false
    return unknown


def bound_sympy(expr: Any, ranges: Mapping[Any, ValueRanges] | None = None) -> ValueRanges:
    """The range of `expr` given its free symbols' ranges (a missing symbol: unknown)."""
    env = ranges or {}
    if isinstance(expr, sympy.logic.boolalg.Boolean) and not expr.is_Symbol:
        return ValueRanges(*_truth(expr, env))
    return ValueRanges(*_range(expr, env))
