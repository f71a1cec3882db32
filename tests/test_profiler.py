"""fake_torch.profiler: its numbers are the LaunchCounter's, split by op and by where each ran;
its times are the simulated clocks'.

Oracles: LaunchCounter (the one tally), CUDAGraph.kernel_names, the cost model (_cost.py), and
real torch where it is installed: its profiler's signatures, sort_by error class and table
header, and its own table code (`EventList.table`) fed our rows, which must print our cells.
"""

from __future__ import annotations

import inspect
import itertools
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter
from fake_torch._simulated import _cost, _gpus
from fake_torch.profiler import ProfilerActivity, profile, record_function
from fake_torch.profiler._trace import CPU_PID, GPU_PID

pytestmark = pytest.mark.usefixtures("fresh_device")

NUM_REPLAYS = 7


def _step(x: torch.Tensor) -> torch.Tensor:
    return (x * 2 + 1).relu().sum()


def _rows(prof: profile) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(op, where) -> (calls, kernel launches, graph launches)."""
    return {(r.key, r.where): (r.count, r.kernel_launches, r.graph_launches)
            for r in prof.key_averages()}


def _launch_rows(prof: profile) -> dict[str, int]:
    """Launches per op summed over the rows, as LaunchCounter.by_op counts them."""
    by_op: dict[str, int] = {}
    for r in prof.key_averages():
        if r.where != "record_function" and r.kernel_launches + r.graph_launches:
            by_op[r.key] = by_op.get(r.key, 0) + r.kernel_launches + r.graph_launches
    return by_op


def test_eager_table_numbers_equal_the_launch_counter() -> None:
    x = torch.arange(8, dtype=torch.float32, device="cuda")
    LaunchCounter.reset()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            _step(x)
    assert _launch_rows(prof) == dict(LaunchCounter.by_op) == {"mul": 3, "add": 3, "relu": 3,
                                                               "sum": 3}
    assert _rows(prof)[("mul", "eager")] == (3, 3, 0)
    table = prof.key_averages().table(sort_by="kernel_launches", row_limit=10)
    assert f"Launches: {LaunchCounter.n} ({LaunchCounter.n} kernel, 0 cudaGraphLaunch)" in table
    assert [line.split()[:2] for line in table.splitlines()[3:7]] == [
        ["mul", "eager"], ["add", "eager"], ["relu", "eager"], ["sum", "eager"]]


def test_graph_replays_count_one_launch_each_and_name_the_graph_kernels_ran_in() -> None:
    x = torch.arange(8, dtype=torch.float32, device="cuda")
    g = torch.cuda.CUDAGraph()
    LaunchCounter.reset()
    with profile() as prof:
        with torch.cuda.graph(g):
            _step(x)
        for _ in range(NUM_REPLAYS):
            g.replay()
    assert _launch_rows(prof) == dict(LaunchCounter.by_op)  # captures + cudaGraphLaunch
    assert LaunchCounter.by_kind["graph"] == NUM_REPLAYS
    rows = _rows(prof)
    assert rows[("cudaGraphLaunch", "graph 0")] == (NUM_REPLAYS, 0, NUM_REPLAYS)
    for op in g.kernel_names:  # recorded once at capture, ran N times inside the replays
        assert rows[(op, "capture graph 0")] == (1, 1, 0)
        assert rows[(op, "graph 0")] == (NUM_REPLAYS, 0, 0)
    # eager: only capture_begin's two fill_ launches (the default generator's graph-side state)
    assert rows[("fill_", "eager")][0] == 2
    assert "eager" not in {where for op, where in rows if op != "fill_"}
    (launch,) = {tuple(ev.kernels) for ev in prof.events() if ev.kind == "graph"}
    assert list(launch) == g.kernel_names


def test_two_graphs_are_told_apart() -> None:
    x = torch.ones(4, device="cuda")
    g0, g1 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(g0):
        x * 2
    with torch.cuda.graph(g1):
        x + 1
    with profile() as prof:
        g1.replay()
        g0.replay()
        g1.replay()
    rows = _rows(prof)
    assert rows[("cudaGraphLaunch", "graph 0")] == (2, 0, 2)  # g1, seen first
    assert rows[("add", "graph 0")] == (2, 0, 0)
    assert rows[("mul", "graph 1")] == (1, 0, 0)


def test_record_function_ranges_nest_and_count_the_launches_inside() -> None:
    x = torch.ones(4, device="cuda")

    @record_function("layer")
    def layer(t: torch.Tensor) -> torch.Tensor:
        return t * 2

    prof = profile()
    prof.start()
    with record_function("model"):
        layer(x)
        layer(x)
        x + 1
    prof.stop()
    ranges = [ev for ev in prof.events() if ev.kind == "record_function"]
    assert [(ev.name, ev.depth, ev.kernel_launches) for ev in ranges] == [
        ("model", 0, 3), ("layer", 1, 1), ("layer", 1, 1)]
    outer = ranges[0]
    for inner in ranges[1:]:
        assert outer.start_ns <= inner.start_ns <= inner.end_ns <= outer.end_ns
    assert ranges[1].end_ns <= ranges[2].start_ns
    assert _rows(prof)[("layer", "record_function")] == (2, 2, 0)


def test_nothing_is_recorded_outside_the_profile_and_on_trace_ready_runs_at_stop() -> None:
    x = torch.ones(4, device="cuda")
    seen: list[int] = []
    with profile(on_trace_ready=lambda p: seen.append(len(p.events()))) as prof:
        x + 1
    x + 1
    with record_function("after"):
        x + 1
    assert seen == [1] and len(prof.events()) == 1


def test_invalid_sort_by_lists_the_valid_keys() -> None:
    with profile() as prof:
        pass
    with pytest.raises(AttributeError, match="valid sort_by keys: cpu_time, device_time, "
                                             "cpu_time_total, device_time_total, "):
        prof.key_averages().table(sort_by="cuda_time_totl")


def test_what_is_not_emulated_says_so() -> None:
    with pytest.warns(UserWarning, match="profile_memory"):
        profile(profile_memory=True)
    with pytest.raises(NotImplementedError, match=r"key_averages\(group_by_stack_n\)"):
        profile().key_averages(group_by_stack_n=2)


def test_signatures_match_real_torch() -> None:
    real_torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
    real = real_torch.profiler
    for ours, theirs in ((profile.__init__, real.profile.__init__),
                         (record_function.__init__, real.record_function.__init__),
                         (profile.key_averages, real.profile.key_averages)):
        assert (list(inspect.signature(ours).parameters)
                == list(inspect.signature(theirs).parameters))
    assert {"CPU", "CUDA"} <= set(ProfilerActivity.__members__)
    with real.profile() as p:  # torch's own error class for a bad sort_by
        real_torch.ones(2) + 1
    with pytest.raises(AttributeError):
        p.key_averages().table(sort_by="cuda_time_totl")


# --- simulated times ------------------------------------------------------------------------------

BIG = 2 ** 24  # elements: a memory-bound kernel far above the cost model's minimum duration
MID = 2 ** 20  # elements: still above it (8 MiB moved by an elementwise op), and quicker
FAKE_COLUMNS = ("Where", "Kernel launches", "Graph launches")
CUDA_COLUMNS = ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]  # torch's _build_table


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def _header(table: str) -> list[str]:
    return _cells(next(line for line in table.splitlines() if "Self CPU %" in line))


def _program(x: torch.Tensor, g: torch.cuda.CUDAGraph) -> None:
    with record_function("decode"):
        _step(x)
        g.replay()
        torch.cuda.synchronize()


def _profiled(n: int = 8) -> tuple[profile, torch.cuda.CUDAGraph]:
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        _step(x)
    torch.cuda.synchronize()
    with profile() as prof:
        _program(x, g)
    return prof, g


def test_eager_kernel_times_are_the_cost_models() -> None:
    x = torch.ones(BIG, device="cuda")
    with profile() as prof:
        x * 2
    (ev,) = prof.events()
    a = np.empty(BIG, np.float32)
    expected_ns = _cost.kernel_ns("mul", "kernel", (a,), (a, 2), {})
    assert expected_ns == 2 * BIG * 4 / _gpus.current().hbm_bytes_per_s * 1e9  # read + write
    assert ev.device_time_total == ev.self_device_time_total == pytest.approx(expected_ns / 1e3)
    assert ev.cpu_time_total == ev.self_cpu_time_total == _cost.EAGER_LAUNCH_NS / 1e3
    with pytest.warns(FutureWarning, match="cuda_time_total` is deprecated"):
        assert ev.cuda_time_total == ev.device_time_total
    (row,) = prof.key_averages()
    assert (row.key, row.device_time_total, row.cpu_time_total) == (
        "mul", ev.device_time_total, ev.cpu_time_total)


def test_a_replays_device_time_is_the_sum_of_its_nodes() -> None:
    prof, g = _profiled(BIG)
    (launch,) = [ev for ev in prof.events() if ev.kind == "graph"]
    nodes = {r.key: r for r in prof.key_averages()
             if r.where == "graph 0" and r.key != "cudaGraphLaunch"}
    assert [s.name for s in launch.gpu_spans] == g.kernel_names == list(nodes)
    assert launch.device_time_total == pytest.approx(
        sum(r.device_time_total for r in nodes.values()))
    assert launch.self_device_time_total == 0  # its nodes hold it: Self CUDA adds up once
    assert launch.cpu_time_total == _cost.host_ns("graph", len(g.kernel_names)) / 1e3
    spans = launch.gpu_spans  # back to back on the stream, the modelled gap apart
    for before, after in itertools.pairwise(spans):
        assert after.start_ns - before.end_ns == _cost.GRAPH_NODE_GAP_NS
    (eager_mul,) = [ev for ev in prof.events() if (ev.name, ev.where) == ("mul", "eager")]
    # the same kernel costs the same in a graph (up to the float clocks' subtraction)
    assert nodes["mul"].device_time_total == pytest.approx(eager_mul.device_time_total)


def test_a_range_holds_its_launches_and_the_hosts_wait() -> None:
    prof, _ = _profiled(BIG)
    decode = prof.events()[0]
    launches = prof.events()[1:]
    assert decode.cpu_children == launches and all(ev.cpu_parent is decode for ev in launches)
    assert decode.device_time_total == pytest.approx(sum(ev.device_time_total for ev in launches))
    # synchronize() waited for the device: the range ends when the last kernel does, plus the
    # sync call's own cost, and that wait is the range's self time
    last_end = max(s.end_ns for ev in launches for s in ev.gpu_spans)
    assert decode.end_ns == last_end + _cost.SYNC_NS
    assert decode.self_cpu_time_total == pytest.approx(
        decode.cpu_time_total - sum(ev.cpu_time_total for ev in launches))


def test_table_has_torchs_cpu_columns_then_its_cuda_columns() -> None:
    real_torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
    with real_torch.profiler.profile(activities=[real_torch.profiler.ProfilerActivity.CPU]) as p:
        real_torch.ones(4) * 2
    torch_cpu_header = _header(p.key_averages().table())
    assert torch_cpu_header[-1] == "# of Calls"
    x = torch.ones(4, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        x * 2
    ours = [c for c in _header(prof.key_averages().table()) if c not in FAKE_COLUMNS]
    assert ours == torch_cpu_header[:-1] + CUDA_COLUMNS + ["# of Calls"]
    with profile(activities=[ProfilerActivity.CPU]) as cpu_only:  # no device time recorded
        x * 2
    ours = [c for c in _header(cpu_only.key_averages().table()) if c not in FAKE_COLUMNS]
    assert ours == torch_cpu_header


def _torch_rows(real_torch: Any, rows: list[Any]) -> Any:
    """Our rows as real torch's FunctionEventAvg objects (kernel rows, on the device)."""
    from torch.autograd import DeviceType
    from torch.autograd.profiler_util import EventList, FunctionEventAvg

    out = []
    for r in rows:
        a = FunctionEventAvg()
        a.key, a.count, a.node_id, a.use_device = r.key, r.count, -1, "cuda"
        a.device_type, a.is_user_annotation = DeviceType.CUDA, False
        a.cpu_time_total, a.self_cpu_time_total = r.cpu_time_total, r.self_cpu_time_total
        a.device_time_total = r.device_time_total
        a.self_device_time_total = r.self_device_time_total
        out.append(a)
    return EventList(out, use_device="cuda")


