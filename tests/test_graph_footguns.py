"""CUDA-graph footguns, one small story each (after tinygrad's test_jit_footguns.py).

Each test shows a surprising thing a graph does — exactly what a GPU does — with the labelled
line where the surprise lands, and then the fix. The sanitizer is off, as by default.
"""

from __future__ import annotations

import numpy as np
import pytest

import fake_torch as torch
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device", "no_sanitizer")


def _cuda(values: list[float]) -> torch.Tensor:
    return torch.tensor(values, device="cuda")


def _capture(fn: object, pool: tuple[int, int] | None = None) -> tuple[CUDAGraph, torch.Tensor]:
    g = CUDAGraph()
    with torch.cuda.graph(g, pool=pool):
        out = fn()  # type: ignore[operator]
    return g, out


def test_outputs_are_overwritten_by_the_next_replay() -> None:
    static_x = _cuda([0.0])
    g, y = _capture(lambda: static_x * 2)
    static_x.fill_(1.0)
    g.replay()
    r1 = y
    static_x.fill_(2.0)
    g.replay()
    r2 = y
    assert r1.item() == 4.0  # should be 2! (r1 is the static output: overwritten by r2's replay)
    assert r2.item() == 4.0
    static_x.fill_(1.0)  # the fix: clone what must survive the next replay
    g.replay()
    r1 = y.clone()
    static_x.fill_(2.0)
    g.replay()
    assert (r1.item(), y.item()) == (2.0, 4.0)


def test_forgetting_to_copy_new_inputs_replays_stale_data() -> None:
    static_x = _cuda([1.0, 2.0])
    g, y = _capture(lambda: static_x * 10)
    captured = static_x
    static_x = _cuda([5.0, 6.0])  # rebinding the name does not touch the buffer the graph reads
    g.replay()
    assert y.tolist() == [10.0, 20.0]  # should be [50, 60]! (replay read the captured buffer)
    captured.copy_(static_x)  # the fix: copy new values into the captured tensor
    g.replay()
    assert y.tolist() == [50.0, 60.0]


def test_a_python_value_is_baked_in_at_capture() -> None:
    logits = _cuda([1.0, 2.0])
    temperature = 1.0
    g, y = _capture(lambda: logits / temperature)
    temperature = 0.5
    g.replay()
    assert y.tolist() == [1.0, 2.0]  # should be [2, 4]! (the division was recorded with 1.0)
    temperature_t = _cuda([1.0])  # the fix: keep the value in a tensor the graph reads
    g2, y2 = _capture(lambda: logits / temperature_t)
    temperature_t.fill_(0.5)
    g2.replay()
    assert y2.tolist() == [2.0, 4.0]


def test_a_branch_taken_at_capture_is_the_only_branch() -> None:
    x = _cuda([-1.0, 3.0])
    use_relu = True
    g, y = _capture(lambda: x.relu() if use_relu else x * 1)
    use_relu = False
    g.replay()
    assert y.tolist() == [0.0, 3.0]  # should be [-1, 3]! (Python chose relu once, at capture)
    assert g.kernel_names == ["relu"]


def test_reading_an_output_before_the_first_replay_reads_garbage() -> None:
    x = _cuda([1.0])
    g, y = _capture(lambda: x * 2)
    assert np.isnan(y.item())  # should be 2! (capture only records; nothing has run yet)
    g.replay()
    assert y.item() == 2.0


def test_a_captured_in_place_update_runs_again_at_every_replay() -> None:
    step = _cuda([0.0])
    g, _ = _capture(lambda: step.add_(1))
    g.replay()
    g.replay()
    g.replay()
    assert step.item() == 3.0  # should be 1? (each replay adds again: the state lives in `step`)


def test_out_of_order_replay_of_graphs_sharing_a_pool_clobbers_an_output() -> None:
    x = _cuda([1.0, 2.0])
    pool = torch.cuda.graph_pool_handle()
    g1, o1 = _capture(lambda: x + 1, pool)
    g2, o2 = _capture(lambda: (o1 * 2) + 1, pool)  # its temporary o1 * 2 is freed in the pool
    g3, o3 = _capture(lambda: x * 10, pool)  # and o3 is given that freed block
    g1.replay()
    g3.replay()
    g2.replay()
    assert o3.tolist() == [4.0, 6.0]  # should be [10, 20]! (g2 rewrote its temporary over o3)
    for g in (g1, g2, g3):  # the fix: replay in capture order (or clone o3 before g2 runs)
        g.replay()
    assert (o2.tolist(), o3.tolist()) == ([5.0, 7.0], [10.0, 20.0])


def test_a_batch_above_the_largest_captured_size_does_not_fit_the_static_buffer() -> None:
    static_x = torch.zeros(4, 2, device="cuda")  # sized for the largest capture: 4 rows
    _, y = _capture(lambda: static_x * 2)
    batch = torch.ones(6, 2, device="cuda")
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(4\) must match the size of "
                                           r"tensor b \(6\) at non-singleton dimension 0"):
        static_x[:6].copy_(batch)  # should fit? (the slice stops at 4 rows: run 6 rows eagerly)
    eager = batch * 2  # the fix: above the largest size, the runner falls back to eager
    assert eager.shape == (6, 2) and y.shape == (4, 2)
