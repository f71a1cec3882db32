"""torch.profiler.profile and record_function, over the door's launch observers and the
simulated timeline's spans.

A profile watches `_dispatch.observe` for every counted launch (where it ran; `launch_source()`
tells which graph a cudaGraphLaunch replays), then the timeline
(fake_torch/_simulated/_timeline.py) for the launch's call on the host clock and, by its
correlation id, the kernels it queued on the streams. With record_shapes it also checks each
launch's inputs just before it is counted (the door's input checks), for their shapes. It counts
nothing itself: its numbers are the LaunchCounter's, split by op and by where the op ran, and its
times are the simulated clocks', the same every run.
"""

from __future__ import annotations

import enum
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable
from contextlib import ContextDecorator, ExitStack
from typing import Any

import numpy as np

from fake_torch._simulated import _dispatch, _timeline
from fake_torch._simulated._timeline import TIMELINE, Span
from fake_torch.cuda import graphs
from fake_torch.profiler._events import RANGE, FunctionEvent, KeyAverages
from fake_torch.profiler._schedule import ProfilerAction, default_schedule
from fake_torch.profiler._trace import write_chrome_trace


class ProfilerActivity(enum.Enum):
    """torch.profiler.ProfilerActivity. fake_torch records CPU ranges and CUDA launches."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA}


_A = ProfilerAction
_SAVE = ("_stop_trace", "_trace_ready")
_ACTIONS: dict[tuple[ProfilerAction, ProfilerAction | None], tuple[str, ...]] = {
    (_A.NONE, _A.WARMUP): ("_prepare_trace",),
    (_A.NONE, _A.RECORD): ("_prepare_trace", "_start_trace"),
    (_A.NONE, _A.RECORD_AND_SAVE): ("_prepare_trace", "_start_trace"),
    (_A.WARMUP, _A.NONE): ("warn", "_start_trace", "_stop_trace"),
    (_A.WARMUP, _A.RECORD): ("_start_trace",),
    (_A.WARMUP, _A.RECORD_AND_SAVE): ("_start_trace",),
    (_A.RECORD, _A.NONE): ("warn", "_stop_trace"),
    (_A.RECORD, _A.WARMUP): ("warn", "_stop_trace"),
    (_A.RECORD_AND_SAVE, _A.NONE): _SAVE,
    (_A.RECORD_AND_SAVE, _A.WARMUP): (*_SAVE, "_prepare_trace"),
    (_A.RECORD_AND_SAVE, _A.RECORD): (*_SAVE, "_prepare_trace", "_start_trace"),
    (_A.RECORD_AND_SAVE, _A.RECORD_AND_SAVE): (*_SAVE, "_prepare_trace", "_start_trace"),
    (_A.WARMUP, None): ("_start_trace", "_stop_trace"),
    (_A.RECORD, None): _SAVE,
    (_A.RECORD_AND_SAVE, None): _SAVE,
}  # (the pairs not listed do nothing)

_active: list[profile] = []  # started and not stopped: record_function reports to each


class profile:  # lower case: torch's name
    """torch.profiler.profile: record every launch and record_function range in the block.

    Launches are recorded whichever activities are asked for (on a GPU the CPU side of each one
    is a cudaLaunchKernel / cudaGraphLaunch call); the kernels' device time with
    ProfilerActivity.CUDA; with record_shapes, the shapes of the arrays each launch's kernel reads
    ([] for a scalar, none for a cudaGraphLaunch: mostly torch's op arguments, though where a
    kernel reads a broadcast view, as addmm's bias, its shape is the view's). Memory, stacks and
    flops are not."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], Any] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        for name, value in (("experimental_config", experimental_config),
                            ("execution_trace_observer", execution_trace_observer)):
            if value is not None:
                raise NotImplementedError(f"torch.profiler.profile({name}=...)")
        self.activities = (supported_activities() if activities is None else set(activities))
        unsupported = self.activities - supported_activities()
        if unsupported:
            raise ValueError(f"torch.profiler.profile: unsupported activities {unsupported}; "
                             "fake_torch records ProfilerActivity.CPU and ProfilerActivity.CUDA")
        wanted = {"profile_memory": profile_memory, "with_stack": with_stack,
                  "with_flops": with_flops, "with_modules": with_modules}
        ignored = [name for name, on in wanted.items() if on]
        if ignored:
            warnings.warn(f"fake_torch.profiler records launches only; {', '.join(ignored)} "
                          "add nothing to its tables or traces", stacklevel=2)
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.step_num = 0
        # with a schedule, each step is a "ProfilerStep#N" range and recording follows it
        self.schedule = default_schedule if schedule is None else schedule
        self.record_steps = schedule is not None
        self.current_action = self.schedule(self.step_num)
        self._step_range: record_function | None = None
        self._events: list[FunctionEvent] = []
        # observed launches whose host call comes next (from the door, on the same thread)
        self._awaiting_call: dict[int, FunctionEvent] = {}
        # record_shapes: the input shapes of the launch about to be counted, per thread
        self._next_shapes: dict[int, tuple[str, list[list[int]]]] = {}
        self._by_correlation: dict[int, FunctionEvent] = {}  # launches, by their host call
        self._open_ranges: list[tuple[FunctionEvent, int, int]] = []  # (range, k, g at entry)
        self._num_kernel_launches = 0
        self._num_graph_launches = 0
        self._graph_labels: weakref.WeakKeyDictionary[graphs.CUDAGraph, str] = (
            weakref.WeakKeyDictionary())
        self._stack: ExitStack | None = None
        self._origin_ns = 0.0

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Begin the schedule at its current step (without one: record until stop)."""
        if self._stack is not None:
            raise RuntimeError("torch.profiler.profile: start() called on a running profiler")
        self._transit(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self) -> None:
        """End the schedule: a cycle being recorded ends and goes to on_trace_ready."""
        self._exit_step()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Mark the end of one training/decode step: the schedule decides what the next does."""
        self._exit_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._enter_step()

    def _enter_step(self) -> None:
        if self.record_steps:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _exit_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _transit(self, previous: ProfilerAction, current: ProfilerAction | None) -> None:
        """torch's action map (None: the profile stops): a cycle is prepared (its events start
        empty), recorded, then handed to on_trace_ready; a schedule that skips a phase warns
        as torch's does."""
        for step in _ACTIONS.get((previous, current), ()):
            if step.startswith("warn"):
                warnings.warn(f"Incorrect schedule: {previous.name} followed by "
                              f"{current.name if current is not None else None}", stacklevel=4)
            else:
                getattr(self, step)()

    def _prepare_trace(self) -> None:
        """A new cycle: the events of the one before are dropped (torch's acc_events=False)."""
        self._events = []
        self._num_kernel_launches = self._num_graph_launches = 0
        self._graph_labels = weakref.WeakKeyDictionary()

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _start_trace(self) -> None:
        self._origin_ns = TIMELINE.host_ns
        self._stack = ExitStack()
        self._stack.enter_context(_dispatch.observe(self._on_launch))
        if self.record_shapes:
            self._stack.callback(_dispatch.add_input_check(self._on_inputs).remove)
        self._stack.callback(_timeline.add_listener(self._on_span))
        _active.append(self)

    def _stop_trace(self) -> None:
        if self._stack is None:
            return
        _active.remove(self)
        self._stack.close()
        self._stack = None
        for opened, _, _ in reversed(self._open_ranges):  # still open: they end at stop
            self._end_range(opened)
        self._awaiting_call = {}
        self._next_shapes = {}
        self._by_correlation = {}  # kernels queued after stop are not recorded

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *args: object) -> None:
        self.stop()

    # --- results ------------------------------------------------------------------------------

    def events(self) -> list[FunctionEvent]:
        """Every launch and range, in the order they began."""
        return list(self._events)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> KeyAverages:
        """One row per (op, where it ran), and per input shapes with group_by_input_shape
        (recorded with record_shapes; without, every launch's are [], as in torch): CPU and
        CUDA times, calls, kernel and graph launches."""
        if group_by_stack_n:
            raise NotImplementedError("torch.profiler.profile.key_averages(group_by_stack_n): "
                                      "fake_torch records no stacks")
        return KeyAverages(self._events, group_by_input_shape)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Write the events as Chrome trace JSON (chrome://tracing, ui.perfetto.dev)."""
        write_chrome_trace(path, self._events, self._origin_ns,
                           ProfilerActivity.CUDA in self.activities)

    # --- what the door and record_function tell us --------------------------------------------

    def _on_launch(self, op: str, kind: str) -> None:
        parent = self._open_ranges[-1][0] if self._open_ranges else None
        now = TIMELINE.host_ns  # until its host call's span arrives (next, from the door)
        if kind == "graph":
            g = _dispatch.launch_source()
            where = self._label(g) if g is not None else "graph ?"
            ev = FunctionEvent(op, kind, where, now, now, graph_launches=1,
                               kernels=tuple(g.kernel_names) if g is not None else (),
                               cpu_parent=parent)
            self._num_graph_launches += 1
        else:
            mode = _dispatch.current_mode()
            where = (f"capture {self._label(mode.graph)}"
                     if isinstance(mode, graphs._CaptureMode) else "eager")
            ev = FunctionEvent(op, kind, where, now, now, kernel_launches=1,
                               fused=_dispatch.current_fused() is not None, cpu_parent=parent)
            checked_op, shapes = self._next_shapes.pop(threading.get_ident(), ("", []))
            if checked_op == op:  # a fused kernel counts under its own name: no shapes
                ev.input_shapes = shapes
            self._num_kernel_launches += 1
        if parent is not None:
            parent.cpu_children.append(ev)
        self._events.append(ev)
        self._awaiting_call[threading.get_ident()] = ev

    def _on_inputs(self, op: str, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...],
                   kind: str) -> None:
        """record_shapes: the door is about to launch `op` on these inputs (counted or not: a
        launch not counted leaves shapes that the next one replaces)."""
        if kind != "graph":  # a graph launch's input is its node list, not a tensor
            self._next_shapes[threading.get_ident()] = (
                op, [list(x.shape) if isinstance(x, np.ndarray) else [] for x in inputs])

    def _on_span(self, span: Span) -> None:
        """The timeline's report: a launch's host call, or a kernel one of them queued."""
        if span.track == "cpu":
            ev = self._awaiting_call.pop(threading.get_ident(), None)
            if ev is not None:
                ev.start_ns, ev.end_ns = span.start_ns, span.end_ns
                ev.correlation = span.correlation
                self._by_correlation[span.correlation] = ev
            return
        launched = self._by_correlation.get(span.correlation)
        if launched is not None and ProfilerActivity.CUDA in self.activities:
            launched.gpu_spans.append(span)

    def _label(self, g: graphs.CUDAGraph) -> str:
        """"graph N": graphs numbered in the order this profile first saw them."""
        return self._graph_labels.setdefault(g, f"graph {len(self._graph_labels)}")

    def _begin_range(self, name: str) -> FunctionEvent:
        if name.startswith("ProfilerStep#"):  # torch's events name every step so
            name = "ProfilerStep*"
        now = TIMELINE.host_ns
        parent = self._open_ranges[-1][0] if self._open_ranges else None
        ev = FunctionEvent(name, RANGE, RANGE, now, now, depth=len(self._open_ranges),
                           cpu_parent=parent)
        if parent is not None:
            parent.cpu_children.append(ev)
        self._events.append(ev)
        self._open_ranges.append((ev, self._num_kernel_launches, self._num_graph_launches))
        return ev

    def _end_range(self, ev: FunctionEvent) -> None:
        for i in range(len(self._open_ranges) - 1, -1, -1):
            opened, kernels, graph_launches = self._open_ranges[i]
            if opened is ev:
                del self._open_ranges[i]
                ev.end_ns = TIMELINE.host_ns
                ev.kernel_launches = self._num_kernel_launches - kernels
                ev.graph_launches = self._num_graph_launches - graph_launches
                return


class record_function(ContextDecorator):  # lower case: torch's name
    """torch.profiler.record_function: a named range around a block or a function, shown on the
    CPU row of the trace and as a row of key_averages (counting the launches inside it)."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._entered: list[list[tuple[profile, FunctionEvent]]] = []  # one per active entry

    def __enter__(self) -> record_function:
        self._entered.append([(p, p._begin_range(self.name)) for p in _active])
        return self

    def __exit__(self, *args: object) -> None:
        for p, ev in self._entered.pop():
            p._end_range(ev)
