"""A compiled function's caches: entries with guards, recompiles, graph breaks, dynamic shapes.

Calling a CompiledFrame:
  # direct   an entry whose guards pass runs its compiled graph on the new inputs, no Python;
  # trace    otherwise the function's Python runs under tracing (trace.py). Each segment (the
             code between graph breaks) goes to the frame's SegmentCompiler (output_graph.py):
             its cache, or the backend. A trace that ended with no graph break becomes a new
             direct entry; a frame that broke re-runs its Python on every later call (each
             graph still comes from the cache): Python between graphs must run.
  # recompile  guards failed on every entry: trace again and compile, up to
             `config.recompile_limit` entries; past it torch's warning, and eager from then on.
The path runs one way: the frame makes a Tracer, the tracer hands segments to the compiler and
the compiler to the backend; the frame reads what the trace found when it returns.

Guard filters (torch.compile(options={"guard_filter_fn": fn})): when an entry is made, `fn` is
shown its guards as torch's GuardFilterEntry list and the parts it drops are skipped
(guard_filter.py). Bytecode hooks (register_bytecode_hook): each compile gives the hooks the
code Dynamo would have written (bytecode.py), found by them at `_compile`'s `frame`; that code
calls `run_entry`, which runs the entry's graph with no guard check, as torch's new code does.

Frames are shared as torch shares its caches, per code object: a compiled module's frame is its
class's forward, so torch.compile(m1) and torch.compile(m2) of one class, or a compiled method
called on nine instances, share graphs; a module is an argument (`self`), guarded by its type,
the attributes its code reads and its tensors' properties (guards.py), never by identity; any
other argument object (a KV cache) by its type and what the trace read (object_guards.py), its
tensors taken from the new object on each call. A trace whose Python changed an argument module
or object keeps running its Python. A direct entry rebuilds the return value around the new
outputs on every call, whatever object it is (reconstruct.py).

Dynamic shapes: a dim mark_dynamic marked (even under dynamic=False, as torch), every dim under
dynamic=True, and after a recompile caused by a size change the dims that changed (automatic
dynamic) are SYMBOLS while the frame's first graph is traced (symbolic.py): the graph takes the
symbol (`s77: torch.SymInt`) as an input before the tensor, the Python's size arithmetic and
branches are recorded as nodes and ShapeEnv guards, and each op's example value comes from its
output rule. Such an entry runs directly at any size its guards accept, the symbols' values
read from the arguments' sizes: no re-tracing. Later graphs of a frame that broke, and dynamic
Python numbers, are still re-specialised per value: the function is traced again for the new
values, WITHOUT counting a recompile or calling the backend, and the args of every node that
differ are rewritten in place, in the graph and in every copy of a node the backend made
(split_module copies carry meta["orig"]). Backends must read node.args when they run.
"""

from __future__ import annotations

import dis
import inspect
import logging
import weakref
from collections.abc import Callable, Hashable
from types import CodeType, FunctionType
from typing import Any

from fake_torch._dynamo import config
from fake_torch._dynamo import graph_breaks as gb
from fake_torch._dynamo.bytecode import (
    CompiledFn,
    as_called,
    compiled_fn_name,
    original_function,
    parameter_defaults,
    transformed_code,
)
from fake_torch._dynamo.decorators import current_stance
from fake_torch._dynamo.exc import FailOnRecompileLimitHit, InternalTorchDynamoError
from fake_torch._dynamo.guard_filter import apply_filter
from fake_torch._dynamo.guards import (
    FrameGuards,
    Guard,
    Leaf,
    TensorGuard,
    flatten,
    global_guards,
    is_constant,
    leaf_guard,
    module_guard,
    module_tensors,
    parameter_names,
    resolve_attr,
)
from fake_torch._dynamo.mutation_guard import GenerationTracker
from fake_torch._dynamo.object_guards import (
    ObjectGuard,
    is_user_object,
    object_entries,
    object_state,
    path_name,
    resolve_path,
)
from fake_torch._dynamo.output_graph import (
    LIMIT_WARNING,
    CompileOptions,
    FrameState,
    SegmentCompiler,
    reset_frame_ids,
)
from fake_torch._dynamo.reconstruct import build, output_values, template
from fake_torch._dynamo.segments import SegmentEntry, Spec
from fake_torch._dynamo.state import is_tracing
from fake_torch._dynamo.symbolic import SymbolicTrace
from fake_torch._dynamo.trace import Segment, Source, Tracer
from fake_torch._dynamo.utils import counters, timed
from fake_torch._tensor import Tensor
from fake_torch.nn.modules._hooks import RemovableHandle
from fake_torch.nn.modules.module import Module

