"""torch.cuda.CUDAGraph and torch.cuda.graph: capture records kernels, replay re-runs them.

While capturing, the door's mode is a `GraphCapture`: kernels are RECORDED, not run, into
buffers allocated from the graph's memory pool (filled with NaN so reading them before a replay
shows). `replay()` re-runs the recorded kernels, in order, against the very same buffers, and
counts ONE launch. Python code inside the capture ran once: values it read are baked in.

A host<->device copy may be captured only when its host side is pinned memory (else torch's
error); the graph then reads (or writes) those host bytes at every replay, as a GPU's DMA does.
Any other host operand (a 0-dim cpu tensor in `x * s`) is read on the host at launch and passed
to the kernel by value, as TensorIterator passes a cpu scalar: the graph keeps its value at
capture.

Streams, as CUDA captures them: the capture stream, and every stream that waited on it (an
event recorded in the capture, or `wait_stream`) record into the graph; work on any other stream
is launched eagerly, outside the graph. Every stream that joined must be joined back (the capture
stream waits on its last work) before capture_end, else CUDA's "capturing stream has unjoined
work" fails it.
Random draws follow torch's generator protocol (fake_torch/_generator.py): the default
generator's state, and every state given to `register_generator_state`, is prepared at capture
and refreshed (two fill_ launches) before each replay of a graph that draws.
"""

from __future__ import annotations

import itertools
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from fake_torch import _torch_stream
from fake_torch._generator import Generator, PhiloxState
from fake_torch._simulated import _allocator_capture, _cost, _dispatch, _gpus, _machine, _pinned
from fake_torch._simulated._allocator import PoolId, Storage
from fake_torch._simulated._allocator_blocks import DEFAULT_POOL, Segment
from fake_torch._simulated._timeline import GraphNodes, Work
from fake_torch.cuda import _sanitizer, streams

_ERROR_MODES = ("global", "thread_local", "relaxed")
_CAPTURE_SYNC_ERROR = _allocator_capture.CAPTURE_UNSUPPORTED_ERROR  # a host wait in a capture
_CAPTURE_UNJOINED_ERROR = ("CUDA error: capturing stream has unjoined work\n"
                           "CUDA kernel errors might be asynchronously reported at some other "
                           "API call, so the stacktrace below might be incorrect.\n"
                           "For debugging consider passing CUDA_LAUNCH_BLOCKING=1")
_CAPTURE_COPY_ERROR = ("Cannot copy between CPU and CUDA tensors during CUDA graph capture "
                       "unless the CPU tensor is pinned. Please use tensor.pin_memory() or "
                       "allocate the tensor with pin_memory=True.")


@dataclass(frozen=True)
class CapturedInput:
    """A storage a capture read that existed before it: the graph reads its bytes at every
    replay. Kept weakly (the graph does not keep its inputs alive, as on a GPU), with where its
    bytes lie, so that once it is gone the sanitizer can still tell who may reuse them."""

    ref: weakref.ref[Storage]
    span: tuple[int, int]  # [start, end) addresses
    segment: Segment | None  # the allocator segment holding it (None: not the caching allocator's)
    # the graph whose capture made it (an output of an earlier graph of a shared pool), if any:
    # its replays write these bytes
    producer: weakref.ref[CUDAGraph] | None

    @staticmethod
    def of(storage: Storage) -> CapturedInput:
        block = storage.block
        segment = block.segment if block is not None else None
        producer = None
        if segment is not None and segment.pool.id != DEFAULT_POOL:
            made_by = _made_by.get(storage)  # the live graph of the pool that made it, if any
            if made_by is not None:
                g = made_by[0]()
                if g is not None and g._made is made_by[1] and \
                        _in_pool(g, segment.pool.id, segment.pool.device):
                    producer = made_by[0]
        return CapturedInput(weakref.ref(storage), storage.span(), segment, producer)


