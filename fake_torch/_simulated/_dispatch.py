"""The one door: every would-be GPU launch (kernel, memcpy, memset, CUDA graph) passes through
`launch`.

It is the only place that counts launches, and it asks the current mode what to do:
  - eager: queue the numpy kernel on the current stream of the simulated device
    (fake_torch/_simulated/_timeline.py: it runs, into the output buffer it was given, when the
    device finishes it; at once when the device is idle). Every counted launch costs the host clock
    its CPU time (fake_torch/_simulated/_cost.py);
  - capture (cuda/graphs.py), trace (torch.compile, _dynamo/trace.py) and probe (inductor,
    _inductor/compile_fx.py) modes push themselves on this THREAD's mode stack and record,
    or skip, instead.
Views and metadata never come here: on a GPU they launch nothing.

A kernel is a plain function `kernel(*outs, *inputs, **params) -> None` that writes into the
numpy buffers it is given. Nothing in this module knows about Tensor.

Who else may watch: observers (`add_observer`, or `observe` for a block) hear of each counted
launch, `launch_source()` naming the CUDA graph of a graph launch; input checks
(`add_input_check`: the sanitizer) see every launch's buffers before it runs; read checks
(`add_read_check`: the sanitizer) see the device buffers the host reads without a launch (a
print, a data-dependent size), named by `host_sync(..., reads=)`. All are registered here, by
these functions only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fake_torch._simulated import _cost, _gpus, _machine, _pinned
from fake_torch._simulated._allocator import Storage
from fake_torch._simulated._counter import LaunchCounter, count_launch
from fake_torch._simulated._native_core import NATIVE
from fake_torch._simulated._timeline import Timeline, Work

Kernel = Callable[..., None]
Observer = Callable[[str, str], None]  # (op name, kind) of each counted launch
InputCheck = Callable[[str, tuple[np.ndarray, ...], tuple[Any, ...], str], None]
ReadCheck = Callable[[str, tuple[np.ndarray, ...]], None]  # (what reads, the arrays it reads)


class Mode:
    """What happens to a launch. Eager runs it now; other modes record or skip it."""

    name = "eager"
    counts_launches = True  # a tracing mode runs nothing and counts nothing

    def allocate(self, shape: tuple[int, ...], np_dtype: np.dtype[Any],
                 on_cuda: bool) -> tuple[np.ndarray, Storage | None]:
        if not on_cuda:
            a = np.empty(shape, dtype=np_dtype)
            if not a.size:  # numpy 2 gives an empty array zero strides; torch, row-major ones
                a = np.ndarray(shape, np_dtype, buffer=a)
            return a, None
        return _machine.current_device().allocator.allocate_array(
            shape, np_dtype, _nbytes(shape, np_dtype))

    def run(self, op: str, kernel: Kernel, outs: tuple[np.ndarray, ...],
            inputs: tuple[Any, ...], params: dict[str, Any], kind: str, on_cuda: bool) -> None:
        if on_cuda:
            _submit(op, kernel, outs, inputs, params, kind)
        else:
            kernel(*outs, *inputs, **params)

    def host_sync(self, what: str) -> None:
        """Called before the host waits on the device (`.item()`, synchronize, D2H copies)."""

    def record_event(self, event: Any, stream: int) -> None:
        """`event.record()` on `stream`: it marks the stream's work queued so far."""
        _machine.MACHINE.timeline.record_event(event, stream)

    def host_sync_elsewhere(self, what: str, device: bool) -> None:
        """Another thread waits for the device while this mode is current on its own thread
        (a capture refuses it in capture_error_mode "global"; see `watch_other_threads`)."""


