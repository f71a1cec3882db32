"""Unbacked symbols in a trace (`u0`, `zuf0`: numbers known only when the graph runs), the
tracer's share of them: where they come from, how the graph defines them, and what happens
when Python needs one's value.

  - `.item()` under capture_scalar_outputs (capture_item): an `item` node;
  - nonzero / masked_select under capture_dynamic_output_shape_ops (dynamic_output): the op's
    node, its output's leading size read by a `sym_size_int` node;
  - a custom op's fake impl calling `torch.library.get_ctx().new_dynamic_size()` (run_fake):
    the op's node (the size itself, or a dim of the tensor it returns);
  - a mark_unbacked input dim: its placeholder (symbolic.py).
Each is bound to the node that defines it (define_unbacked); the runtime asserts of its range
and torch._check conditions follow that node (SymbolicTrace.assertions, at the graph's close).
Arithmetic the traced code does on one is recorded where it happens (`mul = item * 2`).
Python needing a value (`if n > 2:`, `int(n)`) reaches the ShapeEnv's data-dependent hook
(data_dependent): torch's error under fullgraph, else a graph break, after which the graph
that defines the symbol has run and its value is known (later graphs take it as a constant).
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fake_torch._dynamo import graph_breaks as gb
from fake_torch._dynamo import symbolic
from fake_torch._dynamo.exc import UserError, UserErrorType
from fake_torch._dynamo.state import _state
from fake_torch._tensor import Tensor
from fake_torch.fx import Node

if TYPE_CHECKING:
    from fake_torch._dynamo.trace import Segment


class UnbackedTracing:
    """The Tracer's methods for unbacked symbols (a base of trace.Tracer)."""

    segment: Segment | None
    sym: symbolic.SymbolicTrace | None
    fullgraph: bool
    duck: bool
    capture_dynamic: bool
    _fake_from: int | None
    _sym_values: dict[int, tuple[Any, Any]]

    if TYPE_CHECKING:
        def suspended(self) -> AbstractContextManager[None]: ...
        def make_break(self, text: str, explain_reason: str | None = None,
                       counter: str = "graph_break") -> gb.GraphBreak: ...
        def graph_break(self, brk: gb.GraphBreak) -> None: ...
        def _stack_trace(self) -> str: ...
        def map_args(self, value: Any) -> Any: ...
        def bind(self, result: Any, node: Node) -> None: ...
        def symbolic_example(self, t: Tensor) -> Any: ...
        def node_of(self, t: Tensor) -> Node: ...

    def _settled(self, value: Any) -> Any:
        """The return value with each symbolic number its value (the graph returned it)."""
        if isinstance(value, symbolic.Sym):
            found = self._sym_values.get(id(value))
            if found is not None:
                return found[1]
            assert self.sym is not None
            return self.sym.value_of(value)
        if isinstance(value, (tuple, list)):
            items = [self._settled(v) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            if hasattr(value, "_fields"):
                return type(value)(*items)
            return type(value)(items)
        if isinstance(value, dict) and type(value) is dict:
            return {k: self._settled(v) for k, v in value.items()}
        return value

    def _display_value(self, node: Any) -> Any:
        from fake_torch.fx.experimental.sym_node import wrap_node

        if self.sym is None or node.shape_env is not self.sym.env:
            return None
        return self.sym.value_of(wrap_node(node))

    def dynamic_output(self, fn: Callable[..., Any], args: tuple[Any, ...],
                       kwargs: dict[str, Any], op: str, target: Any, name: str) -> Tensor:
        """nonzero / masked_select / `x[mask]` under capture_dynamic_output_shape_ops: one
        node whose output's leading size is a new unbacked symbol `u0` in [0, numel of the
        input or mask] (torch's fake impls), defined by a `sym_size_int` node; the kernels
        run at its trace value."""
        import sys as _sys

        from fake_torch._dtype import int64
        from fake_torch._dynamo.trace import fake_like
        from fake_torch._factories import empty_strided
        from fake_torch._memory_format import contiguous_strides
        from fake_torch._subclasses.fake_tensor import FakeTensor

        seg = self.segment
        assert seg is not None
        sym = self.ensure_sym()
        x = args[0]
        ex = self.symbolic_example(x)
        x_shape = tuple((ex if ex is not None else x).shape)
        counted = args[1] if name == "__getitem__" else x  # a mask counts its true elements
        counted_ex = self.symbolic_example(counted)
        numel = (counted_ex if counted_ex is not None else counted).numel()
        maxval = numel if isinstance(numel, int) else \
            sym.env.bound_sympy(numel.node.expr).upper
        if not isinstance(maxval, int) and not getattr(maxval, "is_Integer", False):
            maxval = _sys.maxsize - 1
        if name == "masked_select" and maxval <= 2:
            maxval = _sys.maxsize - 1
        nnz = sym.new_unbacked(int, min=0, max=int(maxval))
        shape: tuple[Any, ...]
        if name == "__getitem__":  # x[mask]: the mask's dims become one
            shape = (nnz, *x_shape[counted.dim():])
            stride: tuple[Any, ...] = contiguous_strides(shape)
        elif name == "masked_select":
            shape, stride = (nnz,), (1,)
        else:
            shape, stride = (nnz, x.dim()), (1, nnz)
        dtype = int64 if name in ("nonzero", "argwhere") else x.dtype
        _state.depth += 1
        try:  # the meta result, at the trace value
            result = empty_strided(symbolic.concrete(shape, sym), symbolic.concrete(stride, sym),
                                   dtype=dtype, device=x.device)
        finally:
            _state.depth -= 1
        node = seg.graph.create_node(op, target, self.map_args(args), self.map_args(kwargs))
        node.meta["stack_trace"] = self._stack_trace()
        self.bind(result, node)
        node.meta["example_value"] = FakeTensor.symbolic(fake_like(result), shape, stride, 0,
                                                         sym.fake_mode)
        self.define_unbacked(node)
        return result

    def _unbacked_since(self, first: int) -> list[Any]:
        """SymInts of the unbacked int symbols made since the counter was `first`."""
        if self.sym is None or self.sym.env.unbacked_symint_counter == first:
            return []
        import sympy

        from fake_torch._sym import SymInt
        from fake_torch.fx.experimental.sym_node import SymNode

        env = self.sym.env
        return [SymInt(SymNode(sympy.Symbol(f"u{i}", integer=True), env, int, None))
                for i in range(first, env.unbacked_symint_counter)]

    def run_fake(self, op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A custom op's fake impl, traced: get_ctx() makes symbols in this trace's ShapeEnv,
        and while it runs (on tensors at the hints) a size it made is its trace value."""
        from fake_torch import library

        prev = self._fake_from
        self._fake_from = self.sym.env.unbacked_symint_counter if self.sym is not None else 0
        try:
            return library.run_fake(op, args, kwargs, lambda: self.ensure_sym().fake_mode)
        finally:
            self._fake_from = prev

    def _sym_arithmetic(self, op: str, inputs: tuple[Any, ...], result: Any) -> Any:
        """The traced code's arithmetic on a number over this graph's unbacked symbols, as a
        node where it happens (`mul = item * 2`), as Dynamo records it; what an op is later
        given reuses it. Other arithmetic (sizes, inside ops) is left to the op's use."""
        seg, sym, fn = self.segment, self.sym, _SYM_OPS.get(op)
        if seg is None or sym is None or fn is None or _state.tracer is not self \
                or _state.depth or not seg.unbacked:
            return None  # (before the imports: this runs for every node a trace makes)
        from fake_torch.fx.experimental.sym_node import wrap_node
        from fake_torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

        mine = {symbol for symbol, _ in seg.unbacked}
        if not any(free_unbacked_symbols(i.expr) & mine for i in inputs if i.constant is None):
            return None
        args = []
        for i in inputs:
            if i.constant is not None:  # (as written: `v * 2` of a float v is `mul(v, 2)`)
                args.append(i.fx_node if isinstance(i.fx_node, (int, float)) else i.constant)
            elif isinstance(i.fx_node, Node) and i.fx_node.graph is seg.graph:
                args.append(i.fx_node)
            else:
                args.append(sym.node_of(wrap_node(i), seg.graph, seg.symbols.get))
        node = seg.graph.call_function(fn, tuple(args))
        node.meta["example_value"] = wrap_node(result)
        node.meta["stack_trace"] = self._stack_trace()
        sym.remember(seg.graph, result.expr, node)
        return node

    def ensure_sym(self) -> symbolic.SymbolicTrace:
        """The trace's symbols (made at the first symbol: a dynamic input, an `.item()`, an
        op's data-dependent size); its ShapeEnv asks this tracer data-dependent questions."""
        if self.sym is None:
            self.sym = symbolic.SymbolicTrace(self.duck)
            ref = weakref.ref(self)
            raise_data_dependent = self.sym.env._raise_data_dependent

            def on_data_dependent(expr: Any) -> Any:
                tracer = ref()  # (after a break, suspended, the symbols have values)
                if tracer is None or tracer.sym is None or (
                        _state.tracer is not tracer and tracer.sym.pending(expr)):
                    raise_data_dependent(expr)
                return tracer.data_dependent(expr)  # type: ignore[union-attr]
            self.sym.env.data_dependent_hook = on_data_dependent
        return self.sym

    def data_dependent(self, expr: Any) -> Any:
        """Python needs the value of `expr`, over unbacked symbols: as torch's Dynamo, an error
        under fullgraph, else a graph break (inside an op: before it), after which the
        graph that defines them has run and they have values."""
        sym = self.sym
        assert sym is not None
        pending = sym.pending(expr)
        start = self._fake_from
        if pending and start is not None and all(
                s.name[0] == "u" and int(s.name[1:]) >= start for s in pending):
            # inside a fake impl, a size it made: its trace value, for now (not cached)
            return {**sym.resolved, **{s: sym.fake_impl_value(s) for s in pending}}
        if pending and _state.depth:
            # inside an op (its output rule, its kernel): as torch's meta functions ask with
            # guard_size_oblivious / guard_or_false, a size that cannot be negative is taken
            # as neither 0 nor 1 (`numel == 0` is False); what that does not decide breaks
            decided = sym.oblivious(expr)
            if decided is not None:
                return decided
        if pending:
            if self.fullgraph:
                raise UserError(UserErrorType.DYNAMIC_CONTROL_FLOW,
                                gb.scalar_guard_error(str(expr)))
            if _state.depth:
                from fake_torch._dynamo.trace import DataDependentSync

                raise DataDependentSync("data_dependent_guard")
            brk = self.make_break(gb.branching([], None), gb.BRANCH_EXPLAIN, "unimplemented")
            with self.suspended():
                self.graph_break(brk)
            for s in sym.pending(expr):  # an input's (mark_unbacked): its size this call
                if s in sym.trace_values:
                    sym.resolved[s] = sym.trace_values[s]
        return dict(sym.resolved)

    def define_unbacked(self, node: Node) -> None:
        """Bind the new unbacked symbols of a node's example value to the node: a SymInt that
        is one (`item`, a custom op returning a size), or an output dim that is one (through
        a `sym_size_int` node, as torch reads it)."""
        from fake_torch.fx.experimental._aten_overloads import overload
        from fake_torch.fx.experimental.symbolic_shapes import _is_unbacked

        seg, sym = self.segment, self.sym
        if seg is None or sym is None:
            return
        value = node.meta.get("example_value")

        def new(v: Any) -> Any:
            if not isinstance(v, symbolic.Sym):
                return None
            e = v.node.expr
            fresh = e.is_Symbol and _is_unbacked(e) and e not in seg.symbols \
                and e not in sym.resolved
            return e if fresh else None

        if (e := new(value)) is not None:
            seg.symbols[e] = node
            seg.unbacked.append((e, node))
        elif value is not None and symbolic.is_symbolic(value):
            after = node
            for d, size in enumerate(value.shape):
                if (e := new(size)) is None:
                    continue
                with seg.graph.inserting_after(after):
                    after = seg.graph.call_function(overload("sym_size", "int"), (node, d),
                                                    name="sym_size_int")
                after.meta["example_value"] = size
                after.meta["stack_trace"] = node.meta.get("stack_trace")
                seg.symbols[e] = after
                seg.unbacked.append((e, after))

    def capture_item(self, t: Tensor) -> Any:
        """`.item()` captured (capture_scalar_outputs): an unbacked SymInt `u0` (SymFloat
        `zuf0`) defined by an `item` node; the kernels run at 1 (1.0) for it."""
        seg = self.segment
        assert seg is not None
        node = seg.graph.call_method("item", (self.node_of(t),))
        node.meta["stack_trace"] = self._stack_trace()
        floating = t.dtype.is_floating_point
        value = self.ensure_sym().new_unbacked(float if floating else int,
                                               1.0 if floating else 1)
        node.meta["example_value"] = value
        self.define_unbacked(node)
        return value

    def _returned_symbols(self, seg: Segment, result: Any) -> list[tuple[Any, Node]]:
        """(value, node) for each number over this graph's unbacked symbols that the function
        returns (`return x + 1, n` after `n = x.sum().item()`): the graph returns it."""
        from fake_torch._dynamo.reconstruct import output_values
        from fake_torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

        sym = self.sym
        if sym is None or not seg.unbacked:
            return []
        mine = {symbol for symbol, _ in seg.unbacked}
        out = []
        for v in output_values(result):
            if isinstance(v, symbolic.Sym) and free_unbacked_symbols(v.node.expr) & mine:
                out.append((v, sym.node_of(v, seg.graph, seg.symbols.get)))
        return out


@dataclass(frozen=True)
class UnbackedValue:
    """A graph output that is an unbacked symbol's value (a holder of close_segment)."""

    symbol: Any


# SymNode methods -> the operator Dynamo records for them (comparisons are not recorded: a
# torch._check's condition becomes its runtime assert, placed as torch places it)
_SYM_OPS: dict[str, Callable[..., Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "int_floordiv": operator.floordiv, "int_truediv": operator.truediv,
    "float_truediv": operator.truediv, "mod": operator.mod, "pow_by_natural": operator.pow,
    "float_pow": operator.pow, "neg": operator.neg}


__all__ = ["UnbackedTracing", "UnbackedValue"]
