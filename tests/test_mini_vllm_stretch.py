"""The mini-build's stretch features and bad input, and the main job's table.

Oracle: `run_eager` on the unpadded, unfused input over fresh random inputs, plus exact launch
counts derived from the number of ops (eager: one per op per call; replay: one per graph).
"""

from __future__ import annotations

import bisect
import importlib
import itertools
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_vllm.cudagraph import (
    ElementwiseOp,
    GraphRunner,
    LaunchCounter,
    Op,
    PiecewiseGraphRunner,
    elementwise,
    fuse_elementwise,
    run_eager,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
HIDDEN = 4
SIZES = [1, 2, 4, 8]
_W = np.random.default_rng(1234).standard_normal((HIDDEN, HIDDEN))


def _row_ops() -> list[Op]:
    """Four row-independent ops (each output row depends only on its input row)."""
    return [
        lambda x: x + 1.0,
        lambda x: x @ _W,  # (B, H) @ (H, H) -> (B, H)
        np.tanh,
        lambda x: x - x.mean(axis=-1, keepdims=True),
    ]


@pytest.fixture(autouse=True)
def _fresh_counter() -> Iterator[None]:
    LaunchCounter.reset()
    yield
    LaunchCounter.reset()


# --- padding: capture_sizes -------------------------------------------------------------------

def test_batches_1_to_8_capture_8_graphs_unpadded_and_4_padded() -> None:
    unpadded, padded = GraphRunner(_row_ops()), GraphRunner(_row_ops(), capture_sizes=SIZES)
    for batch in range(1, 9):
        unpadded(np.ones((batch, HIDDEN)))
        padded(np.ones((batch, HIDDEN)))
    assert unpadded.num_captured == 8
    assert padded.num_captured == 4
    assert sorted(shape for shape, _ in padded.entries) == [(s, HIDDEN) for s in SIZES]
    assert padded.num_eager_fallbacks == 0


@pytest.mark.parametrize(("batch", "size"), [(1, 1), (2, 2), (3, 4), (4, 4), (5, 8), (7, 8)])
def test_batch_is_padded_to_the_smallest_capture_size_that_holds_it(batch: int, size: int) -> None:
    runner = GraphRunner(_row_ops(), capture_sizes=SIZES)
    runner(np.ones((batch, HIDDEN)))
    assert list(runner.entries) == [((size, HIDDEN), np.dtype(np.float64))]
    entry = runner.entries[((size, HIDDEN), np.dtype(np.float64))]
    np.testing.assert_array_equal(entry.static_input[batch:], 0.0)  # padding rows are zeros
    np.testing.assert_array_equal(entry.static_input[:batch], 1.0)


def test_padded_results_equal_eager_row_for_row() -> None:
    rng = np.random.default_rng(0)
    runner = GraphRunner(_row_ops(), capture_sizes=SIZES)
    for batch in [3, 3, 5, 1, 8, 6, 2, 7, 4, 5]:  # captures and replays, fresh inputs each call
        x = rng.standard_normal((batch, HIDDEN))
        out = runner(x)
        assert out.shape == (batch, HIDDEN)  # sliced back to the real batch
        np.testing.assert_allclose(out, run_eager(_row_ops(), x))


def test_padded_launches_are_len_ops_at_capture_then_one_per_replay() -> None:
    ops = _row_ops()
    runner = GraphRunner(ops, capture_sizes=SIZES)
    runner(np.ones((3, HIDDEN)))  # capture the size-4 graph
    assert LaunchCounter.n == len(ops)
    runner(np.ones((4, HIDDEN)))  # replay: 3 and 4 share the size-4 graph
    runner(np.ones((3, HIDDEN)))  # replay
    assert LaunchCounter.n == len(ops) + 2
    assert runner.num_captured == 1


def test_batch_above_the_largest_capture_size_runs_eagerly_and_is_counted() -> None:
    rng = np.random.default_rng(1)
    ops = _row_ops()
    runner = GraphRunner(ops, capture_sizes=SIZES)
    xs = [rng.standard_normal((batch, HIDDEN)) for batch in (9, 10, 16)]
    expected = [run_eager(ops, x) for x in xs]  # the oracle, before counting starts
    runner(np.ones((2, HIDDEN)))  # capture the size-2 graph
    LaunchCounter.reset()
    for call, (x, want) in enumerate(zip(xs, expected, strict=True), start=1):
        np.testing.assert_allclose(runner(x), want)
        assert LaunchCounter.n == len(ops) * call  # the fallback is eager: one per op per call
        assert runner.num_eager_fallbacks == call
    assert runner.num_captured == 1  # the fallback captured nothing
    runner(np.ones((2, HIDDEN)))  # the old graph still replays: one launch
    assert LaunchCounter.n == len(ops) * 3 + 1
    assert runner.num_eager_fallbacks == 3


def test_piecewise_takes_capture_sizes() -> None:
    rng = np.random.default_rng(2)
    ops = _row_ops()
    runner = PiecewiseGraphRunner(ops, is_capturable=lambda i: i != 1, capture_sizes=SIZES)
    assert runner.num_graphs == 2
    for batch in range(1, 9):
        x = rng.standard_normal((batch, HIDDEN))
        np.testing.assert_allclose(runner(x), run_eager(ops, x))
    graphs = [p for p in runner.pieces if isinstance(p, GraphRunner)]
    assert [g.num_captured for g in graphs] == [4, 4]  # padded: 1, 2, 4, 8 in each piece
    assert runner.num_eager_fallbacks == 0
    LaunchCounter.reset()
    runner(rng.standard_normal((6, HIDDEN)))  # replay, eager op 1, replay
    assert LaunchCounter.n == 3
    LaunchCounter.reset()
    x = rng.standard_normal((9, HIDDEN))
    out = runner(x)  # too large for both graphs: every op eager
    assert LaunchCounter.n == len(ops)
    assert runner.num_eager_fallbacks == 2  # one per capturable piece
    assert [g.num_captured for g in graphs] == [4, 4]
    np.testing.assert_allclose(out, run_eager(ops, x))


def test_a_float64_input_after_a_float32_capture_gets_its_own_graph_and_is_not_cast() -> None:
    ops: list[Op] = [lambda x: x / 3.0, lambda x: x + 1e-9]  # float32 would lose the 1e-9
    runner = GraphRunner(ops)
    x32 = np.full((2, 3), 1.0, dtype=np.float32)
    out32 = runner(x32)
    assert out32.dtype == np.float32
    x64 = np.full((2, 3), 1.0, dtype=np.float64)
    out64 = runner(x64)  # same shape, new dtype: a new capture, not a float32 replay
    assert runner.num_captured == 2
    assert LaunchCounter.n == 2 * len(ops)
    assert out64.dtype == np.float64
    np.testing.assert_array_equal(out64, run_eager(ops, x64))
    assert not np.array_equal(out64, out32.astype(np.float64))
    LaunchCounter.reset()
    np.testing.assert_array_equal(runner(x32), out32)  # both graphs replay: one launch each
    np.testing.assert_array_equal(runner(x64), out64)
    assert LaunchCounter.n == 2


def test_dtype_keying_holds_with_padding_too() -> None:
    runner = GraphRunner([lambda x: x + 1e-9], capture_sizes=SIZES)
    runner(np.zeros((3, 2), dtype=np.float32))
    out = runner(np.zeros((3, 2), dtype=np.float64))
    assert runner.num_captured == 2
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.full((3, 2), 1e-9))