log = logging.getLogger(__name__)
recompiles_log = logging.getLogger("fake_torch._dynamo.guards")

_reset_hooks: list[Callable[[], None]] = []
# (id of the compiled function or of a module class's forward, kind, options) -> its frame,
# while anything holds it: torch keeps caches per code object
_frames: weakref.WeakValueDictionary[Hashable, CompiledFrame] = weakref.WeakValueDictionary()


def add_reset_hook(hook: Callable[[], None]) -> None:
    """Run `hook` on torch._dynamo.reset() / torch.compiler.reset() (e.g. CUDA graph trees)."""
    _reset_hooks.append(hook)


def reset() -> None:
    """Forget every compiled entry, as a fresh process would (counters stay)."""
    for frame in list(_frames.values()):
        frame.clear()
    _frames.clear()
    reset_frame_ids()
    for hook in _reset_hooks:
        hook()


def frame_for(fn: Callable[..., Any], owner: Any, options: CompileOptions,
              isolate: bool = False, kind: str = "call", user: Any = None) -> CompiledFrame:
    """The frame (cache) of `fn` compiled with `options`, shared by every torch.compile of
    the same `owner` (a function, or a module class's forward) while one of them lives
    (unless isolate_recompiles). `user`: the function whose code is traced, when `fn` is a
    wrapper around it (a module's __call__ around its forward)."""
    if isolate or owner is None:
        return CompiledFrame(fn, options, user)
    key = (id(owner), kind, options.key())
    frame = _frames.get(key)
    if frame is None or frame.owner is not owner:
        frame = CompiledFrame(fn, options, user)
        frame.owner = owner
        _frames[key] = frame
    return frame


def _checked_stance() -> str:
    """The stance (torch.compiler.set_stance) a compiled call follows; what fake_torch does not
    emulate raises here, at the call, as torch's invalid stances do."""
    stance = current_stance()
    if stance.stance in ("eager_then_compile", "aot_eager_then_compile"):
        raise NotImplementedError(f"torch.compiler.set_stance({stance.stance!r}) is not "
                                  "emulated by fake_torch")
    if stance.backend is not None:
        raise NotImplementedError("torch.compiler.set_stance(force_backend=...) is not "
                                  "emulated by fake_torch")
    if stance.stance not in ("default", "force_eager", "eager_on_recompile",
                             "fail_on_recompile"):
        raise RuntimeError(f"invalid torch.compile stance '{stance}'")
    return stance.stance


_bytecode_hooks: dict[int, Callable[[CodeType, CodeType], CodeType | None]] = {}


def register_bytecode_hook(hook: Callable[[CodeType, CodeType], CodeType | None]
                           ) -> RemovableHandle:
    """Call `hook(code, new_code)` whenever a frame compiles: `code` the function's, `new_code`
    what a call of it runs from then on (see bytecode.py: fake_torch writes code of the same
    contract as Dynamo's). The compiling frame is reachable from the hook as torch's is: the
    local `frame` (f_code, f_locals, f_globals) of `_compile` in this file. A hook returning
    other code, which torch would run instead, is not emulated."""
    handle = RemovableHandle(_bytecode_hooks)
    _bytecode_hooks[handle.id] = hook
    return handle


class DynamoFrame:
    """The frame being compiled, as hooks see it (torch's DynamoFrameType): its code, its
    locals (the arguments by name and the free variables), globals and builtins."""

    def __init__(self, code: CodeType, f_locals: dict[str, Any], f_globals: dict[str, Any],
                 closure: tuple[Any, ...] | None) -> None:
        self.f_code = code
        self.f_locals = f_locals
        self.f_globals = f_globals
        self.f_builtins = f_globals.get("__builtins__", {})
        self.closure = closure


