"""torch.cuda.make_graphed_callables over pytrees: sample arguments and outputs nested in
tuples, lists and dicts are flattened as torch.utils._pytree flattens them (real torch's
pytree is the oracle for the order), every callable warms up before any is captured, and the
replays hand back the captured structure."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter
from fake_torch.utils import _pytree

pytestmark = pytest.mark.usefixtures("fresh_device")


def _np(t: torch.Tensor) -> np.ndarray:
    return np.asarray(t.numpy(force=True))


def step(x: tuple[torch.Tensor, torch.Tensor], extra: dict[str, Any]) -> dict[str, Any]:
    """A callable whose arguments and result are nested."""
    scale = extra["scale"]
    return {"sum": x[0] + x[1] * scale, "parts": [x[0] * 2, (extra["bias"][0] - scale,)]}


def _args() -> tuple[Any, ...]:
    a, b = torch.randn(3, device="cuda"), torch.randn(3, device="cuda")
    return ((a, b), {"scale": torch.randn(3, device="cuda"),
                     "bias": [torch.randn(3, device="cuda")]})


def test_nested_arguments_and_outputs_replay_in_the_captured_structure() -> None:
    sample = _args()
    graphed = torch.cuda.make_graphed_callables(step, sample, num_warmup_iters=1)
    new = _args()
    expected = step(*new)
    LaunchCounter.reset()
    out = graphed(*new)  # four new tensors: four copies into the static inputs, one replay
    assert dict(LaunchCounter.by_kind) == {"memcpy_d2d": 4, "graph": 1}
    assert _pytree.tree_structure(out) == _pytree.tree_structure(expected)
    for got, want in zip(_pytree.tree_leaves(out), _pytree.tree_leaves(expected), strict=True):
        np.testing.assert_array_equal(_np(got), _np(want))
    LaunchCounter.reset()
    graphed(*sample)  # the static inputs themselves: no copy
    assert dict(LaunchCounter.by_kind) == {"graph": 1}


def test_the_flattening_order_is_torchs() -> None:
    real = pytest.importorskip("torch")
    nested = ((1, 2), {"b": [3, (4,)], "a": 5}, [6])
    assert _pytree.tree_leaves(nested) == real.utils._pytree.tree_leaves(nested)


def test_every_callable_warms_up_before_any_capture() -> None:
    order: list[str] = []

    def first(t: torch.Tensor) -> torch.Tensor:
        order.append("first")
        return t + 1

    def second(t: list[torch.Tensor]) -> torch.Tensor:
        order.append("second")
        return t[0] * 2  # a kernel: an empty graph would warn (torch's "The CUDA Graph is empty")

    x = torch.ones(2, device="cuda")
    torch.cuda.make_graphed_callables((first, second), ((x,), ([x],)), num_warmup_iters=2)
    assert order == ["first", "first", "second", "second", "first", "second"]


def test_non_tensor_leaves_are_refused_as_torch() -> None:
    x = torch.ones(2, device="cuda")
    with pytest.raises(AssertionError, match=r"^In the beta API, sample_args for each callable "
                                             "must contain only Tensors"):
        torch.cuda.make_graphed_callables(step, ((x, x), {"scale": 2.0, "bias": [x]}))
    with pytest.raises(TypeError, match="the outputs must be tensors"):
        torch.cuda.make_graphed_callables(lambda t: (t + 1, 3), (x,), num_warmup_iters=0)