@pytest.mark.parametrize("capture_sizes", [None, SIZES])
def test_returned_arrays_stay_valid_after_later_calls(capture_sizes: list[int] | None) -> None:
    rng = np.random.default_rng(3)
    runner = GraphRunner(_row_ops(), capture_sizes=capture_sizes)
    inputs = [rng.standard_normal((3, HIDDEN)) for _ in range(4)]
    outputs = [runner(x) for x in inputs]  # one capture, then replays of the same graph
    outputs.append(runner(rng.standard_normal((9, HIDDEN))))  # a new shape (or a fallback)
    for x, out in zip(inputs, outputs, strict=False):  # not overwritten by the next replay
        np.testing.assert_allclose(out, run_eager(_row_ops(), x))


@pytest.mark.parametrize("capture_sizes", [None, SIZES])
def test_an_op_that_changes_shape_is_legal(capture_sizes: list[int] | None) -> None:
    rng = np.random.default_rng(4)
    project = rng.standard_normal((HIDDEN, 3))
    ops: list[Op] = [lambda x: x @ project, lambda x: x.sum(axis=-1)]  # (B, 4) -> (B, 3) -> (B,)
    runner = GraphRunner(ops, capture_sizes=capture_sizes)
    for batch in (3, 3, 2):
        x = rng.standard_normal((batch, HIDDEN))
        out = runner(x)
        assert out.shape == (batch,)
        np.testing.assert_allclose(out, run_eager(ops, x))


