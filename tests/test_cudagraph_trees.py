"""mode="reduce-overhead" (inductor + CUDA graph trees) and the "cudagraphs" backend: warmup,
record, replay launch counts, input copies, the overwritten-output error and its two cures,
and the skips torch reports.

`frame_call` stands for one call of a torch.compile'd frame: torch.compile starts a new
generation at each (GenerationTracker.generation), the trees' notion of "a new step"."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter, fx
from fake_torch._dynamo.mutation_guard import GenerationTracker
from fake_torch._dynamo.utils import counters
from fake_torch._inductor import config
from fake_torch._inductor.backends import cudagraphs
from fake_torch._inductor.compile_fx import compile_fx
from fake_torch._inductor.cudagraph_trees import reset_cudagraph_trees
from fake_torch._simulated._dispatch import record_ops
from fake_torch.compiler import cudagraph_mark_step_begin

OVERWRITTEN = ("Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
               "subsequent run. Stack trace: [Could not find stack trace]. To prevent "
               "overwriting, clone the tensor outside of torch.compile() or call "
               "torch.compiler.cudagraph_mark_step_begin() before each model invocation.")
CUDAGRAPH_LOG = "fake_torch._inductor.cudagraph_utils"


@pytest.fixture(autouse=True)
def trees(fresh_device: Any) -> Iterator[None]:
    reset_cudagraph_trees()
    counters.clear()
    yield
    reset_cudagraph_trees()
    counters.clear()


def graph_module(build: Callable[..., Any], num_inputs: int,
                 root: torch.nn.Module | None = None) -> fx.GraphModule:
    g = fx.Graph()
    inputs = [g.placeholder(f"x{i}") for i in range(num_inputs)]
    out = build(g, *inputs)
    g.output(tuple(out) if isinstance(out, (list, tuple)) else (out,))
    return fx.GraphModule(root if root is not None else torch.nn.Module(), g)


def reduce_overhead(gm: fx.GraphModule, *inputs: Any) -> Callable[..., Any]:
    compiled: Callable[..., Any] = compile_fx(gm, list(inputs),
                                              config_patches={"triton.cudagraphs": True})
    return compiled


def frame_call(fn: Callable[..., Any], *args: Any) -> Any:
    """One call of a compiled frame: a new generation, as torch.compile starts one."""
    GenerationTracker.generation += 1
    return fn(*args)


def counted(fn: Callable[..., Any], *args: Any) -> tuple[dict[str, int], Any]:
    """(launches by name, result) of one frame call."""
    LaunchCounter.reset()
    with record_ops() as names:
        result = frame_call(fn, *args)
    by_name: dict[str, int] = {}
    for name in names:
        by_name[name] = by_name.get(name, 0) + 1
    return by_name, result


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(np.allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-5, atol=1e-6))


class Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(8, 8, device="cuda"))


def linear_relu() -> fx.GraphModule:
    """relu(x @ W + 1): an extern mm and one fused pointwise kernel; W is a get_attr."""
    return graph_module(lambda g, x: g.call_function(torch.relu, (g.call_function(
        torch.add, (g.call_function(torch.mm, (x, g.get_attr("weight"))), 1.0)),)), 1,
        root=Linear())


# --- warmup, record, replay -------------------------------------------------------------------


def test_warmup_then_record_then_replay_launch_counts() -> None:
    gm = linear_relu()
    x = torch.randn(4, 8, device="cuda")
    f = reduce_overhead(gm, x)
    kernels = {"mm": 1, "triton_poi_fused_add_relu_0": 1}
    # warmup: the compiled graph runs as it is
    assert counted(f, x)[0] == kernels
    # record: copy x into the graph's buffer, capture (each kernel paid once, after the two
    # fill_ launches of capture_begin that set up the default generator), replay once
    assert counted(f, x)[0] == {"_foreach_copy_": 1, "fill_": 2, **kernels,
                                "cudaGraphLaunch": 1}
    # replay: copy the new input in, ONE launch for the graph
    for _ in range(3):
        x = torch.randn(4, 8, device="cuda")
        launches, (y,) = counted(f, x)
        assert launches == {"_foreach_copy_": 1, "cudaGraphLaunch": 1}
        assert close(y, gm(x)[0])
    assert counters["inductor"]["cudagraph_recorded_non_static_inputs"] == 1


def test_parameters_are_static_read_in_place_and_never_copied() -> None:
    gm = linear_relu()
    x = torch.randn(4, 8, device="cuda")
    f = reduce_overhead(gm, x)
    for _ in range(3):
        frame_call(f, x)
    with torch.no_grad():
        gm.weight.mul_(-1.0)  # the replay reads the parameter where it lives
    launches, (y,) = counted(f, x)
    assert launches == {"_foreach_copy_": 1, "cudaGraphLaunch": 1}  # one copy: x's
    assert close(y, gm(x)[0])


def test_inputs_of_different_dtypes_are_copied_one_by_one() -> None:
    gm = graph_module(lambda g, x, i: g.call_function(torch.add, (x, g.call_function(
        torch.mul, (i, 2)))), 2)
    x, i = torch.randn(4, device="cuda"), torch.arange(4, device="cuda")
    f = reduce_overhead(gm, x, i)
    frame_call(f, x, i)
    frame_call(f, x, i)
    launches, (y,) = counted(f, x, i)
    assert launches == {"copy_": 2, "cudaGraphLaunch": 1}
    assert close(y, gm(x, i)[0])


def test_a_mutated_buffer_is_static_and_the_graph_keeps_writing_it() -> None:
    """Like a KV cache: the graph writes a get_attr buffer in place on every replay."""
    class Cache(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("total", torch.zeros(3, device="cuda"))

    def build(g: fx.Graph, x: fx.Node) -> fx.Node:
        total = g.get_attr("total")
        g.call_method("add_", (total, x))
        return g.call_function(torch.mul, (total, 1.0))

    gm = graph_module(build, 1, root=Cache())
    x = torch.ones(3, device="cuda")
    f = reduce_overhead(gm, x)
    for step in range(1, 5):
        launches, (y,) = counted(f, x)
        assert y.tolist() == [float(step)] * 3
    assert launches == {"_foreach_copy_": 1, "cudaGraphLaunch": 1}
    assert counters["inductor"]["cudagraph_skips"] == 0


def test_each_new_shape_warms_up_and_records_its_own_graph() -> None:
    gm = linear_relu()
    f = reduce_overhead(gm, torch.randn(4, 8, device="cuda"))
    a, b = torch.randn(4, 8, device="cuda"), torch.randn(2, 8, device="cuda")
    for _ in range(3):
        frame_call(f, a)
    assert "cudaGraphLaunch" not in counted(f, b)[0]  # warmup at the new shape
    assert counted(f, b)[0]["cudaGraphLaunch"] == 1  # record
    assert counted(f, b)[0] == {"_foreach_copy_": 1, "cudaGraphLaunch": 1}  # replay
    launches, (y,) = counted(f, a)  # the first shape's graph is still there
    assert launches == {"_foreach_copy_": 1, "cudaGraphLaunch": 1}
    assert close(y, gm(a)[0])


def test_too_many_distinct_sizes_warn_once(caplog: pytest.LogCaptureFixture) -> None:
    gm = graph_module(lambda g, x: g.call_function(torch.sin, (x,)), 1)
    f = reduce_overhead(gm, torch.randn(1, device="cuda"))
    with config.patch({"triton.cudagraph_dynamic_shape_warn_limit": 2}), \
            caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG):
        for n in range(1, 6):
            frame_call(f, torch.randn(n, device="cuda"))
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert warnings[0].startswith("CUDAGraph supports dynamic shapes by recording a new graph "
                                  "for each distinct input size. Recording too many CUDAGraphs "
                                  "may lead to extra overhead. We have observed 3 distinct "
                                  "sizes.")


def test_a_later_graph_reads_an_earlier_graphs_output_in_place() -> None:
    """Two graphs in one step (a frame with a graph break): the second is recorded as the
    first's child, and the first's output it reads is graph memory already: never copied."""
    first = graph_module(lambda g, x: g.call_function(torch.mul, (x, 2.0)), 1)
    second = graph_module(lambda g, h: g.call_function(torch.add, (h, 1.0)), 1)
    x = torch.ones(3, device="cuda")
    f1, f2 = reduce_overhead(first, x), reduce_overhead(second, x)

    def step(x: torch.Tensor) -> torch.Tensor:
        GenerationTracker.generation += 1  # one frame call, two graphs
        (h,) = f1(x)
        (y,) = f2(h)
        return y

    for _ in range(2):  # warmup, record
        step(x)
    x = torch.full((3,), 5.0, device="cuda")
    LaunchCounter.reset()
    with record_ops() as names:
        y = step(x)
    assert names == ["_foreach_copy_", "cudaGraphLaunch", "cudaGraphLaunch"]
    assert y.tolist() == [11.0] * 3
    assert counters["inductor"]["cudagraph_recorded_non_static_inputs"] == 1  # x only


# --- outputs live in graph memory ---------------------------------------------------------


def test_reading_an_output_after_the_next_run_raises_torchs_error() -> None:
    gm = linear_relu()
    x = torch.randn(4, 8, device="cuda")
    f = reduce_overhead(gm, x)
    (y1,) = frame_call(f, x)  # warmup
    (y2,) = frame_call(f, x)  # record: a new generation frees the warmup's outputs
    with pytest.raises(RuntimeError) as err:
        print(y1)
    assert str(err.value) == OVERWRITTEN
    with pytest.raises(RuntimeError, match="overwritten by a subsequent run"):
        y1.add(1)
    assert y1.shape == (4, 8)  # metadata still reads
    (y3,) = frame_call(f, x)  # replay: frees the recording's outputs
    with pytest.raises(RuntimeError, match="overwritten by a subsequent run"):
        y2.sum()
    assert close(y3, gm(x)[0])


def test_the_freed_output_check_lasts_as_long_as_a_freed_output() -> None:
    """The door checks every launch for a freed output only while one is alive (a registered
    input check sends every launch through the door's general path, the native door's too)."""
    from fake_torch._inductor.cudagraph_trees import _check_not_freed
    from fake_torch._simulated import _dispatch

    gm = linear_relu()
    x = torch.randn(4, 8, device="cuda")
    f = reduce_overhead(gm, x)
    assert _check_not_freed not in _dispatch._input_checks
    (y1,) = frame_call(f, x)  # warmup
    (y2,) = frame_call(f, x)  # record: frees the warmup's outputs (y1)
    assert _check_not_freed in _dispatch._input_checks
    with pytest.raises(RuntimeError, match="overwritten by a subsequent run"):
        y1.add(1)
    del y1
    assert _check_not_freed not in _dispatch._input_checks
    (y3,) = frame_call(f, x)  # replay: frees the recording's outputs (y2): checked again
    assert _check_not_freed in _dispatch._input_checks
    with pytest.raises(RuntimeError, match="overwritten by a subsequent run"):
        y2.add(1)
    del y2
    assert _check_not_freed not in _dispatch._input_checks
    assert close(y3, gm(x)[0])


def test_a_warmups_outputs_are_freed_by_storage_through_torch_compile() -> None:
    """As torch 2.13's try_end_curr_warmup -> dealloc_current_path_weakrefs: the next
    invocation frees the warmup's output STORAGES, so the tensor torch.compile returned (not
    the object the trees handed out: the frame rebinds its own) and a view of it both raise;
    a clone taken before stays good. The recording's outputs are freed the same way."""
    f = torch.compile(lambda x: (x @ x.T).relu() + 1, mode="reduce-overhead")
    x = torch.randn(4, 4, device="cuda")
    expected = (x @ x.T).relu() + 1
    warm = f(x)  # warmup (the first call compiles, then warms up)
    row, kept = warm[1], warm.clone()
    recorded = f(x)  # record: a new invocation
    for freed in (warm, row):
        with pytest.raises(RuntimeError, match="overwritten by a subsequent run"):
            freed.sum()
    assert close(kept, expected) and close(recorded, expected)
    recorded_view = recorded.view(16)
    replayed = f(x)  # replay: frees the recording's outputs, view and all
    for freed in (recorded, recorded_view):
        with pytest.raises(RuntimeError, match="overwritten by a subsequent run"):
            freed.tolist()
    assert close(replayed, expected)