# storage -> (the graph whose capture allocated it, that capture's `_made` list), for the
# storages still alive when the capture ended: what CapturedInput.of looks up instead of
# searching every graph of the pool (a pool of thousands of piecewise graphs made that search
# quadratic). An entry counts only while the graph still holds that capture (its `_made` is
# that list: a reset or a new capture replaces it) and is a live graph of the pool, as
# graphs_of_pool lists them; it goes with its storage.
_made_by: weakref.WeakKeyDictionary[
    Storage, tuple[weakref.ref[CUDAGraph], list[weakref.ref[Storage]]]] = \
    weakref.WeakKeyDictionary()


def _in_pool(graph: CUDAGraph, pool_id: PoolId, device: int) -> bool:
    """Whether `graph` is one of graphs_of_pool(pool_id, device)."""
    devices = _machine.MACHINE.devices
    return device < len(devices) and graph in devices[device].graphs_by_pool.get(pool_id, ())


@dataclass
class RecordedKernel:
    """One kernel as a capture saw it: its function, buffers and baked parameters."""

    op: str
    kernel: _dispatch.Kernel
    outs: tuple[np.ndarray, ...]
    inputs: tuple[Any, ...]
    params: dict[str, Any]
    kind: str = "kernel"
    group: _dispatch.FusedKernel | None = None  # the compiled kernel it is part of

    def run(self) -> None:
        self.kernel(*self.outs, *self.inputs, **self.params)