def test_padding_rejects_an_op_that_drops_the_batch_dimension() -> None:
    runner = GraphRunner([lambda x: x.sum()], capture_sizes=SIZES)
    with pytest.raises(ValueError, match="keep the batch dimension"):
        runner(np.ones((3, 2)))
    assert runner.num_captured == 0  # the bad capture is not kept


# The autouse counter reset runs once per test, not per example; this test reads no counts.
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    capture_sizes=st.lists(st.integers(1, 12), min_size=1, max_size=5, unique=True).map(sorted),
    batches=st.lists(st.integers(1, 16), min_size=1, max_size=12),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_padded_runner_equals_eager_and_captures_one_graph_per_padded_size(
    capture_sizes: list[int], batches: list[int], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    ops = _row_ops()
    runner = GraphRunner(ops, capture_sizes=capture_sizes)
    padded_seen: set[int] = set()
    num_over = 0
    for batch in batches:
        x = rng.standard_normal((batch, HIDDEN))
        np.testing.assert_allclose(runner(x), run_eager(ops, x))
        i = bisect.bisect_left(capture_sizes, batch)
        if i < len(capture_sizes):
            padded_seen.add(capture_sizes[i])
        else:
            num_over += 1
    assert runner.num_captured == len(padded_seen)
    assert {shape[0] for shape, _ in runner.entries} == padded_seen
    assert runner.num_eager_fallbacks == num_over


# --- fusion: elementwise + fuse_elementwise ---------------------------------------------------

def _plus1(x: np.ndarray) -> np.ndarray:
    return x + 1.0


def _times2(x: np.ndarray) -> np.ndarray:
    return x * 2.0


def test_elementwise_marks_an_op_that_still_computes_the_same() -> None:
    op = elementwise(_plus1)
    assert isinstance(op, ElementwiseOp)
    assert op.parts == (_plus1,)
    np.testing.assert_array_equal(op(np.arange(3.0)), [1.0, 2.0, 3.0])


def test_plus1_then_times2_fuse_into_one_launch_with_the_same_values() -> None:
    ops: list[Op] = [elementwise(_plus1), elementwise(_times2)]
    fused = fuse_elementwise(ops)
    assert len(fused) == 1
    assert isinstance(fused[0], ElementwiseOp)
    assert fused[0].parts == (_plus1, _times2)  # order kept: (x + 1) * 2, not x * 2 + 1
    x = np.arange(4.0)
    np.testing.assert_array_equal(run_eager(fused, x), (x + 1.0) * 2.0)
    assert LaunchCounter.n == 1
    LaunchCounter.reset()
    np.testing.assert_array_equal(run_eager(ops, x), (x + 1.0) * 2.0)
    assert LaunchCounter.n == 2


def test_non_elementwise_ops_stay_in_place_and_split_runs() -> None:
    def matmul(x: np.ndarray) -> np.ndarray:
        return x @ _W

    ops: list[Op] = [elementwise(_plus1), elementwise(_times2), matmul, elementwise(np.tanh),
                     elementwise(_plus1), np.exp, elementwise(_times2)]
    fused = fuse_elementwise(ops)
    assert len(fused) == 5
    assert fused[1] is matmul
    assert fused[3] is np.exp
    assert [f.parts for f in fused if isinstance(f, ElementwiseOp)] == [
        (_plus1, _times2), (np.tanh, _plus1), (_times2,)]
    assert len(ops) == 7  # the input list is left alone
    x = np.random.default_rng(5).standard_normal((3, HIDDEN))
    np.testing.assert_array_equal(run_eager(fused, x), run_eager(ops, x))


def test_plain_ops_are_never_fused() -> None:
    ops: list[Op] = [_plus1, _times2, np.tanh]
    assert fuse_elementwise(ops) == ops


def test_fusing_twice_is_idempotent() -> None:
    ops: list[Op] = [elementwise(_plus1), elementwise(_times2), np.tanh, elementwise(_plus1)]
    once = fuse_elementwise(ops)
    twice = fuse_elementwise(once)
    assert twice == once
    assert len(twice) == 3
    x = np.linspace(-1.0, 1.0, 8)
    np.testing.assert_array_equal(run_eager(twice, x), run_eager(ops, x))


def _layer() -> tuple[list[Op], Op]:
    def attention(x: np.ndarray) -> np.ndarray:
        centred: np.ndarray = x - x.mean(axis=-1, keepdims=True)
        return centred

    ops: list[Op] = [elementwise(_plus1), elementwise(_times2), attention,
                     elementwise(np.tanh), elementwise(_times2), elementwise(_plus1)]
    return ops, attention


def test_fusion_lowers_eager_launches() -> None:
    ops, _ = _layer()
    fused = fuse_elementwise(ops)
    x = np.random.default_rng(6).standard_normal((2, HIDDEN))
    expected = run_eager(ops, x)
    assert LaunchCounter.n == 6
    LaunchCounter.reset()
    np.testing.assert_array_equal(run_eager(fused, x), expected)
    assert LaunchCounter.n == 3  # [+1 *2] attention [tanh *2 +1]


def test_fusion_lowers_launches_inside_eager_pieces() -> None:
    # Only attention is captured, so the elementwise runs are the eager pieces.
    ops, attention = _layer()
    fused = fuse_elementwise(ops)
    plain = PiecewiseGraphRunner(ops, is_capturable=lambda i: ops[i] is attention)
    fast = PiecewiseGraphRunner(fused, is_capturable=lambda i: fused[i] is attention)
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((2, HIDDEN)) for _ in range(3)]
    expected = [run_eager(ops, x) for x in xs]  # the unfused oracle, before counting starts
    for runner, per_call in ((plain, 2 + 1 + 3), (fast, 1 + 1 + 1)):
        LaunchCounter.reset()
        for call, (x, want) in enumerate(zip(xs, expected, strict=True), start=1):
            np.testing.assert_array_equal(runner(x), want)
            assert LaunchCounter.n == per_call * call  # capturing attention costs one launch too