@pytest.mark.parametrize("sort_by", ["cuda_time_total", "self_cpu_time_total", "count"])
@pytest.mark.parametrize("time_unit", [None, "ms"])
def test_table_cells_are_what_torchs_table_prints_for_our_rows(sort_by: str,
                                                               time_unit: str | None) -> None:
    real_torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
    prof, _ = _profiled(MID)
    ours = prof.key_averages().table(sort_by=sort_by, time_unit=time_unit).splitlines()
    theirs = _torch_rows(real_torch, list(prof.key_averages())).table(
        sort_by=sort_by, time_unit=time_unit).splitlines()
    keep = [i for i, c in enumerate(_cells(ours[1])) if c not in FAKE_COLUMNS]
    assert [[_cells(line)[i] for i in keep] for line in ours[1:-4] if not line.startswith("-")] \
        == [_cells(line) for line in theirs[1:-3] if not line.startswith("-")]
    assert ours[-3:-1] == theirs[-2:]  # Self CPU / Self CUDA time total
    assert ours[-1].startswith("Launches: ")


def test_sort_by_cuda_keys_reads_them_as_device_keys() -> None:
    prof, _ = _profiled(MID)
    averages = prof.key_averages()
    for torch_key, ours in (("cuda_time_total", "device_time_total"),
                            ("self_cuda_time_total", "self_device_time_total")):
        table = averages.table(sort_by=torch_key)
        assert table == averages.table(sort_by=ours)
        top = _cells(table.splitlines()[3])[:2]
        best = max(averages, key=lambda r: getattr(r, ours))
        assert top == [best.key, best.where]


