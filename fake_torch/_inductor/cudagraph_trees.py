"""CUDA graph trees: how mode="reduce-overhead" (and the "cudagraphs" backend) run a compiled
graph on the cuda device, after torch/_inductor/cudagraph_trees.py.

Per compiled function and input shape:
  # warmup   the first call runs the function eagerly (allocating from the trees' shared pool);
  # record   the next call copies each non-static input into a graph-owned buffer, captures the
             function into a torch.cuda.CUDAGraph (its launches are paid once, at capture) and
             replays it once;
  # replay   later calls copy the new inputs into those buffers (one `_foreach_copy_` launch)
             and replay: ONE launch for the whole graph.
Static inputs (the placeholders Dynamo marked static: parameters, nn.Module buffers, tensors
given to torch._dynamo.mark_static_address; and get_attr tensors, which never are inputs) and
outputs of an earlier graph on the current path are not copied; the graph may write them in
place. Any other input the graph writes makes the trees skip (torch's check_for_mutation).

Outputs live in graph memory. A new "generation" begins at each call of a compiled frame
(`GenerationTracker.generation`, bumped by torch.compile) or at each
`torch.compiler.cudagraph_mark_step_begin()`. When a generation begins after a warmup or a
recording, the outputs of the current path are freed, by STORAGE as torch frees them: every
tensor over an output's storage (the one the compiled frame returned, a view the user made)
then raises torch's "accessing tensor output of CUDAGraphs that has been overwritten by a
subsequent run" error when read. A replay's outputs are the graph's buffers again, so holding
one across calls sees it overwritten, silently, as on a GPU. Within one generation, calls that
follow each other form a path of the tree: each call is recorded as a child of the previous one,
in its own memory, so all of the step's outputs stay valid.

Simplifications, said here once: a node keeps its output memory for as long as the tree lives
(torch gives it back to the pool between recordings), and there is no re-record limit.
"""

from __future__ import annotations

import gc
import itertools
import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from fake_torch._dynamo.mutation_guard import GenerationTracker
from fake_torch._inductor import config
from fake_torch._inductor.cudagraph_utils import (
    bump_counter,
    get_mutation_stack_trace,
    log_cudagraph_skip_and_bump_counter,
    maybe_warning_due_to_dynamic_shape,
)
from fake_torch._kernels._strides import empty_like_preserve
from fake_torch._opdef import POINTWISE, aten_op
from fake_torch._simulated import _dispatch, _machine
from fake_torch._simulated._allocator import CachingAllocator, PoolId, Storage
from fake_torch._tensor import Tensor
from fake_torch.cuda import graphs, streams

Model = Callable[[list[Any]], Sequence[Any]]


class MarkStepBox:
    mark_step_counter = 0  # only moved by cudagraph_mark_step_begin, downwards


def mark_step_begin() -> None:
    """Indicates that a new iteration of inference or training is about to begin."""
    MarkStepBox.mark_step_counter -= 1


def _current_generation() -> int:
    if MarkStepBox.mark_step_counter != 0:
        return MarkStepBox.mark_step_counter
    return GenerationTracker.generation


# --- freed outputs ------------------------------------------------------------------------------


class _FreedArray(np.ndarray):
    """The data of an output the trees freed: shape, strides and dtype still read; any read of
    the values raises torch's error."""

    _msg: str = ""

    def __array_finalize__(self, obj: Any) -> None:
        self._msg = getattr(obj, "_msg", "")

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(self._msg)

    __array_ufunc__ = __array_function__ = _fail
    __getitem__ = __setitem__ = __iter__ = __bool__ = __float__ = __int__ = _fail
    copy = astype = item = tolist = tobytes = fill = _fail

    def __repr__(self) -> str:
        return "<freed CUDAGraphs output>"


def _check_not_freed(op: str, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...],
                     kind: str) -> None:
    """The door's input check: a launch that would read or write a freed output raises at the
    call, as torch's check does (the kernel itself may run later, when the device gets there)."""
    for a in (*outs, *inputs):
        if isinstance(a, _FreedArray):
            raise RuntimeError(a._msg)