def test_a_replay_output_held_across_calls_is_overwritten_silently() -> None:
    gm = graph_module(lambda g, x: g.call_function(torch.mul, (x, 2.0)), 1)
    f = reduce_overhead(gm, torch.ones(3, device="cuda"))
    for _ in range(3):
        frame_call(f, torch.ones(3, device="cuda"))
    (y3,) = frame_call(f, torch.ones(3, device="cuda"))
    (y4,) = frame_call(f, torch.full((3,), 5.0, device="cuda"))
    assert y3.tolist() == [10.0] * 3  # should be 2.0! (the graph's buffer, rewritten by y4)
    assert y3.data_ptr() == y4.data_ptr()


def step_twice(f: Callable[..., Any], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Two calls whose outputs are used together (torch's `rand_foo() + rand_foo()`)."""
    (a,) = frame_call(f, x)
    (b,) = frame_call(f, y)
    result: torch.Tensor = a + b
    return result


def test_two_calls_in_one_step_overwrite_each_other() -> None:
    gm = graph_module(lambda g, x: g.call_function(torch.mul, (x, 2.0)), 1)
    x, y = torch.ones(3, device="cuda"), torch.full((3,), 3.0, device="cuda")
    f = reduce_overhead(gm, x)
    with pytest.raises(RuntimeError, match="overwritten by a subsequent run"):
        step_twice(f, x, y)


def test_cure_one_mark_step_begin_keeps_a_steps_outputs_apart() -> None:
    gm = graph_module(lambda g, x: g.call_function(torch.mul, (x, 2.0)), 1)
    x, y = torch.ones(3, device="cuda"), torch.full((3,), 3.0, device="cuda")
    f = reduce_overhead(gm, x)
    for _ in range(3):
        cudagraph_mark_step_begin()
        LaunchCounter.reset()
        out = step_twice(f, x, y)
        launches = dict(LaunchCounter.by_op)
        assert out.tolist() == [8.0] * 3
    # steady state: each call replays its own graph (a path of two nodes in the tree)
    assert launches == {"_foreach_copy_": 2, "cudaGraphLaunch": 2, "add": 1}


def test_cure_two_clone_the_output_before_the_next_call() -> None:
    gm = graph_module(lambda g, x: g.call_function(torch.mul, (x, 2.0)), 1)
    x, y = torch.ones(3, device="cuda"), torch.full((3,), 3.0, device="cuda")
    f = reduce_overhead(gm, x)
    for _ in range(3):
        a = frame_call(f, x)[0].clone()
        (b,) = frame_call(f, y)
        assert (a + b).tolist() == [8.0] * 3


# --- skips: said once, counted, still correct ----------------------------------------------


def skip_messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == CUDAGRAPH_LOG]


def test_a_mutated_input_skips_cudagraphs_with_torchs_message_once(
        caplog: pytest.LogCaptureFixture) -> None:
    gm = graph_module(lambda g, x: g.call_function(torch.mul, (g.call_method(
        "add_", (x, 1.0)), 2.0)), 1)
    x = torch.zeros(3, device="cuda")
    f = reduce_overhead(gm, x)
    with caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG):
        for step in range(1, 5):
            launches, (y,) = counted(f, x)
            assert launches == {"triton_poi_fused_add_mul_0": 1}  # no graph, ever
            assert x.tolist() == [float(step)] * 3 and y.tolist() == [2.0 * step] * 3
    assert skip_messages(caplog) == ["skipping cudagraphs due to mutated inputs (1 instances)"]
    assert counters["inductor"]["cudagraph_skips"] == 1