class GraphCapture(_dispatch.Mode):
    """One capture, from capture_begin to capture_end: the door's mode meanwhile, and the one
    object the device's allocator, the host allocator, the device's streams and the door hold
    it by. `begin()` registers it with each of them, `end()` takes it back from each: the
    capture's lifetime is written in these two places only."""

    name = "capture"

    def __init__(self, graph: CUDAGraph, pool_id: PoolId, stream: streams.Stream,
                 error_mode: str = "global") -> None:
        self.graph = graph
        self.error_mode = error_mode  # capture_error_mode: what other threads may do meanwhile
        self.thread = threading.get_ident()  # the capturing thread
        self.pool_id = pool_id
        self.stream = stream
        self.machine = _machine.MACHINE
        self.device = self.machine.device(stream.device_index)  # the device it captures on
        self.error: BaseException | None = None  # the first illegal call invalidates capture
        self.storages: list[weakref.ref[Storage]] = []  # allocated during capture
        self.capture: _allocator_capture.Capture | None = None  # the streams' graph (begin)

    # --- begin and end: the capture's lifetime, in one place each -----------------------------

    def begin(self) -> None:
        """cudaStreamBeginCapture: the device's allocator takes the capture's allocations
        from its pool (and c10's stream graph starts on the stream), the host allocator its
        pinned ones, the stream reports capturing, the door records this thread's launches
        and asks it about other threads' host syncs."""
        device, pool_id, stream = self.device, self.pool_id, self.stream
        device.allocator.begin_allocate_to_pool(
            pool_id, stream.handle, self.thread if self.error_mode == "global" else None)
        self.capture = device.captures.capture_of(stream.handle)
        device.capturing.add(stream.stream_id)
        captures = device.captures  # pinned memory on the capture's streams: the graph's pool
        self.machine.host.begin_allocate_to_pool(pool_id,
                                                 lambda s: captures.pool_of(s) == pool_id)
        _dispatch.enter_mode(self)
        _dispatch.watch_other_threads(self)

    def end(self) -> list[int]:
        """cudaStreamEndCapture: everything `begin` registered, taken back, and each generator
        state the graph drives told how far one replay moves it; returns the streams forked
        from the capture that never joined back (read before it ends)."""
        device = self.device
        _dispatch.exit_mode(self)
        _dispatch.watch_other_threads(self, False)
        forks = device.captures.unjoined(self.stream.handle)
        device.allocator.end_allocate_to_pool(self.stream.handle)
        self.machine.host.end_allocate_to_pool(self.pool_id)
        device.capturing.discard(self.stream.stream_id)
        states = self.graph._generator_states
        for state in states:
            states[state] = state.capture_epilogue()
        return forks

    # --- the door's mode meanwhile ------------------------------------------------------------

    def joined(self) -> bool:
        """Whether the current stream takes part in this capture: the capture stream, or one
        that waited on it. Work on any other stream (or device) is not captured (CUDA runs
        it now)."""
        device = self.device
        return device.is_current() and \
            device.captures.capture_of(device.current_stream()) is self.capture

    def allocate(self, shape: tuple[int, ...], np_dtype: np.dtype[Any],
                 on_cuda: bool) -> tuple[np.ndarray, Storage | None]:
        if not (on_cuda and self.joined()):  # (c10: a stream outside it, the default pool)
            return super().allocate(shape, np_dtype, on_cuda)
        storage = self.device.allocator.allocate(_dispatch._nbytes(shape, np_dtype),
                                                 self.pool_id)
        a, _ = _dispatch.device_buffer(storage, shape, np_dtype)
        self.storages.append(weakref.ref(storage))  # weak: a dead tensor's block goes back
        return a, storage

    def run(self, op: str, kernel: _dispatch.Kernel, outs: tuple[np.ndarray, ...],
            inputs: tuple[Any, ...], params: dict[str, Any], kind: str, on_cuda: bool) -> None:
        if kind in ("memcpy_h2d", "memcpy_d2h"):
            host = inputs[0] if kind == "memcpy_h2d" else outs[0]
            if not _pinned.is_pinned_array(host):
                raise RuntimeError(_CAPTURE_COPY_ERROR)
        if not on_cuda:  # host work is not part of the graph: it runs now
            kernel(*outs, *inputs, **params)
            return
        if not self.joined():  # eager, on a stream that never waited on the capture
            super().run(op, kernel, outs, inputs, params, kind, on_cuda)
            return
        self.graph._kernels.append(RecordedKernel(op, kernel, outs, _by_value(inputs), params,
                                                  kind, _dispatch.current_fused()))

    def record_event(self, event: Any, stream: int) -> None:
        """An event recorded on a stream in the capture is a node of the graph: each replay
        sets its time when the device reaches it."""
        captures = self.device.captures
        if self.device.is_current() and captures.is_capturing(stream) and \
                captures.pool_of(stream) == self.pool_id:
            self.graph._event_marks.append((len(self.graph._kernels), event))
        else:
            super().record_event(event, stream)

    def host_sync_elsewhere(self, what: str, device: bool) -> None:
        """Another thread waits for the device during this capture. In "global" mode CUDA
        refuses it that call (cudaErrorStreamCaptureUnsupported); a device-wide wait
        (cudaDeviceSynchronize) also invalidates this capture, which waits would otherwise
        break. "thread_local" and "relaxed" leave other threads alone (torch.cuda.graph's
        capture_error_mode: "global" errors on actions in other threads)."""
        if self.error_mode != "global" or threading.get_ident() == self.thread:
            return
        error = RuntimeError(_CAPTURE_SYNC_ERROR)
        if device and self.error is None:
            self.error = error
        raise error

    def host_sync(self, what: str) -> None:
        error = RuntimeError(_CAPTURE_SYNC_ERROR)
        if self.error is None:
            self.error = error  # the capture is now invalidated, as cudaStreamEndCapture says
        raise error


