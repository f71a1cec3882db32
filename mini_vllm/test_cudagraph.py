"""The reference suite for mini_vllm/cudagraph.py: seven tests, one behaviour each.

Oracle: the eager path (`run_eager`) and plain numpy over fresh random inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

from mini_vllm.cudagraph import GraphRunner, LaunchCounter, Op, PiecewiseGraphRunner, run_eager


def _ops() -> list[Op]:  # three ops; the middle one (a matmul) plays attention
    return [lambda x: x + 1.0, lambda x: x @ np.ones((x.shape[-1], x.shape[-1])), np.tanh]


def _numpy(x: np.ndarray) -> np.ndarray:
    return np.tanh((x + 1.0) @ np.ones((x.shape[-1], x.shape[-1])))


@pytest.fixture(autouse=True)
def _fresh_counter() -> None:
    LaunchCounter.reset()


def test_counter_reset_and_bump() -> None:
    LaunchCounter.bump()
    LaunchCounter.bump(3)
    assert LaunchCounter.n == 4
    LaunchCounter.reset()
    assert LaunchCounter.n == 0


def test_eager_pays_one_launch_per_op_per_call() -> None:
    rng = np.random.default_rng(0)
    for call in range(1, 4):
        x = rng.standard_normal((2, 4))
        np.testing.assert_allclose(run_eager(_ops(), x), _numpy(x))
        assert LaunchCounter.n == 3 * call


def test_capture_costs_len_ops_then_each_replay_one() -> None:
    runner = GraphRunner(_ops())
    runner(np.zeros((2, 4)))  # capture
    assert LaunchCounter.n == 3
    for replay in range(1, 6):
        runner(np.zeros((2, 4)))
        assert LaunchCounter.n == 3 + replay


def test_replay_reads_the_new_input_through_the_static_buffer() -> None:
    rng = np.random.default_rng(1)
    runner = GraphRunner(_ops())
    runner(rng.standard_normal((2, 4)))  # capture
    for _ in range(5):  # fresh random inputs: replay equals eager
        x = rng.standard_normal((2, 4))
        np.testing.assert_allclose(runner(x), _numpy(x))
    entry = runner.entries[((2, 4), np.dtype(np.float64))]
    entry.static_input[...] = 7.0  # what a replay computes IS the static buffer's content
    np.testing.assert_allclose(runner.replay(entry), _numpy(np.full((2, 4), 7.0)))
    assert LaunchCounter.n == 3 + 5 + 1


def test_one_graph_per_shape_and_old_shapes_still_replay() -> None:
    runner = GraphRunner(_ops())
    for batch in (1, 2, 3):
        runner(np.zeros((batch, 4)))
        assert runner.num_captured == batch
    LaunchCounter.reset()
    x = np.full((1, 4), 0.5)  # the first shape still has its graph: a replay, one launch
    np.testing.assert_allclose(runner(x), _numpy(x))
    assert (runner.num_captured, LaunchCounter.n) == (3, 1)


def test_split_at_the_middle_op_gives_two_graphs_and_three_launches() -> None:
    runner = PiecewiseGraphRunner(_ops(), is_capturable=lambda i: i != 1)
    assert runner.num_graphs == 2
    runner(np.zeros((2, 4)))  # capture both graphs: 1 + 1 eager + 1
    LaunchCounter.reset()
    runner(np.zeros((2, 4)))
    assert LaunchCounter.n == 3  # replay, eager middle op, replay


def test_piecewise_equals_eager_across_shapes() -> None:
    rng = np.random.default_rng(2)
    runner = PiecewiseGraphRunner(_ops(), is_capturable=lambda i: i != 1)
    for batch in (1, 3, 1, 5, 3):
        x = rng.standard_normal((batch, 4))
        np.testing.assert_allclose(runner(x), run_eager(_ops(), x))
