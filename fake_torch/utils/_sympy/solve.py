"""torch.utils._sympy.solve: isolate a symbol on the left of a relation (`2*x + 1 > y` ->
`x > y/2 - 1/2`), as the ShapeEnv does to narrow ranges and to find replacements.

Only what peeling allows: the symbol on one side only; added terms moved across, constant or
sign-known factors divided out (an inequality flips for a negative one), and for a FloorDiv
`x // d <op> n` the bound on x itself. Anything else: None."""

from __future__ import annotations

from typing import Any

import sympy

from fake_torch.utils._sympy.functions import FloorDiv

__all__ = ["mirror_rel_op", "try_solve"]

_MIRROR: dict[type, type] = {sympy.Eq: sympy.Eq, sympy.Ne: sympy.Ne, sympy.Ge: sympy.Le,
                             sympy.Gt: sympy.Lt, sympy.Le: sympy.Ge, sympy.Lt: sympy.Gt}
_INEQUALITIES = (sympy.Gt, sympy.Ge, sympy.Lt, sympy.Le)


def mirror_rel_op(op: type) -> type | None:
    """The relation with its sides swapped (Gt -> Lt, Eq -> Eq)."""
    return _MIRROR.get(op)


def _isolate_step(e: Any, thing: Any, floordiv_inequality: bool) -> Any:
    op = type(e)
    if isinstance(e.lhs, sympy.Add):  # move the terms without `thing` across
        other = sympy.Add(*(a for a in e.lhs.args if not a.has(thing)))
        e = op(e.lhs - other, e.rhs - other)
    if isinstance(e, sympy.Rel) and isinstance(e.lhs, sympy.Mul):
        lhs, rhs = e.args
        factor = sympy.Mul(*(a for a in lhs.args if not a.has(thing)))
        inequality = isinstance(e, _INEQUALITIES)
        if not (inequality and factor.is_negative is None) and \
                not (not inequality and rhs.is_zero):
            if inequality and factor.is_negative:
                op = _MIRROR[op]
            e = op(lhs / factor, rhs / factor)
    if floordiv_inequality and isinstance(e, sympy.Rel) and isinstance(e.lhs, FloorDiv) \
            and e.lhs.divisor.is_positive and e.rhs.is_integer:
        num, den = e.lhs.args
        if isinstance(e, sympy.Eq):
            return sympy.And(sympy.Ge(num, e.rhs * den), sympy.Lt(num, (e.rhs + 1) * den))
        if isinstance(e, sympy.Ne):
            return sympy.Or(sympy.Lt(num, e.rhs * den), sympy.Ge(num, (e.rhs + 1) * den))
        if isinstance(e, (sympy.Gt, sympy.Ge)):
            q = e.rhs if isinstance(e, sympy.Ge) else e.rhs + 1
            return sympy.Ge(num, q * den)
        q = e.rhs if isinstance(e, sympy.Lt) else e.rhs + 1
        return sympy.Lt(num, q * den)
    return e


def try_solve(expr: Any, thing: Any, trials: int = 5,
              floordiv_inequality: bool = True) -> tuple[Any, Any] | None:
    """(`thing <op> rhs`, rhs) equivalent to the relation `expr`, or None."""
    if not isinstance(expr, sympy.Rel) or type(expr) not in _MIRROR:
        return None
    in_lhs, in_rhs = expr.lhs.has(thing), expr.rhs.has(thing)
    if in_lhs and in_rhs:
        return None
    candidates = []
    if in_lhs:
        candidates.append(expr)
    if in_rhs:
        candidates.append(_MIRROR[type(expr)](expr.rhs, expr.lhs))
    for e in candidates:
        for _ in range(trials):
            step = _isolate_step(e, thing, floordiv_inequality)
            if step == e:
                break
            e = step
            if not isinstance(e, sympy.Rel):
                break
        if isinstance(e, sympy.Rel) and e.lhs == thing:
            return e, e.rhs
    return None