def _by_value(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """A captured kernel's operands: device memory (and pinned host memory, which a DMA reads)
    as they are, read at every replay; a 0-dim cpu tensor operand as a copy of its value now.
    On a GPU a cpu scalar is read on the host at launch and passed by value (TensorIterator's
    cpu scalar, aten/src/ATen/native/cuda/Loops.cuh), so the graph keeps what it was at
    capture. (Only 0-dim host arrays can be such operands: a cuda op refuses other cpu tensors.)"""
    for x in inputs:  # (a loop, not any(...): this runs once per captured kernel)
        if isinstance(x, np.ndarray) and x.ndim == 0:
            break
    else:
        return inputs
    return tuple(x.copy() if isinstance(x, np.ndarray) and x.ndim == 0
                 and _machine.MACHINE.storage_of(x) is None
                 and not _pinned.is_pinned_array(x) else x
                 for x in inputs)


class CUDAGraph:
    """torch.cuda.CUDAGraph: a captured sequence of kernels that replays as one launch."""

    def __init__(self, keep_graph: bool = False) -> None:
        self.keep_graph = keep_graph
        self._kernels: list[RecordedKernel] = []
        self._exec: list[RecordedKernel] = []  # what replay runs (the instantiated graph)
        self._nodes: list[Work] = []  # _exec as the device runs it (fused kernels merged)
        # instantiated, its nodes not built yet: the GPU simulated at instantiation (`_work`)
        self._nodes_spec: _gpus.GPUSpec | None = None
        self._event_marks: list[tuple[int, Any]] = []  # (kernels before it, event) recorded
        self._mode: GraphCapture | None = None
        self._pool_id: PoolId | None = None
        self._capture_stream: streams.Stream | None = None
        # the machine and device it captured on (what it releases its pool to)
        self._machine: _machine.Machine | None = None
        self._device: _machine.SimulatedDevice | None = None
        self._capture_ended = False
        self._has_graph = False
        self._has_graph_exec = False
        self._made: list[weakref.ref[Storage]] = []  # allocated by the capture: its memory
        self._cleared_at = -1  # the sanitizer's hazard count when a replay last cleared _made's
        self._inputs: list[CapturedInput] = []  # read by the capture, made before it
        # address spans the kernels write (`_written`), found when first asked (the
        # sanitizer asks): the kernels keep their buffers, whose addresses never change
        self._written_spans: list[tuple[int, int]] | None = []
        self._check_liveness = False
        # generator states registered with this graph -> how far each replay moves them
        self._generator_states: dict[PhiloxState, int] = {}
        self.num_replays = 0
        self._replayed_at = 0  # when it last replayed, in replays of any graph (_replays)

    # --- capture ------------------------------------------------------------------------------

    def capture_begin(self, pool: PoolId | None = None, capture_error_mode: str = "global",
                      check_input_liveness: bool = False) -> None:
        """Begin capturing CUDA work on the current stream."""
        if capture_error_mode not in _ERROR_MODES:
            raise RuntimeError("Unknown capture error mode. Expected `global`, `thread_local`, "
                               f"or `relaxed`, got {capture_error_mode}")
        if self._has_graph_exec:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. To "
                               "capture a new graph, create a new instance.")
        stream = streams.current_stream()
        underway = _dispatch.current_mode()
        if isinstance(underway, GraphCapture) and underway.stream != stream:
            raise NotImplementedError("torch.cuda.CUDAGraph.capture_begin: a capture is already "
                                      "underway on another stream; fake_torch simulates one "
                                      "capture at a time")
        # as c10: the default generator is registered (and every registered state prepared:
        # two fill_ launches each) before the stream is even checked
        machine = _machine.MACHINE
        device = machine.device(stream.device_index)
        self.register_generator_state(device.generator)
        for state in self._generator_states:
            state.capture_prologue()
        if stream == streams.default_stream():
            for state in self._generator_states:  # torch leaves them capturing (its next
                state.capture_epilogue()  # eager draw would raise); fake_torch does not
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. (However, "
                               "after capture, it's ok to replay them on the default stream.)")
        if pool is not None and (not isinstance(pool, tuple) or len(pool) != 2):
            raise TypeError(f"capture_begin(): pool must be a handle from "
                            f"torch.cuda.graph_pool_handle() or graph.pool(), got {pool!r}")
        self._pool_id = (pool if pool is not None
                         else device.allocator.new_pool_id(user_created=False))
        self._machine, self._device = machine, device
        self._capture_stream = stream
        self._kernels = []
        self._event_marks = []
        self._check_liveness = check_input_liveness
        self._mode = GraphCapture(self, self._pool_id, stream, capture_error_mode)
        self._mode.begin()

    def register_generator_state(self, generator: Generator) -> None:
        """Have this graph's captures and replays drive `generator`'s current state (one from
        graphsafe_get_state() or clone_state(), typically), as they drive the default
        generator's: the draws a capture makes from it replay as fresh draws."""
        if not isinstance(generator, Generator):
            raise TypeError(f"register_generator_state(): incompatible function arguments: "
                            f"expected a torch.Generator, got {type(generator).__name__}")
        if generator.device.type != "cuda":
            raise RuntimeError("Expected a CUDA Generator")
        state = generator._state
        state.register_graph(id(self))
        self._generator_states.setdefault(state, 0)

    def capture_end(self) -> None:
        """End capture on the current stream; without keep_graph, instantiate at once."""
        mode = self._mode
        if mode is None:
            raise RuntimeError("capture_end() called before capture_begin().")
        if streams.current_stream() != self._capture_stream:
            raise RuntimeError("Capture must end on the same stream it began on.")
        self._mode = None
        forks = mode.end()
        # what the capture allocated and still holds (each reader skips a dead reference: the
        # intermediates freed inside the capture, most of them, are not kept for the graph's
        # lifetime: ~37k weak references for the 32-layer toy's 1683 graphs, each a tracked
        # object every full garbage collection walks)
        self._made = [ref for ref in mode.storages if ref() is not None]
        if mode.error is not None:
            self._release_pool()
            self._kernels = []
            raise RuntimeError("CUDA error: operation failed due to a previous error during "
                               "capture")
        if forks:  # a side stream forked from the capture and never joined back
            self._release_pool()
            self._kernels = []
            raise RuntimeError(_CAPTURE_UNJOINED_ERROR)
        if not self._kernels:
            warnings.warn("The CUDA Graph is empty. This usually means that the graph was "
                          "attempted to be captured on wrong device or stream.", stacklevel=2)
        self._inputs = _external_inputs(self._kernels, self._made)
        self._written_spans = None
        _sanitizer.capture_ended(self, self._made)
        assert self._pool_id is not None and self._device is not None
        self._device.graphs_by_pool.setdefault(self._pool_id, weakref.WeakSet()).add(self)
        made_by = (weakref.ref(self), self._made)
        for storage in (ref() for ref in self._made):
            if storage is not None:
                _made_by[storage] = made_by
        self._capture_ended = True
        self._has_graph = True
        if not self.keep_graph:
            self.instantiate()
            self._has_graph = mode.machine.graph_debug_mode

    def instantiate(self) -> None:
        """Make the captured graph replayable (capture_end does it unless keep_graph=True)."""
        if not self._capture_ended:
            raise RuntimeError("capture_end() must have been called before calling instantiate")
        if self._has_graph_exec and not self.keep_graph:
            raise RuntimeError("instantiate() is intended to be called by the user only when "
                               "keep_graph=true")
        self._exec = list(self._kernels)
        # replay's work list (each kernel's buffers bound once, not at every replay) is built
        # at the first replay, for the GPU simulated now: a graph captured and never replayed
        # (most of the 51 sizes a vLLM-style runner captures, in a short run) costs no more
        self._nodes = []
        self._nodes_spec = _gpus.current()
        self._has_graph_exec = True

    def _work(self) -> list[Work]:
        """The instantiated graph's nodes, built the first time they are asked for."""
        spec = self._nodes_spec
        if spec is not None:
            with _gpus.simulating(spec):  # (their modelled durations: the GPU of instantiate)
                self._nodes = _nodes(self._exec, self._event_marks)
            self._nodes_spec = None
        return self._nodes

    # --- replay -------------------------------------------------------------------------------

    def replay(self) -> None:
        """Re-run every captured kernel against the same buffers: ONE launch."""
        if not self._capture_ended:
            raise RuntimeError("Called CUDAGraph::replay without a preceding successful "
                               "capture.")
        if not self._has_graph_exec:
            self.instantiate()
        index = self._device.index if self._device is not None else 0
        if index != _machine.MACHINE.thread.index:  # (c10: a device guard of the capture's)
            with _machine.device_guard(index):
                self._launch()
        else:
            self._launch()
        self.num_replays += 1
        self._replayed_at = next(_replays)
        assert self._pool_id is not None
        _sanitizer.after_replay(self, self._made)

    def _launch(self) -> None:
        """A replay's work, on the current stream of the device it was captured on."""
        _sanitizer.before_replay(self, self._inputs, self._check_liveness)
        for state, increment in self._generator_states.items():
            state.replay_prologue(increment)  # the graph's draws continue the eager stream
        # ONE launch through the door: the graph (its kernels are bound to their buffers)
        _dispatch.launch("cudaGraphLaunch", _run_graph, (), (self._work(),), on_cuda=True,
                         kind="graph", source=self)

    @property
    def _written(self) -> list[tuple[int, int]]:
        """[start, end) addresses of every buffer the captured kernels write."""
        spans = self._written_spans
        if spans is None:
            spans = self._written_spans = [
                (start, start + int(out.nbytes)) for k in self._kernels for out in k.outs
                for start in (int(out.__array_interface__["data"][0]),)]
        return spans

    def _peers(self) -> list[CUDAGraph]:
        """The other live graphs of this graph's pool (the sanitizer's, after a replay)."""
        if self._pool_id is None or self._device is None:
            return []
        return [g for g in self._device.graphs_by_pool.get(self._pool_id, ()) if g is not self]

    @property
    def num_kernels(self) -> int:
        """Kernels inside the graph (a replay still costs one launch). fake_torch only."""
        return len(self._exec) if self._has_graph_exec else len(self._kernels)

    @property
    def kernel_names(self) -> list[str]:
        """The captured kernels' op names, in launch order. fake_torch only."""
        return [k.op for k in (self._exec if self._has_graph_exec else self._kernels)]

    # --- lifetime, pools, debugging -----------------------------------------------------------

    def _release_pool(self) -> None:
        """Let go of the pool in the allocators of the machine it captured on (a graph of a
        machine that a fresh one has since replaced releases into its own machine's)."""
        assert self._pool_id is not None and self._machine is not None
        assert self._device is not None
        self._device.allocator.release_pool(self._pool_id)
        self._machine.host.release_pool(self._pool_id)

    def reset(self) -> None:
        """Delete the graph this instance holds, so it can capture again."""
        instantiated = self._nodes or (self._nodes_spec is not None
                                       and bool(self._exec or self._event_marks))
        if instantiated and self._machine is not None:
            self._machine.timeline.flush()  # its queued replays finish before its memory goes
        if self._capture_ended and self._pool_id is not None:
            self._release_pool()
            assert self._device is not None
            _forget_graph(self._device.graphs_by_pool, self._pool_id, self)
        self._capture_ended = self._has_graph = self._has_graph_exec = False
        self._kernels, self._exec, self._made, self._inputs = [], [], [], []
        self._cleared_at = -1
        self._nodes, self._nodes_spec = [], None
        for state in self._generator_states:
            if id(self) in state.graphs:  # (not after a fresh_simulated_device block ended)
                state.unregister_graph(id(self))
        self._generator_states = {}

    def __del__(self) -> None:
        try:
            self.reset()
        except Exception:  # never raise under garbage collection
            pass

    def pool(self) -> PoolId:
        """The id of this graph's memory pool, to share it with another capture."""
        if not self._capture_ended or self._pool_id is None:
            raise RuntimeError("Called CUDAGraph::pool() without a preceding successful "
                               "capture.")
        return self._pool_id

    def enable_debug_mode(self) -> None:
        """Keep captured graphs so debug_dump can write them."""
        _machine.MACHINE.graph_debug_mode = True

    def debug_dump(self, debug_path: str) -> None:
        """Write the captured kernels as a Graphviz DOT file."""
        if not (_machine.MACHINE.graph_debug_mode or self.keep_graph):
            warnings.warn("CUDA Graphs debug not enabled, set with [graph].enable_debug_mode()",
                          stacklevel=2)
            return
        warnings.warn("DEBUG: calling debug_dump()", stacklevel=2)
        if not self._has_graph:
            return
        warnings.warn(f"DEBUG: calling cudaGraphDebugDotPrint() with {debug_path}", stacklevel=2)
        with open(debug_path, "w", encoding="utf-8") as f:
            f.write(_to_dot(self._kernels))
        if not self.keep_graph:
            self._has_graph = False

    def raw_cuda_graph(self) -> int:
        if not self.keep_graph:
            raise RuntimeError("You cannot access the raw cudaGraph_t instance unless CUDAGraph "
                               "was initialized with keep_graph=true")
        if not self._has_graph:
            raise RuntimeError("You cannot access the raw cudaGraph_t instance until "
                               "capture_end() has been called")
        return id(self._kernels)

    def raw_cuda_graph_exec(self) -> int:
        if not self._has_graph_exec:
            raise RuntimeError("You cannot access the raw cudaGraphExec_t instance until "
                               "instantiate() has been called")
        return id(self._exec)


