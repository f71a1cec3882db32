"""A profile as Chrome trace JSON (chrome://tracing, Perfetto): one "X" event per launch or range.

Rows: process "CPU" holds the record_function ranges; process "CUDA 0 (simulated)" holds one row
of eager kernels, one of kernels recorded by a capture, and one of graph replays.
"""

from __future__ import annotations

import json
from typing import Any

from fake_torch.profiler._events import RANGE, FunctionEvent

CPU_PID, CUDA_PID = 0, 1
RANGE_TID, EAGER_TID, CAPTURE_TID, REPLAY_TID = 0, 1, 2, 3
_ROWS = [(CPU_PID, RANGE_TID, "record_function"), (CUDA_PID, EAGER_TID, "eager kernels"),
         (CUDA_PID, CAPTURE_TID, "capture (recorded, not run)"),
         (CUDA_PID, REPLAY_TID, "cuda graph replays")]


def chrome_trace(events: list[FunctionEvent], origin_ns: int) -> dict[str, Any]:
    """{"traceEvents": [...]} with timestamps in microseconds since `origin_ns`."""
    out: list[dict[str, Any]] = []
    for pid, name in ((CPU_PID, "CPU"), (CUDA_PID, "CUDA 0 (simulated)")):
        out.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                     "args": {"name": name}})
    for pid, tid, name in _ROWS:
        out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                     "args": {"name": name}})
    for ev in events:
        pid, tid = _row(ev)
        args: dict[str, Any] = {"where": ev.where, "kernel_launches": ev.kernel_launches,
                                "graph_launches": ev.graph_launches}
        if ev.kernels:
            args["kernels"] = list(ev.kernels)
        out.append({"name": ev.name, "cat": ev.kind, "ph": "X", "pid": pid, "tid": tid,
                    "ts": (ev.start_ns - origin_ns) / 1e3,
                    "dur": (ev.end_ns - ev.start_ns) / 1e3, "args": args})
    return {"traceEvents": out, "displayTimeUnit": "ms"}


def _row(ev: FunctionEvent) -> tuple[int, int]:
    if ev.kind == RANGE:
        return CPU_PID, RANGE_TID
    if ev.graph_launches:
        return CUDA_PID, REPLAY_TID
    if ev.where.startswith("capture"):
        return CUDA_PID, CAPTURE_TID
    return CUDA_PID, EAGER_TID


def write_chrome_trace(path: str, events: list[FunctionEvent], origin_ns: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(chrome_trace(events, origin_ns), f)