# The door's check, registered while a freed output is alive (held by a tensor or a view): a
# registered input check sends every launch through the door's general path (the native
# door's too), so it goes again when the last freed output dies, not at the process's end.
_freed_check: _dispatch.Registration | None = None
_freed_alive = 0
_freed_lock = threading.RLock()  # (a finalizer may run inside, on a collection)


def _freed_output_died() -> None:
    global _freed_check, _freed_alive
    with _freed_lock:
        _freed_alive -= 1
        if _freed_alive == 0 and _freed_check is not None:
            _freed_check.remove()
            _freed_check = None


def _free_output(t: Tensor, msg: str) -> None:
    """Make `t` an output whose memory the trees took back: its data reads raise `msg`."""
    global _freed_check, _freed_alive
    a = t._a
    extent = 0 if a.size == 0 else 1 + sum((n - 1) * s // a.itemsize
                                           for n, s in zip(a.shape, a.strides, strict=True))
    host = np.lib.stride_tricks.as_strided(np.empty(extent, a.dtype), a.shape, a.strides)
    freed = host.view(_FreedArray)
    freed._msg = msg
    with _freed_lock:  # (its views hold it: it dies with the last of them)
        if _freed_check is None:
            _freed_check = _dispatch.add_input_check(_check_not_freed)
        _freed_alive += 1
    weakref.finalize(freed, _freed_output_died)
    t._set(freed, t._device, None)


def _tensors_over(storage: Storage) -> list[Tensor]:
    """Every tensor over `storage` (each holds it): what freeing a storage reaches. Found by
    the interpreter's referrers, at a generation's start, not on any hot path."""
    return [t for t in gc.get_referrers(storage)
            if isinstance(t, Tensor) and t._storage is storage]


def format_dealloc_msg(stack_trace: str | None) -> str:
    trace = stack_trace.strip() if stack_trace else "[Could not find stack trace]"
    return ("Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
            f"subsequent run. Stack trace: {trace}. To prevent overwriting, clone the tensor "
            "outside of torch.compile() or call torch.compiler.cudagraph_mark_step_begin() "
            "before each model invocation.")


# --- pieces of a tree --------------------------------------------------------------------------


class _PoolMode(_dispatch.Mode):
    """Eager execution whose cuda buffers come from the trees' pool (warmup, graph inputs)."""

    name = "eager"

    def __init__(self, pool: PoolId) -> None:
        self.pool = pool
        self.allocator: CachingAllocator = _machine.current_device().allocator  # the trees'

    def allocate(self, shape: tuple[int, ...], np_dtype: np.dtype[Any],
                 on_cuda: bool) -> tuple[np.ndarray, Storage | None]:
        if not on_cuda:
            return super().allocate(shape, np_dtype, on_cuda)
        nbytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
        return _dispatch.device_buffer(self.allocator.allocate(nbytes, self.pool), shape,
                                       np_dtype)


@dataclass
class WrappedFunction:
    """One compiled function at one input shape, as the trees run it."""

    model: Model
    static_input_idxs: tuple[int, ...]
    id: int
    mutated_input_idxs: tuple[int, ...]
    stack_traces: tuple[str | None, ...]  # per output
    input_stack_traces: tuple[str | None, ...]  # per input: where it is mutated, if known


class _Node:
    """What warmup and graph nodes share: a parent, and the outputs they handed out."""

    def __init__(self, fn: WrappedFunction, parent: _Node | None, node_id: int) -> None:
        self.fn = fn
        self.parent = parent
        self.id = node_id
        self.children: dict[int, list[CUDAGraphNode]] = defaultdict(list)
        # the storages of the outputs the latest run handed out (None: not the trees' memory)
        self.handed_out: list[weakref.ref[Storage] | None] = []

    @property
    def path_from_root(self) -> list[_Node]:
        path: list[_Node] = []
        node: _Node | None = self
        while node is not None:
            path.append(node)
            node = node.parent
        return path[::-1]

    def live_outputs(self) -> list[Storage]:
        """The storages of this node's outputs that some tensor still holds."""
        return [s for s in (ref() for ref in self.handed_out if ref is not None)
                if s is not None]

    def path_live_outputs(self) -> list[Storage]:
        return [s for node in self.path_from_root for s in node.live_outputs()]

    def all_outputs_are_dead(self) -> bool:
        return not self.path_live_outputs()

    def is_recorded_tensor(self, t: Tensor) -> bool:
        """Does `t` live in memory an output of this path owns?"""
        return t._storage is not None and any(t._storage is s for s in self.path_live_outputs())

    def _hand_out(self, outputs: Sequence[Any], owned: Callable[[Tensor], bool]) -> None:
        self.handed_out = [weakref.ref(o._storage) if isinstance(o, Tensor) and owned(o)
                           and o._storage is not None else None for o in outputs]