_replays = itertools.count(1)  # every graph's replays, in order (a graph's _replayed_at)


def graphs_of_pool(pool_id: PoolId, device: int = 0) -> list[CUDAGraph]:
    """The live graphs that captured into the pool `pool_id` of cuda:`device`."""
    devices = _machine.MACHINE.devices
    if device >= len(devices):
        return []
    return list(devices[device].graphs_by_pool.get(pool_id, ()))


def _forget_graph(by_pool: dict[PoolId, weakref.WeakSet[CUDAGraph]], pool_id: PoolId,
                  graph: CUDAGraph) -> None:
    """A graph let go of its pool: out of the pool's set, and the set gone with its last graph
    (a program capturing and deleting graphs in a loop keeps nothing of them)."""
    peers = by_pool.get(pool_id)
    if peers is not None:
        peers.discard(graph)
        if not peers:
            del by_pool[pool_id]


def _run_graph(nodes: list[Work]) -> None:
    """The kernel of a graph launched inside another capture: its nodes, in order."""
    for node in nodes:
        for kernel, args, params in node.calls:
            kernel(*args, **params)


def _nodes(kernels: list[RecordedKernel], marks: list[tuple[int, Any]]) -> list[Work]:
    """The device's view of a captured graph: one node per kernel, the launches of one
    compiled (fused) kernel merged into one node with the fused cost, and the events the
    capture recorded, where it recorded them."""
    nodes: list[Work] = []
    members: list[RecordedKernel] = []  # the fused kernel's launches so far
    marks = sorted(marks, key=lambda m: m[0])
    at = 0
    kernel_ns = _cost.kernel_ns
    for i, k in enumerate(kernels):
        while at < len(marks) and marks[at][0] <= i:
            if members:
                nodes.append(_fused_node(members))
                members = []
            nodes.append(Work("cudaEventRecord", "event", [], 0.0, marks[at][1]))
            at += 1
        group = k.group
        if members and group is not members[0].group:
            nodes.append(_fused_node(members))
            members = []
        if group is not None:
            members.append(k)
        elif k.kind == "graph":  # (a graph launched inside the capture)
            inner: list[Work] = k.inputs[0]
            nodes.append(Work(k.op, "graph", [(k.kernel, (*k.outs, *k.inputs), k.params)],
                              sum(n.ns for n in inner)))
        else:  # one kernel, one node: the common case, written out
            nodes.append(Work(k.op, k.kind, [(k.kernel, (*k.outs, *k.inputs), k.params)],
                              kernel_ns(k.op, k.kind, k.outs, k.inputs, k.params)))
    if members:
        nodes.append(_fused_node(members))
    nodes.extend(Work("cudaEventRecord", "event", [], 0.0, m[1]) for m in marks[at:])
    return GraphNodes(nodes)


