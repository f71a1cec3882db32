"""Tracing: run the user's function on its real inputs under two modes, one per door.

At the API door a TracingMode (tracing_mode.py) sees every public call and records each
outermost one as one FX node; at the kernel door TraceMode runs no kernel and counts nothing:
every op still allocates its outputs (zero-filled host memory, no allocator block), so shapes,
dtypes and strides are real but values are not ("meta" tensors). Tensors map to the node that
made them or to `placeholder`s (graph inputs: the arguments' tensors, a module argument's
parameters and buffers, tensors the code found elsewhere); Python values are baked into the
node's args.

A host read (`.item()`, `print`, `if tensor:`, ...) is a GRAPH BREAK: the graph so far is closed
(its outputs are the node-made tensors still alive), handed to the SegmentCompiler
(output_graph.py: the segment cache, then the backend), RUN for real on the real inputs, and
every pending tensor object is rebound to its real value; then the read runs eagerly and
tracing goes on in a new graph (a new "segment"). The tracer knows nothing of the frame that
made it: the frame reads what the trace found (`breaks`, `final`) when `run` returns.
"""

from __future__ import annotations

import linecache
import operator
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import CodeType
from typing import TYPE_CHECKING, Any

import numpy as np

from fake_torch import _generator, _opdef, _ops, _torch_function
from fake_torch._dynamo import graph_breaks as gb
from fake_torch._dynamo import symbolic
from fake_torch._dynamo.exc import InternalTorchDynamoError, Unsupported, UserError, UserErrorType
from fake_torch._dynamo.guards import module_tensors
from fake_torch._dynamo.state import _state, active_tracer, is_tracing
from fake_torch._dynamo.sym_number import SymFloat, SymInt, SymNumber
from fake_torch._dynamo.tracing_mode import TracingMode, builtin_watch
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Tensor, base_array
from fake_torch.fx import Graph, Node
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter

if TYPE_CHECKING:
    from fake_torch._dynamo.output_graph import SegmentCompiler
    from fake_torch._dynamo.segments import SegmentEntry, Spec


class DataDependentSync(BaseException):
    """An op read its input's data on the host while tracing: unwind to the outermost hooked
    call, which breaks the graph there and runs the op eagerly."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class TraceMode(_dispatch.Mode):
    """The door's mode while tracing: outputs are allocated, kernels do not run."""

    name = "trace"
    counts_launches = False

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = weakref.ref(tracer)  # weak: no cycle keeps a finished trace alive
        self.meta_roots: dict[int, weakref.ref[np.ndarray]] = {}

    def allocate(self, shape: tuple[int, ...], np_dtype: np.dtype[Any],
                 on_cuda: bool) -> tuple[np.ndarray, None]:
        a = np.zeros(shape, np_dtype)  # zeros: a read of a meta value is at least deterministic
        self.meta_roots[id(a)] = weakref.ref(a)
        return a, None

    def run(self, op: str, kernel: _dispatch.Kernel, outs: tuple[np.ndarray, ...],
            inputs: tuple[Any, ...], params: dict[str, Any], kind: str, on_cuda: bool) -> None:
        return None

    def host_sync(self, what: str) -> None:
        if what in ("to", "copy_"):  # a device-to-host copy is an op like any other
            return
        if _state.depth:
            raise DataDependentSync(what)
        tracer = self._tracer()
        assert tracer is not None, "a trace mode outlived its tracer"
        tracer.sync_break(what)

    def is_meta(self, t: Tensor) -> bool:
        root = base_array(t._a)
        ref = self.meta_roots.get(id(root))
        return ref is not None and ref() is root


@dataclass(frozen=True)
class Source:
    """Where a placeholder's value comes from on a later call: an argument leaf, a tensor of an
    nn.Module argument (by qualified name) or of another argument object (by path), or a
    tensor object the trace found elsewhere."""

    name: str  # placeholder name, torch style: "L_x_", "L_self_modules_lin_parameters_weight_"
    leaf: int = -1  # index into the flattened arguments (-1: not an argument)
    attr: str = ""  # qualified name inside that argument (an nn.Module), or ""
    obj: Any = None  # the tensor itself, for lifted values
    path: tuple[tuple[str, Any], ...] = ()  # inside an argument object: object_guards.Path
    dim: int = -1  # a symbol's placeholder: the size of this dim of the argument tensor