@dataclass
class FusedKernel:
    """A group of launches that a compiler fused into one kernel (see `fused`)."""

    name: str
    launched: bool = False
    absorbed: list[str] = field(default_factory=list)  # the op names it stands for
    correlation: int = 0  # the host call that launched it (the timeline's id)
    # what eager mode queues as ONE kernel when the block ends: each member launch's
    # (op, outs, inputs, params) for the cost, and its bound call
    members: list[tuple[str, tuple[np.ndarray, ...], tuple[Any, ...], dict[str, Any]]] = field(
        default_factory=list)
    calls: list[tuple[Kernel, tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)


_EAGER = Mode()


class _Local(threading.local):
    """One thread's door state: its modes (a capture or trace on another thread does not
    take this thread's launches), the fused kernel it is inside, the launch being counted."""

    def __init__(self) -> None:
        self.modes: list[Mode] = [_EAGER]
        self.fused: list[FusedKernel] = []
        self.source: Any = None  # what the launch being counted runs (a CUDAGraph), or None
        self.correlation = 0  # the timeline's id of the host call of the launch underway


_local = _Local()
# how many modes are entered now, all threads together: 0 means every thread is eager, which
# the hot paths (`allocate`, `in_eager`) read instead of their thread's stack (a threading.local
# subclass's attribute costs ~800 instructions, a module global ~30). Changed under
# _registry_lock; never below the true count.
_entered = 0
_watchers: list[Mode] = []  # modes that hear other threads' host syncs (captures underway)
_observers: list[Observer] = []
_input_checks: list[InputCheck] = []
_read_checks: list[ReadCheck] = []
_registry_lock = threading.Lock()


# --- modes ------------------------------------------------------------------------------------

def current_mode() -> Mode:
    return _local.modes[-1]


def enter_mode(mode: Mode) -> None:
    """Make `mode` current on this thread until `exit_mode(mode)` (capture_begin / capture_end
    use this)."""
    global _entered
    with _registry_lock:
        _entered += 1
    _local.modes.append(mode)


def exit_mode(mode: Mode) -> None:
    global _entered
    _local.modes.remove(mode)
    with _registry_lock:
        _entered -= 1


def modes() -> tuple[Mode, ...]:
    """This thread's mode stack, outermost (eager) first."""
    return tuple(_local.modes)


@contextmanager
def suspended(mode: Mode) -> Iterator[None]:
    """Take `mode` off this thread's stack for the block, back at the same place after
    (torch._subclasses.fake_tensor.unset_fake_temporarily)."""
    stack = _local.modes
    idx = stack.index(mode)
    del stack[idx]
    try:
        yield
    finally:
        stack.insert(idx, mode)


def reset_modes() -> list[Mode]:
    """Back to eager on this thread; the modes that were left entered (for tests' cleanup)."""
    global _entered
    left = _local.modes[1:]
    del _local.modes[1:]
    with _registry_lock:
        _entered -= len(left)
    for mode in left:  # (a capture left entered stops watching the other threads too)
        watch_other_threads(mode, False)
    return left


def watch_other_threads(mode: Mode, watch: bool = True) -> None:
    """Have `mode.host_sync_elsewhere` hear every host sync of the other threads while it is
    entered (a capture: CUDA's capture modes decide what another thread may do meanwhile);
    watch=False: no longer."""
    with _registry_lock:
        if watch:
            _watchers.append(mode)
        elif mode in _watchers:
            _watchers.remove(mode)


@contextmanager
def push_mode(mode: Mode) -> Iterator[Mode]:
    """Make `mode` current inside the block (tracing uses this)."""
    enter_mode(mode)
    try:
        yield mode
    finally:
        exit_mode(mode)


# --- watchers -----------------------------------------------------------------------------------

class Registration:
    """A registered observer or input check: `remove()` unregisters it."""

    def __init__(self, registry: list[Any], item: Any) -> None:
        self._registry = registry
        self._item = item

    def remove(self) -> None:
        with _registry_lock:
            if self._item in self._registry:
                self._registry.remove(self._item)


def add_observer(observer: Observer) -> Registration:
    """Call `observer(op, kind)` for every counted launch from now on."""
    with _registry_lock:
        _observers.append(observer)
    return Registration(_observers, observer)


def add_input_check(check: InputCheck) -> Registration:
    """Call `check(op, outs, inputs, kind)` before every launch runs (it may raise)."""
    with _registry_lock:
        _input_checks.append(check)
    return Registration(_input_checks, check)


def add_read_check(check: ReadCheck) -> Registration:
    """Call `check(what, arrays)` whenever the host reads device `arrays` (it may raise)."""
    with _registry_lock:
        _read_checks.append(check)
    return Registration(_read_checks, check)


@contextmanager
def observe(observer: Observer) -> Iterator[None]:
    """Call `observer(op, kind)` for every counted launch inside the block."""
    registration = add_observer(observer)
    try:
        yield
    finally:
        registration.remove()


@contextmanager
def record_ops() -> Iterator[list[str]]:
    """Collect the op names of the counted launches inside the block, in order."""
    names: list[str] = []
    with observe(lambda op, kind: names.append(op)):
        yield names


def in_eager() -> bool:
    """This thread's mode is eager (no capture, trace or probe underway): a cpu output is a
    plain `np.empty` (`Mode.allocate`'s cpu branch)."""
    return not _entered or _local.modes[-1] is _EAGER


def runs_cpu_kernels_now() -> bool:
    """An eager cpu kernel would run at once and nothing else (eager mode, no input check to
    see its buffers): what `launch` does for it, so a caller may call the kernel itself."""
    return (not _entered or _local.modes[-1] is _EAGER) and not _input_checks


def launch_source() -> Any:
    """While observers hear of a launch: the CUDAGraph a graph launch replays, else None."""
    return _local.source


# --- the door -----------------------------------------------------------------------------------

def allocate(shape: tuple[int, ...], np_dtype: np.dtype[Any],
             on_cuda: bool) -> tuple[np.ndarray, Storage | None]:
    """A fresh output buffer from the current mode (capture takes it from the graph's pool),
    with the allocator Storage that owns it (None on cpu)."""
    if on_cuda and (not _entered or _local.modes[-1] is _EAGER):
        # Mode.allocate's cuda branch, written out (once per output)
        machine = _machine.MACHINE
        devices = machine.devices  # (one GPU: cuda:0 is the current device, whatever thread)
        device = devices[0] if len(devices) == 1 else devices[machine.thread.index]
        n = np_dtype.itemsize
        for s in shape:
            n *= s
        return device.allocator.allocate_array(shape, np_dtype, n)
    return _local.modes[-1].allocate(shape, np_dtype, on_cuda)


def device_buffer(storage: Storage, shape: tuple[int, ...],
                  np_dtype: np.dtype[Any]) -> tuple[np.ndarray, Storage]:
    """A typed, shaped view of a fresh allocator block (its `.base` is the root, as
    `storage_of` needs; one ndarray call costs less than `.view(...).reshape(...)`)."""
    return np.ndarray(shape, np_dtype, buffer=storage.root), storage


def _nbytes(shape: tuple[int, ...], np_dtype: np.dtype[Any]) -> int:
    n = np_dtype.itemsize
    for s in shape:
        n *= s
    return n


def launch(op: str, kernel: Kernel, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...],
           params: dict[str, Any] | None = None, *, on_cuda: bool, kind: str = "kernel",
           source: Any = None) -> None:
    """THE door. Count one launch of `op` (on the cuda device only) and let the mode run it.
    `source`: what a graph launch replays (observers read it through `launch_source`).

    A kernel whose every output has no element launches nothing, in the modes that run or
    record work (eager, capture): CUDA torch's kernels return first (TensorIterator's
    gpu_kernel checks `iter.numel() == 0`, copy_ an empty self), so `t[8:8].zero_()`, an
    empty copy or `.cpu()` cost no launch. Tracing modes still see the op."""
    local = _local
    mode = local.modes[-1]
    if (mode is _EAGER and on_cuda and kind == "kernel" and not local.fused
            and not _input_checks and not _observers):
        # the commonest launch (an eager cuda kernel, nobody watching), without the general
        # path's calls: the same count, host cost, queueing and correlation id
        if outs and outs[0].size == 0 and _all_empty(outs):
            return
        count_launch(op, kind)
        if params is None:
            params = {}
        machine = _machine.MACHINE  # (the current device's current stream, written out)
        local.correlation = machine.timeline.launch_kernel(
            op, _cost.EAGER_LAUNCH_NS, kernel, (*outs, *inputs), params,
            _cost.kernel_ns(op, kind, outs, inputs, params),
            machine.devices[machine.thread.index]._current.handle, _cost.STREAM_QUEUE_GAP_NS)
        return
    if outs and outs[0].size == 0 and mode.counts_launches and _all_empty(outs):
        return
    for check in _input_checks:
        check(op, outs, inputs, kind)
    if on_cuda and mode.counts_launches:
        fused = local.fused
        if fused:  # inside one fused kernel: only its first launch is counted, under its name
            group = fused[-1]
            group.absorbed.append(op)
            if not group.launched:
                group.launched = True
                _count(group.name, "kernel", None)
                group.correlation = local.correlation = _machine.MACHINE.timeline.host_call(
                    group.name, "kernel", _cost.host_ns("kernel"))
        else:
            _count(op, kind, source)
            local.correlation = _machine.MACHINE.timeline.host_call(
                op, kind, _cost.EAGER_LAUNCH_NS if kind == "kernel" else
                _cost.host_ns(kind, len(inputs[0]) if kind == "graph" else 0))
    mode.run(op, kernel, outs, inputs, params or {}, kind, on_cuda)