def _fused_node(members: list[RecordedKernel]) -> Work:
    """The launches of one compiled kernel, as one node with the fused cost. (An inlined
    block costs its kernel's time elsewhere: 0 here.)"""
    group = members[0].group
    assert group is not None
    calls = [(k.kernel, (*k.outs, *k.inputs), k.params) for k in members]
    parts = [(k.op, k.outs, k.inputs, k.params) for k in members]
    ns = _cost.fused_ns(group.name, parts) if group.correlation else 0.0
    return Work(group.name, "kernel", calls, ns)


def _external_inputs(kernels: list[RecordedKernel], made: list[weakref.ref[Storage]]
                     ) -> list[CapturedInput]:
    """The storages the kernels read that existed before capture."""
    own = {id(s) for s in (ref() for ref in made) if s is not None}
    inputs: dict[int, CapturedInput] = {}
    storage_of = _machine.MACHINE.storage_of
    for k in kernels:
        for x in k.inputs:
            storage = storage_of(x) if isinstance(x, np.ndarray) else None
            if storage is not None and id(storage) not in own and id(storage) not in inputs:
                inputs[id(storage)] = CapturedInput.of(storage)
    return list(inputs.values())


def _to_dot(kernels: list[RecordedKernel]) -> str:
    """One node per kernel (op, output shapes), edges in stream order."""
    lines = ["digraph cuda_graph {", "  rankdir=TB;", "  node [shape=box];"]
    for i, k in enumerate(kernels):
        shapes = ", ".join(f"{list(o.shape)} {o.dtype}" for o in k.outs)
        lines.append(f'  k{i} [label="{i}: {k.op}\\n-> {shapes}"];')
        if i:
            lines.append(f"  k{i - 1} -> k{i};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def is_current_stream_capturing() -> bool:
    """True while a capture is underway on the current stream (the capture stream, or a stream
    that joined it by waiting on it)."""
    mode = _dispatch.current_mode()
    return isinstance(mode, GraphCapture) and mode.joined()


def graph_pool_handle() -> PoolId:
    """An opaque id of a new memory pool that several graphs may share."""
    return _machine.current_device().allocator.new_pool_id(user_created=True)


class graph:  # lower case: torch's name
    """torch.cuda.graph: capture the block's CUDA work into `cuda_graph`.

    On enter, as torch: synchronize, empty the allocator cache, switch to a side stream (one
    shared default capture stream unless `stream` is given) and `capture_begin`. On exit:
    `capture_end`, then back to the previous stream."""

    default_capture_stream: streams.Stream | None = None

    def __init__(self, cuda_graph: CUDAGraph, pool: PoolId | None = None,
                 stream: streams.Stream | None = None, capture_error_mode: str = "global",
                 enable_annotations: bool = False, check_input_liveness: bool = False) -> None:
        if stream is None and graph.default_capture_stream is None:
            graph.default_capture_stream = streams.Stream()
        self.pool: tuple[()] | tuple[PoolId] = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else graph.default_capture_stream
        assert self.capture_stream is not None
        self.stream_ctx = streams.stream(self.capture_stream)
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode
        self.check_input_liveness = check_input_liveness

    def __enter__(self) -> None:
        _dispatch.host_sync("synchronize", device=True)  # torch.cuda.synchronize()
        if _torch_stream.sync_observer is not None:
            _torch_stream.sync_observer.synchronize()
        _machine.current_device().allocator.empty_cache()
        _machine.MACHINE.host.empty_cache()  # torch._C._host_emptyCache()
        self.stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool[0] if self.pool else None,
                                          capture_error_mode=self.capture_error_mode,
                                          check_input_liveness=self.check_input_liveness)
        except BaseException:  # torch would leave the side stream current; we put it back
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, *args: object) -> None:
        try:
            self.cuda_graph.capture_end()
        finally:
            self.stream_ctx.__exit__(*args)
