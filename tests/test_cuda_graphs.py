"""torch.cuda.CUDAGraph and torch.cuda.graph: what capture and replay do, and what they refuse.

Real torch here is a CPU build that cannot capture, so the oracles are numpy, the same code run
eagerly, and torch's own texts (CUDAGraph.cpp, graphs.py, CUDAGeneratorImpl.cpp). Every test runs
on a fresh simulated device (the `fresh_device` fixture in conftest.py).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

SYNC_ERROR = "CUDA error: operation not permitted when stream is capturing"
FAILED_CAPTURE = "CUDA error: operation failed due to a previous error during capture"
COPY_ERROR = ("Cannot copy between CPU and CUDA tensors during CUDA graph capture unless the CPU "
              "tensor is pinned")
NO_CAPTURE = "Called CUDAGraph::replay without a preceding successful capture."
EMPTY = ("The CUDA Graph is empty. This usually means that the graph was attempted to be "
         "captured on wrong device or stream.")
MB = 1024**2


def _starts(text: str) -> str:
    """A `match=` pattern: the message begins with exactly `text`."""
    return "^" + re.escape(text)


def _np(t: torch.Tensor) -> np.ndarray:
    return t.numpy(force=True)


def _cuda(values: list[float]) -> torch.Tensor:
    return torch.tensor(values, device="cuda")


# --- capture records, replay runs -------------------------------------------------------------

def test_capture_records_kernels_without_running_them_and_replay_is_one_launch() -> None:
    x = _cuda([0.0, 1.0, 2.0, 3.0])
    g = CUDAGraph()
    LaunchCounter.reset()
    with torch.cuda.graph(g):
        y = x * 2
        z = y + 1
    # the CPU still paid one launch call per kernel at capture, after capture_begin filled the
    # default generator's graph-side seed and offset (two fill_ launches, as torch 2.13 does)
    assert LaunchCounter.n == 4
    assert dict(LaunchCounter.by_op) == {"fill_": 2, "mul": 1, "add": 1}
    assert (g.num_kernels, g.kernel_names) == (2, ["mul", "add"])
    assert np.isnan(_np(y)).all() and np.isnan(_np(z)).all()  # recorded, not run: no values yet
    LaunchCounter.reset()
    g.replay()
    assert (LaunchCounter.n, dict(LaunchCounter.by_kind)) == (1, {"graph": 1})
    assert dict(LaunchCounter.by_op) == {"cudaGraphLaunch": 1}
    np.testing.assert_array_equal(_np(z), np.array([0.0, 1.0, 2.0, 3.0]) * 2 + 1)
    np.testing.assert_array_equal(_np(y), [0.0, 2.0, 4.0, 6.0])


def test_replay_reruns_the_kernels_in_order_against_the_same_buffers() -> None:
    x = _cuda([1.0, 2.0, 3.0])
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x.clone()
        y.mul_(2)  # order matters: (x * 2) + 1, not (x + 1) * 2
        y.add_(1)
    addresses = (x.data_ptr(), y.data_ptr())
    g.replay()
    np.testing.assert_array_equal(_np(y), [3.0, 5.0, 7.0])
    x.copy_(_cuda([10.0, 20.0, 30.0]))  # new data into the captured input buffer
    with LaunchCounter.expect(1, cudaGraphLaunch=1):
        g.replay()
    np.testing.assert_array_equal(_np(y), [21.0, 41.0, 61.0])
    assert (x.data_ptr(), y.data_ptr()) == addresses  # the very same buffers
    assert g.kernel_names == ["clone", "mul_", "add_"]


def test_python_values_read_at_capture_are_baked_in() -> None:
    x = _cuda([1.0, 2.0])
    scale, num_steps = 3.0, 2
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x
        for _ in range(num_steps):  # Python runs once, at capture: two kernels recorded
            y = y * scale
    scale, num_steps = 10.0, 5  # too late: the graph holds 3.0 twice
    g.replay()
    np.testing.assert_array_equal(_np(y), [9.0, 18.0])
    assert g.num_kernels == 2


def test_outputs_are_static_buffers_that_the_next_replay_overwrites() -> None:
    x = _cuda([1.0])
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x + 100
    g.replay()
    first, kept = y, y.clone()  # `first` is the static buffer; the clone is a private copy
    x.fill_(2.0)
    g.replay()
    assert first.data_ptr() == y.data_ptr()
    np.testing.assert_array_equal(_np(first), [102.0])  # overwritten by the second replay
    np.testing.assert_array_equal(_np(kept), [101.0])


def test_host_work_inside_a_capture_runs_at_once_and_is_not_part_of_the_graph() -> None:
    g = CUDAGraph()
    with pytest.warns(UserWarning, match=_starts(EMPTY)), torch.cuda.graph(g):
        c = torch.ones(3) * 2  # cpu: no kernel to record, runs now
    np.testing.assert_array_equal(c.numpy(), [2.0, 2.0, 2.0])
    assert g.num_kernels == 0
    LaunchCounter.reset()
    g.replay()  # an empty graph still costs its one launch
    assert dict(LaunchCounter.by_kind) == {"graph": 1}


# --- random numbers ---------------------------------------------------------------------------

def test_random_ops_in_a_graph_draw_what_the_next_eager_draws_would() -> None:
    torch.manual_seed(1234)
    eager = [_np(torch.randn(6, device="cuda")) for _ in range(6)]
    torch.manual_seed(1234)
    g = CUDAGraph()
    with torch.cuda.graph(g):  # two draws, recorded: the eager stream does not move
        a = torch.randn(6, device="cuda")
        b = torch.randn(6, device="cuda")
    g.replay()
    np.testing.assert_array_equal(_np(a), eager[0])
    np.testing.assert_array_equal(_np(b), eager[1])
    g.replay()  # fresh numbers each replay: the next two draws
    np.testing.assert_array_equal(_np(a), eager[2])
    np.testing.assert_array_equal(_np(b), eager[3])
    np.testing.assert_array_equal(_np(torch.randn(6, device="cuda")), eager[4])  # eager goes on
    g.replay()
    np.testing.assert_array_equal(_np(a), eager[5])


def test_rand_and_randn_interleaved_in_a_graph_match_eager() -> None:
    torch.manual_seed(7)
    e_rand, e_randn = _np(torch.rand(5, device="cuda")), _np(torch.randn(5, device="cuda"))
    torch.manual_seed(7)
    g = CUDAGraph()
    with torch.cuda.graph(g):
        u = torch.rand(5, device="cuda")
        n = torch.randn(5, device="cuda")
        s = u + n
    g.replay()
    np.testing.assert_array_equal(_np(u), e_rand)
    np.testing.assert_array_equal(_np(n), e_randn)
    np.testing.assert_array_equal(_np(s), e_rand + e_randn)


def test_manual_seed_to_another_seed_during_capture_raises_torchs_error() -> None:
    torch.manual_seed(5)
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match=_starts(
            "CUDAGeneratorImpl::set_current_seed can be called during stream capture only if "
            "new seed is the same as the original seed.")):
        with torch.cuda.graph(g):
            u = torch.rand(3, device="cuda")
            torch.manual_seed(5)  # the same seed: allowed, a no-op
            torch.manual_seed(6)
    # a failed check, not a CUDA error: the capture itself stays valid and replays
    assert g.num_kernels == 1
    torch.manual_seed(5)
    expected = _np(torch.rand(3, device="cuda"))
    torch.manual_seed(5)
    g.replay()
    np.testing.assert_array_equal(_np(u), expected)


# --- keep_graph, instantiate, reset, lifetime -------------------------------------------------

def test_keep_graph_instantiates_on_demand_and_replays_keep_accumulating() -> None:
    x = torch.zeros(3, device="cuda")
    g = CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g):
        x += 1  # in place on a tensor made before capture
    np.testing.assert_array_equal(_np(x), [0.0, 0.0, 0.0])  # recorded, not run
    assert isinstance(g.raw_cuda_graph(), int)
    with pytest.raises(RuntimeError, match=_starts(
            "You cannot access the raw cudaGraphExec_t instance until instantiate() has been "
            "called")):
        g.raw_cuda_graph_exec()
    g.instantiate()
    g.replay()
    g.replay()
    np.testing.assert_array_equal(_np(x), [2.0, 2.0, 2.0])
    g.instantiate()  # again: allowed with keep_graph=True; the state lives in x, not the graph
    with LaunchCounter.expect(1, cudaGraphLaunch=1):
        g.replay()
    np.testing.assert_array_equal(_np(x), [3.0, 3.0, 3.0])
    assert isinstance(g.raw_cuda_graph_exec(), int) and isinstance(g.raw_cuda_graph(), int)


def test_keep_graph_replay_without_instantiate_instantiates_first() -> None:
    x = torch.zeros(2, device="cuda")
    g = CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g):
        x.add_(5)
    with LaunchCounter.expect(1, cudaGraphLaunch=1):
        g.replay()
    np.testing.assert_array_equal(_np(x), [5.0, 5.0])


def test_reset_deletes_the_graph_and_allows_a_fresh_capture() -> None:
    x = _cuda([1.0, 2.0])
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
    assert g.pool() == (1, 0)
    with pytest.raises(RuntimeError, match=_starts(
            "This CUDAGraph instance already owns a captured graph. To capture a new graph, "
            "create a new instance.")), torch.cuda.graph(g):
        pass
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    g.reset()
    with pytest.raises(RuntimeError, match=_starts(NO_CAPTURE)):
        g.replay()
    with pytest.raises(RuntimeError, match=_starts(
            "Called CUDAGraph::pool() without a preceding successful capture.")):
        g.pool()
    with torch.cuda.graph(g):
        z = x * 3
    assert g.pool() == (2, 0)  # a new private pool
    g.replay()
    np.testing.assert_array_equal(_np(z), [3.0, 6.0])
    assert np.isnan(_np(y)).all()  # the old graph is gone: its output was never written


def test_tensors_made_by_a_graph_outlive_the_graph() -> None:
    x = torch.ones(4, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        scratch = torch.zeros(MB, device="cuda")  # 4 MiB: a 20 MiB segment of the graph's pool
        y = x * 5 + scratch[:4]
        del scratch  # free again inside the pool; the graph still writes it at every replay
    g.replay()
    # x: a 2 MiB segment of the default pool; y and scratch: 2 + 20 MiB of the private pool;
    # the default generator's graph-side seed and offset (two 512-byte blocks while a graph is
    # registered) take a 2 MiB segment of the default pool on the capture stream
    assert (torch.cuda.memory_allocated(), torch.cuda.memory_reserved()) == (2048, 26 * MB)
    torch.cuda.empty_cache()  # a live graph keeps its pool, free blocks and all
    assert torch.cuda.memory_reserved() == 26 * MB
    del g  # the generator's two blocks go back (no graph is registered any more)
    np.testing.assert_array_equal(_np(y), [5.0] * 4)
    # as c10's releasePool: the dead graph's free segments go back only at the next empty_cache
    assert (torch.cuda.memory_allocated(), torch.cuda.memory_reserved()) == (1024, 26 * MB)
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() == 4 * MB  # y's segment stays: y is alive
    del y  # its block goes back to the dead graph's pool ...
    assert (torch.cuda.memory_allocated(), torch.cuda.memory_reserved()) == (512, 4 * MB)
    torch.cuda.empty_cache()  # ... and that segment to the device at the next empty_cache
    assert torch.cuda.memory_reserved() == 2 * MB


def test_is_current_stream_capturing_toggles_exactly_around_the_capture() -> None:
    x = _cuda([1.0])
    seen: list[bool] = [torch.cuda.is_current_stream_capturing()]
    other = torch.cuda.Stream()
    g = CUDAGraph()
    with torch.cuda.graph(g):
        seen.append(torch.cuda.is_current_stream_capturing())
        with torch.cuda.stream(other):  # another stream is not the one capturing
            seen.append(torch.cuda.is_current_stream_capturing())
        seen.append(torch.cuda.is_current_stream_capturing())
        y = x + 1
    seen.append(torch.cuda.is_current_stream_capturing())
    assert seen == [False, True, False, True, False]
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):  # the raw calls toggle it too
        g2 = CUDAGraph()
        g2.capture_begin()
        assert torch.cuda.is_current_stream_capturing()
        y = x + 2
        g2.capture_end()
        assert not torch.cuda.is_current_stream_capturing()
    g2.replay()
    np.testing.assert_array_equal(_np(y), [3.0])


# --- what CUDA forbids during capture ---------------------------------------------------------

HOST_SYNCS: dict[str, Callable[[torch.Tensor], object]] = {
    "item": lambda t: t.sum().item(),
    "torch.cuda.synchronize": lambda t: torch.cuda.synchronize(),
    "Stream.synchronize": lambda t: torch.cuda.current_stream().synchronize(),
    # (a recorded event: c10's CUDAEvent::synchronize of one never recorded asks CUDA nothing)
    "Event.synchronize": lambda t: torch.cuda.current_stream().record_event().synchronize(),
}


@pytest.mark.parametrize("sync", HOST_SYNCS.values(), ids=HOST_SYNCS.keys())
def test_a_host_sync_during_capture_raises_and_invalidates_the_capture(
        sync: Callable[[torch.Tensor], object]) -> None:
    x = torch.ones(4, device="cuda")
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match=_starts(FAILED_CAPTURE)) as info:
        with torch.cuda.graph(g):
            y = x * 2
            sync(y)
    first = info.value.__context__  # the capture_end of __exit__ fails, chained to the cause
    assert isinstance(first, RuntimeError) and str(first).startswith(SYNC_ERROR)
    assert not torch.cuda.is_current_stream_capturing()
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    with pytest.raises(RuntimeError, match=_starts(NO_CAPTURE)):
        g.replay()
    del y


def test_catching_the_sync_error_inside_the_capture_does_not_save_it() -> None:
    x = torch.ones(2, device="cuda")
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match=_starts(FAILED_CAPTURE)), torch.cuda.graph(g):
        y = x * 2
        with pytest.raises(RuntimeError, match=_starts(SYNC_ERROR)):
            y.sum().item()
        z = y + 1  # more work after the error: the capture is already invalid
    with pytest.raises(RuntimeError, match=_starts(NO_CAPTURE)):
        g.replay()
    with torch.cuda.graph(g):  # the failed capture left nothing behind: capture again
        z = x + 1
    g.replay()
    np.testing.assert_array_equal(_np(z), [2.0, 2.0])


HOST_COPIES: dict[str, Callable[[torch.Tensor], object]] = {
    "cpu": lambda t: t.cpu(),
    "numpy(force=True)": lambda t: t.numpy(force=True),
    "tolist": lambda t: t.tolist(),
    "tensor(list, device=cuda)": lambda t: torch.tensor([1.0, 2.0], device="cuda"),
    "copy_ from cpu": lambda t: t.copy_(torch.ones(4)),
}


@pytest.mark.parametrize("copy", HOST_COPIES.values(), ids=HOST_COPIES.keys())
def test_a_copy_to_or_from_pageable_host_memory_during_capture_raises(
        copy: Callable[[torch.Tensor], object]) -> None:
    x = torch.ones(4, device="cuda")
    g = CUDAGraph()
    LaunchCounter.reset()
    with pytest.raises(RuntimeError, match=_starts(COPY_ERROR)), torch.cuda.graph(g):
        y = x * 2
        copy(y)
    # torch refuses before any CUDA call, so the capture itself is still valid
    assert g.num_kernels == 1
    g.replay()
    np.testing.assert_array_equal(_np(y), [2.0] * 4)


def test_capture_begin_on_the_default_stream_raises() -> None:
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match=_starts(
            "CUDA graphs must be captured on a non-default stream. (However, after capture, "
            "it's ok to replay them on the default stream.)")):
        g.capture_begin()
    assert not torch.cuda.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match=_starts(NO_CAPTURE)):
        g.replay()


def test_capture_must_end_on_the_stream_it_began_on() -> None:
    x = _cuda([1.0])
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    g = CUDAGraph()
    with torch.cuda.stream(s1):
        g.capture_begin()
        y = x + 1
        with torch.cuda.stream(s2), pytest.raises(RuntimeError, match=_starts(
                "Capture must end on the same stream it began on.")):
            g.capture_end()
        assert torch.cuda.is_current_stream_capturing()  # still capturing on s1
        g.capture_end()
    g.replay()  # replay on the default stream is fine
    np.testing.assert_array_equal(_np(y), [2.0])


def test_replay_pool_and_instantiate_need_a_successful_capture() -> None:
    g = CUDAGraph()
    with pytest.raises(RuntimeError, match=_starts(NO_CAPTURE)):
        g.replay()
    with pytest.raises(RuntimeError, match=_starts(
            "Called CUDAGraph::pool() without a preceding successful capture.")):
        g.pool()
    with pytest.raises(RuntimeError, match=_starts(
            "capture_end() must have been called before calling instantiate")):
        g.instantiate()


def test_instantiate_again_and_raw_graph_need_keep_graph() -> None:
    x = _cuda([1.0])
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x + 1
    with pytest.raises(RuntimeError, match=_starts(
            "instantiate() is intended to be called by the user only when keep_graph=true")):
        g.instantiate()
    with pytest.raises(RuntimeError, match=_starts(
            "You cannot access the raw cudaGraph_t instance unless CUDAGraph was initialized "
            "with keep_graph=true")):
        g.raw_cuda_graph()
    assert isinstance(g.raw_cuda_graph_exec(), int)  # capture_end instantiated it
    kept = CUDAGraph(keep_graph=True)
    with pytest.raises(RuntimeError, match=_starts(
            "You cannot access the raw cudaGraph_t instance until capture_end() has been "
            "called")):
        kept.raw_cuda_graph()
    g.replay()
    np.testing.assert_array_equal(_np(y), [2.0])


def test_an_empty_capture_warns_with_torchs_text() -> None:
    g = CUDAGraph()
    with pytest.warns(UserWarning, match=_starts(EMPTY)), torch.cuda.graph(g):
        pass
    assert g.num_kernels == 0


def test_capture_error_mode_is_checked() -> None:
    x = _cuda([1.0])
    for mode in ("global", "thread_local", "relaxed"):
        g = CUDAGraph()
        with torch.cuda.graph(g, capture_error_mode=mode):
            y = x * 2
        g.replay()
        np.testing.assert_array_equal(_np(y), [2.0])
    with pytest.raises(RuntimeError, match=_starts(
            "Unknown capture error mode. Expected `global`, `thread_local`, or `relaxed`, got "
            "strict")), torch.cuda.graph(CUDAGraph(), capture_error_mode="strict"):
        pass
    assert torch.cuda.current_stream() == torch.cuda.default_stream()


def test_graph_context_empties_the_cache_and_captures_on_a_side_stream() -> None:
    x = _cuda([1.0])
    del x  # a cached, unused 2 MiB segment in the default pool
    assert torch.cuda.memory_reserved() == 2 * MB
    mine = torch.cuda.Stream()
    reserved_inside, streams_seen = [], []
    g, h = CUDAGraph(), CUDAGraph()
    with torch.cuda.graph(g, stream=mine):
        reserved_inside.append(torch.cuda.memory_reserved())
        streams_seen.append(torch.cuda.current_stream())
        y = torch.zeros(1, device="cuda")
    with torch.cuda.graph(h):
        streams_seen.append(torch.cuda.current_stream())
        z = torch.ones(1, device="cuda")
    # __enter__ emptied the cache; capture_begin then put the default generator's graph-side
    # seed and offset in a new 2 MiB segment (of the capture stream), as torch does
    assert reserved_inside == [2 * MB]
    assert streams_seen[0] == mine
    assert streams_seen[1] == torch.cuda.graph.default_capture_stream != torch.cuda.default_stream()
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    g.replay()
    h.replay()
    assert (_np(y).tolist(), _np(z).tolist()) == ([0.0], [1.0])


# --- debug_dump -------------------------------------------------------------------------------

def _dot_kernels(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The kernel names (node order) and the edges of a DOT file written by debug_dump."""
    nodes = re.findall(r'^\s*k(\d+) \[label="(\d+): (\w+)', text, flags=re.M)
    assert all(a == b for a, b, _ in nodes)
    edges = re.findall(r"^\s*k(\d+) -> k(\d+);", text, flags=re.M)
    return [op for _, _, op in nodes], [(int(a), int(b)) for a, b in edges]