def test_fusion_lowers_capture_launches_inside_captured_pieces() -> None:
    # Everything but attention is captured: fusion shrinks the capture, a replay is one launch.
    ops, attention = _layer()
    fused = fuse_elementwise(ops)
    plain = PiecewiseGraphRunner(ops, is_capturable=lambda i: ops[i] is not attention)
    fast = PiecewiseGraphRunner(fused, is_capturable=lambda i: fused[i] is not attention)
    rng = np.random.default_rng(8)
    xs = [rng.standard_normal((2, HIDDEN)) for _ in range(2)]
    expected = [run_eager(ops, x) for x in xs]  # the unfused oracle, before counting starts
    for runner, at_capture in ((plain, 6), (fast, 3)):
        LaunchCounter.reset()
        np.testing.assert_allclose(runner(xs[0]), expected[0])
        assert LaunchCounter.n == at_capture  # capture runs each (fused) op once, + attention
        LaunchCounter.reset()
        np.testing.assert_allclose(runner(xs[1]), expected[1])
        assert LaunchCounter.n == 3  # replay, eager attention, replay


# --- bad input: a specific exception naming the argument and what was expected ----------------

Build = Callable[[Any], object]

_CONSTRUCTORS: dict[str, Build] = {
    "GraphRunner": lambda ops: GraphRunner(ops),
    "PiecewiseGraphRunner": lambda ops: PiecewiseGraphRunner(ops, lambda i: True),
    "run_eager": lambda ops: run_eager(ops, np.zeros(2)),
    "fuse_elementwise": lambda ops: fuse_elementwise(ops),
}


