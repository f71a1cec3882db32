"""More torch names vLLM reaches: autograd.Function (forward only), higher-order operators and
the Triton kernel wrappers, inductor's get_node_storage, compiled_with_cxx11_abi, the lazy
torch._inductor attribute, and torch.quantile; each against real torch (CPU build)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest
from oracles import launches, same_bits, torch_launches, torch_ulps

import fake_torch as ft
from fake_torch import fx
from fake_torch._higher_order_ops import triton_kernel_wrap as tkw
from fake_torch._higher_order_ops.auto_functionalize import auto_functionalized
from fake_torch._inductor.fx_utils import get_node_storage
from fake_torch._ops import HigherOrderOperator
from fake_torch._tools import _api
from fake_torch.autograd.function import FunctionCtx, once_differentiable


def _torch() -> Any:
    return pytest.importorskip("torch")


# --- torch.autograd.Function --------------------------------------------------------------------

def _functions(lib: Any) -> dict[str, Any]:
    """The same custom Functions written against either library."""

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: int, scale: float = 2.0) -> Any:
            ctx.seen = (ctx.needs_input_grad, ctx.saved_tensors)
            ctx.save_for_backward(x, None)
            ctx.mark_non_differentiable(x)
            ctx.set_materialize_grads(False)
            return x * k * scale, k

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise AssertionError("backward ran")  # never, without autograd

    class Setup(lib.autograd.Function):
        @staticmethod
        def forward(x: Any, y: int = 5) -> Any:
            return x + y, lib.is_grad_enabled()

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            ctx.save_for_backward(inputs[0])
            seen.append((len(inputs), inputs[1], ctx.to_save[0].tolist(), ctx.needs_input_grad,
                         lib.is_grad_enabled()))

    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x

    class Dirty(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.mark_dirty(x)
            return x.add_(1)

    class Empty(lib.autograd.Function):
        pass

    seen: list[Any] = []
    return {"Scale": Scale, "Setup": Setup, "Identity": Identity, "Dirty": Dirty,
            "Empty": Empty, "seen": seen}


def _run_functions(lib: Any) -> list[Any]:
    fns = _functions(lib)
    x = lib.ones(2)
    results: list[Any] = []
    with lib.no_grad():
        out, k = fns["Scale"].apply(x, 3)
    results.append((out.tolist(), k, fns["Scale"].apply(x, 3, scale=1.0)[0].tolist()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        instance = fns["Identity"]()
    for call in (lambda: instance(x), lambda: fns["Empty"].apply(x),
                 lambda: lib.autograd.Function.backward(None, x),
                 lambda: fns["Setup"].apply(x, 1, 2)):
        try:
            call()
            results.append(None)
        except Exception as e:  # the same class and text in both libraries
            results.append((type(e).__name__, str(e)))
    out, grad_inside = fns["Setup"].apply(lib.ones(1, requires_grad=True))
    results.append((out.tolist(), grad_inside, fns["seen"]))
    same = fns["Identity"].apply(x)
    results.append((same is x, same.data_ptr() == x.data_ptr()))
    z = lib.zeros(2)
    with lib.no_grad():
        results.append((fns["Dirty"].apply(z) is z, z.tolist()))
    results.append(once_differentiable(lambda ctx, g: (g, lib.is_grad_enabled()))(None, 5)
                   if lib is ft else
                   lib.autograd.function.once_differentiable(
                       lambda ctx, g: (g, lib.is_grad_enabled()))(None, 5))
    return results


def test_function_apply_runs_forward_as_torch_does_without_grad() -> None:
    torch = _torch()
    assert _run_functions(ft) == _run_functions(torch)


def test_function_context_records_what_forward_says() -> None:
    torch = _torch()
    for lib in (ft, torch):
        fns = _functions(lib)
        x = lib.ones(2, requires_grad=True)
        fns["Scale"].apply(x, 3)  # grad on, x requires grad: needs_input_grad says so
        ctx = FunctionCtx() if lib is ft else torch.autograd.function.FunctionCtx()
        ctx.save_for_backward(x)
        assert ctx.to_save == (x,) and not hasattr(ctx, "saved_tensors")
    needs: list[Any] = []

    class Probe(ft.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            needs.append((ctx.needs_input_grad, ctx.saved_tensors, ctx.dirty_tensors))
            return a

    Probe.apply(ft.ones(1, requires_grad=True), 2)
    with ft.no_grad():
        Probe.apply(ft.ones(1, requires_grad=True), 2)
    assert needs == [((True, False), (), None), ((False, False), (), None)]


def test_function_signatures_match_torchs() -> None:
    torch = _torch()
    for name in ("apply", "forward", "backward", "setup_context", "vjp", "jvp", "vmap",
                 "__init__", "__call__", "save_for_backward", "mark_dirty",
                 "mark_non_differentiable", "set_materialize_grads", "save_for_forward"):
        assert _api.signature_of(getattr(ft.autograd.Function, name)) == \
            _api.signature_of(getattr(torch.autograd.Function, name)), name
    assert ft.autograd.Function.generate_vmap_rule is torch.autograd.Function.generate_vmap_rule


# --- higher-order operators ----------------------------------------------------------------------

def test_higher_order_operators_are_torchs_shape_and_refuse_calls() -> None:
    torch = _torch()
    from torch._higher_order_ops import triton_kernel_wrap as real_tkw
    from torch._higher_order_ops.auto_functionalize import auto_functionalized as real_af

    with pytest.raises(TypeError, match="abstract"):
        HigherOrderOperator("x")  # type: ignore[abstract]
    for ours, theirs in ((tkw.triton_kernel_wrapper_functional,
                          real_tkw.triton_kernel_wrapper_functional),
                         (tkw.triton_kernel_wrapper_mutation,
                          real_tkw.triton_kernel_wrapper_mutation),
                         (auto_functionalized, real_af)):
        assert isinstance(ours, HigherOrderOperator)
        assert isinstance(theirs, torch._ops.HigherOrderOperator)
        assert (ours.name(), ours.namespace, ours.cacheable(), ours.__name__, str(ours)) == \
            (theirs.name(), theirs.namespace, theirs.cacheable(), theirs.__name__, str(theirs))
        assert _api.signature_of(type(ours).__call__) is not None
    assert [p[0] for p in _api.signature_of(type(tkw.triton_kernel_wrapper_functional).__call__)
            or ()] == [p[0] for p in _api.signature_of(real_tkw.TritonKernelWrapperFunctional
                                                         .__call__) or ()]
    assert not isinstance(tkw.triton_kernel_wrapper_mutation, tkw.TritonKernelWrapperFunctional)
    with pytest.raises(NotImplementedError, match="triton_kernel_wrapper_functional"):
        tkw.triton_kernel_wrapper_functional(0, 0, [], {}, {}, [])
    assert _api.signature_of(HigherOrderOperator.__init__) == \
        _api.signature_of(torch._ops.HigherOrderOperator.__init__)


# --- get_node_storage ---------------------------------------------------------------------------

def test_get_node_storage_names_the_storage_of_a_nodes_value() -> None:
    torch = _torch()
    from torch._inductor.fx_utils import get_node_storage as real_get

    def same_storage(lib: Any, get: Any, graph_mod: Any) -> list[Any]:
        g = graph_mod.Graph()
        nodes = [g.placeholder(n) for n in ("a", "b", "c", "d", "e")]
        x = lib.arange(6.0)
        for node, val in zip(nodes, (x, x.view(2, 3)[1:], x.clone(), 3, None), strict=True):
            if val is not None:
                node.meta["val"] = val
        got = [get(n) for n in nodes]
        return [got[0] == got[1], got[0] == got[2], got[3], got[4]]

    assert same_storage(ft, get_node_storage, fx) == same_storage(torch, real_get, torch.fx) \
        == [True, False, None, None]


# --- compiled_with_cxx11_abi, lazy torch._inductor ----------------------------------------------

def test_compiled_with_cxx11_abi_is_torchs() -> None:
    torch = _torch()
    assert ft.compiled_with_cxx11_abi() is torch.compiled_with_cxx11_abi() is True
    assert ft._C._GLIBCXX_USE_CXX11_ABI is torch._C._GLIBCXX_USE_CXX11_ABI


def test_inductor_is_an_attribute_imported_on_first_access() -> None:
    code = ("import sys, {lib}; a = '{lib}._inductor' in sys.modules; "
            "c = {lib}._inductor.config; print(a, '{lib}._inductor' in sys.modules)")
    for lib in ("fake_torch", "torch"):
        if lib == "torch":
            _torch()
        out = subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True,
                             text=True, check=True).stdout.split()
        assert out == ["False", "True"], lib
    with pytest.raises(AttributeError, match="has no attribute 'not_a_module'"):
        ft.not_a_module  # noqa: B018


# --- torch.quantile -------------------------------------------------------------------------------

_CASES = [{}, {"dim": 1}, {"dim": 0, "keepdim": True}, {"keepdim": True}, {"dim": -1},
          {"interpolation": "lower"}, {"interpolation": "higher", "dim": 0},
          {"interpolation": "nearest", "dim": 1}, {"interpolation": "midpoint"},
          {"interpolation": "midpoint", "dim": 1, "keepdim": True}]


@pytest.mark.parametrize("q", [0.5, 0.0, 1.0, 0.37, [0.1, 0.5, 0.9], [1.0], "0-dim"])
@pytest.mark.parametrize("kw", _CASES)
def test_quantile_values_and_launches_are_torchs(q: Any, kw: dict[str, Any]) -> None:
    torch = _torch()
    rng = np.random.default_rng(7)
    for dtype in ("float32", "float64"):
        x = rng.standard_normal((4, 7)).astype(dtype)
        x[2, 3] = np.nan  # a row with NaN: its quantiles are NaN
        x[0, :3] = x[0, 3]  # ties
        tx, fx_ = torch.tensor(x), ft.tensor(x, device="cuda")
        if isinstance(q, list) or q == "0-dim":
            qv = np.array(0.25 if q == "0-dim" else q, dtype)
            tq: Any = torch.tensor(qv)
            fq: Any = ft.tensor(qv, device="cuda")
        else:
            tq = fq = q
        with torch_launches(cuda=True) as theirs:
            want = torch.quantile(tx, tq, **kw)
        with launches() as ours:
            got = ft.quantile(fx_, fq, **kw)
        assert ours == theirs
        assert tuple(got.shape) == tuple(want.shape) and got.dtype.is_floating_point
        # bit-exact, NaN too (within torch_ulps() of torch's DEFAULT kernels' lerp)
        assert same_bits(got.cpu().numpy(), want.numpy(), torch_ulps())
        assert same_bits(fx_.quantile(fq, **kw).cpu().numpy(), want.numpy(), torch_ulps())


def test_quantile_of_zero_dim_and_one_element_inputs() -> None:
    torch = _torch()
    for lib in (ft, torch):
        x = lib.tensor(3.0)
        assert lib.quantile(x, 0.4).item() == 3.0 and lib.quantile(x, 0.4, dim=0).shape == ()
        assert lib.quantile(lib.tensor([2.0]), lib.tensor([0.0, 1.0])).tolist() == [2.0, 2.0]


@pytest.mark.parametrize("args,kw", [
    ((np.zeros(3, "float32"), 1.5), {}),
    ((np.zeros(3, "float32"), float("nan")), {}),
    ((np.zeros(3, "float32"), -0.25), {"interpolation": "bad"}),
    ((np.zeros(3, "float32"), 0.5), {"interpolation": "bad"}),
    ((np.zeros(0, "float32"), 0.5), {}),
    ((np.zeros(3, "float32"), np.array([[0.5]], "float32")), {}),
    ((np.zeros(3, "float16"), 0.5), {}),
    ((np.zeros(3, "int64"), 0.5), {}),
    ((np.zeros(3, "float64"), np.array([0.5], "float32")), {}),
    ((np.zeros((2, 3), "float32"), 0.5), {"dim": 2}),
])
def test_quantile_errors_are_torchs(args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    torch = _torch()

    def outcome(lib: Any) -> tuple[str, str]:
        x, q = args
        q = lib.tensor(q) if isinstance(q, np.ndarray) else q
        try:
            lib.quantile(lib.tensor(x), q, **kw)
        except (RuntimeError, IndexError) as e:
            return type(e).__name__, str(e)
        return "no error", ""

    assert outcome(ft) == outcome(torch)


def test_quantile_signature_is_torchs() -> None:
    torch = _torch()
    assert "quantile(input, q, dim=None, keepdim=False, *, interpolation='linear', out=None)" \
        in torch.quantile.__doc__
    assert [(p[0], p[1], p[2]) for p in _api.signature_of(ft.quantile) or ()] == [
        ("input", "POSITIONAL_OR_KEYWORD", _api.inspect.Parameter.empty),
        ("q", "POSITIONAL_OR_KEYWORD", _api.inspect.Parameter.empty),
        ("dim", "POSITIONAL_OR_KEYWORD", None), ("keepdim", "POSITIONAL_OR_KEYWORD", False),
        ("interpolation", "KEYWORD_ONLY", "linear"), ("out", "KEYWORD_ONLY", None)]
    with pytest.raises(NotImplementedError, match=r"torch.quantile\(\.\.\., out=\.\.\.\)"):
        ft.quantile(ft.ones(2), 0.5, out=ft.empty(()))
