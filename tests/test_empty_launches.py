"""Kernels over no element launch nothing, as on a GPU.

CUDA torch's kernels return before launching when there is nothing to compute (TensorIterator's
`gpu_kernel`, aten/src/ATen/native/cuda/Loops.cuh, returns on `iter.numel() == 0`; copy_
returns for an empty self; an H200 showed no kernel for an empty rms_norm, see tests/oracles.py).
fake_torch's door applies the rule to every launch whose outputs all have no element. The
oracle is real torch's dispatcher under `torch_launches(cuda=True)`, which drops the ops whose
outputs are all empty."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import launches, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch")

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "zero_ of an empty slice": lambda t, x: x[8:8].zero_(),
    "fill_ of an empty slice": lambda t, x: x[2:2].fill_(3.0),
    "copy_ into an empty slice": lambda t, x: x[3:3].copy_(x[5:5]),
    "add of empty tensors": lambda t, x: x[:0] + x[:0],
    "an empty factory": lambda t, x: t.zeros(0, 4),
    "sum over no element": lambda t, x: x[:0].sum(),  # one output element: it launches
    "mm with an empty inner dim": lambda t, x: x.reshape(2, 5)[:, :0] @ x.reshape(5, 2)[:0],
    "mm with an empty output": lambda t, x: x.reshape(2, 5)[:0] @ x.reshape(5, 2),
    "rms_norm of no row": lambda t, x: t.nn.functional.rms_norm(x.reshape(2, 5)[:0], (5,)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_op_over_no_element_launches_as_on_a_gpu(case: str) -> None:
    program = CASES[case]
    a = np.arange(10, dtype=np.float32)
    tx = torch.tensor(a)
    with torch_launches(cuda=True) as expected:
        want = program(torch, tx)
    x = ft.tensor(a, device="cuda")
    with launches() as ops:
        got = program(ft, x)
    assert ops == expected
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def test_the_rule_as_counted() -> None:
    x = ft.ones(10, device="cuda")
    with ft.LaunchCounter.expect(0):
        x[8:8].zero_()
        x[4:4].copy_(x[1:1])
        x[:0].cpu()  # no element to copy: no memcpy
        ft.empty(0, device="cuda").add_(1)
    with ft.LaunchCounter.expect(1, sum=1):
        x[:0].sum()  # its one output element is written (0.0)


def test_a_capture_records_no_empty_kernel() -> None:
    x = ft.ones(4, device="cuda")
    g = ft.cuda.CUDAGraph()
    with ft.cuda.graph(g):
        y = x * 2
        x[:0].mul_(3)  # nothing to launch: nothing in the graph
    assert g.kernel_names == ["mul"]
    g.replay()
    np.testing.assert_array_equal(y.cpu().numpy(), [2.0] * 4)


def test_tracing_still_sees_an_op_over_no_element() -> None:
    """torch.compile traces the op whatever the sizes (Dynamo records it in the graph); only
    running it launches nothing."""
    seen: list[str] = []

    def backend(gm: Any, example_inputs: Any) -> Any:
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    @ft.compile(backend=backend)
    def f(x: Any) -> Any:
        return x[:0] * 2

    x = ft.ones(4, device="cuda")
    with ft.LaunchCounter.expect(0):
        f(x)
    assert any("mul" in s for s in seen), seen