def test_the_skip_message_names_where_the_input_is_mutated(
        caplog: pytest.LogCaptureFixture) -> None:
    g = fx.Graph()
    x = g.placeholder("x")
    add_ = g.call_method("add_", (x, 1.0))
    add_.meta["stack_trace"] = '  File "model.py", line 3, in forward\n    x.add_(1)\n'
    g.output((add_,))
    f = reduce_overhead(fx.GraphModule(torch.nn.Module(), g), torch.zeros(3, device="cuda"))
    with caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG):
        frame_call(f, torch.zeros(3, device="cuda"))
    assert skip_messages(caplog) == [
        "skipping cudagraphs due to mutated inputs (1 instances). Found from : \n"
        '   File "model.py", line 3, in forward\n    x.add_(1)\n']


def test_a_cpu_tensor_in_a_cuda_graph_skips_cudagraphs(caplog: pytest.LogCaptureFixture) -> None:
    gm = graph_module(lambda g, x, c: [g.call_function(torch.sin, (x,)),
                                       g.call_function(torch.cos, (c,))], 2)
    x, c = torch.randn(3, device="cuda"), torch.randn(3)
    with caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG):
        f = reduce_overhead(gm, x, c)
        for _ in range(3):
            launches, (s, co) = counted(f, x, c)
            assert launches == {"triton_poi_fused_sin_0": 1}  # the cpu kernel is not counted
    assert close(s, x.sin()) and close(co, c.cos())
    assert skip_messages(caplog) == [
        "skipping cudagraphs due to skipping cudagraphs due to cpu device (x1)"]
    assert counters["inductor"]["cudagraph_skips"] == 1