def test_the_same_program_prints_the_same_table_every_time() -> None:
    tables = [_profiled()[0].key_averages().table(sort_by="self_cpu_time_total")
              for _ in range(2)]
    assert tables[0] == tables[1]
    assert "Self CUDA time total: " in tables[0]


def test_chrome_trace_has_cpu_calls_gpu_kernels_on_streams_and_flows_between(
        tmp_path: Path) -> None:
    prof, g = _profiled()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    labels = {e["pid"]: e["args"]["labels"] for e in events if e["name"] == "process_labels"}
    assert labels == {CPU_PID: "CPU", GPU_PID: "GPU 0"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["name"] == "thread_name"}
    slices = [e for e in events if e["ph"] == "X"]
    cpu = [(e["cat"], e["name"]) for e in slices if e["pid"] == CPU_PID]
    assert cpu == [("user_annotation", "decode"),
                   *[pair for op in ("mul", "add", "relu", "sum")
                     for pair in (("cpu_op", f"aten::{op}"), ("cuda_runtime", "cudaLaunchKernel"))],
                   ("cuda_runtime", "cudaGraphLaunch")]
    kernels = [e for e in slices if e["cat"] == "kernel"]
    assert all(e["pid"] == GPU_PID and threads[GPU_PID, e["tid"]].startswith("stream ")
               for e in kernels)
    assert [e["name"] for e in kernels] == ["mul", "add", "relu", "sum", *g.kernel_names]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    finishes = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts.keys() == finishes.keys() and len(starts) == len(kernels)
    calls = {e["ts"] for e in slices if e["cat"] == "cuda_runtime"}
    for flow_id, s in starts.items():  # launch call -> kernel, as Kineto draws them
        f = finishes[flow_id]
        assert s["cat"] == f["cat"] == "ac2g" and f["bp"] == "e"
        assert (s["pid"], f["pid"]) == (CPU_PID, GPU_PID) and s["ts"] in calls
        assert any((k["tid"], k["ts"]) == (f["tid"], f["ts"]) for k in kernels)
        assert s["ts"] <= f["ts"]
    # eager's bubbles: each short kernel waits for the next launch call (us)
    eager = kernels[:4]
    gaps = [b["ts"] - (a["ts"] + a["dur"]) for a, b in itertools.pairwise(eager)]
    assert gaps == [pytest.approx((_cost.EAGER_LAUNCH_NS - _cost.MIN_KERNEL_NS) / 1e3)] * 3


