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
from collections.abc import Callable
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


def concrete(value: Any) -> Any:
    """A call's argument with every SymInt replaced by its hint (what the kernels run at)."""
    if isinstance(value, Sym):
        return value.node.hint
    if isinstance(value, tuple):
        items = [concrete(v) for v in value]
        if hasattr(value, "_fields"):
            return type(value)(*items)
        return tuple(items) if type(value) is tuple else type(value)(items)  # torch.Size
    if isinstance(value, list):
        return [concrete(v) for v in value]
    if isinstance(value, dict):
        return {k: concrete(v) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(concrete(value.start), concrete(value.stop), concrete(value.step))
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
            expr = self.env.create_symbol(n, source, dynamic_dim=self._dynamic)
            if isinstance(expr, sympy.Symbol):
                self.places.setdefault(expr, []).append((leaf, d))
                if d in getattr(t, "_dynamo_dynamic_indices", ()):
                    self.marked.setdefault(expr, source)
                sizes.append(self.env.create_symintnode(expr, hint=n, source=source))
            else:  # specialised (a 0/1 size)
                sizes.append(n)
        return sizes

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
                         fake: Callable[[Any], Any]) -> Any:
        """The example value of a custom op's result, which its fake implementation made at
        the hints: a size equal to the hint of a symbol among the inputs' sizes is taken as
        that symbol (torch runs the fake on symbolic tensors instead; an op whose output has a
        static size equal to a symbol's hint is described wrongly here)."""
        by_hint: dict[int, Any] = {}
        for ex in inputs:
            for size in ex.shape if is_symbolic(ex) else ():
                if isinstance(size, SymInt) and size.node.expr.is_Symbol:
                    by_hint.setdefault(size.node.hint, size)
        return self._by_hints(result, by_hint, fake)

    def _by_hints(self, result: Any, by_hint: dict[int, Any], fake: Callable[[Any], Any]) -> Any:
        from fake_torch._memory_format import contiguous_strides

        if isinstance(result, Tensor):
            if not any(n in by_hint for n in result.shape):  # (no SymInt compared: no guard)
                return fake(result)
            shape = tuple(by_hint.get(n, n) for n in result.shape)
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
            return value.node.hint

    def _materialize(self, expr: Any, graph: Graph,
                     symbol_node: Callable[[Any], Node | None]) -> Any:
        import sympy

        from fake_torch.utils._sympy import functions as fn

        if expr.is_Integer:
            return int(expr)
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
        else:
            raise NotImplementedError(f"fake_torch.compile: no graph node for the size "
                                      f"expression {expr} ({type(expr).__name__})")
        node.meta["example_value"] = self._symint(expr)
        self._expr_nodes[key] = node
        return node

    def _symint(self, expr: Any) -> SymInt:
        """A SymInt for `expr` (what a size node's example value is)."""
        from fake_torch.fx.experimental.sym_node import SymNode

        return SymInt(SymNode(expr, self.env, int, self.env.optimization_hint(expr)))

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


def _ordered(expr: Any, args: list[Any]) -> list[Any]:
    """A sum or product's operands as torch writes them: the symbolic ones first, then the
    number (`s77 * 4`, `s77 + 1`)."""
    nodes = [a for a in args if not isinstance(a, int)]
    numbers = [a for a in args if isinstance(a, int)]
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
