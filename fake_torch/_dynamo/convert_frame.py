"""A compiled function's caches: entries with guards, recompiles, graph breaks, dynamic shapes.

Calling a CompiledFrame:
  # direct   an entry whose guards pass runs its compiled graph on the new inputs, no Python;
  # trace    otherwise the function's Python runs under tracing (trace.py). Each segment (the
             code between graph breaks) is looked up in the frame's segment cache by its
             structure and input metadata; a miss calls the backend (counted like torch: frames,
             unique_graphs, calls_captured, resumes). A trace that ended with no graph break
             becomes a new direct entry; a frame that broke re-runs its Python on every later
             call (each graph still comes from the cache): Python between graphs must run.
  # recompile  guards failed on every entry: trace again and compile, up to
             `config.recompile_limit` entries; past it torch's warning, and eager from then on.

Dynamic shapes: after a recompile caused by a size (or Python number) change, the changed dims
(numbers) become dynamic (any size >= 2) unless dynamic=False; dynamic=True starts so. A dynamic
graph's node args that came from sizes are re-specialised per concrete size: the function is
traced again for the new sizes, WITHOUT counting a recompile or calling the backend, and the
args of every node that differ are rewritten in place, in the graph and in every copy of a node
the backend made (split_module copies carry meta["orig"]), so a backend that split and wrapped
the graph still runs correctly at the new size. Backends must read node.args when they run.
"""

from __future__ import annotations

import dis
import itertools
import logging
import weakref
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from types import CodeType, FunctionType
from typing import Any

from fake_torch._dynamo import config
from fake_torch._dynamo import graph_breaks as gb
from fake_torch._dynamo.exc import (
    BackendCompilerFailed,
    FailOnRecompileLimitHit,
    InternalTorchDynamoError,
)
from fake_torch._dynamo.guards import (
    FrameGuards,
    Leaf,
    TensorGuard,
    flatten,
    global_guards,
    leaf_guard,
    module_tensors,
    parameter_names,
    resolve_attr,
)
from fake_torch._dynamo.mutation_guard import GenerationTracker
from fake_torch._dynamo.segments import Meta, SegmentEntry, Spec, same, structure
from fake_torch._dynamo.state import is_tracing
from fake_torch._dynamo.sym_number import SymNumber
from fake_torch._dynamo.trace import Segment, Source, Tracer
from fake_torch._dynamo.utils import counters, timed
from fake_torch._tensor import Tensor
from fake_torch.fx import GraphModule, Node
from fake_torch.nn.modules.module import Module

log = logging.getLogger(__name__)
recompiles_log = logging.getLogger("fake_torch._dynamo.guards")

_frame_ids = itertools.count()
_reset_hooks: list[Callable[[], None]] = []
# (id of the compiled function or module, kind, options) -> its frame, while anything holds
# it: torch keeps caches per code object, fake_torch per compiled callable and options
_frames: weakref.WeakValueDictionary[Hashable, CompiledFrame] = weakref.WeakValueDictionary()

_LIMIT_WARNING = (
    "torch._dynamo hit config.recompile_limit ({limit})\n"
    "   function: {name!r} ({file}:{line})\n"
    "   last reason: {reason}\n"
    "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
    "To diagnose recompilation issues, see https://docs.pytorch.org/docs/main/user_guide/"
    "torch_compiler/compile/programming_model.recompilation.html")


_ITEM_WARNING = (
    "Graph break from `Tensor.item()`, consider setting:\n"
    "    torch._dynamo.config.capture_scalar_outputs = True\n"
    "or:\n"
    "    env TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1\n"
    "to include these operations in the captured graph.\n\n"
    "Graph break: from user code at:\n{where}")
_item_warned: set[tuple[str, int]] = set()
explaining = False  # torch._dynamo.explain is running (it keeps quiet)


def _warn_item_break(brk: gb.GraphBreak) -> None:
    """torch's warning for an `.item()` graph break, once per place."""
    if not brk.user_stack or explaining:
        return
    f = brk.user_stack[-1]
    if (f.filename, f.lineno or 0) in _item_warned:
        return
    _item_warned.add((f.filename, f.lineno or 0))
    where = "".join(f'  File "{s.filename}", line {s.lineno}, in {s.name}\n'
                    f'{gb.code_lines(s)}' for s in brk.user_stack)
    logging.getLogger("fake_torch._dynamo.variables.tensor").warning(
        _ITEM_WARNING.format(where=where))