@dataclass
class FinalSegment:
    """The last graph of a trace (it ended at the return): what a direct entry is made of."""

    segment: Segment
    entry: SegmentEntry
    spec: Spec
    result: Any  # the function's return value
    holders: list[tuple[Any, Node]]  # the graph's outputs: (value, node)


def fake_like(t: Tensor) -> Tensor:
    """A tensor with t's shape, strides, dtype and device over fresh zero memory (what a node's
    meta["example_value"] holds: it keeps neither t nor its data alive)."""
    a = t._a
    if a.size and all(s >= 0 for s in a.strides):
        span = 1 + sum((n - 1) * s for n, s in zip(a.shape, a.strides, strict=True)) // a.itemsize
        view = np.lib.stride_tricks.as_strided(np.zeros(span, a.dtype), a.shape, a.strides)
    else:
        view = np.zeros(a.shape, a.dtype)
    return Tensor._make(view, t._device)


def _example(value: Any) -> Any:
    if isinstance(value, Tensor):
        return fake_like(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_example(v) for v in value) if not hasattr(value, "_fields") else \
            type(value)(*(_example(v) for v in value))
    return value


class Segment:
    """One graph under construction: the code between two graph breaks."""

    def __init__(self, index: int, rng: list[tuple[_generator.Generator, int, int]]) -> None:
        self.index = index
        self.graph = Graph()
        self.nodes: dict[int, tuple[weakref.ref[Tensor], Node]] = {}
        self.pending: dict[int, tuple[weakref.ref[Tensor], Node, tuple[int, ...]]] = {}
        self.inputs: list[Tensor] = []  # real values of the placeholders, in order
        self.sources: list[Source] = []
        self.scalars: list[SymNumber] = []
        self.symbols: dict[Any, Node] = {}  # sympy symbol -> its placeholder in this graph
        self.rng = rng  # (generator, seed, offset) when the segment began
        self.num_placeholders = 0


