"""What a profile saw (`FunctionEvent`) and its per-op summary (`key_averages().table()`).

An event is one counted launch (an eager kernel, memcpy or memset; a kernel launched while a
capture records it; one cudaGraphLaunch) or one `record_function` range. The summary has one row
per (op, where it ran): "eager", "capture graph 0" (recorded, not run), "graph 0" (a kernel that
ran inside a replay of graph 0, or that graph's cudaGraphLaunch itself).
"""

from __future__ import annotations

from dataclasses import dataclass

RANGE = "record_function"  # the kind of a record_function event, and the "where" of its row
SORT_KEYS = ("count", "kernel_launches", "graph_launches", "cpu_time_total")
_TIME_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}  # microseconds per unit


@dataclass
class FunctionEvent:
    """One launch or record_function range, with perf_counter_ns timestamps.

    A launch's span runs from its launch to the next thing the profiler saw (the kernel's numpy
    work plus the Python before the next launch). A range counts the launches inside it."""

    name: str
    kind: str  # the door's kind ("kernel", "memcpy_h2d", "graph", ...) or "record_function"
    where: str  # "eager", "capture graph N", "graph N"; "record_function" for a range
    start_ns: int
    end_ns: int
    kernel_launches: int = 0  # launches other than cudaGraphLaunch
    graph_launches: int = 0  # cudaGraphLaunch
    kernels: tuple[str, ...] = ()  # a graph launch: the kernels the replay ran, in order
    depth: int = 0  # a range: how many ranges enclose it

    @property
    def cpu_time_total(self) -> float:
        """Span in microseconds (torch's unit)."""
        return (self.end_ns - self.start_ns) / 1e3


@dataclass
class FunctionEventAvg:
    """One row of key_averages(): an op at one place, summed over its events."""

    key: str
    where: str
    count: int = 0  # times it ran (eager launches, runs inside replays, range entries)
    kernel_launches: int = 0
    graph_launches: int = 0
    cpu_time_total: float = 0.0  # microseconds


class KeyAverages(list[FunctionEventAvg]):
    """`prof.key_averages()`: the rows, in first-seen order, and `table()`."""

    def __init__(self, events: list[FunctionEvent]) -> None:
        rows: dict[tuple[str, str], FunctionEventAvg] = {}

        def row(key: str, where: str) -> FunctionEventAvg:
            return rows.setdefault((key, where), FunctionEventAvg(key, where))

        for ev in events:
            r = row(ev.name, ev.where)
            r.count += 1
            r.kernel_launches += ev.kernel_launches
            r.graph_launches += ev.graph_launches
            r.cpu_time_total += ev.cpu_time_total
            for kernel in ev.kernels:  # ran inside the replay: no launch of its own
                row(kernel, ev.where).count += 1
        super().__init__(rows.values())
        launches = [ev for ev in events if ev.kind != RANGE]
        self.total_kernel_launches = sum(ev.kernel_launches for ev in launches)
        self.total_graph_launches = sum(ev.graph_launches for ev in launches)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The rows as text, sorted by `sort_by` (descending; one of SORT_KEYS), at most
        `row_limit` of them (<= 0: all), and a footer with the launch totals."""
        if top_level_events_only:
            raise NotImplementedError("torch.autograd.profiler_util.EventList.table("
                                      "top_level_events_only=True)")
        rows = list(self)
        if sort_by is not None:
            if sort_by not in SORT_KEYS:  # torch's error: getattr on its row class fails
                raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'; "
                                     f"valid sort_by keys: {', '.join(SORT_KEYS)}")
            rows.sort(key=lambda r: getattr(r, sort_by), reverse=True)
        if row_limit > 0:
            rows = rows[:row_limit]
        unit = time_unit or "us"
        if unit not in _TIME_UNITS:
            raise ValueError(f"time_unit must be one of {', '.join(_TIME_UNITS)}, got {unit!r}")
        name_w = min(max_name_column_width, max([4, *(len(r.key) for r in rows)]))
        where_w = max([5, *(len(r.where) for r in rows)])
        cols = ["# of Calls", "Kernel launches", "Graph launches", f"CPU total ({unit})"]
        rule = "-" * name_w + "  " + "-" * where_w + "".join("  " + "-" * len(c) for c in cols)
        lines = [rule, f"{'Name':<{name_w}}  {'Where':<{where_w}}"
                 + "".join(f"  {c}" for c in cols), rule]
        for r in rows:
            cells = [r.count, r.kernel_launches, r.graph_launches,
                     f"{r.cpu_time_total / _TIME_UNITS[unit]:.3f}"]
            lines.append(f"{_clip(r.key, name_w):<{name_w}}  {r.where:<{where_w}}"
                         + "".join(f"  {c!s:>{len(h)}}" for c, h in zip(cells, cols, strict=True)))
        lines += [rule, f"Launches: {self.total_kernel_launches + self.total_graph_launches} "
                  f"({self.total_kernel_launches} kernel, {self.total_graph_launches} "
                  "cudaGraphLaunch)"]
        return "\n".join(([header] if header else []) + lines) + "\n"

    def __str__(self) -> str:
        return self.table()


def _clip(name: str, width: int) -> str:
    return name if len(name) <= width else name[:width - 3] + "..."