def test_a_graph_on_the_cpu_skips_without_a_word(caplog: pytest.LogCaptureFixture) -> None:
    gm = graph_module(lambda g, x: g.call_function(torch.sin, (x,)), 1)
    with caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG):
        f = reduce_overhead(gm, torch.randn(3))
        frame_call(f, torch.randn(3))
    assert skip_messages(caplog) == []
    assert counters["inductor"]["cudagraph_skips"] == 1


def test_a_data_dependent_op_skips_cudagraphs(caplog: pytest.LogCaptureFixture) -> None:
    gm = graph_module(lambda g, x: g.call_function(torch.nonzero, (x,)), 1)
    x = torch.tensor([0.0, 1.0, 2.0], device="cuda")
    with caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG):
        f = reduce_overhead(gm, x)
        for _ in range(3):
            (idx,) = frame_call(f, x)
            assert idx.tolist() == [[1], [2]]
    assert skip_messages(caplog) == [
        "skipping cudagraphs due to disabling cudagraphs due to incompatible op "
        "aten.nonzero.default"]
    assert counters["inductor"]["cudagraph_skips"] == 1


# --- the "cudagraphs" backend ---------------------------------------------------------------


def test_the_cudagraphs_backend_graphs_the_unfused_ops() -> None:
    gm = linear_relu()
    x = torch.randn(4, 8, device="cuda")
    f = cudagraphs(gm, [x])
    eager = {"mm": 1, "add": 1, "relu": 1}
    assert counted(f, x)[0] == eager  # warmup
    assert counted(f, x)[0] == {"_foreach_copy_": 1, "fill_": 2, **eager,  # record
                                "cudaGraphLaunch": 1}
    launches, (y,) = counted(f, x)
    assert launches == {"_foreach_copy_": 1, "cudaGraphLaunch": 1}  # replay
    assert close(y, gm(x)[0])