@pytest.mark.parametrize("build", list(_CONSTRUCTORS.values()), ids=list(_CONSTRUCTORS))
@pytest.mark.parametrize(
    ("ops", "error", "match"),
    [
        ([], ValueError, r"ops must be a non-empty list of callables, got an empty list"),
        ([np.tanh, 3], TypeError, r"ops\[1\] must be callable, got int"),
        (np.tanh, TypeError, r"ops must be a list of callables, got ufunc"),
        ("tanh", TypeError, r"ops must be a list of callables, got str"),
        ({np.tanh}, TypeError, r"ops must be a list of callables, got set"),
    ],
    ids=["empty", "non-callable", "a-bare-callable", "str", "set"],
)
def test_bad_ops_are_rejected(build: Build, ops: object, error: type[Exception],
                              match: str) -> None:
    with pytest.raises(error, match=match):
        build(ops)


@pytest.mark.parametrize("flag", [1, "yes", None])
def test_is_capturable_must_return_a_bool(flag: object) -> None:
    with pytest.raises(TypeError, match=r"is_capturable\(0\) must return a bool, got "
                       + type(flag).__name__):
        PiecewiseGraphRunner([np.tanh], lambda i: flag)  # type: ignore[arg-type, return-value]


def test_is_capturable_may_return_a_numpy_bool() -> None:
    runner = PiecewiseGraphRunner([np.tanh, np.exp], lambda i: np.bool_(i == 0))  # type: ignore[arg-type, return-value]
    assert runner.num_graphs == 1


@pytest.mark.parametrize(
    ("sizes", "error", "match"),
    [
        ([], ValueError, r"capture_sizes must be a non-empty list of positive ints, got \[\]"),
        ([0, 1, 2], ValueError, r"capture_sizes must hold positive ints, got 0"),
        ([-2, 1], ValueError, r"capture_sizes must hold positive ints, got -2"),
        ([1, 2.0], TypeError, r"capture_sizes must hold positive ints, got 2\.0"),
        ([1, "2"], TypeError, r"capture_sizes must hold positive ints, got '2'"),
        ([True, 2], TypeError, r"capture_sizes must hold positive ints, got True"),
        (8, TypeError, r"capture_sizes must be a list of ints, got int"),
        ("1248", TypeError, r"capture_sizes must be a list of ints, got str"),
    ],
    ids=["empty", "zero", "negative", "float", "str-item", "bool", "int", "str"],
)
@pytest.mark.parametrize("runner_cls", ["GraphRunner", "PiecewiseGraphRunner"])
def test_bad_capture_sizes_are_rejected(sizes: object, error: type[Exception], match: str,
                                        runner_cls: str) -> None:
    with pytest.raises(error, match=match):
        if runner_cls == "GraphRunner":
            GraphRunner([np.tanh], capture_sizes=sizes)  # type: ignore[arg-type]
        else:
            PiecewiseGraphRunner([np.tanh], lambda i: True, capture_sizes=sizes)  # type: ignore[arg-type]


@pytest.mark.parametrize("sizes", [[4, 2, 8, 1], [8, 1, 2, 4, 4], [1, 2, 2, 4, 8]])
def test_capture_sizes_may_come_in_any_order_with_repeats(sizes: list[int]) -> None:
    """One answer, as vLLM's config gives it: the runner keeps the sizes sorted and unique, and
    pads exactly as with [1, 2, 4, 8]."""
    runner = GraphRunner(_row_ops(), capture_sizes=sizes)
    assert runner.capture_sizes == SIZES
    for batch in (3, 5, 1):
        runner(np.ones((batch, HIDDEN)))
    assert sorted(shape[0] for shape, _ in runner.entries) == [1, 4, 8]


