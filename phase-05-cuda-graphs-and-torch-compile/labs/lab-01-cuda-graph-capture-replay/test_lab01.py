"""Lab 01 tests: the graded behaviour tests, and the starter's contract.

Which file is graded is chosen by one switch, the environment variable LAB_TARGET:
  - unset (or empty): the reference, `mini_vllm.cudagraph` (so the suite passes out of the box);
  - `LAB_TARGET=starter`: `starter.py` beside this file (your working copy);
  - `LAB_TARGET=/path/to/your_file.py`: any file of yours with the same public API.
The contract tests (same names, same signatures, NotImplementedError hints naming their step)
check the untouched starter against the reference; they skip while the switch is on.

Oracles: plain numpy and the eager path. Launch counts are asserted exactly, from a counter reset
before every test.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import fake_torch
import mini_vllm.cudagraph as reference

LAB_DIR = Path(__file__).resolve().parent
STARTER_PATH = LAB_DIR / "starter.py"


def _load(path: Path, name: str) -> ModuleType:
    """Import the file at `path` as a module called `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def _resolve_target() -> tuple[str, ModuleType]:
    raw = os.environ.get("LAB_TARGET", "").strip()
    if not raw:
        return "reference (mini_vllm.cudagraph)", reference
    path = STARTER_PATH if raw == "starter" else Path(raw).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"LAB_TARGET={raw!r}: expected 'starter' or the path of your .py "
                                f"file, but {path} is not a file")
    return str(path), _load(path, "lab01_target")


TARGET_NAME, T = _resolve_target()
SWITCH_ON = T is not reference
starter = T if T.__file__ == str(STARTER_PATH) else _load(STARTER_PATH, "lab01_starter")

needs_untouched_starter = pytest.mark.skipif(
    SWITCH_ON, reason=f"LAB_TARGET is set (grading {TARGET_NAME}); the starter contract is "
                      "checked only when LAB_TARGET is unset")

W = np.random.default_rng(42).standard_normal((4, 4))  # (hidden, hidden), fixed weights


def _ops() -> list[Callable[[np.ndarray], np.ndarray]]:
    """Three ops; the middle one (a matmul) plays attention."""
    return [lambda x: x * 2.0, lambda x: x @ W, np.tanh]


def _numpy(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.tanh((x * 2.0) @ W))


@pytest.fixture(autouse=True)
def _fresh_counter() -> None:
    T.LaunchCounter.reset()


def _n() -> int:
    return int(T.LaunchCounter.n)


# --- Step 1: LaunchCounter ------------------------------------------------------------------------

def test_step1_counter_bumps_and_resets() -> None:
    T.LaunchCounter.bump()
    T.LaunchCounter.bump(3)
    T.LaunchCounter.bump(0)
    assert _n() == 4
    T.LaunchCounter.reset()
    assert _n() == 0


# --- Step 2: run_eager ----------------------------------------------------------------------------

def test_step2_eager_pays_one_launch_per_op_on_every_call() -> None:
    rng = np.random.default_rng(0)
    for call in range(1, 4):
        x = rng.standard_normal((2, 4))
        np.testing.assert_allclose(T.run_eager(_ops(), x), _numpy(x))
        assert _n() == 3 * call


def test_step2_eager_launches_scale_with_the_number_of_ops() -> None:
    ops = [lambda x: x + 1.0] * 5
    out = T.run_eager(ops, np.zeros((2, 4)))
    np.testing.assert_allclose(out, np.full((2, 4), 5.0))
    assert _n() == 5


# --- Step 3: GraphRunner --------------------------------------------------------------------------

def test_step3_capture_costs_one_launch_per_op_and_records_the_entry() -> None:
    runner = T.GraphRunner(_ops())
    x = np.random.default_rng(1).standard_normal((2, 4))
    entry = runner.capture(x)  # capture
    assert _n() == 3
    assert (entry.shape, entry.num_ops, runner.num_captured) == ((2, 4), 3, 1)
    np.testing.assert_allclose(entry.output, _numpy(x))


def test_step3_capture_then_each_replay_costs_exactly_one_launch() -> None:
    runner = T.GraphRunner(_ops())
    runner(np.zeros((2, 4)))  # capture: 3 launches
    assert _n() == 3
    for replay in range(1, 6):
        runner(np.zeros((2, 4)))  # replay: 1 launch, whatever the number of ops
        assert _n() == 3 + replay
    assert runner.num_captured == 1


def test_step3_capture_copies_x_into_its_own_static_buffer() -> None:
    runner = T.GraphRunner(_ops())
    x = np.ones((2, 4))
    entry = runner.capture(x)
    x[...] = 99.0  # the caller reuses its array: the graph's buffer must not change with it
    assert not np.shares_memory(entry.static_input, x)
    np.testing.assert_array_equal(entry.static_input, np.ones((2, 4)))


def test_step3_replay_reads_the_new_input_through_the_static_buffer() -> None:
    rng = np.random.default_rng(2)
    runner = T.GraphRunner(_ops())
    entry = runner.capture(rng.standard_normal((2, 4)))  # capture
    buffer = entry.static_input
    for _ in range(5):  # fresh random inputs: replay equals numpy
        x = rng.standard_normal((2, 4))
        np.testing.assert_allclose(runner(x), _numpy(x))
        assert entry.static_input is buffer  # the buffer is fixed; only its content changes
        np.testing.assert_array_equal(buffer, x)  # Constraint 2: x landed in the buffer
    buffer[...] = 7.0  # what a replay computes IS the buffer's content, not the last x
    np.testing.assert_allclose(runner.replay(entry), _numpy(np.full((2, 4), 7.0)))
    assert _n() == 3 + 5 + 1


def test_step3_replay_writes_into_the_fixed_output_buffer() -> None:
    runner = T.GraphRunner(_ops())
    entry = runner.capture(np.zeros((2, 4)))
    out = runner.replay(entry)
    assert out is entry.output  # the next replay overwrites it: __call__ must hand back a copy


def test_step3_call_results_survive_the_next_replay() -> None:
    runner = T.GraphRunner(_ops())
    x1, x2 = np.full((2, 4), 0.25), np.full((2, 4), -0.5)
    runner(x1)  # capture
    first = runner(x1)  # replay
    runner(x2)  # another replay into the same output buffer
    np.testing.assert_allclose(first, _numpy(x1))  # should still be x1's answer


def test_step3_one_graph_per_shape_and_old_shapes_still_replay() -> None:
    runner = T.GraphRunner(_ops())
    for batch in (1, 2, 3):
        runner(np.zeros((batch, 4)))  # a new shape: a new capture, 3 launches
        assert (runner.num_captured, _n()) == (batch, 3 * batch)
    T.LaunchCounter.reset()
    x = np.full((1, 4), 0.5)  # the first shape still has its graph: a replay, one launch
    np.testing.assert_allclose(runner(x), _numpy(x))
    assert (runner.num_captured, _n()) == (3, 1)


def test_step3_a_new_dtype_is_a_new_graph() -> None:
    runner = T.GraphRunner(_ops())
    runner(np.zeros((2, 4), dtype=np.float64))
    runner(np.zeros((2, 4), dtype=np.float32))  # same shape, other dtype: capture again
    assert (runner.num_captured, _n()) == (2, 6)


# --- Step 4: PiecewiseGraphRunner -----------------------------------------------------------------

def test_step4_split_at_the_middle_op_gives_two_graphs_and_three_launches() -> None:
    runner = T.PiecewiseGraphRunner(_ops(), is_capturable=lambda i: i != 1)
    assert runner.num_graphs == 2
    runner(np.zeros((2, 4)))  # capture both graphs: 1 + 1 eager + 1
    assert _n() == 3
    T.LaunchCounter.reset()
    x = np.random.default_rng(3).standard_normal((2, 4))
    np.testing.assert_allclose(runner(x), _numpy(x))
    assert _n() == 3  # replay, eager middle op, replay


@pytest.mark.parametrize(("flags", "num_graphs", "launches_per_replay_call"), [
    ((True, True, True, True, True), 1, 1),
    ((True, True, False, True, True), 2, 3),
    ((True, False, True, False, True), 3, 5),
    ((False, True, True, True, False), 1, 3),
])
def test_step4_one_graph_per_run_of_capturable_ops(
        flags: tuple[bool, ...], num_graphs: int, launches_per_replay_call: int) -> None:
    ops = [lambda x, k=k: x * 0.5 + k for k in range(len(flags))]
    runner = T.PiecewiseGraphRunner(ops, is_capturable=lambda i: flags[i])
    assert runner.num_graphs == num_graphs
    x = np.arange(8.0).reshape(2, 4)
    runner(x)  # capture
    T.LaunchCounter.reset()
    out = runner(x)
    assert _n() == launches_per_replay_call
    T.LaunchCounter.reset()
    np.testing.assert_allclose(out, T.run_eager(ops, x))
    assert _n() == len(flags)  # eager pays every op


def test_step4_piecewise_equals_eager_across_shapes() -> None:
    rng = np.random.default_rng(4)
    runner = T.PiecewiseGraphRunner(_ops(), is_capturable=lambda i: i != 1)
    for batch in (1, 3, 1, 5, 3):
        x = rng.standard_normal((batch, 4))
        np.testing.assert_allclose(runner(x), _numpy(x))


# --- Stretch 1: padding to capture sizes ----------------------------------------------------------

def test_stretch1_padding_captures_4_graphs_for_batches_1_to_8_instead_of_8() -> None:
    rng = np.random.default_rng(5)
    plain = T.GraphRunner(_ops())
    padded = T.GraphRunner(_ops(), capture_sizes=[1, 2, 4, 8])
    for batch in range(1, 9):
        x = rng.standard_normal((batch, 4))
        np.testing.assert_allclose(plain(x), _numpy(x))
        out = padded(x)
        assert out.shape == (batch, 4)  # the padding rows are sliced off
        np.testing.assert_allclose(out, _numpy(x))  # padded values equal eager
    assert (plain.num_captured, padded.num_captured) == (8, 4)
    assert padded.num_eager_fallbacks == 0


def test_stretch1_batches_that_pad_to_the_same_size_share_one_graph() -> None:
    runner = T.GraphRunner(_ops(), capture_sizes=[1, 2, 4, 8])
    runner(np.zeros((5, 4)))  # pads to 8: capture, 3 launches
    x = np.full((7, 4), 0.3)  # also pads to 8: a replay, 1 launch
    np.testing.assert_allclose(runner(x), _numpy(x))
    assert (runner.num_captured, _n()) == (1, 4)


def test_stretch1_a_batch_above_the_largest_size_runs_eagerly_and_is_counted() -> None:
    runner = T.GraphRunner(_ops(), capture_sizes=[1, 2, 4, 8])
    x = np.random.default_rng(6).standard_normal((9, 4))
    np.testing.assert_allclose(runner(x), _numpy(x))
    assert (runner.num_eager_fallbacks, runner.num_captured, _n()) == (1, 0, 3)
    runner(x)  # still eager: nothing was captured for it
    assert (runner.num_eager_fallbacks, runner.num_captured, _n()) == (2, 0, 6)


def test_stretch1_piecewise_counts_the_fallbacks_of_each_graph() -> None:
    runner = T.PiecewiseGraphRunner(_ops(), is_capturable=lambda i: i != 1, capture_sizes=[1, 2])
    x = np.random.default_rng(7).standard_normal((3, 4))
    np.testing.assert_allclose(runner(x), _numpy(x))
    assert (runner.num_graphs, runner.num_eager_fallbacks, _n()) == (2, 2, 3)


# --- Stretch 2: fusion ----------------------------------------------------------------------------

def _elementwise_ops() -> list[Callable[[np.ndarray], np.ndarray]]:
    ew = T.elementwise
    return [ew(lambda x: x + 1.0), ew(lambda x: x * 2.0), lambda x: x @ W, ew(np.tanh),
            ew(lambda x: x * 0.5)]


def test_stretch2_fusion_lowers_eager_launches_with_identical_values() -> None:
    ops = _elementwise_ops()
    fused = T.fuse_elementwise(ops)
    assert (len(ops), len(fused)) == (5, 3)
    x = np.random.default_rng(8).standard_normal((2, 4))
    expected = T.run_eager(ops, x)
    assert _n() == 5
    T.LaunchCounter.reset()
    np.testing.assert_array_equal(T.run_eager(fused, x), expected)  # same ops, same order
    assert _n() == 3


def test_stretch2_fusion_lowers_the_cost_of_a_capture() -> None:
    runner = T.GraphRunner(T.fuse_elementwise(_elementwise_ops()))
    runner.capture(np.zeros((2, 4)))
    assert _n() == 3  # one launch per fused op; a replay is still one


def test_stretch2_fusion_keeps_order_and_never_crosses_a_plain_op() -> None:
    ew = T.elementwise
    ops = [ew(lambda x: x + 1.0), ew(lambda x: x * 2.0), lambda x: x - 3.0, ew(np.negative)]
    fused = T.fuse_elementwise(ops)
    assert len(fused) == 3 and len(ops) == 4  # the input list is left alone
    assert isinstance(fused[0], T.ElementwiseOp) and len(fused[0].parts) == 2
    np.testing.assert_array_equal(fused[0](np.array([1.0])), [4.0])  # (1 + 1) * 2, not 1 * 2 + 1


def test_stretch2_elementwise_wraps_one_function() -> None:
    op = T.elementwise(np.tanh)
    assert isinstance(op, T.ElementwiseOp) and op.parts == (np.tanh,)
    np.testing.assert_array_equal(op(np.array([0.5])), np.tanh([0.5]))
    assert _n() == 0  # calling an op is not a launch; running it eagerly is


# --- the starter's contract (checked while LAB_TARGET is unset) -----------------------------------

def _public_members(cls: type) -> dict[str, Any]:
    """Public methods and properties of `cls`, plus __init__ and __call__ where it defines them."""
    return {name: value for name, value in vars(cls).items()
            if (not name.startswith("_") or name in ("__init__", "__call__"))
            and (inspect.isfunction(value) or isinstance(value, property))}


def _public_callables(module: ModuleType) -> dict[str, Any]:
    """Every public function and method of `module`, by qualified name (properties by getter)."""
    found: dict[str, Any] = {}
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj):
            found[name] = obj
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:
            for member, value in _public_members(obj).items():
                if dataclasses.is_dataclass(obj) and member == "__init__":
                    continue  # generated from the fields, compared in their own test
                found[f"{name}.{member}"] = value.fget if isinstance(value, property) else value
    return found


REFERENCE_CALLABLES = _public_callables(reference)


@needs_untouched_starter
def test_contract_starter_exports_the_reference_public_names() -> None:
    assert sorted(starter.__all__) == sorted(reference.__all__)
    for name in reference.__all__:
        assert hasattr(starter, name), f"starter.py lacks {name}"
    assert starter.LaunchCounter is fake_torch.LaunchCounter  # Step 1 is re-exported, not rebuilt
    assert starter.Op == reference.Op
    assert sorted(_public_callables(starter)) == sorted(REFERENCE_CALLABLES)


@needs_untouched_starter
@pytest.mark.parametrize("name", ["GraphEntry", "ElementwiseOp"])
def test_contract_starter_dataclasses_have_the_reference_fields(name: str) -> None:
    def fields(cls: Any) -> list[tuple[str, Any]]:
        return [(f.name, f.type) for f in dataclasses.fields(cls)]
    assert fields(getattr(starter, name)) == fields(getattr(reference, name))
    ref_params = getattr(reference, name).__dataclass_params__
    assert getattr(starter, name).__dataclass_params__.frozen == ref_params.frozen


@needs_untouched_starter
@pytest.mark.parametrize("qualname", sorted(REFERENCE_CALLABLES))
def test_contract_starter_signature_matches_the_reference(qualname: str) -> None:
    theirs = _public_callables(starter).get(qualname)
    assert theirs is not None, f"starter.py lacks {qualname}"
    assert str(inspect.signature(theirs)) == str(inspect.signature(REFERENCE_CALLABLES[qualname]))


def _bare(cls_name: str) -> Any:
    """An instance made without running the (stubbed) __init__."""
    cls = getattr(starter, cls_name)
    return cls.__new__(cls)


STUB_CALLS: dict[str, tuple[str, Callable[[], object]]] = {
    "run_eager": ("Step 2 (run_eager)", lambda: starter.run_eager([np.tanh], np.zeros(2))),
    "GraphRunner.__init__": ("Step 3 (GraphRunner)", lambda: starter.GraphRunner([np.tanh])),
    "GraphRunner.num_captured": ("Step 3 (GraphRunner)",
                                 lambda: _bare("GraphRunner").num_captured),
    "GraphRunner.__call__": ("Step 3 (GraphRunner)", lambda: _bare("GraphRunner")(np.zeros(2))),
    "GraphRunner.capture": ("Step 3 (GraphRunner)",
                            lambda: _bare("GraphRunner").capture(np.zeros(2))),
    "GraphRunner.replay": ("Step 3 (GraphRunner)", lambda: _bare("GraphRunner").replay(
        starter.GraphEntry((2,), np.zeros(2), np.zeros(2), 1))),
    "PiecewiseGraphRunner.__init__": ("Step 4 (PiecewiseGraphRunner)",
                                      lambda: starter.PiecewiseGraphRunner([np.tanh],
                                                                           lambda i: True)),
    "PiecewiseGraphRunner.num_graphs": ("Step 4 (PiecewiseGraphRunner)",
                                        lambda: _bare("PiecewiseGraphRunner").num_graphs),
    "PiecewiseGraphRunner.num_eager_fallbacks": (
        "Step 4 (PiecewiseGraphRunner)", lambda: _bare("PiecewiseGraphRunner").num_eager_fallbacks),
    "PiecewiseGraphRunner.__call__": ("Step 4 (PiecewiseGraphRunner)",
                                      lambda: _bare("PiecewiseGraphRunner")(np.zeros(2))),
    "ElementwiseOp.__call__": ("Stretch 2 (fusion)",
                               lambda: starter.ElementwiseOp((np.tanh,))(np.zeros(2))),
    "elementwise": ("Stretch 2 (fusion)", lambda: starter.elementwise(np.tanh)),
    "fuse_elementwise": ("Stretch 2 (fusion)", lambda: starter.fuse_elementwise([np.tanh])),
}


@needs_untouched_starter
def test_contract_every_public_callable_has_a_stub_check() -> None:
    assert sorted(STUB_CALLS) == sorted(REFERENCE_CALLABLES)


@needs_untouched_starter
@pytest.mark.parametrize("qualname", sorted(STUB_CALLS))
def test_contract_starter_body_raises_a_hint_naming_its_step(qualname: str) -> None:
    step, call = STUB_CALLS[qualname]
    with pytest.raises(NotImplementedError, match=re.escape(step)) as caught:
        call()
    hint = str(caught.value)
    assert len(hint) > len(step) + 20, f"{qualname}: the hint says no more than its step: {hint!r}"
