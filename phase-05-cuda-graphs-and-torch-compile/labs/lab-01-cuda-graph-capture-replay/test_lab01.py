"""Lab 01: the graded tests. Every check that fails says three things on its first line: the build
step it grades, the rule it checks (with what it saw), and what to do, so the README's
`--tb=short` is all you need to go on.

`lab` is the graded module (conftest.py): the reference unless LAB_TARGET says otherwise
(lab_files.py). Oracles: plain numpy and the eager path. Launch counts are exact, from a counter
reset before every test.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest

W = np.random.default_rng(42).standard_normal((4, 4))  # (hidden, hidden), fixed weights

STEP1 = "Step 1 (LaunchCounter)"
STEP2 = "Step 2 (run_eager)"
CAPTURE = "Step 3 (GraphRunner.capture)"
REPLAY = "Step 3 (GraphRunner.replay)"
CALL = "Step 3 (GraphRunner.__call__)"
STEP4 = "Step 4 (PiecewiseGraphRunner)"
STRETCH1 = "Stretch 1 (padding)"
STRETCH2 = "Stretch 2 (fusion)"


def expect(ok: bool, step: str, rule: str, fix: str) -> None:
    """Fail unless `ok`: `step: rule (what was seen): fix`."""
    __tracebackhide__ = True
    if not ok:
        raise AssertionError(f"{step}: {rule}: {fix}")


def expect_values(got: object, want: np.ndarray, step: str, rule: str, fix: str) -> None:
    """`expect` for arrays: numpy's comparison follows the message's first line."""
    __tracebackhide__ = True
    try:
        np.testing.assert_allclose(np.asarray(got, dtype=float), want)
    except (AssertionError, TypeError, ValueError) as exc:
        detail = [line for line in str(exc).splitlines() if line.strip()][:4]
        raise AssertionError("\n".join([f"{step}: {rule}: {fix}", *detail])) from None


def _ops() -> list[Callable[[np.ndarray], np.ndarray]]:
    """Three ops; the middle one (a matmul) plays attention."""
    return [lambda x: x * 2.0, lambda x: x @ W, np.tanh]


def _numpy(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.tanh((x * 2.0) @ W))


def _n(lab: ModuleType) -> int:
    return int(lab.LaunchCounter.n)


# --- Step 1: LaunchCounter ------------------------------------------------------------------------

def test_step1_counter_bumps_and_resets(lab: ModuleType) -> None:
    keep = "keep starter.py's `from fake_torch import LaunchCounter` (step 1 is given)"
    lab.LaunchCounter.bump()
    lab.LaunchCounter.bump(3)
    lab.LaunchCounter.bump(0)
    expect(_n(lab) == 4, STEP1, f"bump(), bump(3) and bump(0) add up to 4, got {_n(lab)}", keep)
    lab.LaunchCounter.reset()
    expect(_n(lab) == 0, STEP1, f"reset() sets n back to 0, got {_n(lab)}", keep)


# --- Step 2: run_eager ----------------------------------------------------------------------------

def test_step2_eager_pays_one_launch_per_op_on_every_call(lab: ModuleType) -> None:
    rng = np.random.default_rng(0)
    for call in range(1, 4):
        x = rng.standard_normal((2, 4))
        expect_values(lab.run_eager(_ops(), x), _numpy(x), STEP2,
                      "run_eager returns the ops applied to x in order",
                      "feed each op the previous op's result and return the last one")
        expect(_n(lab) == 3 * call, STEP2,
               f"eager pays one launch per op on every call, so {call} call(s) of 3 ops cost "
               f"{3 * call}, got {_n(lab)}", "call LaunchCounter.bump(1) once after each op")


def test_step2_eager_launches_scale_with_the_number_of_ops(lab: ModuleType) -> None:
    ops = [lambda x: x + 1.0] * 5
    out = lab.run_eager(ops, np.zeros((2, 4)))
    expect_values(out, np.full((2, 4), 5.0), STEP2, "five `+ 1` ops turn 0 into 5",
                  "apply every op, each to the previous op's result")
    expect(_n(lab) == 5, STEP2, f"5 ops cost 5 launches, got {_n(lab)}",
           "call LaunchCounter.bump(1) once per op, not once per call")


# --- Step 3: GraphRunner --------------------------------------------------------------------------

def test_step3_capture_costs_one_launch_per_op_and_records_the_entry(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops())
    x = np.random.default_rng(1).standard_normal((2, 4))
    entry = runner.capture(x)  # capture
    expect(_n(lab) == 3, CAPTURE, f"a capture runs the 3 ops once, eagerly: 3 launches, got "
           f"{_n(lab)}", "run the ops with run_eager(self.ops, static_input)")
    seen = (tuple(entry.shape), entry.num_ops, runner.num_captured)
    expect(seen == ((2, 4), 3, 1), CAPTURE,
           f"the entry records shape (2, 4) and num_ops 3, and num_captured becomes 1; got "
           f"shape {entry.shape}, num_ops {entry.num_ops}, num_captured {runner.num_captured}",
           "store GraphEntry(x.shape, static_input, output, len(self.ops)) under the key "
           "(x.shape, x.dtype)")
    expect_values(entry.output, _numpy(x), CAPTURE, "entry.output holds the ops' answer for x",
                  "keep the result of running the ops as the entry's output buffer")


def test_step3_capture_then_each_replay_costs_exactly_one_launch(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops())
    runner(np.zeros((2, 4)))  # capture: 3 launches
    expect(_n(lab) == 3, CALL, f"the first call of a shape captures, one launch per op: 3, got "
           f"{_n(lab)}", "on an unseen key call capture(x) and return a copy of its output")
    for _ in range(5):
        before = _n(lab)
        runner(np.zeros((2, 4)))  # replay: 1 launch, whatever the number of ops
        expect(runner.num_captured == 1, f"{CALL}, Constraint 1",
               f"calls of one shape and dtype share one graph, got num_captured "
               f"{runner.num_captured}", "look the entry up by (x.shape, x.dtype) and capture "
               "only when it is missing")
        cost = _n(lab) - before
        expect(cost == 1, f"{REPLAY}, the win", f"a replay must cost 1 launch, got {cost}",
               "count the graph, not its ops: compute the ops without LaunchCounter, then "
               "LaunchCounter.bump(1) once")


def test_step3_capture_copies_x_into_its_own_static_buffer(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops())
    x = np.ones((2, 4))
    entry = runner.capture(x)
    x[...] = 99.0  # the caller reuses its array: the graph's buffer must not change with it
    own = not np.shares_memory(entry.static_input, x)
    expect(own and np.array_equal(entry.static_input, np.ones((2, 4))), f"{CAPTURE}, Constraint 2",
           "the static buffer is the graph's own array, but it changed when the caller wrote "
           "to x", "copy x into a new buffer, static_input = x.copy(): a graph reads its own "
           "fixed address")


def test_step3_replay_reads_the_new_input_through_the_static_buffer(lab: ModuleType) -> None:
    rng = np.random.default_rng(2)
    runner = lab.GraphRunner(_ops())
    entry = runner.capture(rng.standard_normal((2, 4)))  # capture
    buffer = entry.static_input
    for _ in range(5):  # fresh random inputs: replay equals numpy
        x = rng.standard_normal((2, 4))
        out = runner(x)
        expect(entry.static_input is buffer, f"{CALL}, Constraint 2",
               "the static buffer stays the same array across calls, but it was replaced",
               "write each new x into it with np.copyto(entry.static_input, x): a graph reads "
               "a fixed address")
        expect_values(buffer, x, f"{CALL}, Constraint 2",
                      "the new x must land in the static buffer before the replay",
                      "np.copyto(entry.static_input, x), then replay(entry)")
        expect_values(out, _numpy(x), CALL, "a call returns the answer for its own x",
                      "copy x into the static buffer, replay, return a copy of entry.output")
    buffer[...] = 7.0  # what a replay computes IS the buffer's content, not the last x
    expect_values(runner.replay(entry), _numpy(np.full((2, 4), 7.0)), REPLAY,
                  "a replay computes from entry.static_input (set to 7.0 here), not from the "
                  "last x", "run the ops on entry.static_input")
    expect(_n(lab) == 3 + 5 + 1, REPLAY, f"a capture (3) and 6 replays (1 each) cost 9 launches, "
           f"got {_n(lab)}", "count the graph, not its ops: one LaunchCounter.bump(1) per replay")


def test_step3_replay_writes_into_the_fixed_output_buffer(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops())
    entry = runner.capture(np.zeros((2, 4)))
    output = entry.output
    entry.static_input[...] = 0.5
    out = runner.replay(entry)
    expect(out is output and entry.output is output, REPLAY,
           "a replay writes into the entry's fixed output buffer and returns that very array, "
           "got another array", "np.copyto(entry.output, result), then return entry.output")
    expect_values(output, _numpy(np.full((2, 4), 0.5)), REPLAY,
                  "after a replay entry.output holds the replay's answer",
                  "np.copyto(entry.output, result)")


def test_step3_call_results_survive_the_next_replay(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops())
    x1, x2 = np.full((2, 4), 0.25), np.full((2, 4), -0.5)
    captured = runner(x1)  # capture
    replayed = runner(x1)  # replay
    runner(x2)  # another replay into the same output buffer
    for got in (captured, replayed):  # should still be x1's answer
        expect_values(got, _numpy(x1), CALL, "an array a call returned changed when the runner "
                      "ran again (the next replay overwrites entry.output)",
                      "return a copy, entry.output.copy(), after a capture and after a replay")


def test_step3_one_graph_per_shape_and_old_shapes_still_replay(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops())
    for batch in (1, 2, 3):
        runner(np.zeros((batch, 4)))  # a new shape: a new capture, 3 launches
        seen = (runner.num_captured, _n(lab))
        expect(seen == (batch, 3 * batch), f"{CALL}, Constraint 1",
               f"each new shape needs its own graph: after batches 1..{batch}, {batch} graph(s) "
               f"and {3 * batch} launches, got {seen[0]} and {seen[1]}",
               "key the entries by (x.shape, x.dtype) and capture on a key not seen before")
    lab.LaunchCounter.reset()
    x = np.full((1, 4), 0.5)  # the first shape still has its graph: a replay, one launch
    expect_values(runner(x), _numpy(x), CALL, "an old shape replays its own graph for the new x",
                  "keep every entry (a new shape adds one, it replaces none) and copy x into "
                  "its static buffer before the replay")
    expect((runner.num_captured, _n(lab)) == (3, 1), f"{CALL}, Constraint 1",
           f"a shape seen before replays for 1 launch, got {_n(lab)} launches and "
           f"{runner.num_captured} graphs", "keep every entry; a new shape adds one, it "
           "replaces none")


def test_step3_a_new_dtype_is_a_new_graph(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops())
    runner(np.zeros((2, 4), dtype=np.float64))
    runner(np.zeros((2, 4), dtype=np.float32))  # same shape, other dtype: capture again
    seen = (runner.num_captured, _n(lab))
    expect(seen == (2, 6), f"{CALL}, Constraint 1",
           f"the same shape in another dtype needs its own graph: 2 graphs and 6 launches, got "
           f"{seen[0]} and {seen[1]}", "key the entries by (x.shape, x.dtype), not by the "
           "shape alone")


# --- Step 4: PiecewiseGraphRunner -----------------------------------------------------------------

def _pieces_rule(flags: list[bool], want: int, got: int) -> str:
    return f"is_capturable {flags} makes {want} capturable piece(s), got num_graphs {got}"


GROUP = ("group consecutive ops with the same is_capturable(i) (itertools.groupby) and count "
         "the GraphRunner pieces")


def test_step4_split_at_the_middle_op_gives_two_graphs_and_three_launches(
        lab: ModuleType) -> None:
    runner = lab.PiecewiseGraphRunner(_ops(), is_capturable=lambda i: i != 1)
    expect(runner.num_graphs == 2, STEP4, _pieces_rule([True, False, True], 2, runner.num_graphs),
           GROUP)
    runner(np.zeros((2, 4)))  # capture both pieces: 1 + 1 eager + 1
    expect(_n(lab) == 3, STEP4, f"the first call captures each capturable piece (1 op each) and "
           f"runs the middle op eagerly: 3 launches, got {_n(lab)}",
           "call each GraphRunner piece and run_eager each plain op list, in order")
    lab.LaunchCounter.reset()
    x = np.random.default_rng(3).standard_normal((2, 4))
    expect_values(runner(x), _numpy(x), STEP4, "piecewise equals eager",
                  "thread x through the pieces in order, each one's output the next one's input")
    expect(_n(lab) == 3, STEP4, f"a call after capture costs 1 per capturable piece and 1 per "
           f"eager op: 3, got {_n(lab)}", "call each GraphRunner piece (its replay is one "
           "launch) and run_eager the others")


@pytest.mark.parametrize(("flags", "num_graphs", "launches_per_replay_call"), [
    ((True, True, True, True, True), 1, 1),
    ((True, True, False, True, True), 2, 3),
    ((True, False, True, False, True), 3, 5),
    ((False, True, True, True, False), 1, 3),
])
def test_step4_one_graph_per_run_of_capturable_ops(
        lab: ModuleType, flags: tuple[bool, ...], num_graphs: int,
        launches_per_replay_call: int) -> None:
    ops = [lambda x, k=k: x * 0.5 + k for k in range(len(flags))]
    runner = lab.PiecewiseGraphRunner(ops, is_capturable=lambda i: flags[i])
    expect(runner.num_graphs == num_graphs, STEP4,
           _pieces_rule(list(flags), num_graphs, runner.num_graphs), GROUP)
    x = np.arange(8.0).reshape(2, 4)
    runner(x)  # capture
    lab.LaunchCounter.reset()
    out = runner(x)
    expect(_n(lab) == launches_per_replay_call, STEP4,
           f"with is_capturable {list(flags)} a call after capture costs "
           f"{launches_per_replay_call} (1 per capturable piece, 1 per eager op), got {_n(lab)}",
           "call each GraphRunner piece and run_eager each plain op list")
    lab.LaunchCounter.reset()
    expect_values(out, lab.run_eager(ops, x), STEP4, "piecewise equals eager",
                  "thread x through the pieces in order")
    expect(_n(lab) == len(flags), STEP2, f"eager pays every op: {len(flags)}, got {_n(lab)}",
           "call LaunchCounter.bump(1) once per op")


def test_step4_piecewise_equals_eager_across_shapes(lab: ModuleType) -> None:
    rng = np.random.default_rng(4)
    runner = lab.PiecewiseGraphRunner(_ops(), is_capturable=lambda i: i != 1)
    for batch in (1, 3, 1, 5, 3):
        x = rng.standard_normal((batch, 4))
        expect_values(runner(x), _numpy(x), STEP4,
                      f"piecewise equals eager for every shape (batch {batch} here)",
                      "let each GraphRunner piece capture per shape, as in step 3")


# --- Stretch 1: padding to capture sizes ----------------------------------------------------------

def test_stretch1_padding_captures_4_graphs_for_batches_1_to_8_instead_of_8(
        lab: ModuleType) -> None:
    rng = np.random.default_rng(5)
    plain = lab.GraphRunner(_ops())
    padded = lab.GraphRunner(_ops(), capture_sizes=[1, 2, 4, 8])
    for batch in range(1, 9):
        x = rng.standard_normal((batch, 4))
        expect_values(plain(x), _numpy(x), CALL, "a call returns the answer for its own x",
                      "see the step 3 tests")
        out = padded(x)
        expect(out.shape == (batch, 4), STRETCH1, f"a batch of {batch} comes back with "
               f"{batch} rows, got shape {out.shape}", "slice the padded answer: out[:batch]")
        expect_values(out, _numpy(x), STRETCH1, "padded values equal eager's",
                      "zero-pad axis 0 up to the capture size, run that, return out[:batch]")
    seen = (plain.num_captured, padded.num_captured)
    expect(seen == (8, 4), STRETCH1, f"batches 1..8 need 8 graphs unpadded and 4 padded to "
           f"[1, 2, 4, 8], got {seen[0]} and {seen[1]}", "pad each batch up to the smallest "
           "capture size that holds it, then key by the padded shape")
    expect(padded.num_eager_fallbacks == 0, STRETCH1, f"no batch of 1..8 is above the largest "
           f"size, got num_eager_fallbacks {padded.num_eager_fallbacks}",
           "fall back to eager only above max(capture_sizes)")


def test_stretch1_batches_that_pad_to_the_same_size_share_one_graph(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops(), capture_sizes=[1, 2, 4, 8])
    runner(np.zeros((5, 4)))  # pads to 8: capture, 3 launches
    x = np.full((7, 4), 0.3)  # also pads to 8: a replay, 1 launch
    expect_values(runner(x), _numpy(x), STRETCH1, "padded values equal eager's",
                  "zero-pad axis 0 up to the capture size, run that, return out[:batch]")
    seen = (runner.num_captured, _n(lab))
    expect(seen == (1, 4), STRETCH1, f"batches 5 and 7 both pad to 8 and share its graph: 1 "
           f"graph, 3 + 1 launches, got {seen[0]} graph(s) and {seen[1]} launches",
           "key the entry by the padded shape, not the caller's")


def test_stretch1_capture_sizes_may_come_in_any_order(lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops(), capture_sizes=[8, 2, 4, 1, 4])
    graphs = []
    for batch in (3, 4, 5, 8, 1):  # pad to 4, 4, 8, 8, 1
        x = np.full((batch, 4), 0.1 * batch)
        expect_values(runner(x), _numpy(x), STRETCH1, "padded values equal eager's",
                      "zero-pad axis 0 up to the capture size, run that, return out[:batch]")
        graphs.append(runner.num_captured)
    expect(graphs == [1, 1, 2, 2, 3], STRETCH1,
           f"capture_sizes may come in any order, with repeats: [8, 2, 4, 1, 4] are the sizes 1, "
           f"2, 4, 8, so batches 3, 4, 5, 8, 1 pad to 4, 4, 8, 8, 1 and num_captured goes "
           f"1, 1, 2, 2, 3, got {graphs}", "keep the sizes sorted and unique, "
           "sorted(set(capture_sizes)), and pad to the smallest one that holds the batch")


def test_stretch1_a_batch_above_the_largest_size_runs_eagerly_and_is_counted(
        lab: ModuleType) -> None:
    runner = lab.GraphRunner(_ops(), capture_sizes=[1, 2, 4, 8])
    x = np.random.default_rng(6).standard_normal((9, 4))
    fix = "above max(capture_sizes) add 1 to num_eager_fallbacks and return run_eager(ops, x)"
    expect_values(runner(x), _numpy(x), STRETCH1, "a batch of 9 runs eagerly", fix)
    for calls in (1, 2):
        seen = (runner.num_eager_fallbacks, runner.num_captured, _n(lab))
        expect(seen == (calls, 0, 3 * calls), STRETCH1,
               f"a batch of 9 is above the largest size 8: after {calls} call(s), "
               f"{calls} fallback(s), 0 graphs and {3 * calls} launches, got {seen}", fix)
        if calls == 1:
            runner(x)  # still eager: nothing was captured for it


def test_stretch1_piecewise_counts_the_fallbacks_of_each_graph(lab: ModuleType) -> None:
    runner = lab.PiecewiseGraphRunner(_ops(), is_capturable=lambda i: i != 1, capture_sizes=[1, 2])
    x = np.random.default_rng(7).standard_normal((3, 4))
    expect_values(runner(x), _numpy(x), STRETCH1, "piecewise equals eager above the sizes",
                  "pass capture_sizes to each GraphRunner piece")
    seen = (runner.num_graphs, runner.num_eager_fallbacks, _n(lab))
    expect(seen == (2, 2, 3), STRETCH1, f"a batch of 3 above sizes [1, 2] falls back in both "
           f"capturable pieces: (num_graphs, num_eager_fallbacks, launches) (2, 2, 3), got {seen}",
           "pass capture_sizes to each GraphRunner piece and sum their num_eager_fallbacks")


# --- Stretch 2: fusion ----------------------------------------------------------------------------

def _elementwise_ops(lab: ModuleType) -> list[Callable[[np.ndarray], np.ndarray]]:
    ew = lab.elementwise
    return [ew(lambda x: x + 1.0), ew(lambda x: x * 2.0), lambda x: x @ W, ew(np.tanh),
            ew(lambda x: x * 0.5)]


def test_stretch2_fusion_lowers_eager_launches_with_identical_values(lab: ModuleType) -> None:
    ops = _elementwise_ops(lab)
    fused = lab.fuse_elementwise(ops)
    expect((len(ops), len(fused)) == (5, 3), STRETCH2, f"[ew, ew, plain, ew, ew] fuses into 3 "
           f"ops, got {len(fused)}", "merge each run of adjacent ElementwiseOps into one")
    x = np.random.default_rng(8).standard_normal((2, 4))
    expected = lab.run_eager(ops, x)
    lab.LaunchCounter.reset()
    got = lab.run_eager(fused, x)
    expect(np.array_equal(got, expected), STRETCH2, "fused ops compute exactly what the "
           "unfused ones do", "run the parts of an ElementwiseOp in order")
    expect(_n(lab) == 3, STRETCH2, f"3 fused ops cost 3 eager launches, got {_n(lab)}",
           "an ElementwiseOp is one op: running it is one launch")


def test_stretch2_fusion_lowers_the_cost_of_a_capture(lab: ModuleType) -> None:
    runner = lab.GraphRunner(lab.fuse_elementwise(_elementwise_ops(lab)))
    runner.capture(np.zeros((2, 4)))
    expect(_n(lab) == 3, STRETCH2, f"a capture of 3 fused ops costs 3 launches, got {_n(lab)}",
           "fuse before capturing: one launch per fused op")


def test_stretch2_fusion_keeps_order_and_never_crosses_a_plain_op(lab: ModuleType) -> None:
    ew = lab.elementwise
    ops = [ew(lambda x: x + 1.0), ew(lambda x: x * 2.0), lambda x: x - 3.0, ew(np.negative)]
    fused = lab.fuse_elementwise(ops)
    expect(len(fused) == 3 and len(ops) == 4, STRETCH2, f"[ew, ew, plain, ew] fuses into 3 ops "
           f"and the input list keeps its 4, got {len(fused)} and {len(ops)}",
           "build a new list; a plain op ends a run")
    first = fused[0]
    expect(isinstance(first, lab.ElementwiseOp) and len(first.parts) == 2, STRETCH2,
           "the first two ops become one ElementwiseOp of 2 parts", "ElementwiseOp(last.parts + "
           "op.parts) for each elementwise op after an elementwise op")
    expect_values(first(np.array([1.0])), np.array([4.0]), STRETCH2,
                  "(1 + 1) * 2 is 4: parts run in order", "apply self.parts first to last")


def test_stretch2_elementwise_wraps_one_function(lab: ModuleType) -> None:
    op = lab.elementwise(np.tanh)
    expect(isinstance(op, lab.ElementwiseOp) and op.parts == (np.tanh,), STRETCH2,
           "elementwise(fn) is ElementwiseOp((fn,))", "return ElementwiseOp((fn,))")
    expect_values(op(np.array([0.5])), np.tanh([0.5]), STRETCH2, "an ElementwiseOp applies "
                  "its parts", "apply each of self.parts to x in order")
    expect(_n(lab) == 0, STRETCH2, f"calling an op is not a launch, got {_n(lab)}",
           "count launches in run_eager (and replay), never inside an op")
