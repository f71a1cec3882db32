"""One definition per op (fake_torch/_opdef.py): an op written once is a torch function, a
Tensor method, torch.ops.aten.<name>, typed in the stubs, and known to the inductor scheduler;
a launch name nobody defined is an error, never a silent pointwise kernel."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from oracles import to_numpy

import fake_torch as torch
from fake_torch import _opdef
from fake_torch._inductor.scheduler import launch_class
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Tensor
from fake_torch._tools._stubgen import render_stubs
from fake_torch._tools._stubgen_tensor import render_tensor_base


def _rowmax_kernel(out: np.ndarray, x: np.ndarray) -> None:
    out[...] = x.max(axis=-1)


def rowmax_demo(input: Tensor, scale: float = 1.0) -> Tensor:
    """The largest value of each row, times `scale` (a test op)."""
    out = new_tensor(input.shape[:-1], input.dtype, input.device)
    launch("rowmax_demo", _rowmax_kernel, out, (input,))
    return out if scale == 1.0 else out * scale


@pytest.fixture
def new_op() -> Iterator[_opdef.OpDef]:
    """rowmax_demo defined in ONE place, as a reduction with a Tensor method; gone after."""
    _opdef.op(_opdef.REDUCTION, method=True)(rowmax_demo)
    (opdef,) = [d for d in _opdef.definitions() if d.impl is rowmax_demo]
    try:
        yield opdef
    finally:
        for d in _opdef.definitions():
            if d.impl is rowmax_demo:
                _opdef.forget(d)


def test_an_op_defined_once_is_a_function_a_method_and_an_aten_op(new_op: _opdef.OpDef
                                                                   ) -> None:
    x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], device="cuda")
    with torch.LaunchCounter.expect(1, rowmax_demo=1):
        by_function = torch.rowmax_demo(x)  # type: ignore[attr-defined]
    with torch.LaunchCounter.expect(1, rowmax_demo=1):
        by_method = x.rowmax_demo()  # type: ignore[attr-defined]
    with torch.LaunchCounter.expect(1, rowmax_demo=1):
        by_aten = torch.ops.aten.rowmax_demo(x)
    for got in (by_function, by_method, by_aten):
        np.testing.assert_array_equal(to_numpy(got), [5.0, 7.0])
    assert "rowmax_demo" in torch.__all__
    assert inspect.signature(torch.rowmax_demo) == inspect.signature(rowmax_demo)  # type: ignore[attr-defined]


def test_an_op_defined_once_is_in_the_stubs(new_op: _opdef.OpDef) -> None:
    stubs = render_stubs()["torch/__init__.pyi"]
    assert f"from {__name__} import rowmax_demo as rowmax_demo\n" in stubs
    assert ("    def rowmax_demo(self, scale: builtins.float = ...) -> Tensor: ...\n"
            in render_tensor_base())


def test_an_op_defined_once_is_in_the_schedulers_grouping(new_op: _opdef.OpDef) -> None:
    """Defined as a reduction, it fuses with the pointwise op before it (one persistent
    reduction kernel), as rowmax does; eager it is two launches."""
    assert launch_class("rowmax_demo", "kernel") == "reduction"
    x = torch.randn(4, 16, device="cuda")
    f = torch.compile(lambda t: t.exp().rowmax_demo())
    expected = f(x)  # compile
    with _dispatch.record_ops() as ops:
        got = f(x)
    assert ops == ["triton_per_fused_exp_rowmax_demo_0"]
    np.testing.assert_allclose(to_numpy(got), to_numpy(x.exp().rowmax_demo()), rtol=1e-6)
    np.testing.assert_allclose(to_numpy(got), to_numpy(expected), rtol=1e-6)
    with torch.LaunchCounter.expect(2, exp=1, rowmax_demo=1):
        x.exp().rowmax_demo()


def test_an_op_defined_once_is_one_node_when_traced(new_op: _opdef.OpDef) -> None:
    graphs: list[Any] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        graphs.append([(n.op, n.target) for n in gm.graph.nodes if n.op.startswith("call")])
        return gm.forward

    x = torch.ones(2, 3)
    torch.compile(lambda t: torch.rowmax_demo(t, 2.0) + t.rowmax_demo(),  # type: ignore[attr-defined]
                  backend=backend)(x)
    (nodes,) = graphs
    assert [(op, getattr(t, "__name__", t)) for op, t in nodes] == [
        ("call_function", "rowmax_demo"), ("call_method", "rowmax_demo"),
        ("call_function", "add")]


def test_a_forgotten_op_is_gone(new_op: _opdef.OpDef) -> None:
    _opdef.forget(new_op)
    assert not hasattr(torch, "rowmax_demo") and not hasattr(torch.Tensor, "rowmax_demo")
    assert "rowmax_demo" not in _opdef.aten_names()


def test_an_undefined_launch_name_is_an_error_not_a_pointwise_kernel() -> None:
    with pytest.raises(KeyError, match="aten op 'mystery_op' has no definition"):
        launch_class("mystery_op", "kernel")
    assert launch_class("mystery_op", "memcpy_h2d") == "extern"  # a copy is a copy


def test_every_launch_of_the_example_model_is_defined() -> None:
    """Eager, compiled and replayed: every launch name the door sees is a defined aten op
    (or a kernel or graph the compiler or CUDA graphs made)."""
    from fake_torch._tools._bench_graphs import load_example_llama

    llama = load_example_llama()
    torch.manual_seed(0)
    model = llama.Llama(llama.LlamaConfig()).to("cuda").eval()
    model.allocate_kv_cache(2)
    ids = torch.randint(0, model.cfg.vocab_size, (2, 3), device="cuda")
    positions = torch.arange(3, device="cuda").expand(2, 3)
    with torch.inference_mode(), _dispatch.record_ops() as ops:
        model(ids, positions)
        compiled = torch.compile(model)
        compiled(ids, positions)
        compiled(ids, positions)
    made = {op for op in ops if op.startswith(("triton_", "cpp_")) or op == "cudaGraphLaunch"}
    assert made  # the compiled step's fused kernels
    assert all(_opdef.aten_kind(op) for op in set(ops) - made)


def test_every_aten_kind_is_a_known_kind() -> None:
    kinds = set(_opdef.aten_names().values())
    assert kinds <= set(_opdef.KINDS)
    assert {_opdef.aten_kind(n) for n in ("mm", "sum", "add", "nonzero", "_local_scalar_dense",
                                          "multinomial", "rand")} == {
        _opdef.EXTERN, _opdef.REDUCTION, _opdef.POINTWISE, _opdef.DATA_DEPENDENT, _opdef.HOST,
        _opdef.RANDOM}


def test_a_kind_must_be_known_and_a_launch_name_cannot_change_kind() -> None:
    with pytest.raises(ValueError, match="unknown op kind 'fused'"):
        _opdef.aten_op("whatever", "fused")
    with pytest.raises(ValueError, match="aten op 'mm' is defined as extern and as pointwise"):
        _opdef.aten_op("mm", _opdef.POINTWISE)


def test_entries_keep_their_implementations_signature_and_torch_names() -> None:
    assert list(inspect.signature(torch.add).parameters) == ["input", "other", "alpha", "out"]
    assert torch.add.__module__ == "torch" and torch.add.__name__ == "add"
    assert torch.Tensor.add.__qualname__ == "TensorBase.add"  # what modes print, as torch's
    assert torch.subtract is not torch.sub and torch.subtract(torch.ones(1), 1).item() == 0
    assert torch.nn.functional.silu.__module__ == "torch.nn.functional"