def add_reset_hook(hook: Callable[[], None]) -> None:
    """Run `hook` on torch._dynamo.reset() / torch.compiler.reset() (e.g. CUDA graph trees)."""
    _reset_hooks.append(hook)


def reset() -> None:
    """Forget every compiled entry, as a fresh process would (counters stay)."""
    global _frame_ids
    for frame in list(_frames.values()):
        frame.clear()
    _frames.clear()
    _frame_ids = itertools.count()
    for hook in _reset_hooks:
        hook()


@dataclass(frozen=True)
class CompileOptions:
    backend: Callable[..., Any]  # (gm, example_inputs) -> callable
    backend_name: str
    fullgraph: bool = False
    dynamic: bool | None = None
    recompile_limit: int | None = None
    backend_key: Hashable = None  # equal keys: the same backend with the same mode/options

    def key(self) -> Hashable:
        return (self.backend_key, self.fullgraph, self.dynamic, self.recompile_limit)


def frame_for(fn: Callable[..., Any], owner: Any, root: Module | None,
              options: CompileOptions, isolate: bool = False, kind: str = "call"
              ) -> CompiledFrame:
    """The frame (cache) of `fn` compiled with `options`, shared by repeated torch.compile
    calls on the same function or module while one of them lives (unless
    isolate_recompiles)."""
    if isolate or owner is None:
        return CompiledFrame(fn, root, options)
    key = (id(owner), kind, options.key())
    frame = _frames.get(key)
    if frame is None or frame.owner is not owner:
        frame = CompiledFrame(fn, root, options)
        frame.owner = owner
        _frames[key] = frame
    return frame


# --- direct entries -------------------------------------------------------------------------

class DirectEntry:
    """A graph-break-free compile: guards, the compiled graph, where its inputs come from and
    how its outputs make the function's return value."""

    def __init__(self, guards: FrameGuards, segment: SegmentEntry, plan: list[Source],
                 template: Any, root: Module | None) -> None:
        self.guards = guards
        self.segment = segment
        self.plan = plan
        self.template = template
        self.root = root
        self.tables: dict[tuple[Any, ...], Spec] = {}  # dynamic key -> node args
        self.misses: set[tuple[Any, ...]] = set()  # keys whose trace made another graph

    def run(self, key: tuple[Any, ...], leaves: list[Leaf]) -> Any:
        self.segment.apply(self.tables[key])
        inputs = [_source_value(s, leaves) for s in self.plan]
        compiled = self.segment.compiled
        outs = compiled(*inputs) if compiled is not None else ()
        return _build(self.template, outs, leaves, self.root)


def _source_value(source: Source, leaves: list[Leaf]) -> Any:
    if source.leaf < 0:
        return source.obj
    value = leaves[source.leaf].value
    return resolve_attr(value, source.attr) if source.attr else value


def _template(value: Any, outs: dict[int, int], leaf_ids: dict[int, int],
              attrs: dict[int, str]) -> Any:
    if isinstance(value, (Tensor, SymNumber)):
        if id(value) in outs:
            return ("out", outs[id(value)])
        if id(value) in leaf_ids:
            return ("leaf", leaf_ids[id(value)])
        if id(value) in attrs:
            return ("attr", attrs[id(value)])
        return ("const", value)
    if type(value) in (tuple, list) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return ("seq", type(value), [_template(v, outs, leaf_ids, attrs) for v in value])
    if type(value) is dict:
        return ("dict", {k: _template(v, outs, leaf_ids, attrs) for k, v in value.items()})
    return ("const", value)


def _build(template: Any, outs: Any, leaves: list[Leaf], root: Module | None) -> Any:
    kind = template[0]
    if kind == "out":
        return outs[template[1]]
    if kind == "leaf":
        return leaves[template[1]].value
    if kind == "attr":
        return resolve_attr(root, template[1])
    if kind == "seq":
        items = [_build(t, outs, leaves, root) for t in template[2]]
        cls = template[1]
        return cls(*items) if hasattr(cls, "_fields") else cls(items)
    if kind == "dict":
        return {k: _build(t, outs, leaves, root) for k, t in template[1].items()}
    return template[1]


