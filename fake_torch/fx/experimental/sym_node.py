"""torch.fx.experimental.sym_node: SymNode, the value behind a SymInt / SymFloat / SymBool.

A node holds a sympy expression over the ShapeEnv's symbols, the ShapeEnv, the Python type
it stands for (int, float, bool) and its hint (the value with today's sizes; None for an
unbacked symbol). Arithmetic on nodes builds new expressions; asking for a concrete value
(`guard_bool`, `guard_int`) goes to ShapeEnv.evaluate_expr, which records a guard.

The tracer above hears of every new node through `set_tracing_hook` (the fx node it returns
is kept as the new node's `fx_node`), so this module imports nothing from the tracer. sympy
is imported on first use: building a node needs a ShapeEnv, which needs sympy anyway."""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fake_torch import _sym

if TYPE_CHECKING:
    from fake_torch.fx.experimental.symbolic_shapes import ShapeEnv

__all__ = ["SymNode", "get_tracing_hook", "set_display_hook", "set_tracing_hook", "to_node",
           "wrap_node"]

# hook(op_name, inputs, result) -> the fx node standing for `result` (or None); op_name is
# the SymNode method ("add", "sym_max", "eq", ...), inputs the operand SymNodes
TracingHook = Callable[[str, tuple["SymNode", ...], "SymNode"], Any]
_tracing_hook: TracingHook | None = None


def set_tracing_hook(hook: TracingHook | None) -> TracingHook | None:
    """Install `hook`, called whenever arithmetic makes a new node; returns the previous one
    (so a tracer can restore it when it stops)."""
    global _tracing_hook
    previous, _tracing_hook = _tracing_hook, hook
    return previous


def get_tracing_hook() -> TracingHook | None:
    return _tracing_hook


# hook(node) -> the value str() shows instead of the expression (or None): a tracer's, while
# the traced code's print runs after a graph break (the numbers have values then, as the
# ints torch's resumed code is given)
_display_hook: Callable[[SymNode], Any] | None = None


def set_display_hook(hook: Callable[[SymNode], Any] | None) -> Callable[[SymNode], Any] | None:
    """Install `hook` for str()/repr() of symbolic numbers; returns the previous one."""
    global _display_hook
    previous, _display_hook = _display_hook, hook
    return previous