class CUDAWarmupNode(_Node):
    """A warmup: the function run eagerly, its new cuda buffers taken from the pool."""

    def __init__(self, fn: WrappedFunction, parent: _Node | None, pool: PoolId,
                 node_id: int) -> None:
        super().__init__(fn, parent, node_id)
        self.pool = pool

    def run(self, new_inputs: list[Any]) -> Sequence[Any]:
        inputs = [t for t in new_inputs if isinstance(t, Tensor)]
        with _dispatch.push_mode(_PoolMode(self.pool)):
            outputs = self.fn.model(new_inputs)
        self._hand_out(outputs, lambda o: o.is_cuda and not any(
            np.may_share_memory(o._a, i._a) for i in inputs))
        return outputs


class CUDAGraphNode(_Node):
    """A recording: graph-owned input buffers, the captured CUDAGraph, its output buffers."""

    def __init__(self, fn: WrappedFunction, node_id: int, parent: _Node | None,
                 inputs: list[Any], pool: PoolId, stream: streams.Stream) -> None:
        super().__init__(fn, parent, node_id)
        # inputs an earlier graph of this path wrote are already graph memory: not copied
        managed = [i for i, t in enumerate(inputs)
                   if isinstance(t, Tensor) and parent is not None and parent.is_recorded_tensor(t)]
        static = set(fn.static_input_idxs) | set(managed)
        self.non_static_input_idxs = [i for i, t in enumerate(inputs)
                                      if isinstance(t, Tensor) and i not in static]
        self.static_input_data_ptrs = {i: inputs[i].data_ptr() for i in sorted(static)
                                       if isinstance(inputs[i], Tensor)}
        bump_counter("cudagraph_recorded_non_static_inputs", len(self.non_static_input_idxs))
        # record: copy the non-static inputs into buffers the graph owns, then capture
        with _dispatch.push_mode(_PoolMode(pool)):
            recording_inputs = [empty_like_preserve(t) if i in self.non_static_input_idxs
                                else t for i, t in enumerate(inputs)]
        _copy_inputs([recording_inputs[i] for i in self.non_static_input_idxs],
                     [inputs[i] for i in self.non_static_input_idxs])
        self.graph = graphs.CUDAGraph()
        with graphs.graph(self.graph, pool=pool, stream=stream, capture_error_mode="thread_local"):
            outputs = self.fn.model(list(recording_inputs))
        self.graph.replay()
        # keep the buffers the graph owns; a static input is remembered by its address only,
        # as torch's node does: holding it would keep its memory from the allocator (a
        # transformers StaticCache made anew per generate() would then land elsewhere and be
        # recorded again, where torch finds it at the same address and replays)
        self.input_buffers: list[Tensor] = [recording_inputs[i]
                                            for i in self.non_static_input_idxs]
        own = {id(s) for s in (ref() for ref in self.graph._made) if s is not None}
        own |= {id(recording_inputs[i]._storage) for i in self.non_static_input_idxs}

        def owned(o: Tensor) -> bool:
            return o._storage is not None and id(o._storage) in own

        # what a replay hands out again: graph memory, or a static tensor as it is
        self.output_specs: list[tuple[np.ndarray, Any, Storage | None] | Any] = [
            (o._a, o._device, o._storage) if isinstance(o, Tensor) and owned(o) else o
            for o in outputs]
        self.recording_outputs: Sequence[Any] | None = outputs
        self._hand_out(outputs, owned)

    def run_first_inputs(self) -> Sequence[Any]:
        assert self.recording_outputs is not None
        outputs, self.recording_outputs = self.recording_outputs, None
        return outputs

    def check_invariants(self, inputs: list[Any]) -> bool:
        """Static inputs (and earlier graphs' outputs) must sit where they sat at recording."""
        return all(isinstance(inputs[i], Tensor) and inputs[i].data_ptr() == ptr
                   for i, ptr in self.static_input_data_ptrs.items())

    def run(self, new_inputs: list[Any]) -> list[Any]:
        # replay
        _copy_inputs(self.input_buffers, [new_inputs[i] for i in self.non_static_input_idxs])
        self.graph.replay()
        outputs = [Tensor._make(*spec) if isinstance(spec, tuple) else spec
                   for spec in self.output_specs]
        self.handed_out = [weakref.ref(spec[2]) if isinstance(spec, tuple) and spec[2] is not None
                           else None for spec in self.output_specs]
        return outputs