def test_a_0d_input_is_rejected_when_capture_sizes_are_set() -> None:
    runner = GraphRunner([np.tanh], capture_sizes=SIZES)
    with pytest.raises(ValueError, match=r"needs an input with a batch dimension; got a 0-d array"):
        runner(np.array(1.0))
    assert runner.num_captured == 0
    assert LaunchCounter.n == 0


def test_a_0d_input_is_fine_without_capture_sizes() -> None:
    runner = GraphRunner([np.tanh])
    assert runner(np.array(0.5)) == pytest.approx(np.tanh(0.5))
    assert runner.num_captured == 1


@pytest.mark.parametrize("capture_sizes", [None, SIZES])
@pytest.mark.parametrize("x", [[1.0, 2.0], 3.0, (1.0,)], ids=["list", "float", "tuple"])
def test_a_non_ndarray_input_is_rejected(x: object, capture_sizes: list[int] | None) -> None:
    runner = GraphRunner([np.tanh], capture_sizes=capture_sizes)
    with pytest.raises(TypeError, match=r"x must be a numpy\.ndarray, got " + type(x).__name__):
        runner(x)  # type: ignore[arg-type]
    assert runner.num_captured == 0


def test_elementwise_needs_a_callable() -> None:
    with pytest.raises(TypeError, match=r"elementwise\(fn\): fn must be callable, got int"):
        elementwise(3)  # type: ignore[arg-type]


# --- thread safety ----------------------------------------------------------------------------

def test_bumps_from_8_threads_add_up_exactly() -> None:
    num_threads, num_bumps = 8, 10_000
    start = threading.Barrier(num_threads)

    def bump_many() -> None:
        start.wait()  # all threads bump at once
        for _ in range(num_bumps):
            LaunchCounter.bump()

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so a lost update would show
    try:
        threads = [threading.Thread(target=bump_many) for _ in range(num_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old_interval)
    assert LaunchCounter.n == num_threads * num_bumps == 80_000


# --- the main job: `python -m mini_vllm` ------------------------------------------------------

def _table() -> dict[str, tuple[str, int]]:
    """{mode: (cost, launches-or-graphs)} parsed from the fixed-width table the job prints."""
    done = subprocess.run([sys.executable, "-m", "mini_vllm"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    rows: dict[str, tuple[str, int]] = {}
    for line in done.stdout.splitlines():
        match = re.fullmatch(r"(.{29} )(.{26})?([ \d]{8}\d)", line)  # mode, cost, count
        if match:
            rows[match.group(1).strip()] = ((match.group(2) or "").strip(), int(match.group(3)))
    return rows


def test_main_job_prints_the_expected_numbers() -> None:
    main = importlib.import_module("mini_vllm.__main__")
    ops = main.toy_model()
    num_ops, num_calls = len(ops), main.NUM_CALLS
    capturable = [i != 3 for i in range(num_ops)]  # op 3 plays attention
    num_pieces = 1 + sum(a != b for a, b in itertools.pairwise(capturable))
    num_fused = len(fuse_elementwise(ops))
    expected = {
        "eager": (f"{num_ops} per call", num_ops * num_calls),
        "graph": (f"{num_ops} at capture, then 1", num_ops + (num_calls - 1)),
        "piecewise (attention eager)": (f"capture, then {num_pieces} per call",
                                        num_ops + num_pieces * (num_calls - 1)),
        "fused, eager": (f"{num_fused} per call", num_fused * num_calls),
        "without padding": ("", 8),  # batches 1..8: eight shapes
        "capture_sizes=[1, 2, 4, 8]": ("", len({1, 2, 4, 8})),
    }
    # The numbers the README promises, pinned so the derivation above cannot drift with them.
    assert {mode: n for mode, (_, n) in expected.items()} == {
        "eager": 600, "graph": 105, "piecewise (attention eager)": 303, "fused, eager": 400,
        "without padding": 8, "capture_sizes=[1, 2, 4, 8]": 4}
    assert _table() == expected