def test_a_cpu_only_trace_has_no_gpu_process(tmp_path: Path) -> None:
    x = torch.ones(4, device="cuda")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x + 1
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert {e["pid"] for e in events} == {CPU_PID}
    assert [e["name"] for e in events if e["ph"] == "X"] == ["aten::add", "cudaLaunchKernel"]


def test_a_compiled_kernel_is_one_call_and_one_kernel_of_its_fused_bytes(tmp_path: Path) -> None:
    step = torch.compile(_step)
    x = torch.ones(BIG, device="cuda")
    step(x)  # compile outside the profile
    with profile() as prof:
        step(x)
    (ev,) = prof.events()
    assert ev.fused and ev.name.startswith("triton_") and len(ev.gpu_spans) == 1
    # reads x once, writes the 4-byte sum; the elementwise intermediates stay on chip
    assert ev.device_time_total == pytest.approx(
        (BIG * 4 + 4) / _gpus.current().hbm_bytes_per_s * 1e6)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    slices = [(e["cat"], e["name"]) for e in json.loads(path.read_text())["traceEvents"]
              if e["ph"] == "X"]
    assert slices == [("cpu_op", ev.name), ("cuda_driver", "cuLaunchKernel"), ("kernel", ev.name)]


def test_a_range_still_open_at_stop_ends_there() -> None:
    x = torch.ones(4, device="cuda")
    prof = profile()
    prof.start()
    with record_function("outer"):
        x + 1
        prof.stop()
    outer, add = prof.events()
    assert (outer.end_ns, outer.kernel_launches, outer.self_cpu_time_total) == (add.end_ns, 1, 0)
