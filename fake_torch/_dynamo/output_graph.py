"""Compiling a traced graph: the segment cache, the backend call, dynamo's counters.

A Tracer hands each closed segment (the code between two graph breaks) to its frame's
SegmentCompiler: a cached graph of the same structure whose input metadata fits serves it (its
node args re-specialised to this trace); else the backend compiles it, counted as torch counts
(frames, unique_graphs, calls_captured, graph_break reasons, resumes). Past the recompile limit
a frame that re-runs its Python gets its graphs run eagerly, with torch's warning.

What the compiler reads of its frame is the FrameState the two share: the options, the frame's
id, whether its Python re-runs, which dims and numbers have become dynamic.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from types import CodeType
from typing import TYPE_CHECKING, Any

from fake_torch._dynamo import config
from fake_torch._dynamo import graph_breaks as gb
from fake_torch._dynamo.exc import BackendCompilerFailed
from fake_torch._dynamo.guards import Leaf
from fake_torch._dynamo.segments import Meta, SegmentEntry, Spec, same, structure
from fake_torch._dynamo.utils import counters, timed
from fake_torch._tensor import Tensor
from fake_torch.fx import GraphModule

if TYPE_CHECKING:
    from fake_torch._dynamo.trace import Segment, Tracer

log = logging.getLogger("fake_torch._dynamo.convert_frame")

LIMIT_WARNING = (
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
_frame_ids = itertools.count()
explaining = False  # torch._dynamo.explain is running (it keeps quiet)


def reset_frame_ids() -> None:
    """Frames number from 0 again (torch._dynamo.reset())."""
    global _frame_ids
    _frame_ids = itertools.count()


@dataclass(frozen=True)
class CompileOptions:
    backend: Callable[..., Any]  # (gm, example_inputs) -> callable
    backend_name: str
    fullgraph: bool = False
    dynamic: bool | None = None
    recompile_limit: int | None = None
    backend_key: Hashable = None  # equal keys: the same backend with the same mode/options
    # torch.compile(options={"guard_filter_fn": fn}): which of each entry's guards to keep
    guard_filter_fn: Callable[[list[Any]], list[bool]] | None = None

    def key(self) -> Hashable:
        return (self.backend_key, self.fullgraph, self.dynamic, self.recompile_limit,
                id(self.guard_filter_fn) if self.guard_filter_fn is not None else None)


@dataclass
class FrameState:
    """What a compiled frame has decided so far (its compiler reads it)."""

    options: CompileOptions
    code: CodeType | None
    name: str
    rerun: bool = False  # a trace broke, or the Python has effects: later calls run it again
    frame_id: int | None = None
    dyn_dims: dict[str, set[int]] = field(default_factory=dict)
    dyn_ranks: set[str] = field(default_factory=set)  # rank changed: every dim is dynamic
    dyn_scalars: set[str] = field(default_factory=set)
    watch: Any = None  # during a trace: told before and after each backend call

    def limit(self) -> int:
        limit = self.options.recompile_limit
        return config.recompile_limit if limit is None else limit

    def dims(self, leaf: Leaf) -> frozenset[int]:
        """The dims of an argument tensor that are dynamic for the next compile."""
        t = leaf.value
        if not isinstance(t, Tensor):
            return frozenset()
        if self.options.dynamic is False:  # as torch: no automatic dynamic, marks still count
            dims = set(getattr(t, "_dynamo_dynamic_indices", ()))
        elif self.options.dynamic is True or leaf.name in self.dyn_ranks:
            dims = set(range(t.dim()))
        else:
            dims = set(self.dyn_dims.get(leaf.name, ())) | set(
                getattr(t, "_dynamo_dynamic_indices", ()))
        return frozenset(d for d in dims if d < t.dim() and t.shape[d] >= 2)

    def dynamic_scalar(self, leaf: Leaf) -> bool:
        if self.options.dynamic is False:
            return False
        return self.options.dynamic is True or leaf.name in self.dyn_scalars

    def where(self) -> tuple[str, int]:
        return ((self.code.co_filename, self.code.co_firstlineno) if self.code is not None
                else ("?", 0))


SlotKey = tuple[int, tuple[tuple[str, int, str], ...]]


class SegmentCompiler:
    """A frame's compiled graphs, by position in the frame (slot) and structure."""

    def __init__(self, state: FrameState) -> None:
        self.state = state
        self.slots: dict[SlotKey, dict[Hashable, list[SegmentEntry]]] = {}
        self._limit_warned_slots: set[SlotKey] = set()

    def clear(self) -> None:
        self.slots.clear()
        self._limit_warned_slots.clear()

    def segment(self, tracer: Tracer, seg: Segment, reason: gb.GraphCompileReason,
                brk: gb.GraphBreak | None) -> tuple[SegmentEntry, Spec]:
        """The compiled graph for a closed segment (from the cache, or compiled now), with its
        node args specialised to this trace (`entry.compiled` is None for an empty graph)."""
        slot: SlotKey = (seg.index, tuple(b.site for b in tracer.breaks[:seg.index]))
        skeleton, literals, owners = structure(seg.graph)
        metas = [Meta.of(t) for t in seg.inputs]
        entry = None
        if seg.index == 0 and tracer.expect is not None:
            candidate = tracer.expect[0].segment
            any_size = not tracer.expect[0].guards.checks_shape_env()
            if candidate.skeleton == skeleton and candidate.metas_match(metas, any_size):
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
        return entry, spec

    def _compile(self, slot: SlotKey, tracer: Tracer, seg: Segment, skeleton: Hashable,
                 literals: tuple[Any, ...], owners: list[int], metas: list[Meta],
                 reason: gb.GraphCompileReason, brk: gb.GraphBreak | None) -> SegmentEntry:
        state = self.state
        if state.frame_id is None:
            state.frame_id = next(_frame_ids)
        by_skeleton = self.slots.setdefault(slot, {})
        siblings = by_skeleton.setdefault(skeleton, [])
        dyn_literals, dyn_dims = self._dynamism(siblings[-1] if siblings else None, literals,
                                                metas, seg, tracer)
        gm = GraphModule({}, seg.graph)
        gm.compile_subgraph_reason = reason  # read by explain
        num_calls = sum(1 for n in seg.graph.nodes if n.op.startswith("call_"))
        compiled: Callable[..., Any] | None = None
        over_limit = state.rerun and sum(map(len, by_skeleton.values())) >= state.limit()
        if num_calls and over_limit:
            compiled = gm.forward  # past the recompile limit: run the graph eagerly
            if slot not in self._limit_warned_slots:
                self._limit_warned_slots.add(slot)
                file, line = state.where()
                log.warning(LIMIT_WARNING.format(
                    limit=state.limit(), name=state.name, line=line, file=file,
                    reason=f"{state.frame_id}/{len(siblings)}: segment {seg.index} changed"))
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
        backend = self.state.options.backend
        watch = self.state.watch
        if watch is not None:
            watch.before_backend()
        try:
            with timed("OutputGraph.call_user_compiler"):
                compiled = backend(gm, example_inputs)
        except Exception as e:
            raise BackendCompilerFailed(backend, e) from e
        finally:
            if watch is not None:
                watch.after_backend()
        if not callable(compiled):
            raise BackendCompilerFailed(backend, AssertionError(
                "compiler_fn did not return callable"))
        return compiled  # type: ignore[no-any-return]

    def _dynamism(self, previous: SegmentEntry | None, literals: tuple[Any, ...],
                  metas: list[Meta], seg: Segment, tracer: Tracer
                  ) -> tuple[frozenset[int], list[frozenset[int]]]:
        """Which literals and input dims of a new graph may vary (automatic dynamic shapes)."""
        dynamic = self.state.options.dynamic
        # dynamic=False: nothing becomes dynamic by itself, but marked dims stay dynamic (torch)
        automatic = config.automatic_dynamic_shapes and dynamic is not False
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
                found = set(self.state.dims(tracer.leaves[source.leaf]))
            if dynamic is True:
                found = set(range(len(meta.shape)))
            elif previous is not None and i < len(previous.metas) \
                    and len(previous.metas[i].shape) == len(meta.shape):
                found |= set(previous.dyn_dims[i])
                if automatic:
                    found |= {d for d, (a, b) in enumerate(zip(previous.metas[i].shape,
                                                               meta.shape, strict=True))
                              if a != b}
            dims.append(frozenset(d for d in found if meta.shape[d] >= 2))
        return frozenset(dyn_literals), dims


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


__all__ = ["CompileOptions", "FrameState", "SegmentCompiler"]
