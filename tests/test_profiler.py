"""fake_torch.profiler: its numbers are the LaunchCounter's, split by op and by where each ran.

Oracles: LaunchCounter (the one tally), CUDAGraph.kernel_names, and real torch's profiler
signatures and sort_by error class where torch is installed.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import fake_torch as torch
from fake_torch import LaunchCounter
from fake_torch.profiler import ProfilerActivity, profile, record_function

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


def test_chrome_trace_puts_eager_kernels_replays_and_ranges_on_their_own_rows(
        tmp_path: Path) -> None:
    x = torch.ones(4, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x * 3
    with profile() as prof:
        with record_function("decode"):
            x + 1
            g.replay()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {(names[e["pid"], e["tid"]], e["name"]) for e in spans} == {
        ("record_function", "decode"), ("eager kernels", "add"),
        ("cuda graph replays", "cudaGraphLaunch")}
    (replay,) = [e for e in spans if e["name"] == "cudaGraphLaunch"]
    assert replay["args"]["kernels"] == ["mul"]
    (decode,) = [e for e in spans if e["name"] == "decode"]
    for e in spans:  # every span is inside the range, and in microseconds since the start
        assert {"ts", "dur", "pid", "tid"} <= e.keys() and e["dur"] >= 0
        assert decode["ts"] <= e["ts"]
        assert e["ts"] + e["dur"] <= decode["ts"] + decode["dur"] + 1e-6  # float us rounding
    assert decode["args"] == {"where": "record_function", "kernel_launches": 1,
                              "graph_launches": 1}


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
    with pytest.raises(AttributeError, match="valid sort_by keys: count, kernel_launches, "
                                             "graph_launches, cpu_time_total"):
        prof.key_averages().table(sort_by="cuda_time_totl")


def test_what_is_not_emulated_says_so() -> None:
    with pytest.raises(NotImplementedError, match=r"torch\.profiler\.profile\(schedule"):
        profile(schedule=lambda step: None)
    with pytest.warns(UserWarning, match="record_shapes"):
        profile(record_shapes=True)


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