@pytest.mark.parametrize("build, inputs, reason", [
    (lambda g, x: g.call_method("add_", (x, 1.0)), lambda: [torch.zeros(2, device="cuda")],
     "skipping cudagraphs due to mutated inputs (1 instances)"),
    (lambda g, x: g.call_function(torch.sin, (x,)), lambda: [torch.zeros(2)],
     "skipping cudagraphs due to cpu device (x0)"),
    (lambda g, x: g.call_function(torch.nonzero, (x,)), lambda: [torch.ones(2, device="cuda")],
     "skipping cudagraphs due to incompatible op (nonzero)"),
])
def test_the_cudagraphs_backend_skips_with_torchs_messages(
        build: Callable[..., Any], inputs: Callable[[], list[torch.Tensor]], reason: str,
        caplog: pytest.LogCaptureFixture) -> None:
    gm = graph_module(build, 1)
    with caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG):
        f = cudagraphs(gm, inputs())
        for _ in range(3):
            frame_call(f, *inputs())
    assert skip_messages(caplog) == [f"skipping cudagraphs due to {reason}"]
    assert counters["inductor"]["cudagraph_skips"] == 1


def test_reset_forgets_every_graph() -> None:
    gm = linear_relu()
    x = torch.randn(4, 8, device="cuda")
    f = reduce_overhead(gm, x)
    for _ in range(3):
        frame_call(f, x)
    reset_cudagraph_trees()
    assert "cudaGraphLaunch" not in counted(f, x)[0]  # warms up again
