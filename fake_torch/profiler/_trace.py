"""A profile as Chrome trace JSON (ui.perfetto.dev, chrome://tracing), laid out as Kineto lays
out torch's traces, on the simulated clocks.

Process CPU_PID ("CPU"), one thread: record_function ranges ("user_annotation"), each eager op
("cpu_op", "aten::mul"; a compiled kernel under its own name) around its runtime call
("cuda_runtime": cudaLaunchKernel, cudaMemcpyAsync, cudaMemsetAsync, cudaGraphLaunch; a compiled
kernel's is cuLaunchKernel, "cuda_driver"). Process 0 ("GPU 0"): one thread per stream, the work
as the stream ran it ("kernel", "gpu_memcpy", "gpu_memset"). A flow arrow ("ac2g") runs from
each runtime call to each kernel it queued. Timestamps are microseconds since the profile began,
so the gaps where the GPU idles while the host launches (eager's bubbles) show as gaps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_torch._simulated import _gpus
from fake_torch.profiler._events import RANGE, FunctionEvent

CPU_PID, CPU_TID = 1, 1  # (Kineto uses the OS ids; fixed ones keep the file the same each run)
GPU_PID = 0  # the device index, as Kineto numbers GPU processes
_RUNTIME = {"graph": "cudaGraphLaunch", "memset": "cudaMemsetAsync"}  # else by prefix below
_GPU_CAT = {"memset": "gpu_memset"}
_MEMCPY = {"memcpy_h2d": "Memcpy HtoD", "memcpy_d2h": "Memcpy DtoH", "memcpy_d2d": "Memcpy DtoD"}


def chrome_trace(events: list[FunctionEvent], origin_ns: float,
                 with_device: bool) -> dict[str, Any]:
    """{"traceEvents": [...], ...}; GPU rows and flows only `with_device` (CUDA activity)."""
    spans = [(ev, s) for ev in events for s in ev.gpu_spans] if with_device else []
    streams = sorted({s.stream for _, s in spans})

    def us(ns: float) -> float:
        return round((ns - origin_ns) / 1e3, 3)

    out: list[dict[str, Any]] = []
    for pid, label, sort in ((CPU_PID, "CPU", CPU_PID),
                             *(((GPU_PID, f"GPU {GPU_PID}", 5_000_000),) if spans else ())):
        out += [_meta("process_name", pid, 0, name="python"),
                _meta("process_labels", pid, 0, labels=label),
                _meta("process_sort_index", pid, 0, sort_index=sort)]
    out.append(_meta("thread_name", CPU_PID, CPU_TID, name=f"thread {CPU_TID} (python)"))
    for stream in streams:
        out += [_meta("thread_name", GPU_PID, stream, name=f"stream {stream}"),
                _meta("thread_sort_index", GPU_PID, stream, sort_index=stream)]
    for ev in events:
        out += _cpu_events(ev, us)
    for flow_id, (ev, s) in enumerate(spans, start=1):
        cpu_ts, gpu_ts = us(ev.start_ns), us(s.start_ns)
        out.append({"ph": "X", "cat": _GPU_CAT.get(s.kind, "gpu_memcpy" if s.kind in _MEMCPY
                                                  else "kernel"),
                    "name": _MEMCPY.get(s.kind, s.name), "pid": GPU_PID, "tid": s.stream,
                    "ts": gpu_ts, "dur": round((s.end_ns - s.start_ns) / 1e3, 3),
                    "args": {"device": GPU_PID, "stream": s.stream,
                             "correlation": s.correlation, "op": s.name, "where": ev.where}})
        out.append({"ph": "s", "id": flow_id, "pid": CPU_PID, "tid": CPU_TID, "ts": cpu_ts,
                    "cat": "ac2g", "name": "ac2g"})
        out.append({"ph": "f", "id": flow_id, "pid": GPU_PID, "tid": s.stream, "ts": gpu_ts,
                    "cat": "ac2g", "name": "ac2g", "bp": "e"})
    spec = _gpus.current()
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": GPU_PID, "name": spec.name,
                                  "totalGlobalMem": spec.total_memory,
                                  "computeMajor": spec.major, "computeMinor": spec.minor,
                                  "numSms": spec.sm_count}],
            "displayTimeUnit": "ms", "traceEvents": out}


def _cpu_events(ev: FunctionEvent, us: Callable[[float], float]) -> list[dict[str, Any]]:
    """A range, or a launch: its op (not for a graph replay) around its runtime call."""
    ts, dur = us(ev.start_ns), round((ev.end_ns - ev.start_ns) / 1e3, 3)
    where = {"pid": CPU_PID, "tid": CPU_TID, "ts": ts, "dur": dur}
    if ev.kind == RANGE:
        return [{"ph": "X", "cat": "user_annotation", "name": ev.name, **where,
                 "args": {"kernel_launches": ev.kernel_launches,
                          "graph_launches": ev.graph_launches}}]
    args: dict[str, Any] = {"correlation": ev.correlation, "where": ev.where}
    if ev.kernels:
        args["kernels"] = list(ev.kernels)
    if ev.fused:
        runtime, cat = "cuLaunchKernel", "cuda_driver"
    else:
        runtime = _RUNTIME.get(ev.kind, "cudaMemcpyAsync" if ev.kind.startswith("memcpy")
                               else "cudaLaunchKernel")
        cat = "cuda_runtime"
    call = {"ph": "X", "cat": cat, "name": runtime, **where, "args": args}
    if ev.kind == "graph":
        return [call]
    op = ev.name if ev.fused else f"aten::{ev.name}"
    return [{"ph": "X", "cat": "cpu_op", "name": op, **where, "args": {"where": ev.where}}, call]


def _meta(what: str, pid: int, tid: int, **args: Any) -> dict[str, Any]:
    return {"ph": "M", "name": what, "pid": pid, "tid": tid, "ts": 0, "args": args}


def write_chrome_trace(path: str, events: list[FunctionEvent], origin_ns: float,
                       with_device: bool) -> None:
    trace = chrome_trace(events, origin_ns, with_device)
    trace["traceName"] = path
    with open(path, "w", encoding="utf-8") as f:
        json.dump(trace, f)