def native_door(native: Any, pure: Callable[..., None]) -> Callable[..., None]:
    """`pure` (a door with `launch`'s signature) with the eager cuda branch of `native`, a
    built fake_torch._simulated._native (its Door): it reads the state this module and the
    timeline keep, and hands every other case to `pure` (tests build it around a spy)."""
    door: Callable[..., None] = native.Door(
        pure, _local, _EAGER, _input_checks, _observers, LaunchCounter, vars(_machine),
        vars(_cost), vars(_gpus), _machine.Machine, _machine.SimulatedDevice, Timeline,
        np.ndarray)
    return door


PURE_LAUNCH = launch  # the pure-Python door: the oracle, and the native door's every rare case
if NATIVE is not None:  # the eager cuda branch as native code (_native_door.c)
    launch = native_door(NATIVE, PURE_LAUNCH)


def _all_empty(outs: tuple[np.ndarray, ...]) -> bool:
    return all(a.size == 0 for a in outs)


def _submit(op: str, kernel: Kernel, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...],
            params: dict[str, Any], kind: str) -> None:
    """Eager mode: queue one launch on the current stream of the simulated device."""
    local = _local
    stream = _machine.current_device().current_stream()
    timeline = _machine.MACHINE.timeline
    if kind == "graph":  # inputs[0]: the graph's nodes (list[Work])
        timeline.submit_graph(inputs[0], stream, local.correlation, _cost.GRAPH_NODE_GAP_NS)
        return
    if local.fused:  # one kernel for the whole block: queued when it ends (see `fused`)
        group = local.fused[-1]
        group.members.append((op, outs, inputs, params))
        group.calls.append((kernel, (*outs, *inputs), params))
        return
    timeline.submit_call(op, kind, kernel, (*outs, *inputs), params,
                         _cost.kernel_ns(op, kind, outs, inputs, params), stream,
                         local.correlation, _cost.STREAM_QUEUE_GAP_NS)
    if kind in ("memcpy_h2d", "memcpy_d2h"):
        host = inputs[0] if kind == "memcpy_h2d" and inputs else outs[0] if outs else None
        if not _pinned.is_pinned_array(host):
            # pageable host memory: CUDA stages the copy, the call returns when it is done
            timeline.synchronize(stream)


