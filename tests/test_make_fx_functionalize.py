"""make_fx(torch.func.functionalize(f)) against real torch's: for each composite function of
tests/make_fx_cases.py the same targets in the same order (in-place and out= ops as their
functional ops, writes through views as slice_scatter / select_scatter / the inverse view,
one copy_ back per written input), and the graph computing what the function computes:
its outputs and the new values of the inputs it writes (the eager path is the oracle).

DIFFERS: the symbolic traces that differ, each for the reason tests/test_make_fx_suite.py
gives (where sym_size nodes are read, chunk's guard) or its own."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from make_fx_cases import CASES
from test_make_fx import CASES as MORE_CASES
from test_make_fx_suite import _GUARDED, _SYM_NODES, _without_full_slices, _without_sym_nodes

import fake_torch as ft

_DROPOUT = "eval dropout under symbolic functionalization: torch records no clone"
_SIZE = "torch records aten.size nodes for linear's 3-d input under symbolic functionalization"
DIFFERS: dict[tuple[str, str], str] = {
    ("attention_arange_mask", "symbolic"): _SYM_NODES,
    ("attention_triu_mask", "symbolic"): _SYM_NODES,
    ("cat_stack_split_chunk", "symbolic"): _GUARDED,
    ("composite_builders", "symbolic"): _GUARDED,
    ("kv_cache_flat_index_copy", "symbolic"): _SYM_NODES,
    ("matmul_broadcast", "symbolic"): _SYM_NODES,
    ("rotary_neox_positions", "symbolic"): _SYM_NODES,
    ("swiglu_mlp", "symbolic"): _SYM_NODES,
    ("dropout_eval_residual", "symbolic"): _DROPOUT,
    ("linear_with_without_bias", "symbolic"): _SIZE,
}
# in-place ops a functional graph keeps: the copies back, and in-place views (metadata only)
_KEPT_INPLACE = {"aten.copy_.default", "aten.squeeze_.dim"}


def _targets(gm: Any) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def _trace(T: Any, make_fx: Any, name: str, mode: str) -> Any:
    T.manual_seed(0)
    f, args = CASES[name](T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_fx(T.func.functionalize(f), tracing_mode=mode)(*args)


def _both(name: str, mode: str) -> tuple[Any, Any]:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    return _trace(ft, make_fx, name, mode), _trace(torch, torch_make_fx, name, mode)


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_functionalized_targets_match_torch(name: str, mode: str) -> None:
    ours, theirs = _both(name, mode)
    reason = DIFFERS.get((name, mode))
    if reason is None:
        assert _targets(ours) == _targets(theirs)
    else:
        assert _targets(ours) != _targets(theirs), f"{name} ({mode}) now matches: off DIFFERS"
        if reason == _SYM_NODES:
            assert _without_sym_nodes(_targets(ours)) == _without_sym_nodes(_targets(theirs))
        elif reason == _GUARDED:
            assert _without_full_slices(ours) == _without_full_slices(theirs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_functionalized_graph_has_no_mutation_but_copies_back(name: str) -> None:
    """Only copy_ into placeholders (one per written input, at the end) writes."""
    from fake_torch.fx.experimental.proxy_tensor import make_fx

    ft.manual_seed(0)
    f, args = CASES[name](ft)
    gm = make_fx(ft.func.functionalize(f))(*args)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    writes = [n for n in calls if str(n.target).rpartition(".")[0].endswith("_")]
    assert {str(n.target) for n in writes} <= _KEPT_INPLACE
    copies = [n for n in writes if str(n.target) == "aten.copy_.default"]
    assert all(n.args[0].op == "placeholder" for n in copies)
    assert len({n.args[0] for n in copies}) == len(copies)
    assert calls[len(calls) - len(copies):] == copies


def _clone(value: Any) -> Any:
    return value.clone() if isinstance(value, ft.Tensor) else value


@pytest.mark.parametrize("name", sorted(CASES))
def test_functionalized_graph_computes_the_function(name: str) -> None:
    from fake_torch.fx.experimental.proxy_tensor import make_fx

    ft.manual_seed(0)
    f, args = CASES[name](ft)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(ft.func.functionalize(f))(*[_clone(a) for a in args])
    want_args, got_args = [_clone(a) for a in args], [_clone(a) for a in args]
    want, got = f(*want_args), gm(*got_args)
    leaves = ft.utils._pytree.tree_leaves
    for w, g in zip(leaves((want, want_args)), leaves((got, got_args)), strict=True):
        np.testing.assert_allclose(g.float().numpy(), w.float().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(MORE_CASES))
def test_functionalized_test_make_fx_cases_match_torch(name: str, mode: str) -> None:
    """tests/test_make_fx.py's functions too (RMSNorm's CPU composite keeps its add_ on its
    own temporary; a number written by x[...] = v is lifted without torch.tensor's detach)."""
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    targets = []
    for T, mk in ((ft, make_fx), (torch, torch_make_fx)):
        T.manual_seed(0)
        f, args = MORE_CASES[name](T)
        targets.append(_targets(mk(T.func.functionalize(f), tracing_mode=mode)(*args)))
    assert targets[0] == targets[1]
    ft.manual_seed(0)
    f, args = MORE_CASES[name](ft)
    gm = make_fx(ft.func.functionalize(f))(*[_clone(a) for a in args])
    want_args, got_args = [_clone(a) for a in args], [_clone(a) for a in args]
    want, got = f(*want_args), gm(*got_args)
    leaves = ft.utils._pytree.tree_leaves
    for w, g in zip(leaves((want, want_args)), leaves((got, got_args)), strict=True):
        np.testing.assert_allclose(g.float().numpy(), w.float().numpy(), rtol=1e-3, atol=1e-3)


