"""torch.utils._sympy.functions: the integer/float functions of symbolic size expressions,
printed as torch prints them (`(s77//2)`, `Mod(s77, 3)`, `IntTrueDiv(s77, 2)`, `ToFloat(s77)`).

Each `eval` folds constants and the few identities torch's fold (x//1, (2*x)//2, x % x), so
str() of an expression matches torch's; anything else stays an unevaluated application."""

from __future__ import annotations

import functools
import math
from typing import Any

import sympy
from sympy.printing.precedence import PRECEDENCE

__all__ = ["CeilToInt", "CleanDiv", "FloatPow", "FloatTrueDiv", "FloorDiv", "FloorToInt",
           "IntTrueDiv", "Max", "Min", "Mod", "PowByNatural", "PythonMod", "RoundToInt", "ToFloat",
           "TruncToInt"]


def _is_inf(e: Any) -> bool:
    return e in (sympy.oo, -sympy.oo)


def _int_content(e: sympy.Expr) -> int:
    """The gcd of the integer coefficients of a sum's terms (12 for 6*x + 12)."""
    def coeff(term: sympy.Expr) -> int:
        return math.prod(abs(int(f)) for f in sympy.Mul.make_args(term) if f.is_Integer)
    return functools.reduce(math.gcd, (coeff(t) for t in sympy.Add.make_args(e)), 0)


def _common_factor(p: sympy.Expr, q: sympy.Expr) -> sympy.Expr:
    """A cheap gcd of p and q: their common integer content times the factors of q that
    divide every term of p (x*y + 2*x and 2*x give 2*x)."""
    n = math.gcd(_int_content(p), _int_content(q)) or 1
    g: sympy.Expr = sympy.Integer(n)
    p, q = p / n, q / n
    terms = [sympy.Mul.make_args(t) for t in sympy.Add.make_args(p)]
    for f in sympy.Mul.make_args(q):
        if all(f in t for t in terms):
            g = g * f
    return g


class FloorDiv(sympy.Function):  # type: ignore[misc]
    """Python's `a // b` on integers (rounds towards -inf), printed `(a//b)`."""

    nargs = (2,)
    precedence = 35
    is_integer = True

    @property
    def base(self) -> sympy.Expr:
        return self.args[0]

    @property
    def divisor(self) -> sympy.Expr:
        return self.args[1]

    def _sympystr(self, printer: Any) -> str:
        b = printer.parenthesize(self.base, PRECEDENCE["Atom"] - 0.5)
        d = printer.parenthesize(self.divisor, PRECEDENCE["Atom"] - 0.5)
        return f"({b}//{d})"

    @classmethod
    def eval(cls, base: sympy.Expr, divisor: sympy.Expr) -> sympy.Expr | None:
        if divisor.is_zero:
            raise ZeroDivisionError("division by zero")
        if (_is_inf(base) and _is_inf(divisor)) or sympy.nan in (base, divisor):
            return sympy.nan
        if base.is_zero:
            return sympy.S.Zero
        if base.is_integer and divisor == 1:
            return base
        if base.is_integer and divisor == -1:
            return -base
        if base == divisor:
            return sympy.S.One
        if base.is_Number and divisor.is_Number:
            if _is_inf(base) or _is_inf(divisor):
                r = float(base) / float(divisor)
                return sympy.oo if r == math.inf else -sympy.oo if r == -math.inf else \
                    sympy.Integer(math.floor(r))
            if base.is_Integer and divisor.is_Integer:
                return sympy.Integer(int(base) // int(divisor))
        if isinstance(base, FloorDiv):  # (a//b)//c == a//(b*c)
            return FloorDiv(base.args[0], base.args[1] * divisor)
        if divisor.is_Integer:
            # the terms that divide exactly leave the floor: (2*x + 4 + y)//2 = (y//2) + x + 2
            exact = [t for t in sympy.Add.make_args(base) if (t / divisor).is_integer]
            if exact:
                quotient = sympy.Add(*(t / divisor for t in exact))
                return FloorDiv(base - sympy.Add(*exact), divisor) + quotient
        g = _common_factor(base, divisor)
        if g != 1:
            return FloorDiv(sympy.simplify(base / g), sympy.simplify(divisor / g))
        return None

    def _eval_is_nonnegative(self) -> bool | None:
        p, q = self.args
        return True if (p.is_integer and q.is_integer and p.is_nonnegative
                        and q.is_nonnegative) else None


class CleanDiv(FloorDiv):
    """`a // b` known exact (a guard showed b divides a); printed as FloorDiv."""


def _mod_fold(p: sympy.Expr, q: sympy.Expr) -> sympy.Expr | None:
    """The identities Mod and PythonMod share: 0 % q, q % q, p % 1, p % 2 by parity,
    a multiple of q, and p < q (both positive)."""
    if q.is_zero:
        raise ZeroDivisionError("Modulo by zero")
    if p is sympy.S.Zero or p in (q, -q) or q == 1:
        return sympy.S.Zero
    if q.is_Number and q == 2:
        if p.is_even:
            return sympy.S.Zero
        if p.is_odd:
            return sympy.S.One
    r = p / q
    if r.is_integer:
        return sympy.S.Zero
    less = p < q
    if less.is_Boolean and bool(less) and r.is_positive:
        return p
    return None


class PythonMod(sympy.Function):  # type: ignore[misc]
    """Python's `a % b` (the result takes the divisor's sign)."""

    nargs = (2,)
    precedence = 35
    is_integer = True

    @classmethod
    def eval(cls, p: sympy.Expr, q: sympy.Expr) -> sympy.Expr | None:
        if q.is_Number and p.is_Number and not q.is_zero:
            return p % q
        r = _mod_fold(p, q)
        if r is not None:
            return r
        return sympy.S.Zero if sympy.Mod(p, q) == 0 else None

    def _eval_is_nonnegative(self) -> bool | None:
        return True if self.args[1].is_positive else None

    def _eval_is_nonpositive(self) -> bool | None:
        return True if self.args[1].is_negative else None


class Mod(sympy.Function):  # type: ignore[misc]
    """`a % b` for a known non-negative `a` and positive `b`, printed `Mod(a, b)`."""

    nargs = (2,)
    precedence = 35
    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, p: sympy.Expr, q: sympy.Expr) -> sympy.Expr | None:
        if q.is_Number and p.is_Number and not q.is_zero:
            return p % q
        return _mod_fold(p, q)