def _count(op: str, kind: str, source: Any) -> None:
    count_launch(op, kind)  # unchecked: the door always counts one valid launch
    if _observers:
        local = _local
        saved, local.source = local.source, source
        try:
            for observer in list(_observers):
                observer(op, kind)
        finally:
            local.source = saved


@contextmanager
def fused(name: str) -> Iterator[FusedKernel]:
    """The launches inside the block are ONE kernel named `name` (torch.compile's fusion):
    the first counts, the rest are absorbed. The numpy work still runs op by op."""
    group = FusedKernel(name)
    _local.fused.append(group)
    try:
        yield group
    finally:
        fused_stack = _local.fused
        fused_stack.pop()
        if fused_stack and group.calls:  # work done inside another open kernel: part of it
            fused_stack[-1].members.extend(group.members)
            fused_stack[-1].calls.extend(group.calls)
        elif group.calls:  # eager mode: the fused kernel's work, as one kernel
            # (a block whose launch was counted elsewhere, e.g. an inlined node, costs its
            # kernel's time there, not here)
            ns = _cost.fused_ns(name, group.members) if group.correlation else 0.0
            work = Work(name, "kernel", group.calls, ns)
            _machine.MACHINE.timeline.submit(work, _machine.current_device().current_stream(),
                                             group.correlation, _cost.STREAM_QUEUE_GAP_NS)


def current_fused() -> FusedKernel | None:
    """The fused kernel the launch underway belongs to (a capture records it), or None."""
    fused = _local.fused
    return fused[0] if fused else None  # (an inner block's work is part of the outer kernel)


def host_sync(what: str, *, stream: int | None = None, device: bool = False,
              event: Any = None, reads: tuple[np.ndarray, ...] = ()) -> None:
    """The host waits for the device (forbidden while capturing): for the current stream,
    unless told `stream` (a handle), the whole `device`, or an `event`. `reads`: the device
    arrays the host then reads without a launch (a print's values, the count behind a
    data-dependent size); the read checks see them."""
    mine = current_mode()
    mine.host_sync(what)
    if reads and _read_checks:
        for check in list(_read_checks):
            check(what, reads)
    if _watchers:
        for watcher in list(_watchers):
            if watcher is not mine:
                watcher.host_sync_elsewhere(what, device)
    machine = _machine.MACHINE
    timeline = machine.timeline
    if event is not None:
        timeline.wait_event_on_host(event, _cost.SYNC_NS)
    elif device:  # cudaDeviceSynchronize: every stream of the current device
        index = machine.thread.index
        timeline.synchronize(None, _cost.SYNC_NS, None if len(machine.devices) == 1 else
                             lambda s: _machine.stream_device(s) == index)
    else:
        timeline.synchronize(machine.current.current_stream() if stream is None else stream,
                             _cost.SYNC_NS)


def record_event(event: Any, stream: int) -> None:
    """`event.record()` on `stream` (a handle): the mode decides what that marks."""
    current_mode().record_event(event, stream)