class Tracer:
    """One run of a compiled function's Python under tracing: its segments and breaks."""

    def __init__(self, code: CodeType | None, compiler: SegmentCompiler,
                 inputs: dict[int, Source], fullgraph: bool, capture_scalars: bool) -> None:
        self.code = code  # the compiled function's: user frames end there
        self.compiler = compiler
        self.input_sources = inputs  # id(tensor) -> source, for the arguments' tensors
        self.fullgraph = fullgraph
        self.capture_scalars = capture_scalars
        self.mode = TraceMode(self)
        self.api_mode = TracingMode(self)
        self.segment: Segment | None = None
        self.num_segments = 0
        self.breaks: list[gb.GraphBreak] = []
        # set by the frame before run(): the call's flattened arguments and what to look for
        self.spec: tuple[Any, ...] = ()
        self.leaves: list[Any] = []
        self.call_values: list[Any] = []  # the call's arguments, positional then keyword
        self.call_form: tuple[int, tuple[str, ...]] = (0, ())  # how many positional; keywords
        self.force_first = False  # a recompile: the first graph must be compiled anew
        self.expect: tuple[Any, tuple[Any, ...]] | None = None  # (direct entry, dynamic key)
        self._saved: tuple[Tracer | None, int] | None = None
        self._api_mode_on = False  # its mode is on this thread's stack (off while it handles)
        self._builtin_resumes: list[bool] = []  # one per watched builtin running eagerly
        self._scalar_ids = 0
        self.final: FinalSegment | None = None  # set when the trace reaches the return
        self._modules: dict[int, Module] = {}  # the nn.Modules the traced code called
        self._unwalked: list[Module] = []
        self._module_tensor_ids: set[int] = set()
        # symbolic sizes: id(argument tensor) -> (leaf, leaf name, dynamic dims), set by the
        # frame; the trace's symbols once the first such tensor becomes a placeholder
        self.dynamic_dims: dict[int, tuple[int, str, frozenset[int]]] = {}
        self.sym: symbolic.SymbolicTrace | None = None
        self.duck = False  # dynamic=True: equal sizes share a symbol

    # --- lifecycle ---------------------------------------------------------------------------

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call fn under tracing; every segment is compiled and run before this returns."""
        self._enter()
        self._open_segment()
        profile = sys.getprofile()
        sys.setprofile(builtin_watch(self))
        try:
            result = fn(*args, **kwargs)
        finally:
            sys.setprofile(profile)
            if _state.tracer is self:
                self._exit()
        self.close_segment(gb.GraphCompileReason("return_value", [], graph_break=False),
                          result=result)
        return result

    def _enter(self) -> None:
        self._saved = (_state.tracer, _state.depth)
        _state.tracer, _state.depth = self, 0
        _dispatch.enter_mode(self.mode)
        _torch_function.push_mode(self.api_mode)
        self._api_mode_on = True

    def _exit(self) -> None:
        """Leave both modes; whether the API mode was on the stack (it is not while it is
        handling a call: `handle` pops it, and pushes it back when the call returns)."""
        was_on = _torch_function.remove_mode(self.api_mode)
        _dispatch.exit_mode(self.mode)
        assert self._saved is not None
        _state.tracer, _state.depth = self._saved
        self._api_mode_on = was_on

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """Run eagerly inside the block (a break's host read, a graph's real run); a new segment
        opens after it."""
        depth = _state.depth
        self._exit()
        was_on = self._api_mode_on
        try:
            yield
        finally:
            self._resume(depth, was_on)

    def _resume(self, depth: int, api_mode_on: bool) -> None:
        self._saved = (_state.tracer, _state.depth)
        _state.tracer, _state.depth = self, depth
        _dispatch.enter_mode(self.mode)
        if api_mode_on:
            _torch_function.push_mode(self.api_mode)
        self._api_mode_on = api_mode_on
        if self.segment is None:
            self._open_segment()

    def begin_builtin_break(self, brk: gb.GraphBreak) -> None:
        """A watched builtin (print) is about to run: break the graph, run it eagerly."""
        if not brk.user_stack:
            brk = self.make_break(brk.text, brk.explain_reason, brk.counter)
        if self.fullgraph:
            raise Unsupported(brk.error_message(), brk.text.split("\n", 1)[0])
        self._exit()
        self._builtin_resumes.append(self._api_mode_on)
        self.graph_break(brk)

    def end_builtin_break(self) -> None:
        """The builtin returned: trace on, in a new segment."""
        self._resume(0, self._builtin_resumes.pop())

    def _open_segment(self) -> None:
        gens = [_generator.default_generator, *_generator.cuda_default_generators]
        self.segment = Segment(self.num_segments, [(g, g._seed, g._offset) for g in gens])
        self.num_segments += 1

    # --- recording ---------------------------------------------------------------------------

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             op: str, target: Any, *, node_args: tuple[Any, ...] | None = None,
             on_sync: Callable[[str], str] | None = None,
             opdef: _opdef.OpDef | None = None) -> Any:
        """Run one outermost op on meta values and record it as one node: `op` ("call_function"
        or "call_method") of `target` over `node_args` (default: the call's own args). With
        symbolic sizes among its arguments, the kernel runs at their hints and the node's
        example value comes from the op's output rule (`opdef`'s)."""
        seg = self.segment
        assert seg is not None
        mapped_args = self.map_args(args if node_args is None else node_args)
        mapped_kwargs = self.map_args(kwargs)
        sym_call = self.sym is not None and self._symbolic_call(args, kwargs)
        run_args, run_kwargs = (symbolic.concrete(args), symbolic.concrete(kwargs)) \
            if sym_call else (args, kwargs)
        _state.depth += 1
        try:
            result = fn(*run_args, **run_kwargs)
        except DataDependentSync as sync:
            _state.depth -= 1
            text = on_sync(sync.what) if on_sync is not None else gb.host_sync(sync.what)
            return self.breaking_call(gb.GraphBreak(text, text), fn, *args, **kwargs)
        except BaseException:
            _state.depth -= 1
            raise
        _state.depth -= 1
        if result is NotImplemented:
            return result
        # (before binding: an in-place op's result is its input, whose example the rule reads)
        example = self._symbolic_example(opdef, fn, args, kwargs, result) if sym_call else None
        node = seg.graph.create_node(op, target, mapped_args, mapped_kwargs)
        node.meta["stack_trace"] = self._stack_trace()
        self.bind(result, node)
        if sym_call:
            node.meta["example_value"] = example
        return result

    # --- symbolic sizes ------------------------------------------------------------------------

    def _symbolic_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
        """Whether a call's arguments hold a SymInt or a tensor with symbolic sizes."""
        if symbolic.has_symbols(args) or symbolic.has_symbols(kwargs):
            return True
        return any(isinstance(t, Tensor) and self.symbolic_example(t) is not None
                   for t in _tensors_in((args, kwargs)))

    def _symbolic_example(self, opdef: _opdef.OpDef | None, fn: Callable[..., Any],
                          args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> Any:
        sym = self.sym
        assert sym is not None
        found = opdef if opdef is not None else _opdef.def_of(fn)

        def example(t: Tensor) -> Any:
            ex = self.symbolic_example(t)
            return t if ex is None else ex

        if found is None:  # a custom op: its fake ran at the hints
            inputs = [example(t) for t in _tensors_in((args, kwargs))]
            return sym.example_by_hints(inputs, result, _example)
        return sym.output_example(found, args, kwargs, result, example, _example)

    def symbolic_example(self, t: Tensor) -> Any:
        """The FakeTensor with symbolic sizes that stands for `t` in this graph, or None."""
        seg = self.segment
        if seg is None or (self.sym is None and not self.dynamic_dims):
            return None
        entry = seg.nodes.get(id(t))
        if entry is not None and entry[0]() is t:
            ex = entry[1].meta.get("example_value")
        elif id(t) in seg.pending or (seg.index == 0 and id(t) in self.dynamic_dims):
            ex = self.node_of(t).meta.get("example_value")
        else:
            return None
        return ex if symbolic.is_symbolic(ex) else None

    def _stack_trace(self) -> str:
        """The user code that made a node, as torch's node.meta["stack_trace"] shows it."""
        frames = gb.user_frames(self.code)
        return "".join(f'  File "{f.f_code.co_filename}", line {f.f_lineno}, in '
                       f'{f.f_code.co_name}\n    '
                       f'{linecache.getline(f.f_code.co_filename, f.f_lineno or 0).strip()}\n'
                       for f in reversed(frames))

    def map_args(self, value: Any) -> Any:
        """A call's arguments with tensors (and captured scalars) replaced by their nodes."""
        if isinstance(value, Tensor):
            return self.node_of(value)
        if isinstance(value, SymNumber):
            return value._arg(self)
        if isinstance(value, symbolic.Sym):
            seg = self.segment
            if self.sym is None or seg is None:
                return value.node.hint
            return self.sym.node_of(value, seg.graph, seg.symbols.get)
        if isinstance(value, tuple):
            items = tuple(self.map_args(v) for v in value)
            return type(value)(*items) if hasattr(value, "_fields") else items
        if isinstance(value, list):
            return [self.map_args(v) for v in value]
        if isinstance(value, dict):
            return {k: self.map_args(v) for k, v in value.items()}
        if isinstance(value, slice):
            return slice(self.map_args(value.start), self.map_args(value.stop),
                         self.map_args(value.step))
        if isinstance(value, _generator.Generator):
            self._snapshot_generator(value)
        return value

    def _snapshot_generator(self, g: _generator.Generator) -> None:
        seg = self.segment
        assert seg is not None
        if all(entry[0] is not g for entry in seg.rng):
            seg.rng.append((g, g._seed, g._offset))

    def node_of(self, t: Tensor) -> Node:
        seg = self.segment
        assert seg is not None
        key = id(t)
        entry = seg.nodes.get(key)
        if entry is not None and entry[0]() is t:
            return entry[1]
        pending = seg.pending.pop(key, None)
        if pending is not None and pending[0]() is t:
            node = pending[1]
            parent = node.meta.get("example_value")
            for i in pending[2]:
                node = seg.graph.call_function(operator.getitem, (node, i))
                parent = parent[i] if isinstance(parent, (tuple, list)) else None
            node.meta["example_value"] = parent if symbolic.is_symbolic(parent) \
                else fake_like(t)
            seg.nodes[key] = (weakref.ref(t), node)
            return node
        return self._placeholder(t)

    def _placeholder(self, t: Tensor) -> Node:
        seg = self.segment
        assert seg is not None
        if self.mode.is_meta(t):
            raise InternalTorchDynamoError(
                "fake_torch.compile: a tensor made while tracing reached an op without passing "
                "through a traced call (an op the tracer does not hook). Please report it.")
        source = self.input_sources.get(id(t)) if seg.index == 0 else None
        if source is None or (source.obj is not None and source.obj is not t):
            source = Source(f"L_lifted_{seg.num_placeholders}_", obj=t)
        dynamic = self.dynamic_dims.get(id(t)) if seg.index == 0 and source.leaf >= 0 \
            and not source.attr and not source.path else None
        example = fake_like(t)
        if dynamic is not None:
            example = self._symbolic_input(t, dynamic, example)
        node = self._new_placeholder(source.name)
        node.meta["example_value"] = example
        static = self._static_type(t, source)
        if static is not None:  # its address stays put: CUDA graph trees never copy it
            node.meta["tensor_dict"] = {"_dynamo_static_input_type": static}
        seg.num_placeholders += 1
        seg.inputs.append(t)
        seg.sources.append(source)
        seg.nodes[id(t)] = (weakref.ref(t), node)
        return node

    def _new_placeholder(self, name: str) -> Node:
        """A placeholder after the graph's others (they come before every other node)."""
        seg = self.segment
        assert seg is not None
        first = next((n for n in seg.graph.nodes if n.op != "placeholder"), None)
        if first is None:
            return seg.graph.placeholder(name)
        with seg.graph.inserting_before(first):
            return seg.graph.placeholder(name)

    def _symbolic_input(self, t: Tensor, dynamic: tuple[int, str, frozenset[int]],
                        fake: Tensor) -> Any:
        """An argument tensor with dynamic dims: a placeholder for each new symbol (before the
        tensor's), and the tensor's example value with those sizes."""
        if self.sym is None:
            self.sym = symbolic.SymbolicTrace(self.duck)
        seg = self.segment
        assert seg is not None
        leaf, name, dims = dynamic
        sizes = self.sym.input_sizes(t, leaf, name, dims)
        for d, size in enumerate(sizes):
            if not isinstance(size, symbolic.Sym) or size.node.expr in seg.symbols:
                continue
            expr = size.node.expr
            node = self._new_placeholder(str(expr))
            node.meta["example_value"] = size
            node.type = type(size)
            seg.symbols[expr] = node
            seg.num_placeholders += 1
            seg.inputs.append(size.node.hint)
            seg.sources.append(Source(str(expr), leaf=leaf, dim=d))
        return self.sym.example_of_input(fake, t, sizes)

    def example_inputs(self, seg: Segment) -> list[Any]:
        """What the backend is handed: the graph's inputs, a symbol's SymInt for its value."""
        placeholders = [n for n in seg.graph.nodes if n.op == "placeholder"]
        return [n.meta["example_value"] if isinstance(n.meta.get("example_value"),
                                                      symbolic.Sym) else v
                for n, v in zip(placeholders, seg.inputs, strict=True)]

    def _static_type(self, t: Tensor, source: Source) -> str | None:
        """How a graph input is static, as Dynamo marks one: mark_static_address's mark, else
        "unguarded" for a parameter and any tensor of an nn.Module (an argument module's, or
        one of the modules the traced code called: a global model's KV cache buffer)."""
        marked: str | None = getattr(t, "_dynamo_static_input_type", None)
        if marked is not None:
            return marked
        if source.attr or isinstance(t, Parameter) or self._is_module_tensor(t):
            return "unguarded"
        return None

    def saw_module(self, module: Module) -> None:
        """The traced code called `module` (told by the trace's profile function)."""
        if id(module) not in self._modules:
            self._modules[id(module)] = module
            self._unwalked.append(module)

    def _is_module_tensor(self, t: Tensor) -> bool:
        while self._unwalked:  # each module called is walked once, when a tensor asks
            self._module_tensor_ids.update(module_tensors(self._unwalked.pop()))
        return id(t) in self._module_tensor_ids

    def bind(self, result: Any, node: Node) -> None:
        """Map the tensors an op returned to its node (tuple elements: lazily, to getitems)."""
        seg = self.segment
        assert seg is not None
        if isinstance(result, Tensor):
            seg.nodes[id(result)] = (weakref.ref(result), node)
        elif isinstance(result, (tuple, list)):
            self._bind_elements(result, node, ())
        node.meta["example_value"] = _example(result)

    def _bind_elements(self, result: tuple[Any, ...] | list[Any], node: Node,
                       path: tuple[int, ...]) -> None:
        seg = self.segment
        assert seg is not None
        for i, r in enumerate(result):
            if isinstance(r, Tensor):
                seg.pending[id(r)] = (weakref.ref(r), node, (*path, i))
            elif isinstance(r, (tuple, list)):
                self._bind_elements(r, node, (*path, i))

    # --- scalars captured from .item() (capture_scalar_outputs / fullgraph) --------------------

    def capture_item(self, t: Tensor) -> SymNumber:
        seg = self.segment
        assert seg is not None
        node = seg.graph.call_method("item", (self.node_of(t),))
        return self.new_scalar(node, 1.0 if t.dtype.is_floating_point else 1)

    def new_scalar(self, node: Node, example: int | float) -> SymNumber:
        seg = self.segment
        assert seg is not None
        sym: SymNumber
        if isinstance(example, float):
            sym = SymFloat(example)
            sym._name = f"zuf{self._scalar_ids}"
        else:
            sym = SymInt(example)
            sym._name = f"u{self._scalar_ids}"
        self._scalar_ids += 1
        sym._tracer, sym._node, sym._segment, sym._value = self, node, seg, None
        node.meta["example_value"] = example
        seg.scalars.append(sym)
        return sym

    # --- breaks ------------------------------------------------------------------------------

    def make_break(self, text: str, explain_reason: str | None = None,
                   counter: str = "graph_break") -> gb.GraphBreak:
        frames = gb.user_frames(self.code)
        stack = gb.summarize(frames)
        site = (stack[0].filename, stack[0].lineno or 0, stack[0].name) if stack else ("", 0, "")
        return gb.GraphBreak(text, explain_reason or text, counter, stack, site)

    def graph_break(self, brk: gb.GraphBreak) -> None:
        """Close the current graph here (must be called suspended)."""
        self.breaks.append(brk)
        self.close_segment(gb.GraphCompileReason(brk.explain_reason, brk.user_stack), brk=brk)

    def breaking_call(self, brk: gb.GraphBreak, fn: Callable[..., Any], *args: Any,
                      **kwargs: Any) -> Any:
        """Break the graph before `fn`, then run `fn` eagerly on the now real values."""
        if not brk.user_stack:
            brk = self.make_break(brk.text, brk.explain_reason, brk.counter)
        if self.fullgraph:
            raise Unsupported(brk.error_message(), brk.text.split("\n", 1)[0])
        with self.suspended():
            self.graph_break(brk)
            return fn(*args, **kwargs)

    def sync_break(self, what: str) -> None:
        """A host sync outside any op (torch.cuda.synchronize()): end the graph there."""
        brk = self.make_break(gb.host_sync(what))
        if self.fullgraph:
            raise Unsupported(brk.error_message(), brk.text.split("\n", 1)[0])
        with self.suspended():
            self.graph_break(brk)

    def scalar_guard(self, sym: SymNumber, expr: str) -> None:
        """Python needs a captured scalar's value: an error under fullgraph, else a break."""
        if self.fullgraph:
            raise UserError(UserErrorType.DYNAMIC_CONTROL_FLOW, gb.scalar_guard_error(expr))
        brk = self.make_break(gb.branching([], None), gb.BRANCH_EXPLAIN, "unimplemented")
        with self.suspended():
            self.graph_break(brk)

    # --- closing a segment -------------------------------------------------------------------

    def close_segment(self, reason: gb.GraphCompileReason, *, result: Any = None,
                      brk: gb.GraphBreak | None = None) -> None:
        """Give the segment's graph its outputs, have the compiler compile it (or find it in
        the cache), run it for real, and rebind every pending tensor to its real value."""
        seg = self.segment
        assert seg is not None
        holders = self._collect_outputs(seg)
        self.segment = None
        seg.graph.output(tuple(node for _, node in holders))
        _prune(seg)
        entry, spec = self.compiler.segment(self, seg, reason, brk)
        if not reason.graph_break:
            self.final = FinalSegment(seg, entry, spec, result, holders)
        runner = entry.compiled
        if runner is None:
            return
        for g, seed, offset in seg.rng:  # the trace advanced them; the real run does it again
            g._seed, g._offset = seed, offset
        outs = runner(*seg.inputs)
        for (holder, _), out in zip(holders, outs, strict=True):
            if isinstance(holder, SymNumber):
                holder._value = out
            elif out is not holder:
                requires_grad, grad = holder.requires_grad, holder.grad
                holder._set(out._a, out._device, out._storage)
                holder.requires_grad, holder.grad = requires_grad, grad

    def _collect_outputs(self, seg: Segment) -> list[tuple[Any, Node]]:
        """(holder, node) for every value the graph must hand back: the node-made tensors
        still alive (inputs and module tensors are real already: in-place ops on them run in
        the graph) and the captured scalars."""
        out: list[tuple[Any, Node]] = []
        seen: set[int] = {id(t) for t in seg.inputs}
        for key, (ref, node) in list(seg.nodes.items()):
            t = ref()
            if t is not None and node.op not in ("placeholder", "get_attr") and key not in seen:
                seen.add(key)
                out.append((t, node))
        for key in list(seg.pending):
            ref = seg.pending[key][0]
            t = ref()
            if t is not None and key not in seen:
                seen.add(key)
                out.append((t, self.node_of(t)))
        out.extend((s, s._node) for s in seg.scalars)
        return out


def _is_impure(node: Node) -> bool:
    """Nodes DCE must keep: in-place ops (their definitions say they mutate), out= calls,
    custom ops (they may write their arguments), random draws."""
    target = node.target
    if node.op == "get_attr":
        return False
    if isinstance(target, (_ops.OpOverload, _ops.OpOverloadPacket)):
        return True
    if "out" in node.kwargs:
        return True
    opdef = _IMPURE_TARGETS.get(target) if callable(target) else None
    if opdef is not None:
        return opdef
    if isinstance(target, str):  # call_method: Tensor.<target>
        found = _opdef.tensor_methods().get(target)
        return found is not None and (found[0].mutates or found[0].random)
    found_def = _opdef.def_of(target)
    return found_def is not None and (found_def.mutates or found_def.random)


# the operators Dynamo records for in-place Python operators (`x += y`)
_IMPURE_TARGETS: dict[Any, bool] = {
    operator.setitem: True, operator.iadd: True, operator.isub: True, operator.imul: True,
    operator.itruediv: True, operator.ifloordiv: True, operator.imod: True,
    operator.ipow: True, operator.iand: True, operator.ior: True, operator.ixor: True,
    operator.ilshift: True, operator.irshift: True}


def _prune(seg: Segment) -> None:
    """Dead-code elimination, then drop placeholders nothing reads (and their inputs). A
    symbol's placeholder stays while a kept tensor's sizes hold it (the first placeholder of
    each symbol after unification: `s77` whose value prints `s17`), as Dynamo keeps it."""
    seg.graph.eliminate_dead_code(_is_impure)
    needed = _needed_symbols(seg)
    keep_inputs, keep_sources = [], []
    i = 0
    for node in list(seg.graph.nodes):
        if node.op != "placeholder":
            continue
        if node.users or id(node) in needed:
            keep_inputs.append(seg.inputs[i])
            keep_sources.append(seg.sources[i])
        else:
            seg.graph.erase_node(node)
        i += 1
    seg.inputs, seg.sources = keep_inputs, keep_sources


def _needed_symbols(seg: Segment) -> set[int]:
    """ids of the symbol placeholders that kept tensor placeholders' sizes need: per symbol
    (after the ShapeEnv's replacements), the first placeholder standing for it."""
    if not seg.symbols:
        return set()
    wanted: set[Any] = set()
    for node in seg.graph.nodes:
        ex = node.meta.get("example_value")
        if node.op == "placeholder" and node.users and symbolic.is_symbolic(ex):
            assert ex is not None
            for size in (*ex.shape, *ex.stride(), ex.storage_offset()):
                if isinstance(size, symbolic.Sym):
                    wanted |= size.node.expr.free_symbols
    needed: set[int] = set()
    for node in seg.symbols.values():
        expr = node.meta["example_value"].node.expr  # replacements applied
        if expr.is_Symbol and expr in wanted:
            needed.add(id(node))
            wanted.discard(expr)
    return needed


def _tensors_in(value: Any) -> Iterator[Any]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors_in(v)


__all__ = ["TraceMode", "Tracer", "active_tracer", "is_tracing"]
