"""torch.utils._sympy.value_ranges: intervals [lower, upper] of a symbol's possible values,
and `bound_sympy`, the interval an expression can take given its symbols' intervals, found
operation by operation with torch's rules (a relation compares its two sides' bounds; `%`
bounds are C-style; a Max of ranges is the Max of their ends), so that what the ShapeEnv
decides without a guard is what torch decides.

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

    def issubset(self, other: ValueRanges) -> bool:
        return bool(other.lower <= self.lower and self.upper <= other.upper)

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


_OO = (sympy.oo, -sympy.oo)
_BOOL = (sympy.false, sympy.true)


def _vr(lo: Any, hi: Any) -> ValueRanges:
    return ValueRanges(lo, hi)


def _corners(x: ValueRanges, y: ValueRanges, fn: Callable[[Any, Any], Any]) -> ValueRanges:
    """fn monotone in each argument: its extremes are at the corners."""
    vals = [fn(a, b) for a in (x.lower, x.upper) for b in (y.lower, y.upper)]
    return _vr(min(vals), max(vals))


def _safe_mul(a: Any, b: Any) -> Any:
    """a * b, but 0 * oo is 0 for bounds (sympy's Float 0.0 is no Integer 0: both asked)."""
    if a == 0 or a == 0.0:
        return a
    if b == 0 or b == 0.0:
        return b
    return a * b


def _lt(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    if a.upper < b.lower:
        return _vr(True, True)
    if a.lower >= b.upper:
        return _vr(False, False)
    return _vr(*_BOOL)


def _not(a: ValueRanges) -> ValueRanges:
    return _vr(sympy.Not(a.upper), sympy.Not(a.lower))


def _eq(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    if a.is_singleton() and b.is_singleton() and a.lower == b.lower:
        return _vr(True, True)
    if a.lower > b.upper or b.lower > a.upper:
        return _vr(False, False)
    return _vr(*_BOOL)


def _floordiv(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    if 0 in b:
        if (b.lower >= 0 and a.lower >= 0) or (b.upper <= 0 and a.upper <= 0):
            return _vr(0, sympy.oo)
        if (b.upper <= 0 and a.lower >= 0) or (b.lower >= 0 and a.upper <= 0):
            return _vr(-sympy.oo, 0)
        return ValueRanges.unknown_int()
    out = []
    for x in (a.lower, a.upper):
        for y in (b.lower, b.upper):
            r = F.FloorDiv(x, y)
            out.append(sympy.sign(x) * sympy.sign(y) * sympy.oo if r is sympy.nan else r)
    return _vr(min(out), max(out))


def _mod(x: ValueRanges, y: ValueRanges) -> ValueRanges:
    """C-style (truncating) remainder bounds, as torch's analysis gives Mod."""
    def c_mod(a: Any, b: Any) -> Any:
        r = abs(a) % abs(b)
        return -r if a < 0 else r

    def c_div(a: Any, b: Any) -> Any:
        q = a / b
        return sympy.Integer(q) if q.is_finite and q not in _OO else q
    if 0 in y:
        return ValueRanges.unknown_int()
    if y.is_singleton():
        yv = abs(y.lower)
        if c_div(x.lower, yv) == c_div(x.upper, yv):
            return _vr(c_mod(x.lower, yv), c_mod(x.upper, yv))
        if x.upper < 0:
            return _vr(-yv + 1, 0)
        if x.lower > 0:
            return _vr(0, yv - 1)
        return _vr(max(-yv + 1, x.lower), min(yv - 1, x.upper))
    top = _abs(y).upper - 1
    return _vr(-top, top)


def _python_mod(x: ValueRanges, y: ValueRanges) -> ValueRanges:
    if x.lower >= 0 and y.lower >= 0:
        return _mod(x, y)
    return _vr(y.lower + 1 if y.lower < 0 else 0, y.upper - 1 if y.upper > 0 else 0)


def _abs(x: ValueRanges) -> ValueRanges:
    if 0 in x:
        return _vr(0, max(abs(x.lower), abs(x.upper)))
    lo, hi = abs(x.lower), abs(x.upper)
    return _vr(min(lo, hi), max(lo, hi))


def _safe_pow(base: Any, exp: Any) -> Any:
    if base in _OO or exp in _OO:
        return base**exp if not (base == 0 and exp in _OO) else sympy.S.Zero
    return sympy.Integer(int(base) ** int(exp))


def _pow_by_natural(a: ValueRanges, b: ValueRanges) -> ValueRanges:
    if a.is_singleton() and b.is_singleton():
        v = _safe_pow(a.lower, b.lower)
        return _vr(v, v)
    if a.lower >= 1:
        b = b & _vr(0, sympy.oo)
        return _vr(_safe_pow(a.lower, b.lower), _safe_pow(a.upper, b.upper))
    if b.is_singleton():
        n = b.lower
        lo, hi = _safe_pow(a.lower, n), _safe_pow(a.upper, n)
        if n % 2 == 0:
            if 0 in a:
                return _vr(0, max(lo, hi))
            return _vr(min(lo, hi), max(lo, hi))
        return _vr(lo, hi)
    top = _safe_pow(max(a.upper, -a.lower), b.upper)
    return _vr(-top, top)


def _interp(e: Any, env: Mapping[Any, ValueRanges]) -> ValueRanges:
    """Bounds of `e`, operation by operation (torch's value-range analysis): a relation
    compares the bounds of its two sides."""
    if isinstance(e, sympy.logic.boolalg.BooleanAtom) or e.is_Number:
        return ValueRanges.wrap(e)
    if e.is_Symbol:
        vr = env.get(e)
        if vr is not None:
            return vr
        if e.is_integer:
            return _vr(1 if e.is_positive else 0, sympy.oo) if e.is_nonnegative else \
                ValueRanges.unknown_int()
        return ValueRanges.unknown()
    if isinstance(e, (F.Max, F.Min, sympy.Max, sympy.Min)):
        fn = sympy.Max if isinstance(e, sympy.Max) else sympy.Min
        args = [_interp(a, env) for a in e.args]
        acc = args[0]
        for a in args[1:]:
            acc = _vr(fn(acc.lower, a.lower), fn(acc.upper, a.upper))
        return acc
    if isinstance(e, sympy.Piecewise):
        out = None
        for expr, cond in e.args:
            c, v = _interp(cond, env), _interp(expr, env)
            if sympy.true in (c.lower, c.upper):
                out = v if out is None else _vr(min(out.lower, v.lower), max(out.upper, v.upper))
        return out if out is not None else ValueRanges.unknown()
    args = [_interp(a, env) for a in e.args]
    if isinstance(e, sympy.Add):
        return _vr(sympy.Add(*(a.lower for a in args)), sympy.Add(*(a.upper for a in args)))
    if isinstance(e, sympy.Mul):
        acc = args[0]
        for a in args[1:]:
            acc = _corners(acc, a, _safe_mul)
        return acc
    if isinstance(e, (sympy.Pow, F.PowByNatural)):
        if isinstance(e, sympy.Pow) and e.exp == sympy.S.Half:
            return ValueRanges.unknown()
        return _pow_by_natural(args[0], args[1])
    rel: dict[type, Callable[[ValueRanges, ValueRanges], ValueRanges]] = {
        sympy.StrictLessThan: _lt, sympy.StrictGreaterThan: lambda a, b: _lt(b, a),
        sympy.LessThan: lambda a, b: _not(_lt(b, a)),
        sympy.GreaterThan: lambda a, b: _not(_lt(a, b)),
        sympy.Equality: _eq, sympy.Unequality: lambda a, b: _not(_eq(a, b)),
        F.FloorDiv: _floordiv, F.Mod: _mod, F.PythonMod: _python_mod,
    }
    fn = rel.get(type(e))
    if fn is not None:
        return fn(args[0], args[1])
    if isinstance(e, sympy.Not):
        return _not(args[0])
    if isinstance(e, (sympy.And, sympy.Or)):
        op = sympy.And if isinstance(e, sympy.And) else sympy.Or
        acc = args[0]
        for a in args[1:]:
            acc = _vr(op(acc.lower, a.lower), op(acc.upper, a.upper))
        return acc
    if isinstance(e, sympy.Abs):
        return _abs(args[0])
    increasing: dict[type, Callable[[Any], Any]] = {
        F.ToFloat: F.ToFloat, F.TruncToInt: F.TruncToInt, F.FloorToInt: sympy.floor,
        F.CeilToInt: sympy.ceiling, F.RoundToInt: F.RoundToInt}
    for cls, f in increasing.items():
        if isinstance(e, cls):
            return _vr(f(args[0].lower), f(args[0].upper))
    if isinstance(e, (F.IntTrueDiv, F.FloatTrueDiv)):
        a, b = args
        if 0 in b or (any(v in _OO for v in (a.lower, a.upper)) and
                      any(v in _OO for v in (b.lower, b.upper))):
            return ValueRanges.unknown()
        return _corners(a, b, type(e))
    return ValueRanges.unknown()


def bound_sympy(expr: Any, ranges: Mapping[Any, ValueRanges] | None = None) -> ValueRanges:
    """The range of `expr` given its free symbols' ranges (a missing symbol: what its
    assumptions say)."""
    return _interp(sympy.sympify(expr), ranges or {})