def _module_state(modules: list[Module]) -> list[tuple[tuple[str, int], ...]]:
    """What the Python of a forward could change on its modules: every attribute's identity."""
    state = []
    for m in modules:
        items = [(k, id(v)) for k, v in vars(m).items()]
        for store in (m._parameters, m._buffers, m._modules):
            items.extend((k, id(v)) for k, v in store.items())
        state.append(tuple(items))
    return state


def _writes_globals(code: CodeType | None) -> bool:
    """Does the code (or a function nested in it) assign a global? Then its Python must run."""
    if code is None:
        return False
    if any(i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") for i in dis.get_instructions(code)):
        return True
    return any(isinstance(c, CodeType) and _writes_globals(c) for c in code.co_consts)


def _tensors(value: Any) -> Iterator[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def _tensor_ids(value: Any, found: set[int]) -> set[int]:
    if isinstance(value, (Tensor, SymNumber)):
        found.add(id(value))
    elif isinstance(value, (tuple, list)):
        for v in value:
            _tensor_ids(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _tensor_ids(v, found)
    return found


# --- the frame ------------------------------------------------------------------------------

SlotKey = tuple[int, tuple[tuple[str, int, str], ...]]


class CompiledFrame:
    """One compiled function (or module call) and every graph compiled for it."""

    def __init__(self, fn: Callable[..., Any], root: Module | None,
                 options: CompileOptions) -> None:
        self.fn = fn
        self.root = root
        self.options = options
        self.owner: Any = None  # what repeated torch.compile calls share this frame by
        user: Any = type(root).forward if root is not None else fn
        user = getattr(user, "__func__", user)
        if not isinstance(user, FunctionType):  # a callable object: its __call__
            user = vars(type(user)).get("__call__", user)
        self.code: CodeType | None = getattr(user, "__code__", None)
        self.globals: dict[str, Any] = getattr(user, "__globals__", {})
        self.closure = getattr(user, "__closure__", None)
        self.name = getattr(user, "__name__", type(fn).__name__)
        names = parameter_names(user)
        self.names = names[1:] if root is not None and names[:1] == ["self"] else names
        self.entries: list[DirectEntry] = []
        self.slots: dict[SlotKey, dict[Hashable, list[SegmentEntry]]] = {}
        # a trace broke, or the Python has effects outside tensors: later calls run it again
        self.rerun = _writes_globals(self.code)
        self.eager_only = False  # the recompile limit was hit
        self.frame_id: int | None = None
        self.dyn_dims: dict[str, set[int]] = {}
        self.dyn_scalars: set[str] = set()
        self._limit_warned_slots: set[SlotKey] = set()

    def clear(self) -> None:
        self.entries.clear()
        self.slots.clear()
        self.rerun = _writes_globals(self.code)
        self.eager_only = False
        self.frame_id = None
        self.dyn_dims.clear()
        self.dyn_scalars.clear()

    def limit(self) -> int:
        limit = self.options.recompile_limit
        return config.recompile_limit if limit is None else limit

    # --- calls ----------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_tracing():  # called from code being traced: inline it
            return self.fn(*args, **kwargs)
        GenerationTracker.generation += 1  # a new step for CUDA graph trees
        spec, leaves = flatten(self.names, args, kwargs)
        failures: list[str] = []
        for idx in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[idx]
            failure = entry.guards.check(spec, leaves)
            if failure is None:
                key = entry.guards.dynamic_key(leaves)
                if key in entry.tables:
                    return entry.run(key, leaves)  # direct
                if key not in entry.misses:  # a new size: trace again, no recompile
                    return self._trace(args, kwargs, spec, leaves, expect=(entry, key))
            else:
                failures.append(f"{self.frame_id}/{idx}: {failure}")
        if self.eager_only:
            return self.fn(*args, **kwargs)
        recompile = bool(self.entries) and not self.rerun and len(failures) == len(self.entries)
        if recompile:
            recompiles_log.debug("Recompiling function %s in %s:%s\n    triggered by the "
                                 "following guard failure(s):\n%s", self.name,
                                 self.code.co_filename if self.code else "?",
                                 self.code.co_firstlineno if self.code else 0,
                                 "\n".join(f"    - {f}" for f in failures))
            if len(self.entries) >= self.limit():
                return self._limit_hit(failures[0], args, kwargs)
            self._mark_dynamic(self.entries[-1].guards, leaves)
        return self._trace(args, kwargs, spec, leaves, force=recompile)

    def _limit_hit(self, reason: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.options.fullgraph:
            raise FailOnRecompileLimitHit("Hard failure due to fullgraph=True")
        counters["frames"]["total"] += 1
        counters["unimplemented"][gb.RECOMPILE_LIMIT.replace("{limit}", str(self.limit()))] += 1
        log.warning(_LIMIT_WARNING.format(
            limit=self.limit(), name=self.name,
            file=self.code.co_filename if self.code else "?",
            line=self.code.co_firstlineno if self.code else 0, reason=reason))
        self.eager_only = True
        return self.fn(*args, **kwargs)

    def _mark_dynamic(self, guards: FrameGuards, leaves: list[Leaf]) -> None:
        """Automatic dynamic shapes: what changed since the newest entry becomes dynamic."""
        if self.options.dynamic is False or not config.automatic_dynamic_shapes:
            return
        for guard, leaf in zip(guards.leaves, leaves, strict=False):
            v = leaf.value
            if isinstance(guard, TensorGuard) and isinstance(v, Tensor) \
                    and v.dim() == len(guard.sizes):
                changed = {i for i, (a, b) in enumerate(zip(guard.sizes, v.shape, strict=True))
                           if a != b}
                if changed:
                    self.dyn_dims.setdefault(leaf.name, set()).update(changed)
            elif (type(v) in (int, float) and type(getattr(guard, "value", None)) is type(v)
                  and getattr(guard, "value", v) != v):
                self.dyn_scalars.add(leaf.name)

    def _dims(self, leaf: Leaf) -> frozenset[int]:
        """The dims of an argument tensor that are dynamic for the next compile."""
        t = leaf.value
        if not isinstance(t, Tensor) or self.options.dynamic is False:
            return frozenset()
        if self.options.dynamic is True:
            dims = set(range(t.dim()))
        else:
            dims = set(self.dyn_dims.get(leaf.name, ())) | set(
                getattr(t, "_dynamo_dynamic_indices", ()))
        return frozenset(d for d in dims if d < t.dim() and t.shape[d] >= 2)

    def _dynamic_scalar(self, leaf: Leaf) -> bool:
        if self.options.dynamic is False:
            return False
        return self.options.dynamic is True or leaf.name in self.dyn_scalars

    def _trace(self, args: tuple[Any, ...], kwargs: dict[str, Any], spec: tuple[Any, ...],
               leaves: list[Leaf], *,
               force: bool = False, expect: tuple[DirectEntry, tuple[Any, ...]] | None = None,
               ) -> Any:
        sources: dict[int, Source] = {}
        for i, leaf in enumerate(leaves):
            v = leaf.value
            base = "L_" + "".join(c if c.isalnum() else "_" for c in leaf.name)
            if isinstance(v, Tensor):
                sources.setdefault(id(v), Source(base + "_", leaf=i))
            elif isinstance(v, Module) and v is not self.root:
                for key, qualname in module_tensors(v).items():
                    sources.setdefault(key, Source(f"{base}_{qualname.replace('.', '_')}_",
                                                   leaf=i, attr=qualname))
        attrs = module_tensors(self.root) if self.root is not None else {}
        capture = config.capture_scalar_outputs or self.options.fullgraph
        tracer = Tracer(self, sources, attrs, self.options.fullgraph, capture)
        tracer.spec = spec
        tracer.leaves = leaves
        tracer.force_first = force
        tracer.expect = expect
        modules = list(self.root.modules()) if self.root is not None else []
        modules += [m for leaf in leaves if isinstance(leaf.value, Module)
                    for m in leaf.value.modules()]
        before = _module_state(modules)
        entries = len(self.entries)
        with timed("_compile.compile_inner"):
            result = tracer.run(self.fn, args, kwargs)
        if _module_state(modules) != before:  # the Python set module attributes: keep running it
            self.rerun = True
            del self.entries[entries:]
        return result

    # --- segments -------------------------------------------------------------------------

    def segment_runner(self, tracer: Tracer, seg: Segment, reason: gb.GraphCompileReason,
                       brk: gb.GraphBreak | None, result: Any,
                       holders: list[tuple[Any, Node]]) -> Callable[..., Any] | None:
        """The compiled callable for a closed segment (from the cache, or compiled now), with
        its node args specialised to this trace; None for an empty graph."""
        slot: SlotKey = (seg.index, tuple(b.site for b in tracer.breaks[:seg.index]))
        skeleton, literals, owners = structure(seg.graph)
        metas = [Meta.of(t) for t in seg.inputs]
        entry = None
        if seg.index == 0 and tracer.expect is not None:
            candidate = tracer.expect[0].segment
            if candidate.skeleton == skeleton and candidate.metas_match(metas):
                entry = candidate
        if entry is None and not (seg.index == 0 and tracer.force_first):
            for e in reversed(self.slots.get(slot, {}).get(skeleton, [])):
                if e.matches(literals, metas):
                    entry = e
                    break
        if entry is None:
            entry = self._compile(slot, tracer, seg, skeleton, literals, owners, metas, reason,
                                  brk)
        spec = entry.specialize(seg.graph, literals)
        entry.apply(spec)
        if not reason.graph_break:
            self._finish(tracer, seg, entry, spec, result, holders)
        return entry.compiled

    def _compile(self, slot: SlotKey, tracer: Tracer, seg: Segment, skeleton: Hashable,
                 literals: tuple[Any, ...], owners: list[int], metas: list[Meta],
                 reason: gb.GraphCompileReason, brk: gb.GraphBreak | None) -> SegmentEntry:
        if self.frame_id is None:
            self.frame_id = next(_frame_ids)
        by_skeleton = self.slots.setdefault(slot, {})
        siblings = by_skeleton.setdefault(skeleton, [])
        dyn_literals, dyn_dims = self._dynamism(siblings[-1] if siblings else None, literals,
                                                metas, seg, tracer)
        gm = GraphModule(dict(seg.attrs), seg.graph)
        gm.compile_subgraph_reason = reason  # read by explain
        num_calls = sum(1 for n in seg.graph.nodes if n.op.startswith("call_"))
        compiled: Callable[..., Any] | None = None
        over_limit = self.rerun and sum(map(len, by_skeleton.values())) >= self.limit()
        if num_calls and over_limit:
            compiled = gm.forward  # past the recompile limit: run the graph eagerly
            if slot not in self._limit_warned_slots:
                self._limit_warned_slots.add(slot)
                log.warning(_LIMIT_WARNING.format(
                    limit=self.limit(), name=self.name, line=self.code.co_firstlineno
                    if self.code else 0, file=self.code.co_filename if self.code else "?",
                    reason=f"{self.frame_id}/{len(siblings)}: segment {seg.index} changed"))
        elif num_calls:
            compiled = self._call_backend(gm, list(seg.inputs))
            counters["stats"]["unique_graphs"] += 1
            counters["stats"]["calls_captured"] += num_calls
        counters["frames"]["total"] += 1
        counters["frames"]["ok"] += 1
        if brk is not None:  # the break made resume function(s): one per branch of a jump
            counters[brk.counter][brk.text] += 1
            if brk.text is gb.ITEM:
                _warn_item_break(brk)
            if brk.counter == "graph_break":
                counters["unimplemented"]
            _, line, name = brk.site
            counters["resumes"][f"torch_dynamo_resume_in_{name}_at_{line}"] += (
                2 if brk.explain_reason == gb.BRANCH_EXPLAIN else 1)
        entry = SegmentEntry(skeleton, literals, owners, metas, seg.graph, gm, compiled,
                             dyn_literals, dyn_dims)
        siblings.append(entry)
        return entry

    def _call_backend(self, gm: GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        backend = self.options.backend
        try:
            with timed("OutputGraph.call_user_compiler"):
                compiled = backend(gm, example_inputs)
        except Exception as e:
            raise BackendCompilerFailed(backend, e) from e
        if not callable(compiled):
            raise BackendCompilerFailed(backend, AssertionError(
                "compiler_fn did not return callable"))
        return compiled  # type: ignore[no-any-return]

    def _dynamism(self, previous: SegmentEntry | None, literals: tuple[Any, ...],
                  metas: list[Meta], seg: Segment, tracer: Tracer
                  ) -> tuple[frozenset[int], list[frozenset[int]]]:
        """Which literals and input dims of a new graph may vary (automatic dynamic shapes)."""
        dynamic = self.options.dynamic
        if dynamic is False:
            return frozenset(), [frozenset()] * len(metas)
        automatic = config.automatic_dynamic_shapes
        dyn_literals: set[int] = set()
        if dynamic is True:
            dyn_literals = set(range(len(literals)))
        elif previous is not None and automatic:
            dyn_literals = set(previous.dyn_literals) | {
                i for i, (a, b) in enumerate(zip(previous.literals, literals, strict=True))
                if not same(a, b)}
        dims: list[frozenset[int]] = []
        for i, (meta, source) in enumerate(zip(metas, seg.sources, strict=True)):
            found: set[int] = set()
            if source.leaf >= 0 and not source.attr and seg.index == 0:
                found = set(self._dims(tracer.leaves[source.leaf]))
            if dynamic is True:
                found = set(range(len(meta.shape)))
            elif previous is not None and automatic and i < len(previous.metas) \
                    and len(previous.metas[i].shape) == len(meta.shape):
                found |= set(previous.dyn_dims[i]) | {
                    d for d, (a, b) in enumerate(zip(previous.metas[i].shape, meta.shape,
                                                     strict=True)) if a != b}
            dims.append(frozenset(d for d in found if meta.shape[d] >= 2))
        return frozenset(dyn_literals), dims

    def _finish(self, tracer: Tracer, seg: Segment, entry: SegmentEntry, spec: Spec,
                result: Any, holders: list[tuple[Any, Node]]) -> None:
        """After a whole trace: a break-free one becomes a direct entry (or a new size of one)."""
        expect = tracer.expect
        leaf_ids = {id(leaf.value): i for i, leaf in enumerate(tracer.leaves)}
        returned = _tensor_ids(result, set())
        made = {id(h) for h, _ in holders}
        for t in _tensors(result):
            if id(t) not in made and tracer.mode.is_meta(t):
                raise InternalTorchDynamoError(
                    "fake_torch.compile: the function returned a tensor made by a call the "
                    "tracer does not hook (its values were never computed). Please report it.")
        escaped = any(isinstance(h, Tensor) and id(h) not in returned and id(h) not in leaf_ids
                      and id(h) not in tracer.attr_names for h, _ in holders)
        if tracer.breaks or seg.index > 0 or escaped or self.rerun:
            self.rerun = True
            if expect is not None:
                expect[0].misses.add(expect[1])
            return
        if expect is not None:
            if expect[0].segment is entry:
                expect[0].tables[expect[1]] = spec
                return
            expect[0].misses.add(expect[1])
        leaves = tracer.leaves
        guards = FrameGuards(
            tracer.spec,
            [leaf_guard(leaf, self._dims(leaf), self._dynamic_scalar(leaf)) for leaf in leaves],
            global_guards(self.code, self.globals, self.closure))
        if self.root is not None:
            guards.attrs = [(q, self.root, t) for q, t in seg.attrs.items()]
            guards.training = tuple((m, m.training) for m in self.root.modules())
        outs = {id(h): i for i, (h, _) in enumerate(holders)}
        template = _template(result, outs, leaf_ids, tracer.attr_names)
        direct = DirectEntry(guards, entry, list(seg.sources), template, self.root)
        direct.tables[guards.dynamic_key(leaves)] = spec
        self.entries.append(direct)



__all__ = ["CompileOptions", "CompiledFrame", "add_reset_hook", "frame_for", "reset"]