def _compile(frame: DynamoFrame, compiled: CompiledFn) -> CodeType | None:
    """Make the new code of `frame` calling `compiled` (put in its globals) and give it to the
    bytecode hooks. Named as torch's: hooks walk up the stack to this function's `frame`."""
    new_code = transformed_code(frame.f_code, compiled.__name__)
    if new_code is None:
        return None
    frame.f_globals[compiled.__name__] = compiled
    for hook in list(_bytecode_hooks.values()):
        out = hook(frame.f_code, new_code)
        if out is not None and out is not new_code:
            raise NotImplementedError(
                "a bytecode hook (torch._dynamo.convert_frame.register_bytecode_hook) that "
                "returns other code to run is not emulated by fake_torch")
    return new_code


def remove_from_cache(f: Any) -> None:
    """Forget every compiled entry of `f` (a function, a code object, or a module: its
    forward), so its next call compiles again."""
    from fake_torch.nn.modules.module import Module

    if isinstance(f, Module):
        f = type(f).forward
    code = f if isinstance(f, CodeType) else getattr(getattr(f, "__func__", f), "__code__", None)
    if code is None:  # as torch: forget everything, and say why
        reset()
        log.warning("could not determine __code__ for %s", f)
        return
    for frame in list(_frames.values()):
        if frame.code is code:
            frame.clear()


# --- direct entries -------------------------------------------------------------------------

class DirectEntry:
    """A graph-break-free compile: guards, the compiled graph, where its inputs come from and
    how its outputs make the function's return value."""

    def __init__(self, guards: FrameGuards, segment: SegmentEntry, plan: list[Source],
                 template: Any) -> None:
        self.guards = guards
        self.segment = segment
        self.plan = plan
        self.template = template
        self.tables: dict[tuple[Any, ...], Spec] = {}  # dynamic key -> node args
        self.misses: set[tuple[Any, ...]] = set()  # keys whose trace made another graph
        self.symbolic = False  # traced with symbolic sizes: one graph for every size

    def run(self, key: tuple[Any, ...], leaves: list[Leaf]) -> Any:
        if not self.symbolic:
            self.segment.apply(self.tables[key])
        inputs = [_source_value(s, leaves) for s in self.plan]
        compiled = self.segment.compiled
        outs = compiled(*inputs) if compiled is not None else ()
        return build(self.template, outs, lambda source: _source_value(source, leaves))


def _source_value(source: Source, leaves: list[Leaf]) -> Any:
    if source.leaf < 0:
        return source.obj
    value = leaves[source.leaf].value
    if source.dim >= 0:  # a symbol: the argument's size
        return value.shape[source.dim]
    if source.path:
        return resolve_path(value, source.path)
    return resolve_attr(value, source.attr) if source.attr else value


def _shape_check(sym: SymbolicTrace) -> Callable[[list[Leaf]], str | None]:
    """The shape guards of a symbolic entry: each symbol's value read from the arguments'
    sizes, then the ShapeEnv's guards and ranges over those values."""
    def check(leaves: list[Leaf]) -> str | None:
        values, failure = sym.bindings(lambda leaf, dim: leaves[leaf].value.shape[dim])
        return failure if failure is not None else sym.guards_hold(values)
    return check


def _module_state(modules: list[Module]) -> list[tuple[tuple[str, int], ...]]:
    """What the Python of a forward could change on its modules: every attribute's identity."""
    state = []
    for m in modules:
        items = [(k, id(v)) for k, v in vars(m).items()]
        for store in (m._parameters, m._buffers, m._modules):
            items.extend((k, id(v)) for k, v in store.items())
        state.append(tuple(items))
    return state