def test_debug_dump_writes_the_kernels_as_dot(tmp_path: Path) -> None:
    x = _cuda([1.0, 2.0])
    g = CUDAGraph()
    g.enable_debug_mode()  # keep the captured graph (not just its executable) for the dump
    with torch.cuda.graph(g):
        y = (x * 2 - 3).relu()
    path = tmp_path / "graph.dot"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g.debug_dump(str(path))
    assert [str(w.message) for w in caught] == [
        "DEBUG: calling debug_dump()", f"DEBUG: calling cudaGraphDebugDotPrint() with {path}"]
    text = path.read_text()
    assert text.startswith("digraph")
    names, edges = _dot_kernels(text)
    assert names == g.kernel_names == ["mul", "sub", "relu"]
    assert edges == [(0, 1), (1, 2)]  # stream order
    path.unlink()
    with pytest.warns(UserWarning, match=_starts("DEBUG: calling debug_dump()")):
        g.debug_dump(str(path))  # without keep_graph the first dump destroyed the graph
    assert not path.exists()
    g.replay()
    np.testing.assert_array_equal(_np(y), [0.0, 1.0])


def test_debug_dump_without_debug_mode_warns_and_writes_nothing(tmp_path: Path) -> None:
    x = _cuda([1.0])
    g = CUDAGraph()
    with torch.cuda.graph(g):
        x.add_(1)
    path = tmp_path / "graph.dot"
    with pytest.warns(UserWarning, match=_starts(
            "CUDA Graphs debug not enabled, set with [graph].enable_debug_mode()")):
        g.debug_dump(str(path))
    assert not path.exists()
    kept = CUDAGraph(keep_graph=True)  # keep_graph alone allows dumps, any number of them
    with torch.cuda.graph(kept):
        x.mul_(2)
        x.add_(1)
    for _ in range(2):
        with pytest.warns(UserWarning, match="DEBUG: calling"):
            kept.debug_dump(str(path))
        assert _dot_kernels(path.read_text()) == (["mul_", "add_"], [(0, 1)])