class SymNode:
    """An expression, its ShapeEnv, its Python type and its hint (see the module's text)."""

    def __init__(self, expr: Any, shape_env: ShapeEnv, pytype: type, hint: Any,
                 constant: int | float | bool | None = None, fx_node: Any = None) -> None:
        self._expr = expr
        self.shape_env = shape_env
        self.pytype = pytype
        self._hint = hint
        self.constant = constant
        self.fx_node = fx_node

    # -- what it is ------------------------------------------------------------------------
    @property
    def expr(self) -> Any:
        """The expression with the ShapeEnv's replacements applied (unified symbols print as
        their canonical one)."""
        return self.shape_env.replace(self._expr)

    @property
    def hint(self) -> Any:
        return self._hint

    def has_hint(self) -> bool:
        return self._hint is not None

    def is_int(self) -> bool:
        return self.pytype is int

    def is_float(self) -> bool:
        return self.pytype is float

    def is_bool(self) -> bool:
        return self.pytype is bool

    def is_nested_int(self) -> bool:
        return False

    def is_symbolic(self) -> bool:
        return True

    def is_constant(self) -> bool:
        return False

    def maybe_as_int(self) -> int | None:
        e = self.expr
        return int(e) if e.is_Integer else None

    def maybe_as_float(self) -> float | None:
        e = self.expr
        return float(e) if e.is_Float else None

    def maybe_as_bool(self) -> bool | None:
        import sympy
        e = self.expr
        return True if e is sympy.true else False if e is sympy.false else None

    def wrap_int(self, num: int) -> SymNode:
        import sympy
        return SymNode(sympy.Integer(num), self.shape_env, int, num, constant=num, fx_node=num)

    def wrap_float(self, num: float) -> SymNode:
        import sympy
        return SymNode(sympy.Float(num), self.shape_env, float, num, constant=num,
                       fx_node=num)

    def wrap_bool(self, num: bool) -> SymNode:
        import sympy
        return SymNode(sympy.true if num else sympy.false, self.shape_env, bool, num,
                       constant=num, fx_node=num)

    def clone(self) -> SymNode:
        return self

    def str(self) -> builtins.str:
        if _display_hook is not None:
            shown = _display_hook(self)
            if shown is not None:
                return f"{shown}"
        return f"{self.expr}"

    def __str__(self) -> builtins.str:
        return self.str()

    def __repr__(self) -> builtins.str:
        return self.str()

    # -- evaluation (guards) ---------------------------------------------------------------
    def evaluate(self, size_oblivious: bool = False) -> Any:
        return self.shape_env.evaluate_sym_node(self, size_oblivious)

    def guard_int(self, file: builtins.str = "", line: int = 0) -> int:
        r = self.evaluate()
        try:
            return int(r)
        except Exception as e:
            raise RuntimeError(f"expected int, got {r}") from e

    def guard_float(self, file: builtins.str = "", line: int = 0) -> float:
        return float(self.evaluate())

    def guard_bool(self, file: builtins.str = "", line: int = 0) -> bool:
        import sympy
        r = self.evaluate()
        return bool(r is sympy.true or r is True)

    def int_(self) -> int:
        return self.guard_int()

    def bool_(self) -> bool:
        return self.guard_bool()

    def expect_true(self, file: builtins.str = "", line: int = 0) -> bool:
        """A check (torch._check): guards when the expression has a hint and no unbacked
        symbol; otherwise asserts it at run time and learns from it."""
        from fake_torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
        if self.has_hint() and not free_unbacked_symbols(self.expr):
            return self.guard_bool(file, line)
        return self.shape_env.guard_or_defer_runtime_assert(
            self.expr, f"{file}:{line}", fx_node=self.fx_node)

    def statically_known_true(self, file: builtins.str = "", line: int = 0) -> bool:
        import sympy
        r = self.shape_env._maybe_evaluate_static(self.expr)
        return r is sympy.true

    def guard_size_oblivious(self, file: builtins.str = "", line: int = 0) -> bool:
        import sympy
        r = self.shape_env.evaluate_expr(self.expr, self.hint, size_oblivious=True)
        return bool(r is sympy.true or r is True)

    def guard_or_false(self, file: builtins.str = "", line: int = 0) -> bool:
        import sympy
        r = self.shape_env.evaluate_expr(self.expr, self.hint, fallback_value=False)
        return bool(r is sympy.true or r is True)

    def guard_or_true(self, file: builtins.str = "", line: int = 0) -> bool:
        import sympy
        r = self.shape_env.evaluate_expr(self.expr, self.hint, fallback_value=True)
        return bool(r is sympy.true or r is True)

    # -- arithmetic: one method per operation (torch's SymNode method names) --------------
    def _new(self, op: builtins.str, inputs: tuple[SymNode, ...], expr: Any, pytype: type,
             hint: Any) -> SymNode:
        node = SymNode(expr, self.shape_env, pytype, hint)
        if _tracing_hook is not None:
            node.fx_node = _tracing_hook(op, inputs, node)
        return node

    def _binary(self, op: builtins.str, other: SymNode, build: Callable[[Any, Any], Any],
                py: Callable[[Any, Any], Any], pytype: type | None = None,
                pure: bool = False) -> SymNode:
        """`pure`: `build` is a sympy constructor whose result depends on its operands only
        (a relation, Max, Min): built once per operands (see `_built`)."""
        hint = None
        if self.hint is not None and other.hint is not None:
            hint = py(self.hint, other.hint)
        if pytype is None:
            pytype = float if float in (self.pytype, other.pytype) else self.pytype
        if hint is not None:
            hint = pytype(hint)
        a, b = self.expr, other.expr
        expr = _build_once(build, a, b) if pure else build(a, b)
        return self._new(op, (self, other), expr, pytype, hint)

    def _unary(self, op: builtins.str, build: Callable[[Any], Any], py: Callable[[Any], Any],
               pytype: type | None = None) -> SymNode:
        pytype = pytype or self.pytype
        hint = None if self.hint is None else pytype(py(self.hint))
        return self._new(op, (self,), build(self.expr), pytype, hint)

    def add(self, other: SymNode) -> SymNode:
        return self._binary("add", other, operator.add, operator.add)

    def sub(self, other: SymNode) -> SymNode:
        return self._binary("sub", other, operator.sub, operator.sub)

    def mul(self, other: SymNode) -> SymNode:
        return self._binary("mul", other, operator.mul, operator.mul)

    def mod(self, other: SymNode) -> SymNode:
        from fake_torch.utils._sympy.functions import Mod, PythonMod

        def build(a: Any, b: Any) -> Any:
            # Mod (non-negative operands) when the ranges show it, else Python's %
            env = self.shape_env
            if (a.is_nonnegative or env.bound_sympy(a).lower >= 0) and \
                    (b.is_nonnegative or env.bound_sympy(b).lower >= 0):
                return Mod(a, b)
            return PythonMod(a, b)
        return self._binary("mod", other, build, operator.mod)

    def int_floordiv(self, other: SymNode) -> SymNode:
        from fake_torch.utils._sympy.functions import FloorDiv
        return self._binary("int_floordiv", other, FloorDiv, operator.floordiv, int)

    def int_truediv(self, other: SymNode) -> SymNode:
        from fake_torch.utils._sympy.functions import IntTrueDiv
        return self._binary("int_truediv", other, IntTrueDiv, operator.truediv, float)

    def float_truediv(self, other: SymNode) -> SymNode:
        from fake_torch.utils._sympy.functions import FloatTrueDiv
        return self._binary("float_truediv", other, FloatTrueDiv, operator.truediv, float)

    def pow_by_natural(self, other: SymNode) -> SymNode:
        from fake_torch.utils._sympy.functions import PowByNatural
        return self._binary("pow_by_natural", other, PowByNatural, operator.pow, int)

    def float_pow(self, other: SymNode) -> SymNode:
        from fake_torch.utils._sympy.functions import FloatPow
        return self._binary("float_pow", other, FloatPow, operator.pow, float)

    def lshift(self, other: SymNode) -> SymNode:
        import sympy
        return self._binary("lshift", other, lambda a, b: a * sympy.Pow(2, b),
                            operator.lshift, int)

    def rshift(self, other: SymNode) -> SymNode:
        import sympy

        from fake_torch.utils._sympy.functions import FloorDiv
        return self._binary("rshift", other, lambda a, b: FloorDiv(a, sympy.Pow(2, b)),
                            operator.rshift, int)

    def sym_min(self, other: SymNode) -> SymNode:
        from fake_torch.utils._sympy.functions import Min
        return self._binary("sym_min", other, Min, min, pure=True)

    def sym_max(self, other: SymNode) -> SymNode:
        from fake_torch.utils._sympy.functions import Max
        return self._binary("sym_max", other, Max, max, pure=True)

    def sym_and(self, other: SymNode) -> SymNode:
        import sympy
        return self._binary("sym_and", other, sympy.And, lambda a, b: a and b, bool)

    def sym_or(self, other: SymNode) -> SymNode:
        import sympy
        return self._binary("sym_or", other, sympy.Or, lambda a, b: a or b, bool)

    def _compare(self, op: builtins.str, other: SymNode, rel: Callable[[Any, Any], Any]) -> SymNode:
        return self._binary(op, other, rel, getattr(operator, op), bool, pure=True)

    def eq(self, other: SymNode) -> SymNode:
        import sympy
        return self._compare("eq", other, sympy.Eq)

    def ne(self, other: SymNode) -> SymNode:
        import sympy
        return self._compare("ne", other, sympy.Ne)

    def lt(self, other: SymNode) -> SymNode:
        import sympy
        return self._compare("lt", other, sympy.Lt)

    def le(self, other: SymNode) -> SymNode:
        import sympy
        return self._compare("le", other, sympy.Le)

    def gt(self, other: SymNode) -> SymNode:
        import sympy
        return self._compare("gt", other, sympy.Gt)

    def ge(self, other: SymNode) -> SymNode:
        import sympy
        return self._compare("ge", other, sympy.Ge)

    def neg(self) -> SymNode:
        return self._unary("neg", operator.neg, operator.neg)

    def abs(self) -> SymNode:
        import sympy
        return self._unary("abs", sympy.Abs, abs)

    def sym_not(self) -> SymNode:
        import sympy
        return self._unary("sym_not", sympy.Not, operator.not_, bool)

    def sym_float(self) -> SymNode:
        from fake_torch.utils._sympy.functions import ToFloat
        return self._unary("sym_float", ToFloat, float, float)

    def sym_int(self) -> SymNode:
        from fake_torch.utils._sympy.functions import TruncToInt
        return self._unary("sym_int", TruncToInt, math.trunc, int)

    def trunc(self) -> SymNode:
        from fake_torch.utils._sympy.functions import TruncToInt
        return self._unary("trunc", TruncToInt, math.trunc, int)

    def floor(self) -> SymNode:
        """math.floor: the floor divisions inside are first guarded exact, as in torch
        (Eq(Mod(a, b), 0) evaluated, recording its guard)."""
        from fake_torch.utils._sympy.functions import FloorToInt
        simplified = self.shape_env._simplify_floor_div(self.expr)
        return self._unary("floor", lambda _: FloorToInt(simplified), math.floor, int)

    def round(self, ndigits: int | None = None) -> SymNode:
        if ndigits is not None:
            raise NotImplementedError("round(SymFloat, ndigits) (torch's RoundDecimal) is not "
                                      "emulated by fake_torch")
        from fake_torch.utils._sympy.functions import RoundToInt
        return self._unary("round", RoundToInt, round, int)

    def ceil(self) -> SymNode:
        from fake_torch.utils._sympy.functions import CeilToInt
        return self._unary("ceil", CeilToInt, math.ceil, int)

    def sym_sum(self, args: tuple[SymNode, ...]) -> SymNode:
        """One flat sum of the nodes' expressions."""
        import sympy
        hints = [a.hint for a in args]
        hint = None if any(h is None for h in hints) else sum(hints)
        return self._new("sym_sum", args, sympy.Add(*(a.expr for a in args)), int, hint)

    def sym_ite(self, then_node: SymNode, else_node: SymNode) -> SymNode:
        import sympy
        hint = None if self.hint is None else (then_node.hint if self.hint else else_node.hint)
        expr = sympy.Piecewise((then_node.expr, self.expr), (else_node.expr, True))
        return self._new("sym_ite", (self, then_node, else_node), expr, then_node.pytype,
                         hint)


