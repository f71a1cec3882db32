"""The symbolic core (SymInt/SymFloat/SymBool over a ShapeEnv) against real torch 2.13's.

Each scenario is one program written once against a `Side` (a library: torch or fake_torch,
and how it makes a symbol for a tensor dim); it returns what it saw (str() of expressions,
truth values, guard texts, ranges, replacements, error texts) and both sides must return the
same. Skipped without torch."""

from __future__ import annotations

import functools
import math
import operator
import random
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import pytest

import fake_torch as ft
from fake_torch.fx.experimental import sym_node as ft_sym_node
from fake_torch.fx.experimental import symbolic_shapes as ft_ss

# guard_size_oblivious is deprecated in torch 2.13,
# and so is ShapeEnv.size_hint (FutureWarnings in both libraries)
pytestmark = [pytest.mark.filterwarnings("ignore:guard_size_oblivious:FutureWarning"),
              pytest.mark.filterwarnings("ignore:use guarding_hint_or_throw:FutureWarning")]


class Side:
    """One library's view: its torch module, symbolic_shapes module and symbol maker."""

    def __init__(self, lib: Any, ss: Any, source: Callable[[str, int], Any],
                 local: Callable[[str], Any]) -> None:
        self.lib, self.ss, self._source, self.local = lib, ss, source, local
        self.env = ss.ShapeEnv()

    def dim(self, name: str, val: int, dim: int = 0, duck: bool = False) -> Any:
        """A symbolic size for `name`.size()[dim] with hint `val` (DYNAMIC: not duck-shaped)."""
        src = self._source(name, dim)
        kind = self.ss.DimDynamic.DUCK if duck else self.ss.DimDynamic.DYNAMIC
        sym = self.env.create_symbol(val, src, dynamic_dim=kind)
        return self.env.create_symintnode(sym, hint=val, source=src)

    def guards(self) -> list[str]:
        return [str(g.expr) for g in self.env.guards]

    def ranges(self) -> dict[str, str]:
        return {str(k): repr(v) for k, v in self.env.var_to_range.items()}

    def replacements(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.env.replacements.items()}

    def asserts(self) -> dict[str, list[str]]:
        return {str(k): [str(r.expr) for r in v]
                for k, v in self.env.deferred_runtime_asserts.items() if v}

    def state(self) -> list[Any]:
        return [self.guards(), self.ranges(), self.replacements(), self.asserts()]


def _torch_side() -> Side:
    torch = pytest.importorskip("torch")
    from torch._dynamo.source import LocalSource, TensorProperty, TensorPropertySource
    from torch.fx.experimental import symbolic_shapes as ss
    return Side(torch, ss, lambda name, dim: TensorPropertySource(
        LocalSource(name), TensorProperty.SIZE, dim), LocalSource)


def _fake_side() -> Side:
    return Side(ft, ft_ss, lambda name, dim: f"L['{name}'].size()[{dim}]",
                lambda name: f"L['{name}']")


def _err(fn: Callable[[], Any]) -> str:
    try:
        return f"ok {fn()}"
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