aten_op("_foreach_copy_", POINTWISE)  # the copy of new inputs before a replay


def _foreach_copy_kernel(*arrays: np.ndarray) -> None:
    n = len(arrays) // 2
    for dst, src in zip(arrays[:n], arrays[n:], strict=True):
        np.copyto(dst, src)


_FOREACH_MAX_TENSORS = 110  # tensors per multi_tensor_apply launch (depth 2), as on CUDA


def _copy_inputs(dsts: list[Tensor], srcs: list[Tensor]) -> None:
    """torch._foreach_copy_(dsts, srcs): one launch per 110 pairs when every tensor shares a
    dtype and device and each pair is dense with equal strides; else one copy_ per pair."""
    if not dsts:
        return
    fast = all(d.dtype is dsts[0].dtype and s.dtype is dsts[0].dtype and s.is_cuda
               and d.shape == s.shape and d.stride() == s.stride() and s.is_contiguous()
               for d, s in zip(dsts, srcs, strict=True))
    if not fast:
        for d, s in zip(dsts, srcs, strict=True):
            d.copy_(s)
        return
    for start in range(0, len(dsts), _FOREACH_MAX_TENSORS):
        pairs = slice(start, start + _FOREACH_MAX_TENSORS)
        _dispatch.launch("_foreach_copy_", _foreach_copy_kernel,
                         tuple(d._a for d in dsts[pairs]), tuple(s._a for s in srcs[pairs]),
                         on_cuda=True)


# --- the tree manager ---------------------------------------------------------------------------


class ExecutionState(Enum):
    NONE = "none"
    WARMUP = "warmup"
    RECORDING = "recording"
    EXECUTION = "execution"