# (build, each operand's type and value) -> build(a, b), for the pure builds of `_binary`: a
# sympy relation evaluates its operands (tens of microseconds), and a trace asks the same few
# again and again (every layer of a model compares the same sizes: 3.5k Eq builds, 9 distinct,
# in the 32-layer capture bench's compile). sympy expressions are immutable and compare by
# structure; the types are part of the key (a dict takes 2 and 2.0 for one key, sympy does
# not). Built with sympy's evaluation on only (`evaluate(False)` builds are not remembered).
_built: dict[tuple[Any, ...], Any] = {}
_BUILT_LIMIT = 4096  # distinct builds remembered: then start over


def _build_once(build: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    import sympy  # (a package import: no lookup of a module's __path__, as `from` makes)

    if not sympy.core.parameters.global_parameters.evaluate:
        return build(a, b)
    key = (build, type(a), a, type(b), b)
    try:
        return _built[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable operand: built every time
        return build(a, b)
    if len(_built) >= _BUILT_LIMIT:
        _built.clear()
    expr = _built[key] = build(a, b)
    return expr


def to_node(self: SymNode, num: Any) -> SymNode | Any:
    """A SymNode for `num` (a SymInt/SymFloat/SymBool's node, or a constant wrapped);
    NotImplemented for anything else."""
    # (_sym's classes through the module: a `from` import in a function asks the module for
    # `__path__` at every call, and fake_torch modules answer a missing name in Python)
    if isinstance(num, (_sym.SymInt, _sym.SymFloat, _sym.SymBool)):
        return num.node
    if type(num) is bool:
        return self.wrap_bool(num)
    if type(num) is int:
        return self.wrap_int(num)
    if type(num) is float:
        return self.wrap_float(num)
    return NotImplemented


def wrap_node(x: SymNode) -> Any:
    """The user-facing value of a node: its constant, or a SymInt / SymFloat / SymBool."""
    if x.constant is not None:
        return x.constant
    if x.is_int():
        return _sym.SymInt(x)
    if x.is_float():
        return _sym.SymFloat(x)
    if x.is_bool():
        return _sym.SymBool(x)
    raise AssertionError(f"unrecognized return type {x.pytype}")


_sym.wrap_node, _sym.to_node = wrap_node, to_node  # what torch.SymInt's operators use
