"""make_fx against real torch's make_fx: the same aten targets in the same order, the same
placeholder names, in real and fake modes (symbolic for functions that read no size), and the
GraphModule computing what the function computes (the eager path is the oracle)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import fake_torch as ft

Case = Callable[[Any], tuple[Callable[..., Any], tuple[Any, ...]]]


def _mlp(T: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    F = T.nn.functional

    def f(x: Any, w1: Any, b1: Any, w2: Any) -> Any:
        return F.linear(F.silu(F.linear(x, w1, b1)), w2)
    return f, (T.randn(2, 3, 4), T.randn(8, 4), T.randn(8), T.randn(4, 8))


def _attention(T: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    def f(q: Any, k: Any, v: Any) -> Any:
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        mask = T.ones(3, 3, dtype=T.bool).tril()
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        return scores.softmax(-1) @ v
    return f, (T.randn(1, 2, 3, 4), T.randn(1, 2, 3, 4), T.randn(1, 2, 3, 4))


def _rmsnorm(T: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    def f(x: Any, w: Any) -> Any:
        var = x.pow(2).mean(-1, keepdim=True)
        return x * T.rsqrt(var + 1e-6) * w
    return f, (T.randn(2, 3, 4), T.randn(4))


def _rotary(T: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    def f(x: Any, cos: Any, sin: Any) -> Any:
        x1, x2 = x[..., :2], x[..., 2:]
        rotated = T.cat((-x2, x1), dim=-1)
        return x * cos + rotated * sin
    return f, (T.randn(2, 3, 4), T.randn(3, 4), T.randn(3, 4))


def _kv_write(T: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    def f(cache: Any, slots: Any, k: Any) -> Any:
        cache.index_copy_(0, slots, k)
        return cache
    return f, (T.zeros(6, 4), T.tensor([1, 4]), T.randn(2, 4))


def _kv_put(cache: Any, slots: Any, k: Any) -> Any:
    cache[slots] = k
    return cache


def _case(body: Callable[..., Any], *shapes: tuple[int, ...]) -> Case:
    return lambda T: (lambda *a: body(T, *a), tuple(T.randn(*s) for s in shapes))


def _named(body: Callable[..., Any], *shapes: tuple[int, ...]) -> Case:
    def make(T: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        def f(x: Any, y: Any) -> Any:
            return body(T, x, y)
        return f, tuple(T.randn(*s) for s in shapes)
    return make


CASES: dict[str, Case] = {
    "mlp": _mlp,
    "attention_causal": _attention,
    "rmsnorm": _rmsnorm,
    "rotary": _rotary,
    "kv_cache_write": _kv_write,
    "rms_norm_functional": _named(lambda T, x, w: T.nn.functional.rms_norm(x, (4,), w, 1e-6),
                                  (2, 3, 4), (4,)),
    "layer_norm": _named(lambda T, x, w: T.nn.functional.layer_norm(x, (4,), w, w),
                         (2, 3, 4), (4,)),
    "sdpa_causal": _named(lambda T, q, k: T.nn.functional.scaled_dot_product_attention(
        q, k, k, is_causal=True), (1, 2, 3, 4), (1, 2, 3, 4)),
    "linear_2d": _named(lambda T, x, w: T.nn.functional.linear(x, w, w[:, 0]),
                        (3, 4), (5, 4)),
    "matmul_3d_2d": _named(lambda T, x, w: x @ w.t(), (2, 3, 4), (5, 4)),
    "matmul_3d_3d": _named(lambda T, x, y: x @ y.transpose(1, 2), (2, 3, 4), (2, 3, 4)),
    "bmm": _named(lambda T, x, y: T.bmm(x, y.transpose(1, 2)), (2, 3, 4), (2, 3, 4)),
    "add_scalar_mul": _named(lambda T, x, y: (x + 1) * y - 2, (2, 3), (2, 3)),
    "rsub_div": _named(lambda T, x, y: (2 - x) / y, (2, 3), (2, 3)),
    "inplace_updates": _named(lambda T, x, y: x.add_(y).mul_(2), (2, 3), (2, 3)),
    "copy_into_slice": _named(lambda T, x, y: (x.__setitem__(slice(0, 2), y), x)[1],
                              (4, 3), (2, 3)),
    "reshape_view": _named(lambda T, x, y: x.reshape(6, 4).view(2, 12) + y,
                           (2, 3, 4), (2, 12)),
    "reshape_copy": _named(lambda T, x, y: x.transpose(0, 1).reshape(-1) + y, (2, 3), (6,)),
    "permute_contiguous": _named(lambda T, x, y: x.permute(2, 0, 1).contiguous() + y,
                                 (2, 3, 4), (4, 2, 3)),
    "indexing": _named(lambda T, x, y: x[:, 1:, 0] + y[0], (2, 3, 4), (2, 2)),
    "index_tensor": _named(lambda T, x, y: x[y.argmax(-1)], (4, 3), (2, 4)),
    "unsqueeze_expand": _named(lambda T, x, y: x[:, None].expand(2, 3, 4) * y,
                               (2, 4), (3, 4)),
    "squeeze": _named(lambda T, x, y: x.unsqueeze(0).squeeze(0) + y.squeeze(), (2, 3), (2, 3)),
    "cat_stack": _named(lambda T, x, y: T.stack([T.cat([x, y], -1), T.cat([y, x], -1)]),
                        (2, 3), (2, 3)),
    "to_dtype": _named(lambda T, x, y: x.to(T.float16).float() + y.half(), (2, 3), (2, 3)),
    "factories": _named(lambda T, x, y: T.zeros(2, 3) + T.ones_like(x) + T.full((2, 3), 2.0)
                        + y, (2, 3), (2, 3)),
    "reductions": _named(lambda T, x, y: x.sum(-1) + x.amax(-1) + y.mean(), (2, 3), (2,)),
    "activations": _named(lambda T, x, y: T.nn.functional.gelu(x) + T.relu(y).exp().neg(),
                          (2, 3), (2, 3)),
    "softmax_dtype": _named(lambda T, x, y: T.nn.functional.softmax(x, dim=-1,
                                                                     dtype=T.float32) + y,
                            (2, 3), (2, 3)),
    "where_masked_fill": _named(lambda T, x, y: T.where(x > 0, x, 0.0) + y.masked_fill(y > 0,
                                                                                      -1.0),
                                (2, 3), (2, 3)),
    "clone_split": _named(lambda T, x, y: x.clone().split([1, 2], -1)[1] + y.chunk(2, 0)[0],
                          (2, 3), (1, 2)),
    "narrow_select": _named(lambda T, x, y: x.narrow(1, 0, 2).select(0, 1) + y, (2, 3), (2,)),
    "pow_sqrt": _named(lambda T, x, y: x.abs().sqrt() ** 2 + y.sigmoid().tanh(), (2, 3), (2, 3)),
    "embedding": lambda T: (lambda i, w: T.nn.functional.embedding(i, w),
                            (T.tensor([1, 2, 0]), T.randn(4, 3))),
    "kv_cache_index_put": lambda T: (_kv_put, (T.zeros(6, 4), T.tensor([1, 4]), T.randn(2, 4))),
    "setitem_scalar": _named(lambda T, x, y: (x.__setitem__((0, slice(1, None)), 2.0), x + y)[1],
                             (2, 3), (2, 3)),
    "setitem_0dim": lambda T: (lambda x, v: (x.__setitem__(0, v), x)[1],
                               (T.randn(2, 3), T.tensor(1.0))),
    "unused_inplace": _named(lambda T, c, v: (c.add_(v), v * 2)[1], (2, 3), (2, 3)),
    "rms_norm_half": lambda T: (lambda x, w: T.nn.functional.rms_norm(x, (4,), w),
                                (T.randn(2, 4).half(), T.randn(4).half())),
    "gqa_repeat": _named(lambda T, k, q: q @ k[:, :, None].expand(1, 2, 2, 3, 4).reshape(
        1, 4, 3, 4).transpose(-2, -1), (1, 2, 3, 4), (1, 4, 3, 4)),
}
# functions that read no size: symbolic tracing matches torch's
SYMBOLIC = ["rmsnorm", "add_scalar_mul", "activations", "inplace_updates", "reductions",
            "rms_norm_functional", "softmax_dtype", "permute_contiguous",
            "cat_stack", "bmm", "where_masked_fill", "rotary", "indexing", "to_dtype",
            "unsqueeze_expand", "narrow_select", "linear_2d", "matmul_3d_2d", "kv_cache_write",
            "layer_norm", "sdpa_causal", "embedding", "clone_split", "squeeze",
            "factories", "gqa_repeat", "index_tensor", "kv_cache_index_put", "pow_sqrt",
            "rms_norm_half", "rsub_div", "setitem_0dim", "setitem_scalar", "unused_inplace",
            "copy_into_slice"]
# the rest differ where sym_size nodes are read (tests/test_make_fx_suite.py: _SYM_NODES), in
# torch's sym_numel for reshape's -1 (reshape_copy), or in the sizes a guard specialises to a
# number in torch that fake_torch keeps symbolic (reshape_view: the same targets, other sizes)


def _targets(gm: Any) -> tuple[list[str], list[str]]:
    nodes = list(gm.graph.nodes)
    return ([n.name for n in nodes if n.op == "placeholder"],
            [str(n.target) for n in nodes if n.op == "call_function"])


def _ours(name: str, mode: str) -> tuple[Any, Callable[..., Any], tuple[Any, ...]]:
    from fake_torch.fx.experimental.proxy_tensor import make_fx

    ft.manual_seed(0)
    f, args = CASES[name](ft)
    return make_fx(f, tracing_mode=mode)(*args), f, args


def _theirs(name: str, mode: str) -> Any:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx

    torch.manual_seed(0)
    f, args = CASES[name](torch)
    return make_fx(f, tracing_mode=mode)(*args)


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_targets_match_torch(name: str, mode: str) -> None:
    ours, _, _ = _ours(name, mode)
    assert _targets(ours) == _targets(_theirs(name, mode))


@pytest.mark.parametrize("name", SYMBOLIC)
def test_symbolic_targets_match_torch(name: str) -> None:
    ours, _, _ = _ours(name, "symbolic")
    theirs = _theirs(name, "symbolic")
    assert _targets(ours) == _targets(theirs)
    assert _sizes(ours) == _sizes(theirs)  # the same symbols (s75, ...) in every node's size


def _sizes(gm: Any) -> list[str]:
    return [str(list(n.meta["val"].shape)) if hasattr(n.meta["val"], "shape") else
            str(n.meta["val"]) for n in gm.graph.nodes if n.op != "output"]


def _clone_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.clone() if isinstance(a, ft.Tensor) else a for a in args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_computes_the_function(name: str) -> None:
    gm, f, args = _ours(name, "real")
    want = f(*_clone_args(args))
    got = gm(*_clone_args(args))
    for w, g in zip(ft.utils._pytree.tree_leaves(want), ft.utils._pytree.tree_leaves(got),
                    strict=True):
        np.testing.assert_allclose(g.float().numpy(), w.float().numpy(), rtol=1e-5, atol=1e-5)


def test_every_node_has_a_fake_val() -> None:
    gm, _, _ = _ours("mlp", "real")
    from fake_torch._subclasses.fake_tensor import FakeTensor

    vals = [n.meta["val"] for n in gm.graph.nodes if n.op != "output"]
    assert vals and all(isinstance(v, FakeTensor) for v in vals)


# functions whose fwd_only graph torch's no-op removal leaves as traced (fwd_only here runs
# make_fx with inductor's decompositions, not remove_noop_ops)
FWD_ONLY = ["unused_inplace", "mlp", "rmsnorm", "rms_norm_functional", "layer_norm",
            "sdpa_causal", "linear_2d", "matmul_3d_2d", "softmax_dtype", "activations",
            "where_masked_fill", "embedding", "kv_cache_write", "rotary", "add_scalar_mul",
            "inplace_updates", "to_dtype"]


@pytest.mark.parametrize("name", FWD_ONLY)
def test_fwd_only_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    from torch._inductor.pattern_matcher import fwd_only as torch_fwd_only

    from fake_torch._inductor.pattern_matcher import fwd_only

    ft.manual_seed(0)
    f, args = CASES[name](ft)
    torch.manual_seed(0)
    tf, targs = CASES[name](torch)
    assert _targets(fwd_only(f, args)) == _targets(torch_fwd_only(tf, targs))


def test_bad_tracing_mode() -> None:
    from fake_torch.fx.experimental.proxy_tensor import make_fx

    with pytest.raises(AssertionError, match="Unexpected tracing type: eager"):
        make_fx(lambda x: x, tracing_mode="eager")


def _scale_op(L: Any, bodies: list[str]) -> Any:
    """mfxtest::scale(x, s) -> x * s, a custom op with a fake impl; `bodies` logs real runs."""
    @L.library.custom_op("mfxtest::scale", mutates_args=(),
                         schema="(Tensor x, float s) -> Tensor")
    def scale(x: Any, s: float) -> Any:
        bodies.append("real")
        return x * s

    @scale.register_fake
    def _(x: Any, s: float) -> Any:
        return L.empty_like(x)
    return scale


def _calling(op: Any) -> Callable[[Any], Any]:
    return lambda x: op(x + 1, 2.0).relu()


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_custom_op_is_one_node(mode: str) -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    results = []
    for L, mk in ((ft, make_fx), (torch, torch_make_fx)):
        bodies: list[str] = []
        scale = _scale_op(L, bodies)
        gm = mk(_calling(scale), tracing_mode=mode)(L.randn(2, 3))
        results.append((_targets(gm), bodies))
    assert results[0] == results[1]
    assert results[0][0][1] == ["aten.add.Tensor", "mfxtest.scale.default", "aten.relu.default"]
    assert results[0][1] == (["real"] if mode == "real" else [])  # fake: the fake impl only


def _module_graph(L: Any, make_fx: Any) -> list[tuple[str, str]]:
    L.manual_seed(0)
    m = L.nn.Sequential(L.nn.Linear(4, 3), L.nn.ReLU())
    c = L.ones(3)
    with L.no_grad():  # with grad, torch also records the detach autograd saves (not here)
        gm = make_fx(lambda x: m(x) + c)(L.randn(2, 4))
    return [(n.op, n.name if n.op != "call_function" else str(n.target))
            for n in gm.graph.nodes]


def test_module_parameters_are_attributes() -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    ours = _module_graph(ft, make_fx)
    assert ours == _module_graph(torch, torch_make_fx)
    assert ("get_attr", "_param_constant1") in ours and ("get_attr", "_tensor_constant0") in ours


@pytest.mark.parametrize("name", sorted(CASES))
def test_vals_match_torch(name: str) -> None:
    """Every node's meta["val"] has torch's size and dtype."""
    ours, _, _ = _ours(name, "fake")
    theirs = _theirs(name, "fake")

    def one(v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return [one(i) for i in v]
        return f"{list(v.shape)} {str(v.dtype).rpartition('.')[2]}" if hasattr(v, "shape") \
            else repr(v)

    def described(gm: Any) -> list[Any]:
        return [one(n.meta["val"]) for n in gm.graph.nodes if n.op != "output"]
    assert described(ours) == described(theirs)


def _calls(gm: Any) -> list[str]:
    """Each call as text: its target, and its arguments with nodes by name."""
    return [f"{n.name} = {n.target}{n.args} {n.kwargs}" for n in gm.graph.nodes
            if n.op == "call_function"]


# functions whose nodes' names and arguments are torch's too (the pattern matcher reads them)
SAME_ARGS = ["rmsnorm", "rms_norm_functional", "mlp", "add_scalar_mul", "reductions",
             "rotary", "kv_cache_write", "indexing", "matmul_3d_2d", "linear_2d"]


@pytest.mark.parametrize("name", SAME_ARGS)
def test_node_arguments_match_torch(name: str) -> None:
    ours, _, _ = _ours(name, "real")
    assert _calls(ours) == _calls(_theirs(name, "real"))


def test_aten_overloads_are_the_graph_targets() -> None:
    """`torch.ops.aten.<name>.<overload>` is the object make_fx's nodes target (graph passes
    compare targets by identity), it runs its op, and an overload torch lacks is refused."""
    from fake_torch.fx.experimental.proxy_tensor import make_fx

    aten = ft.ops.aten
    gm = make_fx(lambda x: (x + 1)[:, 1:].reshape(-1))(ft.randn(2, 3))
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == [aten.add.Tensor, aten.slice.Tensor, aten.clone.default,
                       aten._unsafe_view.default]
    x = ft.randn(2, 3)
    np.testing.assert_array_equal(aten.slice.Tensor(x, 1, 1, 3).numpy(), x[:, 1:].numpy())
    with pytest.raises(AttributeError, match="has no overload name 'Tensr'"):
        aten.add.Tensr  # noqa: B018


def test_value_read_refused_as_torch() -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    messages = []
    for L, mk in ((ft, make_fx), (torch, torch_make_fx)):
        with pytest.raises(RuntimeError) as caught:
            mk(lambda x: x * x.sum().item())(L.randn(2, 3))
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("It appears that you're trying to get value out of a tracing")


def _writing(L: Any) -> Callable[..., Any]:
    @L.library.custom_op("mfxtest::write", mutates_args=("out",),
                         schema="(Tensor(a!) out, Tensor x) -> ()")
    def write(out: Any, x: Any) -> None:
        out.copy_(x)

    def f(o: Any, x: Any) -> Any:
        write(o, x * 2)
        return x + 1
    return f


def test_fwd_only_keeps_a_mutating_custom_op() -> None:
    torch = pytest.importorskip("torch")
    from torch._inductor.pattern_matcher import fwd_only as torch_fwd_only

    from fake_torch._inductor.pattern_matcher import fwd_only

    ours = fwd_only(_writing(ft), (ft.zeros(2), ft.ones(2)))
    theirs = torch_fwd_only(_writing(torch), (torch.zeros(2), torch.ones(2)))
    assert _targets(ours) == _targets(theirs)
    assert "mfxtest.write.default" in _targets(ours)[1]