class CUDAGraphTreeManager:
    """Groups the recordings of every compiled function into a tree, one shared memory pool,
    and decides per call whether to warm up, record or replay."""

    def __init__(self) -> None:
        self.roots: dict[int, list[CUDAGraphNode]] = defaultdict(list)
        self.ids_to_funcs: dict[int, WrappedFunction] = {}
        self.warmed_up_functions: set[int] = set()
        self.warned_mutation: set[int] = set()
        # (parent node id, function id) -> does the function write a non-graph input
        self.non_cudagraph_managed_mutation_hint: dict[int | None, dict[int, bool]] = \
            defaultdict(dict)
        self.stream = streams.Stream()
        self.allocator = _machine.current_device().allocator
        self.pool = graphs.graph_pool_handle()
        self.allocator.use_pool(self.pool)  # the trees keep their pool alive
        self.graph_counter = itertools.count(0)
        self.func_counter = itertools.count(0)
        self.warmup_node_counter = itertools.count(-1, -1)
        self.path_state = ExecutionState.NONE
        self._current_node: _Node | None = None
        self.current_gen = -1

    @property
    def current_node(self) -> _Node | None:
        return self._current_node

    @current_node.setter
    def current_node(self, value: _Node | None) -> None:
        self._current_node = value
        if value is None:
            self.path_state = ExecutionState.NONE

    @property
    def in_warmup(self) -> bool:
        return self.path_state is ExecutionState.WARMUP

    @property
    def in_recording(self) -> bool:
        return self.path_state is ExecutionState.RECORDING

    def add_function(self, model: Model, static_input_idxs: Sequence[int],
                     mutated_input_idxs: Sequence[int], stack_traces: Sequence[str | None],
                     input_stack_traces: Sequence[str | None]) -> int:
        fid = next(self.func_counter)
        self.ids_to_funcs[fid] = WrappedFunction(model, tuple(static_input_idxs), fid,
                                                 tuple(mutated_input_idxs), tuple(stack_traces),
                                                 tuple(input_stack_traces))
        return fid

    def run(self, new_inputs: list[Any], function_id: int) -> Sequence[Any]:
        if self.in_recording:
            self.try_end_curr_recording()
        if self.in_warmup:
            self.try_end_curr_warmup()
        node_id = self._node_id()
        if function_id not in self.non_cudagraph_managed_mutation_hint[node_id]:
            self._update_non_cudagraph_managed_mutation(function_id, new_inputs)
        if self.non_cudagraph_managed_mutation_hint[node_id][function_id]:
            return self.ids_to_funcs[function_id].model(new_inputs)
        if function_id not in self.warmed_up_functions or self.in_warmup:
            return self.run_eager(new_inputs, function_id)
        children = self.roots if self.current_node is None else self.current_node.children
        if not self.in_recording:
            for child in children[function_id]:
                if child.check_invariants(new_inputs):
                    return self.execute_node(child, new_inputs)
            if self.current_node is not None and function_id in self.roots:
                self.try_end_curr_execution()
                if self.current_node is None:  # a root of the new generation: match it
                    return self.run(new_inputs, function_id)
            self.try_end_curr_execution()
        return self.record_function(new_inputs, function_id)

    # --- the three ways to run ----------------------------------------------------------------

    def run_eager(self, new_inputs: list[Any], function_id: int) -> Sequence[Any]:
        # warmup
        self.warmed_up_functions.add(function_id)
        node = CUDAWarmupNode(self.ids_to_funcs[function_id], self.current_node, self.pool,
                              next(self.warmup_node_counter))
        self.current_node = node
        self.path_state = ExecutionState.WARMUP
        self.current_gen = _current_generation()
        return node.run(new_inputs)

    def record_function(self, new_inputs: list[Any], function_id: int) -> Sequence[Any]:
        # record
        node = CUDAGraphNode(self.ids_to_funcs[function_id], next(self.graph_counter),
                             self.current_node, new_inputs, self.pool, self.stream)
        if self.current_node is None:
            self.roots[function_id].append(node)
        else:
            self.current_node.children[function_id].append(node)
        self.current_node = node
        self.path_state = ExecutionState.RECORDING
        self.current_gen = _current_generation()
        return node.run_first_inputs()

    def execute_node(self, node: CUDAGraphNode, new_inputs: list[Any]) -> Sequence[Any]:
        # replay
        self.current_node = node
        self.path_state = ExecutionState.EXECUTION
        self.current_gen = _current_generation()
        return node.run(new_inputs)

    # --- ending a path --------------------------------------------------------------------------

    def in_new_torch_compile_invocation(self) -> bool:
        return self.current_gen != _current_generation()

    def try_end_curr_recording(self) -> None:
        assert self.current_node is not None
        if self.in_new_torch_compile_invocation():
            self.dealloc_current_path_weakrefs()
            self.current_node = None
        elif self.current_node.all_outputs_are_dead():
            self.current_node = None

    try_end_curr_warmup = try_end_curr_recording

    def try_end_curr_execution(self) -> None:
        if self.current_node is None:
            return
        if self.in_new_torch_compile_invocation() or self.current_node.all_outputs_are_dead():
            self.current_node = None

    def dealloc_current_path_weakrefs(self) -> None:
        """A new generation: the outputs of the path just warmed up or recorded are freed,
        storage by storage: every tensor over one (not only the object handed out) is."""
        assert self.current_node is not None
        for node in self.current_node.path_from_root:
            traces = node.fn.stack_traces
            for i, ref in enumerate(node.handed_out):
                storage = ref() if ref is not None else None
                if storage is None:
                    continue
                msg = format_dealloc_msg(traces[i] if i < len(traces) else None)
                for t in _tensors_over(storage):
                    _free_output(t, msg)

    # --- mutation ---------------------------------------------------------------------------

    def _node_id(self) -> int | None:
        return None if self.current_node is None else self.current_node.id

    def _update_non_cudagraph_managed_mutation(self, function_id: int,
                                               inputs: list[Any]) -> None:
        """A function that writes an input which is neither static nor graph memory runs
        without CUDA graphs (torch's cudagraph_support_input_mutation); reported once."""
        fn = self.ids_to_funcs[function_id]
        node = self.current_node
        mutated = [i for i in fn.mutated_input_idxs
                   if i not in fn.static_input_idxs
                   and not (node is not None and node.is_recorded_tensor(inputs[i]))]
        self.non_cudagraph_managed_mutation_hint[self._node_id()][function_id] = bool(mutated)
        if mutated and function_id not in self.warned_mutation:
            self.warned_mutation.add(function_id)
            log_cudagraph_skip_and_bump_counter(
                get_mutation_stack_trace(mutated, fn.input_stack_traces))


