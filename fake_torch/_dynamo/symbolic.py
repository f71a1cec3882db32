"""Symbolic sizes in a trace: the ShapeEnv of one compile, the symbols its dynamic input dims
become, the example values ops make from their output rules, and the graph nodes that compute
a size.

An argument tensor's dynamic dim (mark_dynamic, dynamic=True, or a dim that changed before a
recompile) is a backed symbol named as torch names it (`s77` for `L['x'].size()[0]`); the
placeholder of the symbol comes right before the tensor's, and the tensor's example value is a
FakeTensor of size `(s77, 4)`. The user's Python sees SymInts wherever it asks for a size
(tracing_mode answers `x.shape`, `x.size(0)`, `x.numel()` from the example value), branching on
one records a guard, and an op given a SymInt or a tensor with symbolic sizes gets its example
value from its output rule (fake_torch/_meta_registrations.py: the same rule the meta device
checks). The kernels still run at the hints: the graph is built once and runs at every size its
guards accept, the symbols' values read from the arguments' sizes.

A SymInt in a node's arguments becomes the nodes computing its expression from the symbols'
placeholders (`mul = s77 * 4`), made once per graph.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from fake_torch import _meta_registrations, _opdef
from fake_torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from fake_torch._sym import SymBool, SymFloat, SymInt, sym_max, sym_min
from fake_torch._tensor import Tensor

if TYPE_CHECKING:
    from fake_torch.fx import Graph, Node

Sym = (SymInt, SymFloat, SymBool)


def has_symbols(value: Any) -> bool:
    """Whether a call's argument holds a SymInt (in containers and slices too)."""
    if isinstance(value, Sym):
        return True
    if isinstance(value, (tuple, list)):
        return any(has_symbols(v) for v in value)
    if isinstance(value, dict):
        return any(has_symbols(v) for v in value.values())
    if isinstance(value, slice):
        return has_symbols(value.start) or has_symbols(value.stop) or has_symbols(value.step)
    return False