def _arguments_state(modules: list[Module], objects: list[Any], code: CodeType | None
                     ) -> dict[tuple[Any, ...], Any]:
    """What the Python of a trace could change on its argument modules and objects, by place:
    (module index, attribute) -> the value's identity, (object index, path) -> its state."""
    state: dict[tuple[Any, ...], Any] = {}
    for i, items in enumerate(_module_state(modules)):
        state.update(((i, k), v) for k, v in items)
    for j, obj in enumerate(objects):
        state.update((("object", j, path), v) for path, v in object_state(obj, code))
    return state


class _StateWatch:
    """Tells the argument changes of a trace's Python from those of the backend it calls (a
    backend counting its calls on the module, as vLLM's wrappers do, changes no traced code)."""

    def __init__(self, snapshot: Callable[[], dict[tuple[Any, ...], Any]]) -> None:
        self.snapshot = snapshot
        self.backend_changes: set[tuple[Any, ...]] = set()
        self._before: dict[tuple[Any, ...], Any] = {}

    def before_backend(self) -> None:
        self._before = self.snapshot()

    def after_backend(self) -> None:
        after = self.snapshot()
        self.backend_changes |= {k for k in self._before.keys() | after.keys()
                                 if self._before.get(k, _ABSENT) != after.get(k, _ABSENT)}

    def changed(self, before: dict[tuple[Any, ...], Any],
                after: dict[tuple[Any, ...], Any]) -> bool:
        return any(before.get(k, _ABSENT) != after.get(k, _ABSENT)
                   for k in before.keys() | after.keys() if k not in self.backend_changes)


_ABSENT = object()


