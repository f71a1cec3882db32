"""torch.fx.experimental.symbolic_shapes: the ShapeEnv (symbols, their hints and ranges, the
guards Python's branching records, replacements from unification) and the questions asked of
possibly-symbolic values (statically_known_true, guard_size_oblivious, guard_or_false, ...).

Symbols are named as torch 2.13 names them: `s` + sha256(source name) % 100, probing upwards
on collision (`L['x'].size()[0]` gives s77); unbacked ones `u0, u1, ...` (floats `zuf0`).
A backed int symbol has range [2, int_oo] (hints 0 and 1 specialize to constants); an
unbacked one [-int_oo, int_oo], narrowed by torch._check / _check_is_size.

Evaluating an expression (bool of a SymBool, int of a SymInt) first tries to decide it from
the ranges alone (`s77 >= 0` needs no guard); else it uses the hint and records the guard
(`s77 > 8`, `Eq(s77, 5)`), learning from it: a narrower range, or a replacement for `Eq`.

sympy is imported inside the functions that need it, so importing this module (which
`import fake_torch` does not do) stays cheap. A data-dependent question (no hint) raises
GuardOnDataDependentSymNode, unless `data_dependent_hook` is set: fake_torch's tracer sets it
to break the graph there, after which the unbacked symbols have values.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import sys
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any

from fake_torch import _checks
from fake_torch._sym import SymBool, SymFloat, SymInt
from fake_torch.fx.experimental.sym_node import SymNode

__all__ = [
    "DimDynamic", "GuardOnDataDependentSymNode", "RuntimeAssert", "ShapeEnv", "ShapeGuard",
    "StatelessSymbolicContext",
    "canonicalize_bool_expr", "create_contiguous", "expect_true", "free_symbols",
    "free_unbacked_symbols", "guard_bool", "guard_float", "guard_int", "guard_or_false",
    "guard_or_true", "guard_scalar", "guard_size_oblivious", "guarding_hint_or_throw",
    "has_free_symbols", "has_free_unbacked_symbols", "has_static_value", "is_concrete_bool",
    "is_concrete_float", "is_concrete_int", "is_nested_int", "is_symbolic",
    "optimization_hint", "statically_known_false", "statically_known_true", "sym_and",
    "sym_eq", "sym_or",
]

SymTypes = (SymInt, SymFloat, SymBool)
_REPLACED_LIMIT = 4096  # ShapeEnv.replace's remembered expressions: then it starts over


class DimDynamic(Enum):
    """How create_symbol treats a dimension (torch's values)."""

    DYNAMIC = 0
    DUCK = 1
    STATIC = 2
    UNBACKED = 3
    INFER_STRIDE = 4


class GuardOnDataDependentSymNode(RuntimeError):
    """Python needed the value of an expression over unbacked symbols (no hint)."""

    cond: Any

    def __init__(self, cond: Any, *args: Any) -> None:
        super().__init__(*args)
        self.cond = cond


class ConstraintViolationError(RuntimeError):
    """A dim marked dynamic (mark_dynamic) that the traced code specialised to a constant."""


@dataclasses.dataclass(frozen=True)
class ShapeGuard:
    """A recorded guard: `expr` (a sympy boolean) must hold for the graph to be reused."""

    expr: Any
    sloc: str
    size_oblivious: bool


@dataclasses.dataclass(frozen=True)
class RuntimeAssert:
    """A condition on unbacked symbols, checked when the graph runs (torch._check)."""

    expr: Any
    msg: str = dataclasses.field(repr=False)
    stack: str = dataclasses.field(repr=False, default="")


def _source_name(source: Any) -> str:
    if isinstance(source, str):
        return source
    name = source.name
    return name() if callable(name) else str(name)


def _user_sloc() -> str:
    """file:line of the first frame outside fake_torch (where the guard came from)."""
    f = sys._getframe(1)
    while f is not None and "/fake_torch/" in f.f_code.co_filename:
        f = f.f_back  # type: ignore[assignment]
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else ""


def _is_unbacked(s: Any) -> bool:
    return bool(s.name.startswith(("u", "zuf")))


def canonicalize_bool_expr(expr: Any) -> Any:
    """A relation as `lhs < / <= / == / != rhs` with Gt/Ge turned round, every term moved to
    the side where it is positive and integer coefficients reduced (so equal conditions
    compare equal: `u0 >= 0` is `0 <= u0`)."""
    import sympy
    if isinstance(expr, (sympy.And, sympy.Or)):
        return type(expr)(*map(canonicalize_bool_expr, expr.args))
    if isinstance(expr, sympy.Not):
        return canonicalize_bool_expr(sympy.simplify_logic(expr)) \
            if not isinstance(expr.args[0], sympy.Rel) else \
            canonicalize_bool_expr(expr.args[0].negated)
    if not isinstance(expr, sympy.Rel):
        return expr
    flip = {sympy.StrictGreaterThan: sympy.StrictLessThan, sympy.GreaterThan: sympy.LessThan}
    if type(expr) in flip:
        diff, cls = expr.lhs - expr.rhs, flip[type(expr)]
    else:
        diff, cls = expr.rhs - expr.lhs, type(expr)
    diff = sympy.expand(diff)
    terms = sympy.Add.make_args(diff)
    content = 0
    for t in terms:
        c = sympy.Mul.make_args(t)[0]
        content = int(sympy.gcd(content, abs(c) if c.is_Integer else 1))
    if content > 1:
        terms = tuple(t / content for t in terms)

    def negative(t: Any) -> bool:
        c = sympy.Mul.make_args(t)[0]
        return bool(c.is_Number and c.is_negative)
    lhs = sympy.Add(*(-t for t in terms if negative(t)))
    rhs = sympy.Add(*(t for t in terms if not negative(t)))
    return cls(lhs, rhs, evaluate=False)


@dataclasses.dataclass(frozen=True)
class StatelessSymbolicContext:
    """How each dim of a tensor becomes symbolic: `dynamic_sizes[i]` (a DimDynamic);
    `dynamic_strides` default INFER_STRIDE (strides as products of the sizes when they are
    contiguous, else their own symbols)."""

    dynamic_sizes: Sequence[DimDynamic]
    dynamic_strides: Sequence[DimDynamic] | None = None
    constraint_sizes: Sequence[Any] | None = None
    constraint_strides: Sequence[Any] | None = None
    specialize_on: Any = None
    view_base_context: Any = None
    shape_ids: dict[int, str | None] | None = None
    unbacked_bounds: dict[int, tuple[int | None, int | None]] | None = None

    def __post_init__(self) -> None:
        n = len(self.dynamic_sizes)
        if self.dynamic_strides is None:
            object.__setattr__(self, "dynamic_strides", [DimDynamic.INFER_STRIDE] * n)
        if self.constraint_sizes is None:
            object.__setattr__(self, "constraint_sizes", [None] * n)
        if self.constraint_strides is None:
            object.__setattr__(self, "constraint_strides", [None] * n)


def _property_source(source: Any, prop: str, idx: int | None = None) -> str:
    """The name of a tensor property's source: `L['x'].size()[0]`, `L['x'].storage_offset()`
    (torch's TensorPropertySource names; fake_torch's sources are their names)."""
    base = _source_name(source)
    return f"{base}.{prop}()" if idx is None else f"{base}.{prop}()[{idx}]"


class ShapeEnv:
    """The store of a trace's symbols: hints (backed_var_to_val), ranges (var_to_range),
    sources, replacements and the guards and runtime asserts recorded on them."""

    def __init__(self, *, should_record_events: bool | None = None,
                 tracked_fakes: list[Any] | None = None,
                 allow_scalar_outputs: bool = True,
                 allow_dynamic_output_shape_ops: bool = True,
                 assume_static_by_default: bool = False,
                 specialize_zero_one: bool = True,
                 duck_shape: bool | None = None,
                 co_fields: dict[str, str] | None = None,
                 prefer_deferred_runtime_asserts_over_guards: bool = False,
                 trace_asserts: bool = False, **kwargs: Any) -> None:
        from fake_torch.fx.experimental import _config
        self.allow_scalar_outputs = allow_scalar_outputs
        self.allow_dynamic_output_shape_ops = allow_dynamic_output_shape_ops
        self.assume_static_by_default = assume_static_by_default
        self.specialize_zero_one = specialize_zero_one
        self.duck_shape = _config.use_duck_shape if duck_shape is None else duck_shape
        self.co_fields = co_fields or {}
        self.prefer_deferred_runtime_asserts_over_guards = \
            prefer_deferred_runtime_asserts_over_guards
        self.trace_asserts = trace_asserts
        self.tracked_fakes = tracked_fakes
        self.guards: list[ShapeGuard] = []
        self.axioms: dict[Any, Any] = {}
        self.var_to_range: dict[Any, Any] = {}
        self.backed_var_to_val: dict[Any, Any] = {}
        self.var_to_hint_override: dict[Any, int] = {}
        self.var_to_sources: dict[Any, list[Any]] = {}
        self.source_to_var: dict[str, Any] = {}
        self.replacements: dict[Any, Any] = {}
        # replace()'s results (None: unchanged) while `replacements` stays as it is: a traced
        # model asks again and again about the same few expressions (a 32-layer toy: ~23k
        # calls, 40 expressions), each a free_symbols walk or a sympy.expand
        self._replaced: dict[Any, Any] = {}
        self._replacements_version = 0
        self._replaced_version = 0
        self.val_to_var: dict[int, Any] = {}
        self.unique_ids: set[int] = set()
        self.size_like: set[Any] = set()
        self.unbacked_inputs: set[Any] = set()
        self.deferred_runtime_asserts: dict[Any, list[RuntimeAssert]] = {}
        self.unbacked_symint_counter = 0
        self.unbacked_symfloat_counter = 0
        self.divisible: set[Any] = set()
        self._shape_id_to_unbacked_symbol: dict[str, Any] = {}
        self.frozen = False
        # torch's caches, whose staleness shows in what it records: evaluate_expr's results
        # per arguments (never cleared, 256 entries: a repeated bool() records no second
        # guard), and _maybe_evaluate_static's, cleared only when the replacements, the
        # divisible set or the runtime asserts grow, or a range narrows (a guard alone does
        # not clear it: guard_or_false after bool() of the same condition guards again)
        self._evaluate_cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._static_cache: dict[tuple[Any, ...], Any] = {}
        self._static_cache_key: tuple[int, int, int] = (0, 0, 0)
        self._suppress_guards_depth = 0
        # who answers a data-dependent question instead of GuardOnDataDependentSymNode
        # (fake_torch's tracer: a graph break, after which the symbols have values)
        self.data_dependent_hook: Callable[[Any], Any] | None = None
        self._data_dependent_answers = 0

    @property
    def var_to_val(self) -> dict[Any, Any]:
        return self.backed_var_to_val

    # -- symbols ---------------------------------------------------------------------------
    def _generate_unique_id(self, source_name: str) -> int:
        attempt = int(hashlib.sha256(source_name.encode()).hexdigest(), 16) % 100
        while attempt in self.unique_ids:
            attempt += 1
        self.unique_ids.add(attempt)
        return attempt

    def _default_value_range(self, do_not_specialize_zero_one: bool = False) -> Any:
        import sympy

        from fake_torch.utils._sympy.value_ranges import ValueRanges
        lower = 0 if (do_not_specialize_zero_one or not self.specialize_zero_one) else 2
        return ValueRanges(lower, sympy.oo)

    def create_symbol(self, val: int | float, source: Any,
                      dynamic_dim: DimDynamic = DimDynamic.DUCK, constraint_dim: Any = None,
                      positive: bool | None = True, do_not_specialize_zero_one: bool = False,
                      symbolic_context: Any = None) -> Any:
        """A sympy expression for a value read from `source`: a constant (STATIC, or a 0/1
        size), the symbol already standing for an equal size (DUCK), or a new backed symbol
        named from the source (`s77`)."""
        import sympy

        from fake_torch.utils._sympy.value_ranges import ValueRanges
        if dynamic_dim is DimDynamic.UNBACKED:  # a size without a hint (mark_unbacked)
            out = self.create_unbacked_symint(source).node.expr
            self._constrain_range_for_size(out)
            self.unbacked_inputs.add(out)
            return out
        name = _source_name(source)
        if positive and val < 0:
            raise AssertionError(f"positive set for negative value: {val}")
        if constraint_dim is not None:
            dynamic_dim = DimDynamic.DYNAMIC
        if dynamic_dim is DimDynamic.STATIC:
            return sympy.Integer(val) if isinstance(val, int) else sympy.Float(val)
        if dynamic_dim is DimDynamic.DUCK:
            duck = self.duck_shape
        elif dynamic_dim is DimDynamic.DYNAMIC:
            duck = False
        else:
            raise AssertionError(f"unhandled dynamic_dim {dynamic_dim}")
        specialize = self.specialize_zero_one and not do_not_specialize_zero_one
        if val in (0, 1) and specialize and isinstance(val, int):
            return sympy.Integer(val)
        if duck and isinstance(val, int) and val in self.val_to_var:
            sym = self.val_to_var[val]
            self.var_to_sources[sym].append(source)
            return sym
        ident = self._generate_unique_id(name)
        if isinstance(val, int):
            sym = sympy.Symbol(f"s{ident}", positive=positive, integer=True)
            self.backed_var_to_val[sym] = sympy.Integer(val)
            self.var_to_range[sym] = self._default_value_range(do_not_specialize_zero_one) \
                if positive else ValueRanges.unknown_int()
        else:
            sym = sympy.Symbol(f"zf{ident}", positive=positive, real=True)
            self.backed_var_to_val[sym] = sympy.Float(val)
            self.var_to_range[sym] = ValueRanges.unknown()
        self.source_to_var[name] = sym
        self.var_to_sources[sym] = [source]
        if duck and isinstance(val, int):
            self.val_to_var[val] = sym
        return sym

    def create_symbolic_sizes_strides_storage_offset(
            self, ex: Any, source: Any, *, symbolic_context: StatelessSymbolicContext | None = None,
    ) -> tuple[tuple[Any, ...], tuple[Any, ...], Any]:
        """Symbolic sizes, strides and storage offset for tensor `ex` read from `source`:
        a symbol per dynamic dim (symbolic_context; default DUCK every dim), strides as
        products of sizes where `ex` is laid out contiguously along them, the offset a
        symbol when nonzero (and any dim dynamic)."""
        return self._create_symbolic_sizes_strides_storage_offset(
            ex.size(), ex.stride(), ex.storage_offset(), [False] * ex.dim(), source,
            symbolic_context=symbolic_context)

    def _create_symbolic_sizes_strides_storage_offset(
            self, ex_size: Sequence[int], ex_stride: Sequence[int], ex_storage_offset: int,
            is_dim_dynamic: Sequence[bool], source: Any, *,
            symbolic_context: StatelessSymbolicContext | None = None,
            hint_overrides: dict[int, int] | None = None,
    ) -> tuple[tuple[Any, ...], tuple[Any, ...], Any]:
        """As create_symbolic_sizes_strides_storage_offset, from the numbers; hint_overrides
        {dim: n} (mark_dynamic/mark_unbacked(hint_override=n)) is the hint of a backed
        dim and the optimization hint (var_to_hint_override) of an unbacked one."""
        import sympy
        hint_overrides = hint_overrides or {}
        ex_size = [int(v) for v in ex_size]
        ex_stride = [int(v) for v in ex_stride]
        ex_offset = int(ex_storage_offset)
        dim = len(ex_size)
        if symbolic_context is None:
            symbolic_context = StatelessSymbolicContext([DimDynamic.DUCK] * dim)
        ctx = symbolic_context
        assert ctx.dynamic_strides is not None and ctx.constraint_sizes is not None
        assert ctx.constraint_strides is not None
        if len(ctx.dynamic_sizes) != dim:
            raise AssertionError(f"{len(ctx.dynamic_sizes)} != {dim}")
        static = all(r is DimDynamic.STATIC for r in ctx.dynamic_sizes)
        from fake_torch.fx.experimental import _config
        size = [self.create_symbol(hint_overrides.get(i, v), _property_source(source, "size", i),
                                   ctx.dynamic_sizes[i], ctx.constraint_sizes[i],
                                   do_not_specialize_zero_one=_config.backed_size_oblivious)
                for i, v in enumerate(ex_size)]
        for i, sym in enumerate(size):
            if ctx.dynamic_sizes[i] is DimDynamic.UNBACKED:
                self._unbacked_dim_checks(sym, ctx, i)
        # strides, smallest first: a stride equal to an inner dim's size * stride is that
        # product (contiguous along it); 0 and 1 stay constants; else a stride symbol
        stride: list[Any] = [None] * dim
        candidates: dict[int, Any] = {}
        for val, neg_i in sorted((v, -i) for i, v in enumerate(ex_stride)):
            i = -neg_i
            contiguous = i != dim - 1 and ex_stride[i] == ex_size[i + 1] * ex_stride[i + 1]
            if val in (0, 1) and not contiguous:
                out = sympy.Integer(val)
            elif ctx.dynamic_strides[i] is DimDynamic.INFER_STRIDE and val in candidates:
                out = candidates[val]
            else:
                kind = ctx.dynamic_strides[i]
                if kind is DimDynamic.INFER_STRIDE:
                    kind = DimDynamic.STATIC if static else DimDynamic.DUCK
                out = self.create_symbol(val, _property_source(source, "stride", i), kind,
                                         ctx.constraint_strides[i])
            stride[i] = out
            candidates[ex_size[i] * val] = size[i] * out
        sym_sizes = tuple(self.create_symintnode(s, hint=hint_overrides.get(i, h), source=None)
                          for i, (s, h) in enumerate(zip(size, ex_size, strict=True)))
        for i, v in enumerate(sym_sizes):
            if isinstance(v, SymInt) and i in hint_overrides:
                self.var_to_hint_override[v.node.expr] = hint_overrides[i]
        sym_strides = []
        for i, e in enumerate(stride):
            h = e.xreplace(self.backed_var_to_val)
            sym_strides.append(self.create_symintnode(
                e, hint=int(h) if h.is_Integer else ex_stride[i]))
        offset_kind = DimDynamic.STATIC if static else DimDynamic.DUCK
        offset = self.create_symintnode(
            self.create_symbol(ex_offset, _property_source(source, "storage_offset"),
                               offset_kind), hint=ex_offset)
        return sym_sizes, tuple(sym_strides), offset

    def _unbacked_dim_checks(self, sym: Any, ctx: StatelessSymbolicContext, i: int) -> None:
        """mark_unbacked's extras for dim i: its bounds (min, max) as torch._check's, and
        its shape_id: the first symbol of an id is recorded, later ones checked equal."""
        from fake_torch._checks import _check
        node = SymInt(SymNode(sym, self, int, None))
        lo, hi = (ctx.unbacked_bounds or {}).get(i, (None, None))
        if lo is not None:
            _check(node >= lo)
        if hi is not None:
            _check(node <= hi)
        shape_id = (ctx.shape_ids or {}).get(i)
        if shape_id is not None:
            first = self._shape_id_to_unbacked_symbol.setdefault(shape_id, sym)
            if first is not sym:
                _check(node == SymInt(SymNode(first, self, int, None)))

    def create_unspecified_symbol(self, val: int | float, source: Any,
                                  dynamic_dim: DimDynamic = DimDynamic.DUCK,
                                  symbolic_context: Any = None) -> Any:
        """A symbol for a Python scalar input (any sign, 0 and 1 not specialized)."""
        return self.create_symbol(val, source, dynamic_dim, None, positive=None,
                                  do_not_specialize_zero_one=True)

    def create_unspecified_symint_and_symbol(self, value: int, source: Any,
                                             dynamic_dim: DimDynamic) -> Any:
        return self.create_symintnode(
            self.create_unspecified_symbol(value, source, dynamic_dim), hint=value,
            source=source)

    def create_symintnode(self, sym: Any, *, hint: Any, source: Any = None) -> Any:
        """The SymInt for `sym` (a plain int when `sym` is a constant)."""
        import sympy
        if isinstance(sym, sympy.Integer):
            if hint is not None and int(sym) != hint:
                raise AssertionError(f"int(sym)={int(sym)} != hint={hint}")
            return int(sym)
        if free_unbacked_symbols(sym):
            hint = None
        return SymInt(SymNode(sym, self, int, hint))

    def create_symfloatnode(self, sym: Any, *, hint: Any, source: Any = None) -> Any:
        import sympy
        if isinstance(sym, sympy.Float):
            return float(sym)
        return SymFloat(SymNode(sym, self, float, hint))

    def create_symboolnode(self, sym: Any) -> SymBool:
        return SymBool(SymNode(sym, self, bool, None))

    def create_unbacked_symint(self, source: Any = None) -> SymInt:
        """A fresh unbacked int `u<n>` (no hint), range [-int_oo, int_oo]."""
        import sympy

        from fake_torch.utils._sympy.value_ranges import ValueRanges
        sym = sympy.Symbol(f"u{self.unbacked_symint_counter}", integer=True)
        self.unbacked_symint_counter += 1
        self.var_to_range[sym] = ValueRanges.unknown_int()
        return SymInt(SymNode(sym, self, int, None))

    def create_unbacked_symfloat(self) -> SymFloat:
        import sympy

        from fake_torch.utils._sympy.value_ranges import ValueRanges
        sym = sympy.Symbol(f"zuf{self.unbacked_symfloat_counter}", real=True, finite=True)
        self.unbacked_symfloat_counter += 1
        self.var_to_range[sym] = ValueRanges.unknown()
        return SymFloat(SymNode(sym, self, float, None))

    def create_unbacked_symbool(self) -> SymBool:
        """An unbacked bool: `Eq(u<n>, 1)` over a fresh int in [0, 1]."""
        import sympy

        from fake_torch.utils._sympy.value_ranges import ValueRanges
        sym = sympy.Symbol(f"u{self.unbacked_symint_counter}", integer=True)
        self.unbacked_symint_counter += 1
        self.var_to_range[sym] = ValueRanges(0, 1)
        return SymBool(SymNode(sympy.Eq(sym, 1), self, bool, None))

    def is_unbacked_symint(self, symbol: Any) -> bool:
        return bool(symbol.name.startswith("u"))

    # -- replacements and simplification ---------------------------------------------------
    def _find(self, a: Any) -> Any:
        """What `a` stands for, following replacements transitively (the chain, once
        resolved, is recorded through _set_replacement, which also narrows ranges)."""
        if a not in self.replacements:
            return a
        res = self.replacements[a]
        new = res.xreplace({s: self._find(s) for s in res.free_symbols})
        if new != res:
            self._set_replacement(a, new, "find")
        return self.replacements[a]

    def replace(self, expr: Any) -> Any:
        """`expr` with every replaced symbol swapped for its replacement."""
        if not self.replacements or not hasattr(expr, "free_symbols"):
            return expr
        if self._replaced_version != self._replacements_version or \
                len(self._replaced) >= _REPLACED_LIMIT:
            self._replaced.clear()
            self._replaced_version = self._replacements_version
        try:
            done = self._replaced.get(expr, expr)
        except TypeError:  # (an unhashable expression: not remembered)
            return self._replace(expr)
        if done is not expr:
            return expr if done is None else done
        result = self._replace(expr)
        self._replaced[expr] = None if result is expr else result
        return result

    def _replace(self, expr: Any) -> Any:
        subs = {s: self._find(s) for s in expr.free_symbols if s in self.replacements}
        if not subs:
            return expr
        import sympy
        return sympy.expand(expr.xreplace(subs))

    def simplify(self, expr: Any, size_oblivious: bool = False) -> Any:
        """`expr` expanded, with replacements, Max(1, b) -> b (and Max(0, b)) where known,
        int(a / b) -> a // b, and exact divisions (a guarded Eq(Mod(a, b), 0)) marked."""
        import sympy

        from fake_torch.utils._sympy.functions import (
            CleanDiv,
            FloorDiv,
            IntTrueDiv,
            Max,
            Mod,
            TruncToInt,
        )
        expr = self.replace(sympy.expand(expr))
        if not size_oblivious:
            swaps = {}
            for atom in expr.atoms(Max):
                if len(atom.args) > 2:
                    continue
                a, b = atom.args
                if b in (0, 1):
                    a, b = b, a
                if a in (0, 1) and self._maybe_evaluate_static(sympy.Ge(b, a)):
                    swaps[atom] = b
            if swaps:
                expr = expr.xreplace(swaps)
        if expr.has(TruncToInt):
            swaps = {}
            for atom in expr.atoms(TruncToInt):
                if isinstance(atom.args[0], IntTrueDiv):
                    base, divisor = atom.args[0].args
                    exact = Mod(base, divisor) == 0
                    swaps[atom] = (CleanDiv if exact else FloorDiv)(base, divisor)
            if swaps:
                expr = expr.xreplace(swaps)
        if expr.has(FloorDiv) and self.divisible:
            swaps = {fd: CleanDiv(*fd.args) for fd in expr.atoms(FloorDiv)
                     if self.replace(Mod(*fd.args)) in self.divisible}
            if swaps:
                new = sympy.expand(expr.xreplace(swaps))
                if new.atoms(sympy.Pow) <= expr.atoms(sympy.Pow):
                    expr = new
        return expr

    def _set_replacement(self, a: Any, tgt: Any, msg: str) -> None:
        """Record a == tgt (a replaced by tgt from now on), as torch does: a's range meets
        tgt's bounds; when that narrows it and tgt has one symbol b, b's range is narrowed by
        solving for b; a replacement whose bounds would widen a's range is skipped."""
        import sympy

        from fake_torch.utils._sympy.functions import CeilToInt, FloorToInt
        from fake_torch.utils._sympy.solve import try_solve
        from fake_torch.utils._sympy.value_ranges import ValueRanges
        if tgt == self.replacements.get(a) or a in tgt.free_symbols:
            return
        if a in self.var_to_range:
            src_bound = self.var_to_range[a]
            tgt_bound = self.bound_sympy(tgt)
            self._update_var_to_range(a, tgt_bound)
            if not tgt_bound.issubset(src_bound) and len(tgt.free_symbols) == 1:
                b = next(iter(tgt.free_symbols))
                r = try_solve(sympy.Eq(a, tgt), b, floordiv_inequality=False)
                if r is not None:
                    rat = self.bound_sympy(r[1])
                    self._update_var_to_range(
                        b, ValueRanges(CeilToInt(rat.lower), FloorToInt(rat.upper)))
                    tgt_bound = self.bound_sympy(tgt)
                    if not tgt_bound.issubset(src_bound):
                        raise AssertionError(f"{tgt_bound=} not a subset of {src_bound=}")
            if a in self.size_like and isinstance(tgt, sympy.Symbol):
                self.size_like.add(tgt)
            elif isinstance(tgt, sympy.Symbol) and tgt in self.size_like:
                self.size_like.add(a)
            if not tgt_bound.issubset(src_bound):
                return
            if a in self.size_like and not self.bound_sympy(tgt, size_oblivious=True).issubset(
                    self.bound_sympy(a, size_oblivious=True)):
                return
        self.replacements[a] = tgt
        self._replacements_version += 1  # (replace()'s remembered results are stale)

    def _update_var_to_range(self, symbol: Any, vr: Any) -> None:
        from fake_torch.utils._sympy.value_ranges import ValueRanges
        if vr.upper < 2 and symbol in self.size_like:
            vr = ValueRanges(vr.lower, 2)
        old = self.var_to_range.get(symbol)
        self.var_to_range[symbol] = vr if old is None else old & vr
        v = self.backed_var_to_val.get(symbol)
        if v is not None and v not in self.var_to_range[symbol]:
            raise AssertionError(f"{v} not in {self.var_to_range[symbol]}")

    def constrain_symbol_range(self, s: Any, compiler_min: int, compiler_max: int) -> None:
        from fake_torch.utils._sympy.value_ranges import ValueRanges
        self._update_var_to_range(s, ValueRanges(compiler_min, compiler_max))

    def _constrain_range_for_size(self, a: Any, min: int | None = None,
                                  max: int | None = None) -> None:
        """Mark `a` (an unbacked symbol) a size: range within [min or 0, max]."""
        import sympy

        from fake_torch.utils._sympy.value_ranges import ValueRanges
        self.size_like.add(a)
        self._update_var_to_range(a, ValueRanges(0 if min is None else min,
                                                 sympy.oo if max is None else max))

    def bound_sympy(self, expr: Any, size_oblivious: bool = False) -> Any:
        """The range `expr` can take; size_oblivious: size-like symbols as [2, int_oo]
        (their upper bound dropped, as torch does)."""
        import sympy

        from fake_torch.utils._sympy.value_ranges import ValueRanges, bound_sympy
        ranges = {s: self.var_to_range[s] for s in expr.free_symbols if s in self.var_to_range}
        if size_oblivious:
            for s in self.size_like & ranges.keys():
                ranges[s] = ValueRanges(2, sympy.oo)
        return bound_sympy(expr, ranges)

    # -- deciding without guards -----------------------------------------------------------
    def _maybe_evaluate_static(self, expr: Any, **kwargs: Any) -> Any:
        """The value of `expr` if the ranges (and known facts) decide it, else None; with
        unbacked_only=True, the expression as far as it simplifies. Keywords: unbacked_only,
        compute_hint, size_oblivious, var_to_range. Cached as torch caches it (see
        __init__): keyed on the keywords as passed, so f(e) and f(e, size_oblivious=False)
        are two entries, as in torch's lru_cache."""
        version = (len(self.replacements), len(self.divisible),
                   sum(len(v) for v in self.deferred_runtime_asserts.values()))
        if version != self._static_cache_key:
            self._static_cache.clear()
            self._static_cache_key = version
        key = (expr, tuple(sorted(kwargs.items())))
        if key not in self._static_cache:
            self._static_cache[key] = self._evaluate_static(
                expr, unbacked_only=kwargs.get("unbacked_only", False),
                compute_hint=kwargs.get("compute_hint", False),
                size_oblivious=kwargs.get("size_oblivious", False),
                var_to_range=kwargs.get("var_to_range"))
        return self._static_cache[key]

    def _evaluate_static(self, expr: Any, *, unbacked_only: bool, compute_hint: bool,
                         size_oblivious: bool, var_to_range: Any) -> Any:
        import sympy

        from fake_torch.utils._sympy.value_ranges import ValueRanges, bound_sympy
        expr = self.simplify(expr)
        if compute_hint:
            expr = expr.xreplace(self.backed_var_to_val)
        expr = canonicalize_bool_expr(expr)
        expr = expr.xreplace(self.axioms)
        fs = expr.free_symbols
        if not fs and (expr.is_number or expr.is_Boolean):
            return expr
        ranges = self.var_to_range if var_to_range is None else dict(var_to_range)
        # each symbol of range [lo, ...] becomes a positive symbol plus (lo - 1): sympy's
        # own assumptions then see what the range says
        shift: dict[Any, Any] = {}
        new_ranges: dict[Any, Any] = {}
        for idx, s in enumerate(sorted(fs, key=str)):
            vr = ranges.get(s, ValueRanges.unknown())
            if size_oblivious and s in self.size_like:
                lower = max(2, vr.lower)
                upper = min(2**48, vr.upper)
                if upper > lower:
                    upper = upper - 1
                if lower <= upper:
                    vr = ValueRanges(lower, upper)
            if vr.lower == -sympy.oo or not vr.is_int or \
                    (unbacked_only and s in self.backed_var_to_val):
                new_ranges[s] = vr
                continue
            fresh = sympy.Symbol(f"evaluate_static_shape_{idx}", positive=True, integer=True)
            offset = int(vr.lower - 1)
            shift[s] = fresh + offset
            new_ranges[fresh] = ValueRanges(vr.lower - offset, vr.upper - offset)
        new_expr = canonicalize_bool_expr(sympy.expand(expr.xreplace(shift)))
        if new_expr.is_number or new_expr in (sympy.true, sympy.false):
            return new_expr
        out = bound_sympy(new_expr, new_ranges)
        if out.is_singleton():
            return out.lower
        return new_expr if unbacked_only else None

    def _simplify_floor_div(self, expr: Any) -> Any:
        """`expr` simplified after evaluating (guarding) that each floor division in it is
        exact: torch does so before math.floor of a symbolic float."""
        import sympy

        from fake_torch.utils._sympy.functions import FloorDiv, Mod
        for fd in reversed(tuple(expr.atoms(FloorDiv))):
            self.evaluate_expr(sympy.Eq(Mod(*fd.args), 0))
        return self.simplify(expr)

    def _fast_eval_comparison(self, expr: Any) -> Any:
        """`sum of non-negative terms >= 0` is true, without the full analysis."""
        import sympy
        if isinstance(expr, sympy.GreaterThan) and expr.rhs == 0:
            total = expr.lhs
        elif isinstance(expr, sympy.LessThan) and expr.lhs == 0:
            total = expr.rhs
        else:
            return None

        def nonneg(t: Any) -> bool:
            if t.is_Symbol:
                vr = self.var_to_range.get(t)
                return vr is not None and bool(vr.lower >= 0)
            return bool(t.is_number and t >= 0)
        return sympy.true if all(nonneg(t) for t in sympy.Add.make_args(total)) else None

    def size_hint(self, expr: Any, *, allow_none: bool = False) -> Any:
        """`expr`'s value with today's sizes (None, when allowed, for unbacked symbols);
        deprecated in torch 2.13, with its FutureWarning."""
        warnings.warn("use guarding_hint_or_throw or optimization_hint instead", FutureWarning,
                      stacklevel=2)
        r = self.replace(expr).xreplace(self.backed_var_to_val)
        if r.free_symbols:
            if allow_none:
                return None
            sizes = [str(s) for s in expr.free_symbols if s in self.size_like]  # in set order
            raise GuardOnDataDependentSymNode(
                expr, f"Could not extract specialized integer from data-dependent "
                f"expression {expr} (unhinted: {expr}).  (Size-like symbols: "
                f"{', '.join(sizes) or 'none'})")
        return r

    def guarding_hint_or_throw(self, expr: Any) -> int | bool:
        """`expr`'s value with today's sizes; GuardOnDataDependentSymNode if unbacked."""
        import sympy
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            r = self.size_hint(expr)
        if r in (sympy.true, sympy.false):
            return bool(r)
        return int(r)

    def optimization_hint(self, expr: Any, fallback: int | None = None) -> int:
        """A value for planning only (no guard): today's sizes for backed symbols, the
        hint_override of an unbacked one (mark_unbacked(hint_override=)), else `fallback`
        (default 8192, torch._inductor.config.unbacked_symint_fallback) clamped into the
        symbol's range. Torch's further heuristics (factoring unbacked expressions for
        consistent hints) are not reproduced."""
        import sympy
        if fallback is None:
            fallback = 8192
        e = sympy.sympify(expr)
        e = e.xreplace(self.replacements).xreplace(self.backed_var_to_val)
        e = e.xreplace({s: sympy.Integer(v) for s, v in self.var_to_hint_override.items()})
        values = {}
        for sym in e.free_symbols:
            v = fallback
            vr = self.var_to_range.get(sym)
            if vr is not None:
                if vr.lower.is_Integer:
                    v = max(v, int(vr.lower))
                if vr.upper.is_Integer:
                    v = min(v, int(vr.upper))
            values[sym] = sympy.Integer(v)
        try:
            e = e.subs(values)
        except ZeroDivisionError:
            return fallback
        if e in (sympy.true, sympy.false):
            return bool(e)
        if e in (sympy.oo, -sympy.oo):
            return sys.maxsize if e == sympy.oo else -sys.maxsize
        return int(e)

    # -- guards ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def suppress_guards(self) -> Iterator[None]:
        self._suppress_guards_depth += 1
        try:
            yield
        finally:
            self._suppress_guards_depth -= 1

    def evaluate_sym_node(self, sym_node: SymNode, size_oblivious: bool = False,
                          fallback_value: bool | None = None) -> Any:
        return self.evaluate_expr(sym_node.expr, sym_node.hint, sym_node.fx_node,
                                  size_oblivious, fallback_value)

    def evaluate_expr(self, orig_expr: Any, hint: Any = None, fx_node: Any = None,
                      size_oblivious: bool = False, fallback_value: bool | None = None, *,
                      forcing_spec: bool = False) -> Any:
        """The value of `orig_expr`: decided from ranges when possible; else the hint's
        value, recording the guard that keeps it (and learning from that guard)."""
        key = (orig_expr, hint, size_oblivious, forcing_spec, self._suppress_guards_depth > 0,
               fallback_value)
        if key in self._evaluate_cache:
            self._evaluate_cache.move_to_end(key)
            return self._evaluate_cache[key]
        asked = self._data_dependent_answers
        r = self._evaluate_expr(orig_expr, hint, size_oblivious, fallback_value)
        if asked != self._data_dependent_answers:
            return r  # the hook's answer holds for now only (a fake impl's trace values)
        self._evaluate_cache[key] = r
        if len(self._evaluate_cache) > 256:
            self._evaluate_cache.popitem(last=False)
        return r

    def _evaluate_expr(self, orig_expr: Any, hint: Any, size_oblivious: bool,
                       fallback_value: bool | None) -> Any:
        import sympy
        if orig_expr in (sympy.true, sympy.false) or orig_expr.is_number:
            return orig_expr
        expr = orig_expr
        fast = self._fast_eval_comparison(expr)
        if fast is not None:
            return fast
        static = self._maybe_evaluate_static(expr, size_oblivious=size_oblivious)
        if static is not None:
            return static
        if not expr.free_symbols <= self.backed_var_to_val.keys():
            new_expr = self._maybe_evaluate_static(expr, unbacked_only=True)
            if new_expr.free_symbols <= self.backed_var_to_val.keys():
                expr = new_expr
            elif fallback_value is not None:
                return sympy.true if fallback_value else sympy.false
            else:
                expr = self._data_dependent(expr)
                if expr.is_number or expr in (sympy.true, sympy.false):
                    return expr
                hint = None
        concrete = sympy.sympify(hint) if hint is not None else \
            sympy.sympify(self.guarding_hint_or_throw(expr))
        if concrete is sympy.true:
            g = expr
        elif concrete is sympy.false:
            g = sympy.Not(expr)
        else:
            g = sympy.Eq(expr, concrete)
        if self._suppress_guards_depth == 0:
            self._maybe_guard_rel(g)
            self.guards.append(ShapeGuard(g, _user_sloc(), size_oblivious))
            self._add_axioms(g)
        return concrete

    def _data_dependent(self, expr: Any) -> Any:
        """`expr` with its unbacked symbols' values, as data_dependent_hook learns them (the
        tracer breaks the graph to run it), or the hook's own answer (a sympy boolean or
        number); without a hook, GuardOnDataDependentSymNode."""
        import sympy
        if self.data_dependent_hook is None:
            self._raise_data_dependent(expr)
        assert self.data_dependent_hook is not None
        values = self.data_dependent_hook(expr)
        self._data_dependent_answers += 1
        if not isinstance(values, Mapping):  # the hook decided the expression itself
            return sympy.sympify(values)
        return sympy.sympify(expr.xreplace({s: sympy.sympify(v) for s, v in values.items()}))

    def _raise_data_dependent(self, expr: Any) -> None:
        import sympy
        boolean = isinstance(expr, sympy.logic.boolalg.Boolean) and not expr.is_Symbol
        kind = "guard on" if boolean else "extract specialized integer from"
        sizes = [str(s) for s in expr.free_symbols if s in self.size_like]  # in set order
        raise GuardOnDataDependentSymNode(
            expr, f"Could not {kind} data-dependent expression "
            f"{expr.xreplace(self.backed_var_to_val)} (unhinted: {expr}).  "
            f"(Size-like symbols: {', '.join(sizes) or 'none'})")

    def get_implications(self, e: Any) -> tuple[tuple[Any, Any], ...]:
        """The facts (canonical relation -> true/false) a true `e` gives: itself, its
        negation false, both orders of an (in)equality, and for Eq both <= and >=, for
        a < b also a <= b, a != b and (integers) a <= b - 1, for a <= b also a < b + 1."""
        import sympy
        equiv: dict[Any, Any] = {}

        def add(expr: Any) -> None:
            expr = canonicalize_bool_expr(expr)
            if isinstance(expr, (sympy.Eq, sympy.Ne)):
                opposite = sympy.Eq if isinstance(expr, sympy.Ne) else sympy.Ne
                for lhs, rhs in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
                    equiv[type(expr)(lhs, rhs, evaluate=False)] = sympy.true
                    equiv[opposite(lhs, rhs, evaluate=False)] = sympy.false
            else:
                equiv[expr] = sympy.true
                equiv[canonicalize_bool_expr(sympy.Not(expr))] = sympy.false
        add(e)
        if isinstance(e, sympy.Eq):
            add(sympy.Le(e.lhs, e.rhs, evaluate=False))
            add(sympy.Ge(e.lhs, e.rhs, evaluate=False))
        elif isinstance(e, sympy.Lt):
            add(sympy.Le(e.lhs, e.rhs, evaluate=False))
            add(sympy.Ne(e.lhs, e.rhs, evaluate=False))
            if e.lhs.is_integer and e.rhs.is_integer:
                add(sympy.Le(e.lhs, e.rhs - 1, evaluate=False))
        elif isinstance(e, sympy.Le):
            add(sympy.Lt(e.lhs, e.rhs + 1, evaluate=False))
        return tuple(equiv.items())

    def _add_axioms(self, g: Any) -> None:
        self.axioms.update(dict(self.get_implications(self.simplify(g))))

    def guard_or_defer_runtime_assert(self, orig_expr: Any, msg: str,
                                      fx_node: Any = None) -> bool:
        """torch._check on an expression: true if known; a guard if only backed symbols;
        else a runtime assert (deferred_runtime_asserts, keyed by its newest unbacked
        symbol), whose facts are learnt."""
        expr = orig_expr
        fast = self._fast_eval_comparison(expr)
        if fast is not None:
            return bool(fast)
        static = self._maybe_evaluate_static(expr)
        if static is not None:
            return bool(static)
        new_expr = self._maybe_evaluate_static(expr, unbacked_only=True)
        if not self.prefer_deferred_runtime_asserts_over_guards and \
                new_expr.free_symbols <= self.backed_var_to_val.keys():
            return bool(self.evaluate_expr(new_expr, fx_node=fx_node))
        if self._suppress_guards_depth == 0:
            self._maybe_guard_rel(expr)
            expr = canonicalize_bool_expr(expr)
            ra = RuntimeAssert(expr, msg)

            def order(s: Any) -> tuple[int, str]:
                prefix = "zuf" if s.name.startswith("zuf") else "u"
                return int(s.name[len(prefix):]), prefix
            cands = sorted((s for s in expr.free_symbols if _is_unbacked(s)), key=order)
            key = cands[-1] if cands else None
            self.deferred_runtime_asserts.setdefault(key, []).append(ra)
            self._add_axioms(expr)
        return True

    def _maybe_guard_rel(self, expr: Any) -> None:
        """Learn from a guard known true: ranges from inequalities, a replacement from an
        equality solvable for one symbol (unifying `Eq(s97, s52)`)."""
        import sympy
        if isinstance(expr, sympy.And):
            for a in expr.args:
                self._maybe_guard_rel(a)
            return
        if not isinstance(expr, sympy.Rel) or isinstance(expr, sympy.Ne):
            return
        free = list(expr.free_symbols)
        if not free or len(free) > 5:
            return

        def order(x: Any) -> tuple[int, int, str]:
            hint = self.backed_var_to_val.get(x)
            size = sys.maxsize if hint is None or not x.name.startswith("s") else int(hint)
            return (0, size, x.name)
        free = sorted(free, key=order, reverse=True)
        self._refine_ranges(expr)
        if not isinstance(expr, sympy.Eq):
            return
        from fake_torch.utils._sympy.functions import FloorDiv, Mod
        from fake_torch.utils._sympy.solve import try_solve
        if expr.has(Mod):  # Eq(Mod(a, b), 0): b divides a
            mod_expr = next(iter(expr.atoms(Mod)))
            r = try_solve(expr, mod_expr, floordiv_inequality=False)
            if r is not None and r[1] == 0:
                self.divisible.add(mod_expr)
            return
        if any(fd.divisor != 1 for fd in expr.atoms(FloorDiv)):
            return
        lhs, rhs = expr.lhs, expr.rhs
        if lhs.is_Symbol and _is_unbacked(lhs) and not any(
                _is_unbacked(s) and s not in self.unbacked_inputs for s in rhs.free_symbols):
            self._set_replacement(lhs, self._find(rhs), "trivial_lhs")
            return
        if rhs.is_Symbol and _is_unbacked(rhs) and not any(
                _is_unbacked(s) and s not in self.unbacked_inputs for s in lhs.free_symbols):
            self._set_replacement(rhs, self._find(lhs), "trivial_rhs")
            return
        r = try_solve(expr, free[0], floordiv_inequality=False)
        if r is not None and all(t.is_integer for t in sympy.preorder_traversal(r[1])):
            new = self._find(r[1])
            if not any(_is_unbacked(s) for s in new.free_symbols):
                self._set_replacement(free[0], new, "solve")

    def _refine_ranges(self, expr: Any) -> None:
        """Narrow each symbol's range by `symbol <op> rhs` solved from the relation."""
        import sympy

        from fake_torch.utils._sympy.solve import try_solve
        from fake_torch.utils._sympy.value_ranges import ValueRanges
        expr = self.simplify(expr)
        for symbol in expr.free_symbols:
            solved = try_solve(expr, symbol)
            if solved is None or not (symbol.is_integer and solved[1].is_integer):
                continue
            r_expr, rhs = solved
            cls = type(r_expr)
            vr = self.var_to_range.get(symbol, ValueRanges.unknown_int())
            lower, upper = vr.lower, vr.upper
            rhs_vr = self.bound_sympy(rhs)
            if lower <= rhs_vr.lower and cls in (sympy.Eq, sympy.Ge, sympy.Gt):
                lower = rhs_vr.lower + int(cls is sympy.Gt)
            if upper >= rhs_vr.upper and cls in (sympy.Eq, sympy.Le, sympy.Lt):
                upper = rhs_vr.upper - int(cls is sympy.Lt)
            if vr == ValueRanges(lower, upper):
                continue
            self._update_var_to_range(symbol, ValueRanges(lower, upper))
            if self.var_to_range[symbol].is_singleton():
                self._set_replacement(symbol, self.var_to_range[symbol].lower,
                                      "range_refined_to_singleton")
            self._static_cache.clear()

    def get_nontrivial_guards(self) -> list[Any]:
        """The guards' expressions that the ranges alone do not decide."""
        return [self.simplify(g.expr) for g in self.guards
                if self._maybe_evaluate_static(g.expr) is None]

    def format_guards(self, verbose: bool = False) -> str:
        return "\n".join(f" - {g.expr}{' ' + g.sloc if verbose else ''}" for g in self.guards)

    # -- checking guards against new arguments ---------------------------------------------
    def bind_symbols(self, placeholders: Sequence[Any], args: Sequence[Any]) -> dict[Any, int]:
        """Each symbol of the placeholders' values (SymInts, or tensors whose sizes, strides
        and storage offset are SymInts) bound to the matching value of `args`."""
        import sympy
        bindings: dict[Any, int] = {}

        def bind(val: Any, arg: Any) -> None:
            if not isinstance(val, SymTypes):
                return
            s = val.node._expr
            if isinstance(s, sympy.Symbol):
                if s in bindings and bindings[s] != arg:
                    raise AssertionError(f"{s}: bound to {bindings[s]} and {arg}")
                bindings[s] = arg
            elif isinstance(-s, sympy.Symbol):
                bindings[-s] = -arg

        for val, arg in zip(placeholders, args, strict=True):
            if isinstance(val, SymTypes):
                bind(val, arg)
            elif hasattr(val, "stride") and hasattr(val, "shape"):
                for v, a in zip(val.shape, arg.shape, strict=True):
                    bind(v, a)
                for v, a in zip(val.stride(), arg.stride(), strict=True):
                    bind(v, a)
                bind(val.storage_offset(), arg.storage_offset())
        return bindings

    def evaluate_guards_for_args(self, placeholders: Sequence[Any], args: Sequence[Any], *,
                                 ignore_static: bool = True) -> bool:
        """Do `args` (concrete values for the placeholders' symbols) satisfy every recorded
        guard, every replacement and every symbol's range?"""
        return self.guards_hold(self.bind_symbols(placeholders, args))

    def guards_hold(self, bindings: Mapping[Any, int]) -> bool:
        """Whether the guards, replacements and ranges hold with `bindings` (symbol ->
        value) for the symbols: the check a compiled graph's reuse needs."""
        import sympy
        values = {s: sympy.Integer(v) for s, v in bindings.items()}
        for s, v in values.items():
            vr = self.var_to_range.get(s)
            if vr is not None and s not in self.replacements and v not in vr:
                return False
            if s in self.replacements:
                target = self._find(s).xreplace(values)
                if target.is_number and target != v:
                    return False
        for g in self.guards:
            r = g.expr.xreplace(values)
            if r.free_symbols:
                continue  # a symbol not bound by these arguments
            if r is not sympy.true and not bool(r):
                return False
        return True

    def produce_guards(self, *args: Any, **kwargs: Any) -> list[str]:
        raise NotImplementedError(
            "torch.fx.experimental.symbolic_shapes.ShapeEnv.produce_guards is not emulated "
            "by fake_torch (it needs Dynamo's sources); use evaluate_guards_for_args")


# -- questions about possibly-symbolic values ---------------------------------------------
def is_symbolic(val: Any) -> bool:
    """True for a SymInt / SymFloat / SymBool with a symbolic expression; False for plain
    ints, floats and bools."""
    if isinstance(val, (int, float, bool)):
        return False
    return bool(val.node.is_symbolic())


def _require_bool(x: Any) -> bool:
    if not isinstance(x, bool):
        raise AssertionError(f"Expected bool, got {type(x)}")
    return x


def statically_known_true(x: Any) -> bool:
    """True when `x` is known true without adding a guard (from the symbols' ranges)."""
    if isinstance(x, SymBool):
        if x.node._hint is False:  # the hint disproves it (torch asks no further)
            return False
        return x.node.statically_known_true()  # type: ignore[no-any-return]
    return _require_bool(x)


def statically_known_false(x: Any) -> bool:
    """True when `x` is known false without adding a guard (a true hint says no at once)."""
    if not isinstance(x, SymBool):
        return not _require_bool(x)
    if x.node._hint is True:
        return False
    import sympy
    r = x.node.shape_env._maybe_evaluate_static(x.node.expr)
    return r is sympy.false


def guard_size_oblivious(expr: Any) -> bool:
    """`bool(expr)`, treating size-like unbacked symbols as >= 2 (so `u0 == 0` is False);
    deprecated in torch 2.13, with its FutureWarning."""
    warnings.warn("guard_size_oblivious will be removed. Consider using explicit unbacked "
                  "handling     potentially utilizing guard_or_false, guard_or_true, or "
                  "statically_known_true", FutureWarning, stacklevel=2)
    if isinstance(expr, SymBool):
        return expr.node.guard_size_oblivious("", 0)  # type: ignore[no-any-return]
    return _require_bool(expr)


def guard_or_false(a: Any) -> bool:
    """`bool(a)`, guarding if needed; False instead of a data-dependent error."""
    if isinstance(a, SymBool):
        return a.node.guard_or_false("", 0)  # type: ignore[no-any-return]
    return _require_bool(a)


def guard_or_true(a: Any) -> bool:
    """`bool(a)`, guarding if needed; True instead of a data-dependent error."""
    if isinstance(a, SymBool):
        return a.node.guard_or_true("", 0)  # type: ignore[no-any-return]
    return _require_bool(a)


def expect_true(a: Any, skip: int = 0) -> bool:
    """`a` as a check: a guard, or for unbacked symbols a runtime assert (torch._check)."""
    if isinstance(a, SymBool):
        return a.node.expect_true("", 0)  # type: ignore[no-any-return]
    return _require_bool(a)


def guard_bool(a: Any) -> bool:
    if isinstance(a, SymBool):
        return a.node.guard_bool("", 0)  # type: ignore[no-any-return]
    return _require_bool(a)


def guard_int(a: Any) -> int:
    if isinstance(a, SymInt):
        return a.node.guard_int("", 0)  # type: ignore[no-any-return]
    if not isinstance(a, int):
        raise AssertionError(f"Expected int, got {type(a)}")
    return a


def guard_float(a: Any) -> float:
    if isinstance(a, SymFloat):
        return a.node.guard_float("", 0)  # type: ignore[no-any-return]
    if not isinstance(a, float):
        raise AssertionError(f"Expected float, got {type(a)}")
    return a


def is_concrete_int(a: Any) -> bool:
    """True for an int, or a SymInt whose expression is a constant."""
    if isinstance(a, int):
        return True
    return isinstance(a, SymInt) and bool(a.node.expr.is_Integer)


def is_concrete_bool(a: Any) -> bool:
    if isinstance(a, bool):
        return True
    if isinstance(a, SymBool):
        import sympy
        return a.node.expr in (sympy.true, sympy.false)
    return False


def _iterate_exprs(val: Any) -> Iterator[Any]:
    import sympy
    if isinstance(val, SymTypes):
        if is_symbolic(val):
            yield val.node.expr
    elif isinstance(val, sympy.Basic):
        yield val
    elif isinstance(val, (int, float, bool)) or val is None:
        return
    elif isinstance(val, (tuple, list)):
        for v in val:
            yield from _iterate_exprs(v)
    elif hasattr(val, "stride") and hasattr(val, "shape"):  # a tensor
        yield from _iterate_exprs(tuple(val.shape))
        yield from _iterate_exprs(val.stride())
        yield from _iterate_exprs(val.storage_offset())
    else:
        raise AssertionError(f"cannot extract sympy expressions from {val} {type(val)}")


def free_symbols(val: Any) -> set[Any]:
    """The symbols `val` (a Sym* value, sympy expression, tensor or sequence) depends on."""
    out: set[Any] = set()
    for e in _iterate_exprs(val):
        out |= e.free_symbols
    return out


def has_free_symbols(val: Any) -> bool:
    return any(e.free_symbols for e in _iterate_exprs(val))


def free_unbacked_symbols(x: Any) -> set[Any]:
    """The unbacked symbols (`u0`, `zuf0`) among free_symbols(x)."""
    return {s for s in free_symbols(x) if _is_unbacked(s)}


def sym_eq(x: Any, y: Any) -> Any:
    """`x == y` elementwise for sequences (all of them), kept symbolic."""
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        if len(x) != len(y):
            return False
        result: Any = True
        for a, b in zip(x, y, strict=True):
            result = result & sym_eq(a, b)
        return result
    return x == y


def _constrain_range_for_size(a: Any, min: int | None = None, max: int | None = None) -> None:
    """Mark the unbacked SymInt `a` a size in [min or 0, max] (what new_dynamic_size does)."""
    import sympy
    if isinstance(a, (SymFloat, SymBool)):
        raise ValueError("Constraining SymFloat/SymBool is nyi")
    if not isinstance(a, SymInt):
        raise AssertionError("can only constrain range for SymInt")
    if not isinstance(a.node.expr, sympy.Symbol):
        raise AssertionError("constraining non-Symbols NYI")
    a.node.shape_env._constrain_range_for_size(a.node.expr, min, max)


def _advise_is_size(a: Any) -> None:
    """torch._check_is_size's hint: an unbacked symbol is a size (range [0, ...])."""
    import sympy
    if isinstance(a, SymInt) and isinstance(a.node.expr, sympy.Symbol) and \
            a.node.shape_env.is_unbacked_symint(a.node.expr):
        a.node.shape_env._constrain_range_for_size(a.node.expr)


def _advise_is_bounded(a: Any, upper_bound: Any) -> None:
    """torch._check_is_size(max=)'s hint: an unbacked size's upper bound."""
    import sympy

    from fake_torch.utils._sympy.value_ranges import ValueRanges
    if isinstance(a, SymInt) and isinstance(a.node.expr, sympy.Symbol) and \
            a.node.shape_env.is_unbacked_symint(a.node.expr) and isinstance(upper_bound, int):
        a.node.shape_env._update_var_to_range(a.node.expr, ValueRanges(0, upper_bound))


# what torch._check asks of a symbolic condition (fake_torch/_checks.py)
_checks.symbolic_shapes.expect_true = expect_true
_checks.symbolic_shapes.advise_is_size = _advise_is_size
_checks.symbolic_shapes.advise_is_bounded = _advise_is_bounded


def is_concrete_float(a: Any) -> bool:
    """True for a float, or a SymFloat whose expression is a constant."""
    if not isinstance(a, (SymFloat, float)):
        raise AssertionError(f"Expected SymFloat or float, got {type(a)}")
    return isinstance(a, float) or bool(a.node.expr.is_Float)


def is_nested_int(s: Any) -> bool:
    """Nested (jagged) ints are not emulated: always False."""
    return isinstance(s, SymInt) and bool(s.node.is_nested_int())


def has_static_value(a: Any) -> bool:
    """True for a constant, or a symbolic value whose range is a single value."""
    if not isinstance(a, (bool, int, float, *SymTypes)):
        raise AssertionError(f"Expected BoolLike/FloatLike/IntLike, got {type(a)}")
    if (isinstance(a, (bool, SymBool)) and is_concrete_bool(a)) or \
            (isinstance(a, (float, SymFloat)) and is_concrete_float(a)) or \
            (isinstance(a, (int, SymInt)) and not isinstance(a, bool) and is_concrete_int(a)):
        return True
    node: Any = getattr(a, "node", None)
    if node is None:
        raise AssertionError(f"Expected py_sym_types, got {type(a)}")
    return bool(node.shape_env.bound_sympy(node.expr).is_singleton())


def has_free_unbacked_symbols(x: Any) -> bool:
    return bool(free_unbacked_symbols(x))


def sym_and(x: Any, *others: Any) -> Any:
    """`x and others...` kept symbolic (no bool())."""
    for y in others:
        x = x & y
    return x


def sym_or(x: Any, *others: Any) -> Any:
    """`x or others...` kept symbolic (no bool())."""
    for y in others:
        x = x | y
    return x


def guard_scalar(a: Any) -> bool | int | float:
    """The concrete value of a (possibly symbolic) bool, int or float, guarding on it."""
    if isinstance(a, (SymBool, bool)):
        return guard_bool(a)
    if isinstance(a, (SymInt, int)):
        return guard_int(a)
    if isinstance(a, (SymFloat, float)):
        return guard_float(a)
    raise AssertionError(f"unrecognized scalar {a}")


def guarding_hint_or_throw(a: Any) -> int | bool:
    """A symbolic value's hint (GuardOnDataDependentSymNode for an unbacked one)."""
    if isinstance(a, SymNode):
        if a._hint is not None:
            return a._hint  # type: ignore[no-any-return]
        a._hint = a.shape_env.guarding_hint_or_throw(a.expr)
        return a._hint  # type: ignore[no-any-return]
    if isinstance(a, (SymInt, SymBool)):
        return guarding_hint_or_throw(a.node)
    if isinstance(a, bool):
        return a
    if type(a) is not int:
        raise AssertionError(f"Expected int, got {type(a)}")
    return a


def optimization_hint(a: Any, fallback: int | None = None) -> int:
    """A SymInt's hint, or for an unbacked one its planning value (see ShapeEnv's)."""
    if isinstance(a, SymInt):
        if a.node._hint is not None:
            return a.node._hint  # type: ignore[no-any-return]
        return a.node.shape_env.optimization_hint(a.node.expr,  # type: ignore[no-any-return]
                                                  fallback=fallback)
    if type(a) is not int:
        raise AssertionError(f"Expected int, got {type(a)}")
    return a


def create_contiguous(shape: Sequence[Any]) -> list[Any]:
    """Row-major strides for `shape` (products of the later sizes, symbolic or not)."""
    strides: list[Any] = [1]
    for dim in reversed(shape[:-1]):
        strides.append(dim * strides[-1])
    return list(reversed(strides))