class _ToInt(sympy.Function):  # type: ignore[misc]
    """float -> int (truncation, floor, ceiling): constants fold, infinities stay infinite."""

    is_integer = True
    _round: Any = None

    @classmethod
    def eval(cls, number: sympy.Expr) -> sympy.Expr | None:
        if number == sympy.oo:
            return sympy.oo
        if number == -sympy.oo:
            return -sympy.oo
        if number.is_Integer:
            return number
        if number.is_Number:
            return sympy.Integer(cls._round(float(number)))
        return None


class TruncToInt(_ToInt):
    """`int(x)` / `math.trunc(x)` of a symbolic float."""

    _round = math.trunc


class FloorToInt(_ToInt):
    """`math.floor(x)` of a symbolic float."""

    _round = math.floor


class CeilToInt(_ToInt):
    """`math.ceil(x)` of a symbolic float."""

    _round = math.ceil


class RoundToInt(_ToInt):
    """`round(x)` of a symbolic float (Python's half-to-even)."""

    _round = round


class ToFloat(sympy.Function):  # type: ignore[misc]
    """`float(n)` of a symbolic int."""

    is_real = True

    @classmethod
    def eval(cls, number: sympy.Expr) -> sympy.Expr | None:
        if _is_inf(number):
            return number
        if number.is_Integer:
            return sympy.Float(int(number))
        return None


class IntTrueDiv(sympy.Function):  # type: ignore[misc]
    """`a / b` of two ints (Python's exact int true division), a float."""

    is_real = True
    precedence = 35

    @classmethod
    def eval(cls, base: sympy.Expr, divisor: sympy.Expr) -> sympy.Expr | None:
        if divisor.is_zero:
            raise ZeroDivisionError("division by zero")
        if base.is_Number and divisor.is_Number and (_is_inf(base) or _is_inf(divisor)):
            return sympy.Float(float(base) / float(divisor))
        if base.is_Integer and divisor.is_Integer:
            return sympy.Float(int(base) / int(divisor))
        return None


class FloatTrueDiv(sympy.Function):  # type: ignore[misc]
    """`a / b` of floats (kept unevaluated so x/x stays a float expression)."""

    is_real = True
    precedence = 35

    @classmethod
    def eval(cls, base: sympy.Expr, divisor: sympy.Expr) -> sympy.Expr | None:
        if divisor.is_zero:
            raise ZeroDivisionError("division by zero")
        if base.is_Number and divisor.is_Number:
            return sympy.Float(float(base) / float(divisor))
        return None


class PowByNatural(sympy.Function):  # type: ignore[misc]
    """`a ** n` of ints with n >= 0; a constant exponent becomes sympy's own Pow."""

    is_integer = True
    precedence = 50

    @classmethod
    def eval(cls, base: sympy.Expr, exp: sympy.Expr) -> sympy.Expr | None:
        if base.is_Integer and exp.is_Integer:
            return sympy.Integer(int(base) ** int(exp))
        if exp.is_Integer:
            return sympy.Pow(base, exp)
        return None


class FloatPow(sympy.Function):  # type: ignore[misc]
    """`a ** b` of floats (base assumed non-negative); folds constants only."""

    is_real = True
    precedence = 60

    @classmethod
    def eval(cls, base: sympy.Expr, exp: sympy.Expr) -> sympy.Expr | None:
        if base.is_Number and exp.is_Number:
            return sympy.Float(float(base) ** float(exp))
        return None