def get_manager() -> CUDAGraphTreeManager:
    """The tree manager of the current cuda device (the simulated machine keeps it), made on
    first use."""
    device = _machine.current_device()
    manager: CUDAGraphTreeManager | None = device.trees_manager
    if manager is None:
        manager = device.trees_manager = CUDAGraphTreeManager()
    return manager


def reset_cudagraph_trees() -> None:
    """Clear all cudagraph trees (torch.compiler.reset does)."""
    for device in _machine.MACHINE.devices:
        manager: CUDAGraphTreeManager | None = device.trees_manager
        if manager is not None:
            manager.allocator.release_pool(manager.pool)
        device.trees_manager = None
    MarkStepBox.mark_step_counter = 0


def cudagraphify(model: Model, static_input_idxs: Sequence[int] = (), *,
                 mutated_input_idxs: Sequence[int] = (),
                 stack_traces: Sequence[str | None] = (),
                 input_stack_traces: Sequence[str | None] = ()) -> Model:
    """Run `model(inputs) -> outputs` through the trees: one function (warmup, record,
    replay) per distinct input size, with torch's warning past
    config.triton.cudagraph_dynamic_shape_warn_limit sizes."""
    # per device: its manager, and the ids of this model's functions in it
    caches: dict[int, tuple[CUDAGraphTreeManager, dict[tuple[Any, ...], int]]] = {}
    has_warn = False

    def run(inputs: list[Any]) -> Sequence[Any]:
        # the trees of the inputs' device, run with that device current (torch's trees are
        # one container per device index, and warm up and record under its device guard)
        index = next((t.device.index for t in inputs if isinstance(t, Tensor) and t.is_cuda),
                     None)
        if index is None or index == _machine.MACHINE.thread.index:
            return run_here(inputs)
        with _machine.device_guard(index):
            return run_here(inputs)

    def run_here(inputs: list[Any]) -> Sequence[Any]:
        nonlocal has_warn
        manager = get_manager()
        index = _machine.MACHINE.thread.index
        owner, fn_cache = caches.get(index, (None, {}))
        if owner is not manager:  # first call, or the trees were reset since
            fn_cache = {}
            caches[index] = (manager, fn_cache)
        key = tuple((t.shape, t.stride(), t.dtype, t.device) if isinstance(t, Tensor) else t
                    for t in inputs)
        function_id = fn_cache.get(key)
        if function_id is None:
            if not has_warn:
                has_warn = maybe_warning_due_to_dynamic_shape(
                    len(fn_cache) + 1, config.triton.cudagraph_dynamic_shape_warn_limit)
            function_id = fn_cache[key] = manager.add_function(
                model, static_input_idxs, mutated_input_idxs, stack_traces, input_stack_traces)
        return manager.run(inputs, function_id)

    return run