def _writes(T: Any) -> dict[str, tuple[Any, tuple[Any, ...]]]:
    """Writes through each kind of view, and in-place ops of each overload kind."""
    def zero_fill(x: Any, y: Any) -> Any:
        x[0].zero_()
        y.fill_(2.0)
        return x * y

    def index_put(x: Any, i: Any, v: Any) -> Any:
        x[i] = v
        return x.sum()

    def split_write(x: Any) -> Any:
        x.split(2, 1)[1].mul_(3)
        return x + 1

    def unbind_write(x: Any) -> Any:
        x.unbind(0)[1].add_(1)
        return x.sum()

    def permute_write(x: Any) -> Any:
        x.permute(1, 0).add_(1)
        return x

    def unsqueeze_write(x: Any) -> Any:
        x.unsqueeze(0).mul_(2)
        return x

    def alias_read_after(x: Any) -> Any:  # a view taken before its base is written
        v = x[1:]
        x.add_(1)
        return v * 2

    def div_floor(x: Any, y: Any) -> Any:
        return x.div_(y, rounding_mode="floor")

    def chained(x: Any, m: Any) -> Any:
        x.clamp_(-0.1, 0.1).relu_()
        return x.masked_fill_(m, 1.0).sigmoid_()

    return {f.__name__: (f, args) for f, args in (
        (zero_fill, (T.randn(3, 4), T.randn(3, 4))),
        (index_put, (T.randn(5, 2), T.tensor([1, 3]), T.randn(2, 2))),
        (split_write, (T.randn(3, 4),)), (unbind_write, (T.randn(3, 4),)),
        (permute_write, (T.randn(3, 4),)), (unsqueeze_write, (T.randn(3, 4),)),
        (alias_read_after, (T.randn(3, 4),)),
        (div_floor, (T.randn(3), T.randn(3).abs() + 1)),
        (chained, (T.randn(3), T.tensor([True, False, True]))))}


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(_writes(ft)))
def test_writes_match_torch_and_compute_the_function(name: str, mode: str) -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    ft.manual_seed(0)
    f, args = _writes(ft)[name]
    gm = make_fx(ft.func.functionalize(f), tracing_mode=mode)(*[_clone(a) for a in args])
    tf, targs = _writes(torch)[name]
    theirs = torch_make_fx(torch.func.functionalize(tf), tracing_mode=mode)(*targs)
    assert _targets(gm) == _targets(theirs)
    want_args, got_args = [_clone(a) for a in args], [_clone(a) for a in args]
    want, got = f(*want_args), gm(*got_args)
    leaves = ft.utils._pytree.tree_leaves
    for w, g in zip(leaves((want, want_args)), leaves((got, got_args)), strict=True):
        np.testing.assert_allclose(g.float().numpy(), w.float().numpy(), rtol=1e-5, atol=1e-5)


def _out_and_views(T: Any) -> Any:
    def f(x: Any, y: Any, z: Any) -> Any:  # out=, a write through two views, an alias
        T.add(x, y, out=z)
        x[0] = y
        x[:, 1] += 1
        x.t().mul_(2)
        return x.sum(), z * 2
    return f


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_out_and_writes_through_views_match_torch(mode: str) -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    def calls(T: Any, mk: Any) -> list[str]:
        gm = mk(T.func.functionalize(_out_and_views(T)), tracing_mode=mode)(
            T.zeros(3, 3), T.ones(3), T.zeros(3, 3))
        return [f"{n.target}{n.args}" for n in gm.graph.nodes if n.op == "call_function"]
    ours = calls(ft, make_fx)
    assert ours == calls(torch, torch_make_fx)  # arguments too: the scatters' dims and indices
    assert ours[-2:] == ["aten.copy_.default(x_1, t_2)", "aten.copy_.default(z_1, add)"]


def _calling(op: Any) -> Any:
    def f(out: Any, x: Any) -> Any:
        op(out, x)
        return x + 1
    return f


def test_functionalize_refuses_a_mutating_custom_op_as_torch() -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    messages = []
    libraries: list[tuple[Any, Any]] = [(ft, make_fx), (torch, torch_make_fx)]
    for L, mk in libraries:
        def body(out: Any, x: Any) -> None:
            out.copy_(x * 2)
        scale_into = L.library.custom_op("fxfunc::scale_into", mutates_args=("out",),
                                         schema="(Tensor(a!) out, Tensor x) -> ()")(body)

        with pytest.raises(RuntimeError) as caught:
            mk(L.func.functionalize(_calling(scale_into)))(L.zeros(2), L.ones(2))
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("Found a custom (non-ATen) operator whose output has alias")


def test_functionalize_called_eagerly_and_its_options() -> None:
    from fake_torch.func import functionalize

    T: Any = ft
    x = T.zeros(3)
    out = functionalize(lambda t: t.add_(1) * 2)(x)
    assert out.tolist() == [2.0, 2.0, 2.0] and x.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(NotImplementedError, match="mutations_and_views"):
        functionalize(lambda t: t, remove="mutations_and_views")
    with pytest.raises(RuntimeError, match="functionalize\\(f, remove='mutations'\\): received "
                                           "invalid argument for remove=views"):
        functionalize(lambda t: t, remove="views")