def _writes_globals(code: CodeType | None) -> bool:
    """Does the code (or a function nested in it) assign a global? Then its Python must run."""
    if code is None:
        return False
    if any(i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") for i in dis.get_instructions(code)):
        return True
    return any(isinstance(c, CodeType) and _writes_globals(c) for c in code.co_consts)


def _sources(leaves: list[Leaf], code: CodeType | None) -> dict[int, Source]:
    """id(tensor) -> where it comes from: an argument, a module argument's tensor or one inside
    another argument object (named as Dynamo names the placeholder:
    L_self_modules_lin_parameters_weight_, L_cache_key_cache_0_)."""
    sources: dict[int, Source] = {}
    for i, leaf in enumerate(leaves):
        v = leaf.value
        base = "L_" + "".join(c if c.isalnum() else "_" for c in leaf.name)
        if isinstance(v, Tensor):
            sources.setdefault(id(v), Source(base + "_", leaf=i))
        elif isinstance(v, Module):
            for key, (qualname, path) in module_tensors(v).items():
                sources.setdefault(key, Source(f"{base}_{path}_", leaf=i, attr=qualname))
        elif is_user_object(v):
            for steps, t in object_entries(v, code):
                if isinstance(t, Tensor):
                    sources.setdefault(id(t), Source(f"{base}_{path_name(steps)}_", leaf=i,
                                                     path=steps))
    return sources


def _given_objects(leaves: list[Leaf], code: CodeType | None) -> dict[int, Source]:
    """id -> Source of the objects a call was given (argument leaves, and the objects inside
    an argument object): one the function returns is the next call's, not rebuilt."""
    given: dict[int, Source] = {}
    for i, leaf in enumerate(leaves):
        if is_constant(leaf.value):
            continue
        given.setdefault(id(leaf.value), Source(leaf.name, leaf=i))
        if is_user_object(leaf.value):
            for steps, v in object_entries(leaf.value, code):
                if not is_constant(v):
                    given.setdefault(id(v), Source(leaf.name, leaf=i, path=steps))
    return given


# --- the frame ------------------------------------------------------------------------------

class CompiledFrame:
    """One compiled function (or module call) and every graph compiled for it."""

    def __init__(self, fn: Callable[..., Any], options: CompileOptions,
                 user: Any = None) -> None:
        self.fn = fn
        self.options = options
        self.owner: Any = None  # what repeated torch.compile calls share this frame by
        user = getattr(fn if user is None else user, "__func__", fn if user is None else user)
        if not isinstance(user, FunctionType):  # a callable object: its __call__
            user = vars(type(user)).get("__call__", user)
        self.code: CodeType | None = getattr(user, "__code__", None)
        self.globals: dict[str, Any] = getattr(user, "__globals__", {})
        self.closure = getattr(user, "__closure__", None)
        self.name = getattr(user, "__name__", type(fn).__name__)
        self.names = parameter_names(user)
        # the function a call runs and its code now (bytecode hooks get code for it)
        fn_function = getattr(fn, "__func__", fn)
        self.fn_function = fn_function if isinstance(fn_function, FunctionType) else None
        self.fn_code = self.fn_function.__code__ if self.fn_function is not None else None
        self.state = FrameState(options, self.code, self.name, rerun=_writes_globals(self.code))
        self.compiler = SegmentCompiler(self.state)
        self.entries: list[DirectEntry] = []
        self.eager_only = False  # the recompile limit was hit

    def clear(self) -> None:
        self.entries.clear()
        self.compiler.clear()
        self.state = self.compiler.state = FrameState(
            self.options, self.code, self.name, rerun=_writes_globals(self.code))
        self.eager_only = False

    @property
    def rerun(self) -> bool:
        return self.state.rerun

    # --- calls ----------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_tracing():  # called from code being traced: inline it
            return self.fn(*args, **kwargs)
        stance = _checked_stance()
        if stance == "force_eager":
            return self.fn(*args, **kwargs)
        GenerationTracker.generation += 1  # a new step for CUDA graph trees
        spec, leaves = flatten(self.names, args, kwargs)
        failures: list[str] = []
        for idx in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[idx]
            failure = entry.guards.check(spec, leaves)
            if failure is None and entry.symbolic:
                return entry.run((), leaves)  # direct, at any size its guards accept
            if failure is None:
                key = entry.guards.dynamic_key(leaves)
                if key in entry.tables:
                    return entry.run(key, leaves)  # direct
                if key not in entry.misses:  # a new size: trace again, no recompile
                    return self._trace(args, kwargs, spec, leaves, expect=(entry, key))
            else:
                failures.append(f"{self.state.frame_id}/{idx}: {failure}")
        if self.eager_only:
            return self.fn(*args, **kwargs)
        state = self.state
        recompile = bool(self.entries) and not state.rerun and len(failures) == len(self.entries)
        if recompile:
            file, line = state.where()
            recompiles_log.debug("Recompiling function %s in %s:%s\n    triggered by the "
                                 "following guard failure(s):\n%s", self.name, file, line,
                                 "\n".join(f"    - {f}" for f in failures))
            if len(self.entries) >= state.limit():
                return self._limit_hit(failures[0], args, kwargs)
            self._mark_dynamic(self.entries[-1].guards, leaves)
        if stance != "default" and not state.rerun:  # a compile is due: the stance decides
            if stance == "eager_on_recompile":
                return self.fn(*args, **kwargs)
            code = self.code
            raise RuntimeError(
                "Detected recompile when torch.compile stance is 'fail_on_recompile'. "
                f"filename: '{code.co_filename if code else '?'}', function name: "
                f"'{self.name}', line number: {code.co_firstlineno if code else 0}")
        return self._trace(args, kwargs, spec, leaves, force=recompile)

    def _limit_hit(self, reason: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        state = self.state
        if self.options.fullgraph:
            raise FailOnRecompileLimitHit("Hard failure due to fullgraph=True")
        counters["frames"]["total"] += 1
        counters["unimplemented"][gb.RECOMPILE_LIMIT.replace("{limit}", str(state.limit()))] += 1
        file, line = state.where()
        log.warning(LIMIT_WARNING.format(limit=state.limit(), name=self.name, file=file,
                                         line=line, reason=reason))
        self.eager_only = True
        return self.fn(*args, **kwargs)

    def _mark_dynamic(self, guards: FrameGuards, leaves: list[Leaf]) -> None:
        """Automatic dynamic shapes: what changed since the newest entry becomes dynamic."""
        if self.options.dynamic is False or not config.automatic_dynamic_shapes:
            return
        for guard, leaf in zip(guards.leaves, leaves, strict=False):
            v = leaf.value
            if isinstance(guard, TensorGuard) and isinstance(v, Tensor) \
                    and v.dim() != len(guard.sizes):
                self.state.dyn_ranks.add(leaf.name)  # as torch: a new rank makes all dims dynamic
            elif isinstance(guard, TensorGuard) and isinstance(v, Tensor):
                changed = {i for i, (a, b) in enumerate(zip(guard.sizes, v.shape, strict=True))
                           if a != b}
                if changed:
                    self.state.dyn_dims.setdefault(leaf.name, set()).update(changed)
            elif (type(v) in (int, float) and type(getattr(guard, "value", None)) is type(v)
                  and getattr(guard, "value", v) != v):
                self.state.dyn_scalars.add(leaf.name)

    def _trace(self, args: tuple[Any, ...], kwargs: dict[str, Any], spec: tuple[Any, ...],
               leaves: list[Leaf], *,
               force: bool = False, expect: tuple[DirectEntry, tuple[Any, ...]] | None = None,
               ) -> Any:
        capture = config.capture_scalar_outputs or self.options.fullgraph
        tracer = Tracer(self.code, self.compiler, _sources(leaves, self.code),
                        self.options.fullgraph, capture)
        tracer.spec = spec
        tracer.leaves = leaves
        tracer.capture_dynamic = config.capture_dynamic_output_shape_ops
        tracer.duck = self.options.dynamic is True
        for i, leaf in enumerate(leaves):
            dims = self.state.dims(leaf)
            if dims:
                tracer.dynamic_dims[id(leaf.value)] = (i, leaf.name, dims)
        tracer.call_values = [*args, *kwargs.values()]
        tracer.call_form = (len(args), tuple(kwargs))
        was_rerun = self.state.rerun
        tracer.force_first = force
        tracer.expect = expect
        modules = [m for leaf in leaves if isinstance(leaf.value, Module)
                   for m in leaf.value.modules()]
        objects = [leaf.value for leaf in leaves if is_user_object(leaf.value)]
        watch = _StateWatch(lambda: _arguments_state(modules, objects, self.code))
        before = watch.snapshot()
        entries = len(self.entries)
        self.state.watch = watch  # the backend's own changes are not the traced Python's
        try:
            with timed("_compile.compile_inner"):
                result = tracer.run(self.fn, args, kwargs)
        finally:
            self.state.watch = None
        if tracer.sym is not None:
            tracer.sym.check_marked()  # as torch, once the frame is compiled
        self._finish(tracer)
        tracer.final = None  # its graph's outputs: the caller holds what it keeps
        if watch.changed(before, watch.snapshot()):  # the Python set attributes: keep running it
            self.state.rerun = True
            del self.entries[entries:]
        if _bytecode_hooks and expect is None:  # a compile: the hooks see its code
            if len(self.entries) > entries:
                self._bytecode(self.entries[-1], args, kwargs, tracer.call_form)
            elif self.state.rerun and not was_rerun:
                self._bytecode(None, args, kwargs, tracer.call_form)
        return result

    def _bytecode(self, entry: DirectEntry | None, args: tuple[Any, ...],
                  kwargs: dict[str, Any], form: tuple[int, tuple[str, ...]]) -> None:
        """Give the bytecode hooks the new code of this compile (calling `entry`, or the frame
        itself when its Python re-runs around graph breaks)."""
        fn, code = self.fn_function, self.fn_code
        if fn is None or code is None:
            return
        try:
            bound = inspect.signature(original_function(fn, code)).bind(*args, **kwargs)
        except TypeError:
            return
        bound.apply_defaults()
        f_locals = dict(bound.arguments)
        for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=False):
            try:
                f_locals[name] = cell.cell_contents
            except ValueError:
                continue
        compiled = CompiledFn(compiled_fn_name(), self, entry, original_function(fn, code),
                              parameter_defaults(fn), form)
        frame = DynamoFrame(code, f_locals, fn.__globals__, fn.__closure__)
        _compile(frame, compiled)

    def run_entry(self, compiled: CompiledFn, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
        """A call of the new code: the compiled entry runs on it, no Python and, as torch's
        new code, no guard (torch checks guards in its eval-frame cache, before choosing the
        code to run): what the graph baked in stays baked, a baked view fails at another
        size. A new size of a dynamic dim is traced again (no recompile, no backend call). A
        call the entry cannot read its inputs from (another argument structure, or an
        argument the trace left at its default given another value) goes through the frame,
        guards and all."""
        entry, code = compiled.entry, self.fn_code
        call = None if entry is None or code is None else \
            as_called(code, compiled.defaults, compiled.form, args, kwargs)
        if entry is None or call is None:
            return self(*args, **kwargs)
        call_args, call_kwargs = call
        spec, leaves = flatten(self.names, call_args, call_kwargs)
        if spec != entry.guards.spec:
            return self(*args, **kwargs)
        GenerationTracker.generation += 1  # a new step for CUDA graph trees
        if entry.symbolic:  # one graph for every size
            return entry.run((), leaves)
        key = entry.guards.dynamic_key(leaves)
        if key in entry.tables:
            return entry.run(key, leaves)
        if key not in entry.misses:
            return self._trace(call_args, call_kwargs, spec, leaves, expect=(entry, key))
        return self(*args, **kwargs)

    def _finish(self, tracer: Tracer) -> None:
        """After a whole trace: a break-free one becomes a direct entry (or a new size of one)."""
        final = tracer.final
        assert final is not None, "a trace that returned closed its last segment"
        seg, entry, spec, result, holders = (final.segment, final.entry, final.spec,
                                             final.result, final.holders)
        expect = tracer.expect
        leaf_ids = {id(leaf.value): i for i, leaf in enumerate(tracer.leaves)}
        returned = {id(v) for v in output_values(result)}
        made = {id(h) for h, _ in holders}
        for t in output_values(result):
            if isinstance(t, Tensor) and id(t) not in made and tracer.mode.is_meta(t):
                raise InternalTorchDynamoError(
                    "fake_torch.compile: the function returned a tensor made by a call the "
                    "tracer does not hook (its values were never computed). Please report it.")
        escaped = any(isinstance(h, Tensor) and id(h) not in returned and id(h) not in leaf_ids
                      and id(h) not in tracer.input_sources for h, _ in holders)
        if tracer.breaks or seg.index > 0 or escaped or self.state.rerun:
            self.state.rerun = True
            if expect is not None:
                expect[0].misses.add(expect[1])
            return
        if expect is not None:
            if expect[0].segment is entry:
                expect[0].tables[expect[1]] = spec
                return
            expect[0].misses.add(expect[1])
        leaves = tracer.leaves
        guards = FrameGuards(tracer.spec, [self._leaf_guard(i, leaf, seg)
                                           for i, leaf in enumerate(leaves)],
                             global_guards(self.code, self.globals, self.closure))
        if self.options.guard_filter_fn is not None:
            guards = apply_filter(guards, leaves, self.names, tracer.call_values,
                                  self.options.guard_filter_fn)
        outs = {id(h): i for i, (h, _) in enumerate(holders)}
        given = _given_objects(leaves, self.code)  # an argument object returned: the new one
        shape = template(result, outs, {**given, **tracer.input_sources})
        direct = DirectEntry(guards, entry, list(seg.sources), shape)
        direct.tables[guards.dynamic_key(leaves)] = spec
        sym = tracer.sym
        if sym is not None and sym.places:
            direct.symbolic = True
            if guards.checks_shape_env():  # (a guard filter may have dropped SHAPE_ENV)
                guards.shapes = _shape_check(sym)
        self.entries.append(direct)

    def _leaf_guard(self, index: int, leaf: Leaf, seg: Segment) -> Guard:
        if isinstance(leaf.value, Module):
            return module_guard(leaf, self.code,
                                [s.attr for s in seg.sources if s.leaf == index and s.attr])
        if is_user_object(leaf.value):
            return ObjectGuard.of(leaf.name, leaf.value, self.code)
        return leaf_guard(leaf, self.state.dims(leaf), self.state.dynamic_scalar(leaf))


__all__ = ["CompileOptions", "CompiledFrame", "add_reset_hook", "frame_for", "reset"]
