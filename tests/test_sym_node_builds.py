"""SymNode's relations, Max and Min are built once per operands (sym_node._build_once): each
build again must be sympy's own build of the same operands, typed by them, and a build under
sympy's `evaluate(False)` neither comes from nor goes into that memo. sympy is the oracle."""

from __future__ import annotations

from typing import Any

import pytest

sympy = pytest.importorskip("sympy")

import fake_torch  # noqa: E402
from fake_torch.fx.experimental.symbolic_shapes import ShapeEnv  # noqa: E402
from fake_torch.utils._sympy.functions import Max, Min  # noqa: E402  (torch's own Max, Min)


def _expr(x: Any) -> Any:
    return x.node.expr if hasattr(x, "node") else x


def test_a_relation_or_max_built_again_is_sympys_build_of_its_operands() -> None:
    env = ShapeEnv()
    u, v = env.create_unbacked_symint(), env.create_unbacked_symint()
    f = env.create_unbacked_symfloat()
    eu, ev, ef = _expr(u), _expr(v), _expr(f)
    for _ in range(2):  # the second round is remembered
        assert _expr(u == 1) == sympy.Eq(eu, 1)
        assert _expr(u < v) == sympy.Lt(eu, ev)
        assert _expr(u >= 2) == sympy.Ge(eu, 2)
        assert _expr(f == 1.5) == sympy.Eq(ef, sympy.Float(1.5))
        assert _expr(fake_torch.sym_max(u, 3)) == Max(3, eu)
        assert _expr(fake_torch.sym_min(u, v)) == Min(eu, ev)
    # the int 2 and the float 2.0: one build each, each with its own operand's type
    assert _expr(u == 2) == sympy.Eq(eu, sympy.Integer(2))
    assert _expr(u == 2.0).rhs == sympy.Float(2.0)
    assert isinstance(_expr(u == 2).rhs, sympy.Integer)


def test_a_build_under_evaluate_false_is_neither_remembered_nor_taken_from_the_memo() -> None:
    env = ShapeEnv()
    u = env.create_unbacked_symint()
    assert _expr(u == u) is sympy.true  # evaluated (and remembered)
    with sympy.evaluate(False):
        assert _expr(u == u) == sympy.Eq(_expr(u), _expr(u), evaluate=False)
    assert _expr(u == u) is sympy.true