# -- the scenarios -------------------------------------------------------------------------
def sc_arith_printing(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    vals = [a, b, a + 1, 1 + a, a - 1, 10 - a, a + b, a * b, 2 * a + 3, (a + 1) * 2,
            (a + b) * (a - b), -a, -(a - b), a * a * a, a - a, a + b - a, S.lib.sym_sum([a, b, 3]),
            S.lib.sym_sum(a, 2 * b, 3), S.lib.sym_sum([1, 2]), S.lib.sym_sum(a, 0.5), a << 1]
    return [str(v) for v in vals] + [type(v).__name__ for v in vals] + S.guards()


def sc_floordiv(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    vals = [a // 2, a * b // a, (a * 2) // 2, (a * 4 + 2) // 2, (a + 3) // 1, (a + b) // (a + b),
            (2 * a + 4) // 2, a // 2 // 3, (a * 6) // 4, 10 // a, a >> 1]
    return [str(v) for v in vals] + [v.node.hint for v in vals] + S.guards()


def sc_mod(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    vals = [a % 3, (2 * a) % 2, (2 * a + 1) % 2, a % a, (a * b) % a, (a + 5) % 5, (a * 6) % 4,
            a % 1, (a // 2) % 3, 10 % a]
    return [str(v) for v in vals] + [v.node.hint for v in vals] + S.guards()


def sc_float_ops(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    vals = [a / 2, a / b, 10 / a, (a / 2) * 2, a * 1.5, a + 0.5, S.lib.sym_float(a),
            S.lib.sym_float(a) + S.lib.sym_float(b), a / 1, a // 2.0, S.lib.sym_float(a) // 2,
            S.lib.sym_int(S.lib.sym_float(a) * 2), math.trunc(a / 2), math.floor(a / 2),
            math.ceil(a / 2)]
    return [str(v) for v in vals] + [type(v).__name__ for v in vals] + \
        [v.node.hint for v in vals] + S.guards()


def sc_pow(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    vals = [a ** 2, a ** 0, a ** b, 2 ** a, a ** -1, a ** 0.5]
    return [str(v) for v in vals] + [type(v).__name__ for v in vals] + S.guards()


def sc_min_max_ite(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    vals = [S.lib.sym_max(a, 1), S.lib.sym_max(a, 2), S.lib.sym_min(a, 1), S.lib.sym_max(a, b),
            S.lib.sym_min(a, b), S.lib.sym_ite(a > b, a, b), S.lib.sym_not(a > 2), abs(a - b),
            (a > 2) & (b > 3), (a > b) | (b > a)]
    return [str(v) for v in vals] + [type(v).__name__ for v in vals] + \
        [v.node.hint for v in vals] + S.guards()


def sc_comparisons_print(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    vals = [a == b, a != b, a + 1 <= b, a < 2 * b, a >= 2.5, a == 5, a > 8]
    return [str(v) for v in vals] + [type(v).__name__ for v in vals] + \
        [v.node.hint for v in vals] + S.guards()


def sc_guard_refines_range(S: Side) -> list[Any]:
    a, _ = S.dim("x", 5), S.dim("y", 7)
    out = [bool(a > 3), S.guards(), S.ranges()]
    out += [bool(a < 4), bool(a != 3), bool(a > 2), S.state()]  # all known from [4, oo]
    return out


def sc_guard_ne_two_symbols(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    return [bool(a == b), bool(a < b), S.state(), bool(a != b)]


def sc_static_from_range(S: Side) -> list[Any]:
    a = S.dim("x", 6)
    out = [bool(a >= 0), bool(a == 1), bool(a > 1), bool(a != 0), bool(a * 2 >= a),
           bool(a * a >= a), bool(a), bool(a + 1 > a)]
    return out + S.state()


def sc_int_specializes(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    out = [int(a), S.state(), str(a + b), str(a * 2), bool(a == 5)]
    return out + S.state()


def sc_index_and_float_specialize(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    return [len(range(a)), S.guards(), float(b), S.state(), str(a + b)]


def sc_chain_of_guards(S: Side) -> list[Any]:
    n = S.dim("x", 20)
    out = [bool(n > 8), bool(n < 100), bool(n > 5), bool(n <= 99), bool(n % 2 == 0)]
    return out + S.state()


def sc_unification(S: Side) -> list[Any]:
    a, b = S.dim("a", 6), S.dim("b", 6)
    out = [str(a), str(b), bool(a == b), str(a), str(b), str(a + b), str(b * 2)]
    out += [bool(a != 0), bool(a > 1), bool(a * 2 >= b), bool(a - b == 0)]
    return out + S.state()


def sc_unification_three(S: Side) -> list[Any]:
    a, b, c = S.dim("x", 4), S.dim("y", 4), S.dim("z", 4)
    out = [bool(a == b), bool(c == b), str(a + b + c), bool(a == c)]
    return out + S.state()


def sc_solve_linear(S: Side) -> list[Any]:
    a, b = S.dim("x", 8), S.dim("y", 4)
    out = [bool(a == 2 * b), str(a), str(b), bool(a + 1 == b + 5), str(a + b)]
    return out + S.state()


def sc_duck_and_static(S: Side) -> list[Any]:
    p, q, r = S.dim("p", 5, duck=True), S.dim("q", 5, 1, duck=True), S.dim("r", 6, duck=True)
    src = S._source("s", 0)
    out = [str(p), str(q), str(r), S.dim("o", 1), S.dim("z", 0),
           str(S.env.create_symbol(7, src, dynamic_dim=S.ss.DimDynamic.STATIC))]
    return out + S.state()


def sc_symbol_names(S: Side) -> list[Any]:
    names = [str(S.dim(n, 3 + i, d)) for i, n in enumerate("abcdefgh") for d in range(2)]
    return [*names, str(S.dim("x", 9, 0)), str(S.dim("x", 9, 0))]  # a collision probes on


def sc_statically_known(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    skt, skf = S.ss.statically_known_true, S.ss.statically_known_false
    out = [skt(a >= 2), skt(a > 2), skt(a * b >= a), skt(a == b), skt(True), skt(False),
           skf(a < 2), skf(a == 1), skf(a > 2), skf(False)]
    return out + S.state()


def sc_guard_size_oblivious_backed(S: Side) -> list[Any]:
    a = S.dim("x", 5)
    gso = S.ss.guard_size_oblivious
    return [gso(a == 1), gso(a > 3), gso(a >= 0), gso(True), S.state()]


def sc_unbacked_errors(S: Side) -> list[Any]:
    u = S.env.create_unbacked_symint()
    return [str(u), S.ranges(), _err(lambda: bool(u > 2)), _err(lambda: int(u)),
            _err(lambda: hash(u)), str(u + 1), str(u * 2 - 3), S.state()]


def sc_guard_or(S: Side) -> list[Any]:
    u, a = S.env.create_unbacked_symint(), S.dim("x", 5)
    gof, got = S.ss.guard_or_false, S.ss.guard_or_true
    out = [gof(u > 2), got(u > 2), gof(u == u), S.state()]
    out += [gof(a > 3), got(a < 3), gof(a == 1), S.state()]
    return out


def sc_check_unbacked(S: Side) -> list[Any]:
    u = S.env.create_unbacked_symint()
    S.lib._check(u >= 0)
    out = [S.state(), S.ss.statically_known_true(u >= 0), S.ss.guard_or_false(u == -1)]
    S.lib._check(u < 10)
    out += [S.state(), S.ss.statically_known_true(u <= 9), _err(lambda: bool(u > 3))]
    return out


def sc_check_is_size(S: Side) -> list[Any]:
    u = S.env.create_unbacked_symint()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        S.lib._check_is_size(u)
    gso = S.ss.guard_size_oblivious
    out = [[str(x.message) for x in w], [x.category.__name__ for x in w], S.state(),
           sorted(map(str, S.env.size_like)), gso(u == 0), gso(u >= 2), gso(u == 1)]
    S.lib._check(u == 5)
    return [*out, S.state(), str(u), str(u + 1)]


def sc_check_plain_bool(S: Side) -> list[Any]:
    return [_err(lambda: S.lib._check(True)), _err(lambda: S.lib._check(False)),
            _err(lambda: S.lib._check(1)), _err(lambda: S.lib._check(False, "m")),
            _err(lambda: S.lib._check(False, lambda: "custom text")),
            _err(lambda: S.lib._check_with(ValueError, False, lambda: "v"))]


def sc_check_backed_guards(S: Side) -> list[Any]:
    a = S.dim("x", 5)
    S.lib._check(a > 3)
    S.lib._check(a >= 0)
    return [S.state(), _err(lambda: S.lib._check(a > 7))]


def sc_required_storage_length(S: Side) -> list[Any]:
    from importlib import import_module
    crsl = import_module(f"{S.lib.__name__}._prims_common").compute_required_storage_length
    a, b = S.dim("x", 5), S.dim("y", 7)
    out = [crsl((10, 20), (20, 1), 0), crsl((1, 2, 3), (5, 7, 11), 0), crsl((20,), (1,), 20),
           crsl((0, 4), (4, 1), 3)]
    out += [str(crsl((a, 4), (4, 1), 0)), str(crsl((a, b), (b, 1), 2)),
            str(crsl((a, b), (1, a), 0))]
    return out + S.state()


def sc_free_symbols_and_subs(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    u = S.env.create_unbacked_symint()
    e = (a * b + 2 * a) // 2
    out = [sorted(map(str, S.ss.free_symbols(e))), sorted(map(str, S.ss.free_symbols([a, u, 3]))),
           S.ss.has_free_symbols(a), S.ss.has_free_symbols(3),
           sorted(map(str, S.ss.free_unbacked_symbols(a + u))),
           S.ss.is_concrete_int(4), S.ss.is_concrete_int(a), S.ss.is_symbolic(a),
           S.ss.is_symbolic(3), isinstance(a, int), isinstance(a > 2, bool)]
    expr = e.node.expr  # vLLM's piecewise backend: int(expr.subs({s: size ...}))
    out += [int(expr.subs({s: 16 for s in expr.free_symbols})), str(expr.subs({a.node.expr: 3}))]
    return out + S.state()


def sc_unbacked_bool_float(S: Side) -> list[Any]:
    f = S.env.create_unbacked_symfloat()
    b = S.env.create_unbacked_symbool()
    return [str(f), str(b), type(f).__name__, type(b).__name__, str(f * 2), S.ranges()]


def sc_hash_and_types(S: Side) -> list[Any]:
    a = S.dim("x", 5)
    return [_err(lambda: hash(a)), hash(a > 2) == hash(True), S.guards(),
            type(a).__name__, type(a / 2).__name__, type(a > 2).__name__,
            _err(lambda: round(a)), str(round(a))]


def sc_symbolic_sizes_vllm_ranges(S: Side) -> list[Any]:
    a = S.dim("x", 5)
    from importlib import import_module
    vr_cls = import_module(f"{S.lib.__name__}.utils._sympy.value_ranges").ValueRanges
    for s, r in list(S.env.var_to_range.items()):  # vLLM's backends.py: 0/1 sizes allowed
        if r.lower == 2:
            S.env.var_to_range[s] = vr_cls(0, r.upper)
    return [S.ranges(), bool(a >= 1), bool(a != 1), S.state()]


def sc_guards_on_compound_expressions(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    out = [bool(a // 2 > 1), bool(a % 2 == 0), bool(a * b > 20), bool((a + 1) // 2 == 3),
           bool(3 < a), bool(a * 2 == b), bool(a == 1), bool(2 * a == 7), bool(a + b > 100)]
    return out + S.state()


def sc_guards_on_floats(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    out = [bool(a / 2 > 2), bool(a / b < 1), bool(S.lib.sym_float(a) >= 4.5), bool(a * 0.5 > 1)]
    return out + S.state()


def sc_int_of_expression(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    out = [int(a + b), str(a), str(b), str(a * b), int(a * 2)]
    return out + S.state()


def sc_min_max_guards(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    out = [bool(S.lib.sym_max(a, 4) > 3), bool(S.lib.sym_min(a, b) > 4),
           bool(S.lib.sym_max(a, b) == 7)]
    return out + S.state()


def sc_unbacked_arith_and_checks(S: Side) -> list[Any]:
    u, v = S.env.create_unbacked_symint(), S.env.create_unbacked_symint()
    out: list[Any] = [str(u % 3), str(u // 2), str(u * v + 1), str(-u)]
    S.lib._check(u > 0)
    out += [S.state(), S.ss.guard_or_false(u == 0), S.ss.statically_known_true(u != 0),
            str(u % 3)]
    S.lib._check(u + v == 10)
    out += [S.state(), str(u + v)]
    return out


def sc_tensor_sizes_strides_offset(S: Side) -> list[Any]:
    D, T = S.ss.DimDynamic.DYNAMIC, S.ss.DimDynamic.STATIC
    U = S.ss.DimDynamic.UNBACKED
    out: list[Any] = []
    for name, t, dyn in [("x", S.lib.empty(5, 4), [D, T]), ("y", S.lib.empty(5, 4), [D, D]),
                         ("z", S.lib.empty(5, 4).t(), [D, D]),
                         ("w", S.lib.empty(6, 3, 2), [T, D, T]),
                         ("v", S.lib.empty(6, 1, 2), [D, D, D]), ("o", S.lib.empty(10)[2:], [D]),
                         ("p", S.lib.empty(6, 4)[:, :2], [D, T]),
                         ("q", S.lib.empty(3, 4), [T, T]), ("u", S.lib.empty(7, 4), [U, T])]:
        ctx = S.ss.StatelessSymbolicContext(dynamic_sizes=dyn)
        sizes, strides, offset = S.env.create_symbolic_sizes_strides_storage_offset(
            t, S.local(name), symbolic_context=ctx)
        out.append([[str(v) for v in sizes], [str(v) for v in strides], str(offset),
                    [type(v).__name__ for v in (*sizes, *strides, offset)],
                    [getattr(getattr(v, "node", None), "hint", v) for v in (*sizes, *strides)]])
    return [*out, S.ranges(), sorted(map(str, S.env.size_like))]


def sc_hints_and_overrides(S: Side) -> list[Any]:
    u, v = S.env.create_unbacked_symint(), S.env.create_unbacked_symint()
    w = S.env.create_unbacked_symint()
    S.lib._check(w <= 100)
    S.lib._check(w >= 0)
    a = S.dim("x", 5)
    S.env.var_to_hint_override[u.node.expr] = 64  # mark_unbacked(hint_override=64)
    out = [S.env.optimization_hint(e.node.expr, fallback=fb)
           for e in (u * 2, u + a, a * 3, v, v + u, w, w + a) for fb in (None, 8)]
    return [*out, str(S.env.size_hint((a * 3).node.expr)),
            S.env.size_hint(u.node.expr, allow_none=True),
            _err(lambda: S.env.size_hint(u.node.expr))]


def sc_python_protocols(S: Side) -> list[Any]:
    """What Python itself does with symbolic values: format, builtins max/min (guards),
    math.floor/ceil/trunc, round, sequence repetition, bool arithmetic, hashing."""
    a, b = S.dim("x", 5), S.dim("y", 7)
    probes: list[Callable[[], Any]] = [
        lambda: f"{a}", lambda: f"{a:>5}", lambda: repr([a, 3]), lambda: str(max(a, 3)),
        lambda: str(min(b, 100)), lambda: a in [1, 2], lambda: divmod(b, 2),
        lambda: str(round(a / 2)), lambda: str(math.floor(a)), lambda: str(math.ceil(a)),
        lambda: str(math.trunc(a)), lambda: len([0] * a), lambda: "abc"[:a],
        lambda: str(abs(-a)), lambda: str(+a), lambda: str(a ** 2 // 3),
        lambda: str(S.lib.sym_float(a) / 2), lambda: int(S.lib.sym_float(b) / 2),
        lambda: float(a / 2), lambda: str(a * True), lambda: str((a > 2) + 1),
        lambda: str(3.5 * a), lambda: hash(S.lib.sym_float(b)), lambda: a.as_integer_ratio(),
        lambda: a.bit_length(), lambda: str(a == 5.0), lambda: bool(a == 5.0)]
    return [*(_err(p) for p in probes), S.state()]


def sc_module_helpers(S: Side) -> list[Any]:
    a, b = S.dim("x", 5), S.dim("y", 7)
    u = S.env.create_unbacked_symint()
    ss = S.ss
    out = [ss.has_static_value(a), ss.has_static_value(3), ss.has_free_unbacked_symbols(a + u),
           ss.has_free_unbacked_symbols(a), ss.is_concrete_float(2.0),
           ss.is_concrete_float(S.lib.sym_float(a)), ss.is_nested_int(a),
           str(ss.sym_and(a > 2, b > 3, a < b)), str(ss.sym_or(a > 2, b > 3)),
           ss.guarding_hint_or_throw(a * b), _err(lambda: ss.guarding_hint_or_throw(u)),
           ss.optimization_hint(a), ss.optimization_hint(u, fallback=5),
           [str(x) for x in ss.create_contiguous([a, 4, b])], ss.guard_scalar(a > 2),
           ss.guard_scalar(b), S.guards()]
    S.lib._check(u == 4)
    return [*out, ss.has_static_value(u), S.state()]


def sc_hint_overrides_on_dims(S: Side) -> list[Any]:
    """mark_unbacked/mark_dynamic(hint_override=n) as Dynamo hands it to the ShapeEnv."""
    D, U, T = S.ss.DimDynamic.DYNAMIC, S.ss.DimDynamic.UNBACKED, S.ss.DimDynamic.STATIC
    out: list[Any] = []
    for name, size, stride, dyn, overrides in [("x", (7, 4), (4, 1), [U, T], {0: 64}),
                                               ("y", (7, 4), (4, 1), [D, T], {0: 16}),
                                               ("z", (3, 5), (5, 1), [D, D], {1: 9})]:
        ctx = S.ss.StatelessSymbolicContext(dynamic_sizes=dyn)
        sizes, strides, _ = S.env._create_symbolic_sizes_strides_storage_offset(
            size, stride, 0, [False, False], S.local(name), symbolic_context=ctx,
            hint_overrides=overrides)
        out.append([[str(v) for v in (*sizes, *strides)],
                    [getattr(getattr(v, "node", None), "hint", v) for v in (*sizes, *strides)],
                    [S.env.optimization_hint(v.node.expr) for v in sizes if hasattr(v, "node")]])
    return [*out, {str(k): v for k, v in S.env.var_to_hint_override.items()}, S.state()]


def sc_unbacked_dims_bounds_and_shape_ids(S: Side) -> list[Any]:
    """mark_unbacked(min=, max=, shape_id=): bounds become checks, a shared shape_id an
    equality check (and the later symbols are replaced by the first, being inputs)."""
    U, T = S.ss.DimDynamic.UNBACKED, S.ss.DimDynamic.STATIC
    out: list[Any] = []
    for name, bounds, ids in [("x", {0: (2, 64)}, {0: "tokens"}),
                              ("y", {0: (None, 100)}, {0: "tokens"}),
                              ("z", None, {1: "tokens"})]:
        ctx = S.ss.StatelessSymbolicContext(dynamic_sizes=[U, U] if name == "z" else [U, T],
                                            shape_ids=ids, unbacked_bounds=bounds)
        sizes, strides, _ = S.env._create_symbolic_sizes_strides_storage_offset(
            (7, 4), (4, 1), 0, [False, False], S.local(name), symbolic_context=ctx)
        out.append([str(v) for v in (*sizes, *strides)])
    return [*out, S.state()]


SCENARIOS = [v for k, v in sorted(globals().items()) if k.startswith("sc_")]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__[3:])
def test_same_as_torch(scenario: Callable[[Side], list[Any]]) -> None:
    theirs = scenario(_torch_side())
    ours = scenario(_fake_side())
    assert ours == theirs


def test_enough_scenarios() -> None:
    assert len(SCENARIOS) >= 25


# -- random programs -------------------------------------------------------------------------
def _random_program(S: Side, seed: int) -> list[Any]:
    """A seeded program: random expressions over two backed sizes, constants and an unbacked
    u0 (sometimes torch._check'ed), compared, branched on (bool), guard_or_false'd and
    statically_known_true'd; what it saw and the ShapeEnv's state after."""
    rng = random.Random(seed)
    a, b = S.dim("x", 6), S.dim("y", 9)
    u = S.env.create_unbacked_symint()

    def nonzero(y: Any) -> Any:
        return max(y, 1) if isinstance(y, int) else y

    def expr(d: int) -> Any:
        if d == 0:
            leaf = rng.choice(["a", "b", "n", "a"])
            return a if leaf == "a" else b if leaf == "b" else rng.choice([1, 2, 3, 4, 7])
        op = rng.choice(["+", "-", "*", "//", "%", "max", "min", "neg", "sq", "div", "u"])
        x, y = expr(d - 1), expr(d - 1)
        ops: dict[str, Callable[[], Any]] = {
            "+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
            "//": lambda: x // nonzero(y), "%": lambda: x % nonzero(y),
            "max": lambda: S.lib.sym_max(x, y), "min": lambda: S.lib.sym_min(x, y),
            "neg": lambda: -x, "sq": lambda: x * x,
            "div": lambda: math.floor(x / nonzero(y)), "u": lambda: x + u}
        return ops[op]()
    out: list[Any] = []
    try:
        if rng.random() < 0.5:
            S.lib._check(u >= rng.choice([0, 1, 2]))
        for _ in range(4):
            v = expr(rng.choice([1, 2, 3]))
            w = expr(1)
            cond = getattr(operator, rng.choice(["gt", "eq", "le", "ne"]))(v, w)
            out += [str(v), getattr(getattr(v, "node", None), "hint", v), str(cond),
                    _err(functools.partial(bool, cond)),
                    _err(functools.partial(S.ss.guard_or_false, cond)),
                    _err(functools.partial(S.ss.statically_known_true, cond))]
        out.append(S.state())
    except Exception as e:
        out.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return out


@pytest.mark.parametrize("first", range(0, 60, 20))
def test_random_programs_same_as_torch(first: int) -> None:
    for seed in range(first, first + 20):
        assert _random_program(_fake_side(), seed) == _random_program(_torch_side(), seed), seed


def _random_unification_program(S: Side, seed: int) -> list[Any]:
    """A seeded program over three sizes with small, often equal hints: linear expressions
    (and float scalings) compared, mostly for equality, branched on, sometimes int()'ed, so
    that replacements chain (a -> b -> 8) and narrow each other's ranges."""
    rng = random.Random(seed)
    syms = [S.dim(n, rng.choice([4, 6, 8, 12, 3])) for n in "xyz"]

    def lin(depth: int) -> Any:
        e = rng.choice(syms)
        for _ in range(depth):
            op = rng.choice(["+c", "*c", "+s", "-s", "//c", "f"])
            if op == "+c":
                e = e + rng.choice([1, 2, -1, 4])
            elif op == "*c":
                e = e * rng.choice([2, 3])
            elif op == "+s":
                e = e + rng.choice(syms)
            elif op == "-s":
                e = e - rng.choice(syms)
            elif op == "//c":
                e = e // rng.choice([2, 3])
            else:
                e = S.lib.sym_float(e) * rng.choice([0.5, 2.0, 1.5])
        return e
    out: list[Any] = []
    try:
        for _ in range(6):
            v, w = lin(rng.choice([0, 1, 2])), lin(rng.choice([0, 1]))
            cond = getattr(operator, rng.choice(["eq", "eq", "ne", "lt", "ge"]))(v, w)
            out += [str(v), str(w), str(cond), _err(functools.partial(bool, cond))]
            if rng.random() < 0.2:
                out.append(_err(functools.partial(int, rng.choice(syms))))
            out.append([str(x) for x in syms])
        out.append(S.state())
    except Exception as e:
        out.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return out


@pytest.mark.parametrize("first", range(0, 60, 20))
def test_random_unification_same_as_torch(first: int) -> None:
    for seed in range(first, first + 20):
        assert _random_unification_program(_fake_side(), seed) == \
            _random_unification_program(_torch_side(), seed), seed


def _random_unbacked_program(S: Side, seed: int) -> list[Any]:
    """A seeded program over three unbacked symbols and a size: conditions made of their
    linear expressions (// % and max included) go to torch._check, _check_is_size,
    guard_or_false/true, guard_size_oblivious, statically_known_true or bool."""
    rng = random.Random(seed)
    us = [S.env.create_unbacked_symint() for _ in range(3)]
    pool = [*us, S.dim("x", 6)]

    def lin(depth: int) -> Any:
        e = rng.choice(pool)
        for _ in range(depth):
            op = rng.choice(["+c", "*c", "+s", "-s", "//c", "%c", "max"])
            if op == "+c":
                e = e + rng.choice([1, 2, -1, 4])
            elif op == "*c":
                e = e * rng.choice([2, 3, -1])
            elif op == "+s":
                e = e + rng.choice(pool)
            elif op == "-s":
                e = e - rng.choice(pool)
            elif op == "//c":
                e = e // rng.choice([2, 3])
            elif op == "%c":
                e = e % rng.choice([2, 3])
            else:
                e = S.lib.sym_max(e, rng.choice([0, 1, 2]))
        return e
    uses: dict[str, Callable[[Any], Any]] = {
        "check": S.lib._check, "is_size": lambda c: S.lib._check_is_size(rng.choice(us)),
        "gof": S.ss.guard_or_false, "got": S.ss.guard_or_true,
        "gso": S.ss.guard_size_oblivious, "skt": S.ss.statically_known_true, "bool": bool}
    out: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # _check_is_size's deprecation
        for _ in range(8):
            use = uses[rng.choice(["check", "check", "is_size", "gof", "got", "gso", "skt",
                                   "bool"])]
            v, w = lin(rng.choice([0, 1, 2])), rng.choice([lin(0), rng.choice([0, 1, 2, 5])])
            cond = getattr(operator, rng.choice(["eq", "ne", "lt", "le", "ge", "gt"]))(v, w)
            out += [str(cond), _err(functools.partial(use, cond)), [str(x) for x in pool]]
    return [*out, S.state(), sorted(map(str, S.env.size_like))]


@pytest.mark.parametrize("first", range(0, 60, 20))
def test_random_unbacked_same_as_torch(first: int) -> None:
    for seed in range(first, first + 20):
        assert _random_unbacked_program(_fake_side(), seed) == \
            _random_unbacked_program(_torch_side(), seed), seed


def _random_float_program(S: Side, seed: int) -> list[Any]:
    """A seeded program mixing ints and floats: / (int and float true division), floor,
    ceil, round, sym_int, sym_max, ** (a SymFloat base is checked non-negative), //."""
    rng = random.Random(seed)
    a, b = S.dim("x", 6), S.dim("y", 9)

    def nonzero(y: Any) -> Any:
        return 1 if isinstance(y, (int, float)) and y == 0 else y

    def ex(depth: int) -> Any:
        if depth == 0:
            return rng.choice([a, b, S.lib.sym_float(a), rng.choice([0.5, 2.0, 3, 1.25])])
        x, y = ex(depth - 1), ex(depth - 1)
        op = rng.choice(["+", "-", "*", "/", "floor", "ceil", "round", "int", "max", "pow",
                         "//"])
        if op in ("floor", "ceil"):
            return x if isinstance(x, int) else getattr(math, op)(x)
        ops: dict[str, Callable[[], Any]] = {
            "+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
            "/": lambda: x / nonzero(y), "round": lambda: round(x),
            "int": lambda: S.lib.sym_int(x), "max": lambda: S.lib.sym_max(x, y),
            "//": lambda: x // nonzero(y), "pow": lambda: x ** 2}
        return ops[op]()
    out: list[Any] = []
    for _ in range(5):
        try:
            v, w = ex(rng.choice([1, 2])), ex(1)
            cond = getattr(operator, rng.choice(["lt", "ge", "eq", "ne"]))(v, w)
            out += [str(v), type(v).__name__, getattr(getattr(v, "node", None), "hint", v),
                    str(cond), _err(functools.partial(bool, cond))]
        except Exception as e:
            out.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return [*out, S.state()]


@pytest.mark.parametrize("first", range(0, 60, 20))
def test_random_float_programs_same_as_torch(first: int) -> None:
    for seed in range(first, first + 20):
        assert _random_float_program(_fake_side(), seed) == \
            _random_float_program(_torch_side(), seed), seed


# -- guards checked against new sizes ------------------------------------------------------
@pytest.mark.parametrize("sizes", [(9, 9), (20, 20), (5, 5), (9, 10), (1, 1), (100, 100),
                                   (2, 2), (49, 49), (50, 50)])
def test_evaluate_guards_for_args_like_torch(sizes: tuple[int, int]) -> None:
    """ShapeEnv.evaluate_guards_for_args on SymInt placeholders after `n > 8`, `n == m`
    (unification) and `n < 50`: the same verdict as torch's at new sizes (ranges included:
    1 is below a backed symbol's [2, int_oo])."""
    verdicts = []
    for side in (_torch_side(), _fake_side()):
        n, m = side.dim("x", 12), side.dim("y", 12)
        bool(n > 8)
        bool(n == m)
        bool(n < 50)
        verdicts.append(side.env.evaluate_guards_for_args([n, m], list(sizes)))
    assert verdicts[0] == verdicts[1]


def test_guards_hold_for_tensor_placeholders() -> None:
    """Binding reads symbols from a tensor-like placeholder's shape, strides and offset."""
    S = _fake_side()
    n = S.dim("x", 6)

    class Fake:
        def __init__(self, shape: tuple[Any, ...], stride: tuple[Any, ...]) -> None:
            self.shape, self._stride = shape, stride

        def stride(self) -> tuple[Any, ...]:
            return self._stride

        def storage_offset(self) -> int:
            return 0
    bool(n > 4)
    ph = Fake((n, 3), (3, 1))
    assert S.env.evaluate_guards_for_args([ph], [Fake((7, 3), (3, 1))])
    assert not S.env.evaluate_guards_for_args([ph], [Fake((4, 3), (3, 1))])
    assert not S.env.evaluate_guards_for_args([ph], [Fake((1, 3), (3, 1))])  # range [2, oo]


# -- the tracer's hook ---------------------------------------------------------------------
def test_tracing_hook_sees_every_new_node() -> None:
    seen: list[tuple[str, tuple[str, ...], str]] = []

    def hook(op: str, inputs: tuple[Any, ...], out: Any) -> str:
        seen.append((op, tuple(str(i) for i in inputs), str(out)))
        return f"node{len(seen)}"
    S = _fake_side()
    a = S.dim("x", 5)
    previous = ft_sym_node.set_tracing_hook(hook)
    try:
        c = (a + 1) * 2
        d = a > 3
    finally:
        assert ft_sym_node.set_tracing_hook(previous) is hook
    assert seen == [("add", ("s77", "1"), "s77 + 1"), ("mul", ("s77 + 1", "2"), "2*s77 + 2"),
                    ("gt", ("s77", "3"), "s77 > 3")]
    assert c.node.fx_node == "node2" and d.node.fx_node == "node3"
    _ = a - 1
    assert len(seen) == 3  # the hook is gone


@pytest.mark.parametrize("op", ["and_", "or_", "xor"])
def test_bitwise_ops_refuse_by_name(op: str) -> None:
    """torch builds BitwiseFn_* expressions; fake_torch says it does not emulate them."""
    a = _fake_side().dim("x", 5)
    with pytest.raises(NotImplementedError, match=r"SymInt . int \(torch's BitwiseFn_bitwise_"):
        getattr(operator, op)(a, 3)


def test_import_does_not_load_sympy() -> None:
    code = "import sys, fake_torch; print('sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_replace_remembers_its_results_only_while_the_replacements_stand() -> None:
    """ShapeEnv.replace keeps its answers until a replacement is added or re-pointed: each
    answer is what the uncached walk gives, an unchanged expression comes back as itself,
    and a chain grown later (a -> b, then b -> 8) is seen at once."""
    import sympy

    env = ft_ss.ShapeEnv()
    a, b, c = (sympy.Symbol(n, integer=True, positive=True) for n in ("s0", "s1", "s2"))
    env._set_replacement(a, b, "test")
    for expr in (a + 1, 2 * a * c, c, sympy.Integer(4), sympy.Eq(a, 1)):
        first = env.replace(expr)
        assert first == env._replace(expr)
        assert env.replace(expr) == first  # remembered
        if first == expr:
            assert env.replace(expr) is expr
    assert env.replace(a + 1) == b + 1
    env._set_replacement(b, sympy.Integer(8), "test")  # the chain grows: a -> b -> 8
    assert env.replace(a + 1) == 9 and env.replace(2 * a * c) == 16 * c
    assert env.replace(c + b) == c + 8