class _MinMaxMixin:
    """torch's Max/Min folding, lighter than sympy's: the numbers fold into one; with no
    number, c1*t and c2*t (t of known sign) keep the extreme one; one symbolic argument
    beside 0 (non-negative) or 1 (positive) decides. No pairwise comparison of symbolic
    arguments (Min(s, s + 4) stays as it is, as in torch)."""

    @classmethod
    def _collapse_arguments(cls, args: Any, **assumptions: Any) -> Any:
        """Nested Min/Max simplified against the outer arguments, as torch (and sympy)
        do: a nested opposite whose constant already decides it goes; an outer argument
        absorbs a nested opposite holding it, and leaves a nested same-kind one; opposites
        sharing arguments are factored (Min(Max(a, b), Max(a, c)) = Max(a, Min(b, c)))."""
        if not args:
            return args
        args = list(sympy.ordered(args))
        is_max = issubclass(cls, sympy.Max)
        other: Any = Min if is_max else Max
        if args[0].is_number:
            mins: list[Any] = []
            maxs: list[Any] = []
            for a in args:
                for v in sympy.core.traversal.walk(a, Min, Max):
                    if v.args[0].is_comparable:
                        (maxs if isinstance(v, Max) else mins).append(v)
            small, big = sympy.oo, -sympy.oo
            for v in mins:
                if v.args[0].is_number and (v.args[0] < small) == True:  # noqa: E712
                    small = v.args[0]
            for v in maxs:
                if v.args[0].is_number and (v.args[0] > big) == True:  # noqa: E712
                    big = v.args[0]
            for a in args:
                if not a.is_number:
                    break
                if is_max and (a > big) == True:  # noqa: E712
                    big = a
                if not is_max and (a < small) == True:  # noqa: E712
                    small = a
            bound = (big if big != -sympy.oo else None) if is_max else \
                (small if small != sympy.oo else None)
            if bound is not None:
                for i, a in enumerate(args):
                    if isinstance(a, other):
                        a0 = a.args[0]
                        if ((a0 < bound) if is_max else (a0 > bound)) == True:  # noqa: E712
                            args[i] = cls.identity  # type: ignore[attr-defined]

        def absorb(ai: Any, a: Any) -> Any:
            if not isinstance(ai, (Min, Max)):
                return ai
            if a not in ai.args:
                return ai.func(*[absorb(x, a) for x in ai.args], evaluate=False)
            if isinstance(ai, cls):
                return ai.func(*[absorb(x, a) for x in ai.args if x != a], evaluate=False)
            return a
        for i, a in enumerate(args):
            args[i + 1:] = [absorb(ai, a) for ai in args[i + 1:]]
        if len(args) > 1:
            nested = [a for a in args if isinstance(a, other)]
            rest = [a for a in args if not isinstance(a, other)]
            if nested:
                sets = [set(a.args) for a in nested]
                common = set.intersection(*sets)
                if common:
                    new = list(common)
                    diffs = [x - common for x in sets]
                    if all(diffs):
                        new.append(cls(*[other(*d, evaluate=False) for d in diffs],  # type: ignore[call-arg]
                                       evaluate=False))
                    args = [*rest, other(*new, evaluate=False)]
        return args

    @classmethod
    def _find_localzeros(cls, values: Any, **options: Any) -> Any:
        is_max = issubclass(cls, sympy.Max)
        pick = max if is_max else min
        number = None
        others = set()
        for a in values:
            if a.is_Number:
                number = a if number is None else pick(number, a)
            else:
                others.add(a)
        if number is None:
            if len(others) == 2:
                a, b = others
                (ca, ta), (cb, tb) = a.as_coeff_Mul(), b.as_coeff_Mul()
                if ta == tb and ca.is_comparable and cb.is_comparable:
                    if ca == cb:
                        return {a}
                    if ta.is_nonnegative:
                        a_smaller = bool(ca < cb)
                    elif ta.is_nonpositive:
                        a_smaller = bool(ca > cb)
                    else:
                        return others
                    return {b if a_smaller == is_max else a}
            return others
        if not others:
            return {number}
        if len(others) == 1:
            other = next(iter(others))
            # `in (0.0, 0)`: sympy's Float 0.0 equals the float 0.0 but not the Integer 0
            if (number in (0.0, 0) and other.is_nonnegative) or \
                    (number == 1 and other.is_positive):
                return others if is_max else {number}
        others.add(number)
        return others


class Max(_MinMaxMixin, sympy.Max):  # type: ignore[misc]
    """`max(a, b)` of symbolic values (torch.sym_max), folded as torch folds it."""


class Min(_MinMaxMixin, sympy.Min):  # type: ignore[misc]
    """`min(a, b)` of symbolic values (torch.sym_min), folded as torch folds it."""