def concrete(value: Any, trace: SymbolicTrace | None = None) -> Any:
    """A call's argument with every SymInt replaced by its hint (what the kernels run at);
    an unbacked one (no hint) by its value in `trace` (SymbolicTrace.value_of)."""
    if isinstance(value, Sym):
        hint = value.node.hint
        return hint if hint is not None or trace is None else trace.value_of(value)
    if isinstance(value, tuple):
        items = [concrete(v, trace) for v in value]
        if hasattr(value, "_fields"):
            return type(value)(*items)
        return tuple(items) if type(value) is tuple else type(value)(items)  # torch.Size
    if isinstance(value, list):
        return [concrete(v, trace) for v in value]
    if isinstance(value, dict):
        return {k: concrete(v, trace) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(concrete(value.start, trace), concrete(value.stop, trace),
                     concrete(value.step, trace))
    return value


def is_symbolic(t: Any) -> bool:
    """A FakeTensor example value with a SymInt among its sizes, strides or offset."""
    return isinstance(t, FakeTensor) and t._sym_shape is not None and (
        has_symbols(t._sym_shape) or has_symbols(t._sym_stride) or has_symbols(t._sym_offset))


def _source(leaf_name: str, dim: int) -> str:
    key = leaf_name if leaf_name.isidentifier() else repr(leaf_name)
    return f"L['{key}'].size()[{dim}]"


class SymbolicTrace:
    """The symbols of one compile: its ShapeEnv, where each symbol's value comes from, and
    the graph nodes made for expressions."""

    def __init__(self, duck: bool = False) -> None:
        from fake_torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv

        self.env = ShapeEnv()
        self.fake_mode = FakeTensorMode(shape_env=self.env)
        # as Dynamo: a marked or automatically dynamic dim gets a symbol of its own
        # (DYNAMIC); under dynamic=True equal sizes share one (DUCK)
        self._dynamic = DimDynamic.DUCK if duck else DimDynamic.DYNAMIC
        # symbol -> every (argument leaf, dim) whose size it stands for
        self.places: dict[Any, list[tuple[int, int]]] = {}
        self.marked: dict[Any, str] = {}  # symbol -> source, for dims mark_dynamic marked
        self._expr_nodes: dict[tuple[int, Any], Any] = {}  # (id(graph), expr) -> node
        # unbacked symbols (u0, zuf0): the number the kernels run at while tracing (they have
        # no hint), and, once a graph break ran the graph that defines one, its real value
        self.trace_values: dict[Any, int | float] = {}
        self.resolved: dict[Any, int | float] = {}

    # --- unbacked symbols ---------------------------------------------------------------------

    def new_unbacked(self, pytype: type, trace_value: int | float | None = None,
                     min: int | None = None, max: int | None = None) -> Any:
        """A fresh unbacked SymInt (a size in [min, max] when min is given) or SymFloat."""
        from fake_torch.fx.experimental.symbolic_shapes import _constrain_range_for_size

        if pytype is float:
            value: Any = self.env.create_unbacked_symfloat()
        else:
            value = self.env.create_unbacked_symint()
            if min is not None:
                _constrain_range_for_size(value, min=min, max=max)
        if trace_value is not None:
            self.trace_values[value.node.expr] = trace_value
        return value

    def value_of(self, value: Any) -> Any:
        """A symbolic value's number: its hint, else with each unbacked symbol at its real
        value (after a break) or its trace value (while its graph is open)."""
        import sympy

        if value.node.hint is not None:
            return value.node.hint
        expr = self.env.replace(value.node.expr)
        known = {**self.env.backed_var_to_val}
        for s in expr.free_symbols:
            if s in self.resolved:
                known[s] = self.resolved[s]
            elif s in self.trace_values:
                known[s] = self.trace_values[s]
            elif s not in known:
                known[s] = self._default_trace_value(s)
        out = sympy.sympify(expr.xreplace({k: sympy.sympify(v) for k, v in known.items()}))
        if out in (sympy.true, sympy.false):
            return bool(out)
        return float(out) if value.node.pytype is float else int(out)

    def oblivious(self, expr: Any) -> Any:
        """`expr` decided with each unbacked symbol of range [0 or more, ...] taken as at
        least 2 (torch's size-oblivious reasoning: an empty or size-1 dim is not assumed),
        or None when that does not decide it."""
        from fake_torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
        from fake_torch.utils._sympy.value_ranges import ValueRanges

        ranges = dict(self.env.var_to_range)
        for s in free_unbacked_symbols(expr):
            vr = ranges.get(s)
            if vr is not None and vr.lower >= 0 and vr.upper >= 2:
                ranges[s] = ValueRanges(max(2, vr.lower), vr.upper)
        return self.env._maybe_evaluate_static(expr, var_to_range=tuple(ranges.items()))

    def settle(self, value: Any) -> Any:
        """A call's argument with each symbolic number whose unbacked symbols an earlier
        graph computed replaced by its value (after a break it is a constant, as torch passes
        it to the resumed code)."""
        from fake_torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

        if isinstance(value, Sym):
            fs = free_unbacked_symbols(value.node.expr)
            return self.value_of(value) if fs and fs <= self.resolved.keys() else value
        if isinstance(value, (tuple, list)) and has_symbols(value):
            items = [self.settle(v) for v in value]
            if hasattr(value, "_fields"):
                return type(value)(*items)
            return tuple(items) if type(value) is tuple else type(value)(items)
        if isinstance(value, dict) and has_symbols(value):
            return {k: self.settle(v) for k, v in value.items()}
        return value

    def fake_impl_value(self, symbol: Any) -> int:
        """The trace value of a size a fake impl made (new_dynamic_size): a number unlikely
        to be any other size of its output (997, 1009, ... within its range), so that the
        output's dims of that size are known to be it."""
        if symbol not in self.trace_values:
            value = 997 + 12 * int(symbol.name[1:])
            vr = self.env.var_to_range.get(symbol)
            if vr is not None:
                if vr.upper.is_Integer:
                    value = min(value, int(vr.upper))
                if vr.lower.is_Integer:
                    value = max(value, int(vr.lower))
            self.trace_values[symbol] = value
        return int(self.trace_values[symbol])

    def _default_trace_value(self, symbol: Any) -> int:
        """The number an unbacked size runs at while traced when none was given: its
        hint_override, else 2 (not 0 or 1, which broadcast and specialise) within its range."""
        value = self.env.var_to_hint_override.get(symbol, 2)
        vr = self.env.var_to_range.get(symbol)
        if vr is not None:
            if vr.lower.is_Integer:
                value = max(value, int(vr.lower))
            if vr.upper.is_Integer:
                value = min(value, int(vr.upper))
        self.trace_values[symbol] = value
        return value

    def pending(self, expr: Any) -> list[Any]:
        """The unbacked symbols of `expr` whose values are not known yet."""
        from fake_torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

        return [s for s in free_unbacked_symbols(expr) if s not in self.resolved]

    # --- inputs -------------------------------------------------------------------------------

    def input_sizes(self, t: Tensor, leaf: int, leaf_name: str,
                    dims: frozenset[int]) -> list[Any]:
        """`t`'s sizes with its dynamic dims as SymInts."""
        import sympy

        sizes: list[Any] = []
        for d, n in enumerate(t.shape):
            if d not in dims:
                sizes.append(n)
                continue
            source = _source(leaf_name, d)
            if d in getattr(t, "_dynamo_unbacked_indices", ()):  # mark_unbacked: no hint
                sizes.append(self._unbacked_input(t, d, n, source))
                self.places.setdefault(sizes[-1].node.expr, []).append((leaf, d))
                continue
            expr = self.env.create_symbol(n, source, dynamic_dim=self._dynamic)
            if isinstance(expr, sympy.Symbol):
                self.places.setdefault(expr, []).append((leaf, d))
                if d in getattr(t, "_dynamo_dynamic_indices", ()):
                    self.marked.setdefault(expr, source)
                sizes.append(self.env.create_symintnode(expr, hint=n, source=source))
            else:  # specialised (a 0/1 size)
                sizes.append(n)
        return sizes

    def _unbacked_input(self, t: Tensor, d: int, n: int, source: str) -> Any:
        """mark_unbacked's dim: an unbacked size symbol (`u0`) whose optimization hint is
        hint_override, with its min/max and shape_id checks; the kernels run at `n`."""
        from fake_torch.fx.experimental.symbolic_shapes import (
            DimDynamic,
            StatelessSymbolicContext,
        )

        expr = self.env.create_symbol(n, source, dynamic_dim=DimDynamic.UNBACKED)
        override = getattr(t, "_dynamo_hint_overrides", {}).get(d)
        if override is not None:
            self.env.var_to_hint_override[expr] = override
        ctx = StatelessSymbolicContext(
            [DimDynamic.UNBACKED] * t.dim(),
            shape_ids=getattr(t, "_dynamo_shape_ids", None),
            unbacked_bounds=getattr(t, "_dynamo_unbacked_bounds", None))
        self.env._unbacked_dim_checks(expr, ctx, d)
        self.trace_values[expr] = n
        return self.env.create_symintnode(expr, hint=None)

    def example_of_input(self, fake: Tensor, t: Tensor, sizes: list[Any]) -> FakeTensor:
        """The example value of an argument tensor with symbolic `sizes` (over `fake`'s zeros):
        a contiguous tensor's strides are the symbolic contiguous strides, any other keeps
        its own (specialised)."""
        from fake_torch._memory_format import contiguous_strides

        strides = contiguous_strides(sizes) if t.is_contiguous() else tuple(t.stride())
        return FakeTensor.symbolic(fake, tuple(sizes), tuple(strides), t.storage_offset(),
                                   self.fake_mode)

    # --- ops ----------------------------------------------------------------------------------

    def output_example(self, opdef: _opdef.OpDef, args: tuple[Any, ...],
                       kwargs: dict[str, Any], result: Any,
                       example: Callable[[Tensor], Any], fake: Callable[[Any], Any]) -> Any:
        """The example value of an op's result: its output rule run on the arguments' example
        values (`example(t)`), laid over `fake(result)`'s memory."""
        sym_args = _map_tensors(args, example)
        sym_kwargs = _map_tensors(kwargs, example)
        described = _meta_registrations.run_rule(opdef, sym_args, sym_kwargs)
        return self._examples(described, result, fake)

    def _examples(self, described: Any, result: Any, fake: Callable[[Any], Any]) -> Any:
        if isinstance(described, _meta_registrations.TensorMeta):
            assert isinstance(result, Tensor), "a rule described a tensor the op did not return"
            return FakeTensor.symbolic(fake(result), described.shape, described.stride,
                                       described.storage_offset, self.fake_mode)
        if isinstance(described, (tuple, list)) and isinstance(result, (tuple, list)):
            items = [self._examples(d, r, fake) for d, r in zip(described, result, strict=True)]
            return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
        return fake(result)

    def example_by_hints(self, inputs: list[Any], result: Any,
                         fake: Callable[[Any], Any], made: Sequence[Any] = ()) -> Any:
        """The example value of a custom op's result, which its fake implementation made at
        the hints: a size equal to the hint of a symbol among the inputs' sizes, or to the
        trace value of an unbacked size it made (`made`: get_ctx().new_dynamic_size()), is
        taken as that symbol (torch runs the fake on symbolic tensors instead; an op whose
        output has a static size equal to such a number is described wrongly here)."""
        by_hint: dict[int, Any] = {}
        for u in made:
            by_hint[int(self.trace_values.get(u.node.expr, -1))] = u
        for ex in inputs:
            for size in ex.shape if is_symbolic(ex) else ():
                if isinstance(size, SymInt) and size.node.expr.is_Symbol:
                    by_hint.setdefault(size.node.hint, size)
        return self._by_hints(result, by_hint, fake)

    def _by_hints(self, result: Any, by_hint: dict[int, Any], fake: Callable[[Any], Any]) -> Any:
        from fake_torch._memory_format import contiguous_strides

        if isinstance(result, Tensor):
            shape = tuple(by_hint.get(n, n) for n in result.shape)
            if not any(isinstance(n, SymInt) for n in shape):  # (no SymInt compared: no guard)
                return fake(result)
            strides = contiguous_strides(shape) if result.is_contiguous() else result.stride()
            return FakeTensor.symbolic(fake(result), shape, tuple(strides),
                                       result.storage_offset(), self.fake_mode)
        if isinstance(result, (tuple, list)):
            items = [self._by_hints(r, by_hint, fake) for r in result]
            return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
        return fake(result)

    # --- nodes --------------------------------------------------------------------------------

    def node_of(self, value: Any, graph: Graph, symbol_node: Callable[[Any], Node | None]
                ) -> Any:
        """What a node argument holds for a SymInt: the nodes computing its expression from
        the symbols' placeholders (`symbol_node(symbol)`), or its hint where a symbol has no
        placeholder in this graph (a later graph of a frame whose Python runs every call)."""
        try:
            return self._materialize(value.node.expr, graph, symbol_node)
        except _NoPlaceholder:
            return self.value_of(value)

    def _materialize(self, expr: Any, graph: Graph,
                     symbol_node: Callable[[Any], Node | None]) -> Any:
        import sympy

        from fake_torch.utils._sympy import functions as fn

        if expr.is_Integer:
            return int(expr)
        if expr.is_Float:
            return float(expr)
        key = (id(graph), expr)
        found = self._expr_nodes.get(key)
        if found is not None and found.graph is graph:
            return found
        if expr.is_Symbol:
            node = symbol_node(expr)
            if node is None:
                raise _NoPlaceholder(str(expr))
            return node
        args = [self._materialize(a, graph, symbol_node) for a in expr.args]
        if isinstance(expr, sympy.Add):
            node = _fold(graph, operator.add, _ordered(expr, args))
        elif isinstance(expr, sympy.Mul):
            node = _fold(graph, operator.mul, _ordered(expr, args))
        elif isinstance(expr, fn.FloorDiv):
            node = graph.call_function(operator.floordiv, tuple(args))
        elif isinstance(expr, (fn.PythonMod, fn.Mod)):
            node = graph.call_function(operator.mod, tuple(args))
        elif isinstance(expr, (sympy.Pow, fn.PowByNatural)):
            node = graph.call_function(operator.pow, tuple(args))
        elif isinstance(expr, sympy.Max):
            node = _fold(graph, sym_max, args)
        elif isinstance(expr, sympy.Min):
            node = _fold(graph, sym_min, args)
        elif type(expr) in _RELATIONS:
            node = _compare(graph, type(expr), args)
        else:
            raise NotImplementedError(f"fake_torch.compile: no graph node for the size "
                                      f"expression {expr} ({type(expr).__name__})")
        node.meta["example_value"] = self._symint(expr)
        self._expr_nodes[key] = node
        return node

    def remember(self, graph: Graph, expr: Any, node: Node) -> None:
        """`node` computes `expr` in `graph` (the traced code's own arithmetic): a SymInt of
        that expression given to an op is that node."""
        self._expr_nodes[(id(graph), expr)] = node

    def _symint(self, expr: Any) -> Any:
        """A SymInt (SymBool for a relation) for `expr`: what a size node's example value is."""
        from fake_torch.fx.experimental.sym_node import SymNode
        from fake_torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

        if type(expr) in _RELATIONS:
            return SymBool(SymNode(expr, self.env, bool, None))
        hint = None if free_unbacked_symbols(expr) else self.env.optimization_hint(expr)
        if not expr.is_integer:
            return SymFloat(SymNode(expr, self.env, float, hint))
        return SymInt(SymNode(expr, self.env, int, hint))

    def assertions(self, graph: Graph, defined: list[tuple[Any, Node]],
                   symbol_node: Callable[[Any], Node | None]) -> None:
        """torch's runtime asserts for the unbacked symbols a graph defines (`defined`, in
        order: symbol, defining node), each right after its definition: the symbol's range
        (`u0 >= 0`), then the torch._check conditions whose newest symbol it is."""
        import sympy

        from fake_torch.fx.experimental._aten_overloads import overload
        from fake_torch.fx.experimental.symbolic_shapes import _is_unbacked

        assert_scalar = overload("_assert_scalar", "default")
        added: set[Any] = set()
        # (fresh nodes: one the traced code made may come after the definition)
        saved, self._expr_nodes = self._expr_nodes, {}
        for symbol, node in defined:
            checks = []
            vr = self.env.var_to_range.get(symbol)
            if vr is not None and vr.is_int:
                if vr.lower.is_Integer:
                    checks.append(sympy.Ge(symbol, vr.lower))
                if vr.upper.is_Integer and vr.upper != sys.maxsize - 1:  # (that is no bound)
                    checks.append(sympy.Le(symbol, vr.upper))
            for ra in self.env.deferred_runtime_asserts.get(symbol, []):
                bound = len(ra.expr.free_symbols) == 1 and isinstance(ra.expr, sympy.Rel) \
                    and any(side.is_number for side in ra.expr.args)
                if not bound:
                    checks.append(ra.expr)
            # an input's symbol is asserted after every input
            after = node if node.op != "placeholder" else \
                next(n for n in graph.nodes if n.op != "placeholder").prev
            stack_trace = (node if node.op != "placeholder" else after.next).meta.get(
                "stack_trace")
            for check in checks:
                if check in added or any(_is_unbacked(s) and symbol_node(s) is None
                                         for s in check.free_symbols):
                    continue
                added.add(check)
                with graph.inserting_before(after.next):
                    cond = self._materialize(check, graph, symbol_node)
                    cond.meta.setdefault("stack_trace", stack_trace)
                    after = graph.call_function(
                        assert_scalar, (cond, f"Runtime assertion failed for expression "
                                              f"{check} on node '{cond.name}'"),
                        name="_assert_scalar_default")
                    after.meta["stack_trace"] = stack_trace
        self._expr_nodes = saved

    # --- guards -------------------------------------------------------------------------------

    def check_marked(self) -> None:
        """torch's ConstraintViolationError when the code specialised a dim the user marked
        dynamic (`range(x.size(1))`, `if n == m:` at equal sizes, `int(n)` here too)."""
        from fake_torch.fx.experimental.symbolic_shapes import ConstraintViolationError

        for symbol, source in self.marked.items():
            value = self.env.replace(symbol)
            if value.is_number:
                raise ConstraintViolationError(
                    f"Constraints violated ({source})! For more information, run with "
                    'TORCH_LOGS="+dynamic".\n'
                    f"  - You marked {source} as dynamic but your code specialized it to be a "
                    f"constant ({value}). If you're using mark_dynamic, either remove it or "
                    "use maybe_mark_dynamic. If you're using Dim.DYNAMIC, replace it with "
                    "either Dim.STATIC or Dim.AUTO.")

    def bindings(self, sizes: Callable[[int, int], int]) -> tuple[dict[Any, int], str | None]:
        """Each symbol's value from the arguments (`sizes(leaf, dim)`), or the first place
        whose size disagrees with another place of the same symbol."""
        values: dict[Any, int] = {}
        for symbol, places in self.places.items():
            for leaf, dim in places:
                n = sizes(leaf, dim)
                if symbol in values and values[symbol] != n:
                    return values, f"Eq({symbol}, {n})"
                values[symbol] = n
        return values, None

    def guards_hold(self, values: dict[Any, int]) -> str | None:
        """None when the ShapeEnv's guards, replacements and ranges accept `values`, else the
        guards as text (what failed)."""
        if self.env.guards_hold(values):
            return None
        return " and ".join(str(g.expr) for g in self.env.guards) or "symbol ranges"


class _NoPlaceholder(Exception):
    pass


def _relations() -> dict[type, tuple[Callable[..., Any], Callable[..., Any]]]:
    import sympy

    return {sympy.GreaterThan: (operator.ge, operator.le),
            sympy.StrictGreaterThan: (operator.gt, operator.lt),
            sympy.LessThan: (operator.le, operator.ge),
            sympy.StrictLessThan: (operator.lt, operator.gt),
            sympy.Equality: (operator.eq, operator.eq),
            sympy.Unequality: (operator.ne, operator.ne)}


class _LazyRelations(dict):  # type: ignore[type-arg]
    """sympy's relation classes -> (operator, its mirror), filled at first use (no sympy
    import when this module is)."""

    def __contains__(self, key: object) -> bool:
        if not self:
            self.update(_relations())
        return super().__contains__(key)


_RELATIONS = _LazyRelations()


def _compare(graph: Graph, rel: type, args: list[Any]) -> Any:
    """`u0 >= 0` as a node; a number on the left is turned round, as Python reflects
    `0 <= u0` to `u0.__ge__(0)`."""
    op, mirror = _RELATIONS[rel]
    lhs, rhs = args
    if isinstance(lhs, (int, float)) and not isinstance(rhs, (int, float)):
        return graph.call_function(mirror, (rhs, lhs))
    return graph.call_function(op, (lhs, rhs))


def _ordered(expr: Any, args: list[Any]) -> list[Any]:
    """A sum or product's operands as torch writes them: the symbolic ones first, then the
    number (`s77 * 4`, `s77 + 1`)."""
    nodes = [a for a in args if not isinstance(a, (int, float))]
    numbers = [a for a in args if isinstance(a, (int, float))]
    return nodes + numbers


def _fold(graph: Graph, op: Callable[..., Any], args: list[Any]) -> Any:
    node = args[0]
    for a in args[1:]:
        node = graph.call_function(op, (node, a))
    return node


def _map_tensors(value: Any, fn: Callable[[Tensor], Any]) -> Any:
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, tuple):
        items = tuple(_map_tensors(v, fn) for v in value)
        return type(value)(*items) if hasattr(value, "_fields") else items
    if isinstance(value, list):
        return [_map_tensors(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    return value


__all__ = ["SymbolicTrace", "concrete", "has_symbols", "is_symbolic"]
