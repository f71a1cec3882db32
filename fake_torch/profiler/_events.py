"""What a profile saw (`FunctionEvent`) and its per-op summary (`KeyAverages`, one
`FunctionEventAvg` per row).

An event is one counted launch (an eager kernel, memcpy or memset; a kernel launched while a
capture records it; one cudaGraphLaunch) or one `record_function` range. Its times are the
simulated clocks' (fake_torch/_simulated/_timeline.py), so they are the same every run: the CPU
span is the launch call on the host clock, the device time the sum of the kernels it put on a
stream. The summary has one row per (op, where it ran): "eager", "capture graph 0" (recorded, not
run), "graph 0" (a kernel that ran inside a replay of graph 0, or that graph's cudaGraphLaunch
itself); grouped by input shape, one per (op, where, input shapes). Times are in microseconds,
torch's unit.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from fake_torch._simulated._timeline import Span
from fake_torch.profiler._table import build_table

RANGE = "record_function"  # the kind of a record_function event, and the "where" of its row
# the keys sort_by takes: torch's (its docs' list, with "cuda" and "xpu" read as "device", as
# torch reads them), then fake_torch's launch counts
SORT_KEYS = ("cpu_time", "device_time", "cpu_time_total", "device_time_total",
             "self_cpu_time_total", "self_device_time_total", "cpu_memory_usage",
             "device_memory_usage", "self_cpu_memory_usage", "self_device_memory_usage",
             "count", "kernel_launches", "graph_launches")
DEVICE_ALIASES = ("cuda", "xpu", "privateuse1")  # torch's sort_by reads each as "device"


@dataclass
class FunctionEvent:
    """One launch or record_function range, on the simulated clocks (nanoseconds).

    A launch's span is its call on the host clock (dispatch plus cudaLaunchKernel /
    cudaGraphLaunch / cudaMemcpyAsync); `gpu_spans` are the kernels it queued, as the streams
    ran them. A range spans its block on the host clock and counts the launches inside it."""

    name: str
    kind: str  # the door's kind ("kernel", "memcpy_h2d", "graph", ...) or "record_function"
    where: str  # "eager", "capture graph N", "graph N"; "record_function" for a range
    start_ns: float
    end_ns: float
    kernel_launches: int = 0  # launches other than cudaGraphLaunch
    graph_launches: int = 0  # cudaGraphLaunch
    kernels: tuple[str, ...] = ()  # a graph launch: the captured kernels' op names, in order
    depth: int = 0  # a range: how many ranges enclose it
    correlation: int = -1  # a launch: the timeline's id of its host call
    fused: bool = False  # a launch of one compiled (fused) kernel
    gpu_spans: list[Span] = field(default_factory=list, repr=False)
    cpu_parent: FunctionEvent | None = field(default=None, repr=False, compare=False)
    cpu_children: list[FunctionEvent] = field(default_factory=list, repr=False, compare=False)
    count: int = 1
    input_shapes: list[list[int]] = field(default_factory=list)  # with record_shapes

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        """Span on the host clock, in microseconds."""
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        """The span less the spans of the launches and ranges directly inside it."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def device_time_total(self) -> float:
        """Device time of the kernels it launched (a range: of the launches inside it), us."""
        own = sum(s.end_ns - s.start_ns for s in self.gpu_spans) / 1e3
        return own + sum(c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        """Device time of its own kernels; 0 for a range, and for a cudaGraphLaunch, whose
        nodes are rows of their own (so the Self CUDA column adds up to the device's work)."""
        if self.kind in (RANGE, "graph"):
            return 0.0
        return self.device_time_total

    @property
    def cuda_time_total(self) -> float:
        warnings.warn("`cuda_time_total` is deprecated. Use `device_time_total` instead.",
                      FutureWarning, stacklevel=2)
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        warnings.warn("`self_cuda_time_total` is deprecated. Use `self_device_time_total` "
                      "instead.", FutureWarning, stacklevel=2)
        return self.self_device_time_total


@dataclass
class FunctionEventAvg:
    """One row of key_averages(): an op at one place, summed over its events (us)."""

    key: str
    where: str
    count: int = 0  # times it ran (eager launches, runs inside replays, range entries)
    kernel_launches: int = 0
    graph_launches: int = 0
    cpu_time_total: float = 0.0
    self_cpu_time_total: float = 0.0
    device_time_total: float = 0.0
    self_device_time_total: float = 0.0
    # grouped by input shape: the row's shapes ("" otherwise, as torch's rows hold then)
    input_shapes: list[list[int]] | str = ""
    # memory is not profiled (profile() warns for profile_memory=True): 0, as torch's rows hold
    # without profile_memory
    cpu_memory_usage: int = 0
    device_memory_usage: int = 0
    self_cpu_memory_usage: int = 0
    self_device_memory_usage: int = 0

    @property
    def cpu_time(self) -> float:
        """CPU time per call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        """Device time per call."""
        return self.device_time_total / self.count if self.count else 0.0


class KeyAverages(list[FunctionEventAvg]):
    """`prof.key_averages()`: the rows, in first-seen order, and `table()`."""

    def __init__(self, events: list[FunctionEvent], group_by_input_shape: bool = False) -> None:
        rows: dict[tuple[str, str, str], FunctionEventAvg] = {}

        def row(key: str, where: str, shapes: list[list[int]] | None = None) -> FunctionEventAvg:
            """The row of (key, where), and of its input shapes when grouping by them (a kernel
            inside a replay has none: [], as torch's device events)."""
            group = str(shapes or []) if group_by_input_shape else ""
            found = rows.get((key, where, group))
            if found is None:
                found = rows[key, where, group] = FunctionEventAvg(key, where)
                if group_by_input_shape:
                    found.input_shapes = shapes or []
            return found

        for ev in events:
            r = row(ev.name, ev.where, ev.input_shapes)
            r.count += 1
            r.kernel_launches += ev.kernel_launches
            r.graph_launches += ev.graph_launches
            r.cpu_time_total += ev.cpu_time_total
            r.self_cpu_time_total += ev.self_cpu_time_total
            r.device_time_total += ev.device_time_total
            r.self_device_time_total += ev.self_device_time_total
            if ev.kind != "graph":
                continue
            # ran inside the replay, no launch of their own: the device's nodes when the
            # profile saw them (a compiled kernel is one node), else the captured op names
            for span in ev.gpu_spans:
                node = row(span.name, ev.where)
                node.count += 1
                node.device_time_total += (span.end_ns - span.start_ns) / 1e3
                node.self_device_time_total += (span.end_ns - span.start_ns) / 1e3
            if not ev.gpu_spans:
                for kernel in ev.kernels:
                    row(kernel, ev.where).count += 1
        super().__init__(rows.values())
        launches = [ev for ev in events if ev.kind != RANGE]
        self.total_kernel_launches = sum(ev.kernel_launches for ev in launches)
        self.total_graph_launches = sum(ev.graph_launches for ev in launches)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The rows as torch's table (its CPU columns, its CUDA ones when a kernel ran, Input
        Shapes when grouped by them), plus where each op ran and its launches, sorted by
        `sort_by` (descending; one of SORT_KEYS, "cuda" read as "device" as torch reads it),
        at most `row_limit` rows (<= 0: all)."""
        if top_level_events_only:
            raise NotImplementedError("torch.autograd.profiler_util.EventList.table("
                                      "top_level_events_only=True)")
        rows = list(self)
        if sort_by is not None:
            attr = sort_by
            for alias in DEVICE_ALIASES:
                attr = attr.replace(alias, "device")
            if attr not in SORT_KEYS:  # torch's error: getattr on its row class fails
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{attr}'; "
                                     f"valid sort_by keys: {', '.join(SORT_KEYS)}")
            rows.sort(key=lambda r: getattr(r, attr), reverse=True)
        footer = (f"Launches: {self.total_kernel_launches + self.total_graph_launches} "
                  f"({self.total_kernel_launches} kernel, {self.total_graph_launches} "
                  "cudaGraphLaunch)")
        return build_table(rows, row_limit, max_name_column_width, max_shapes_column_width,
                           header, time_unit, footer)

    def __str__(self) -> str:
        return self.table()
