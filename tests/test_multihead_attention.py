"""nn.MultiheadAttention, F.multi_head_attention_forward and torch._native_multi_head_attention
against real torch (CPU build): parameters, repr, state_dict keys, init, outputs and attention
weights, which path runs (the fused fast path exactly when torch takes it), launches, errors.

Launch oracle: `torch_launches(cuda=True)`. Its rule for `_native_multi_head_attention` lists
the ops native_multi_head_attention_cuda runs inside (tests/oracles.py). Two differences between
the CPU build under a dispatch mode and CUDA eager are mapped here, each for its reason:
- at::linear of a strided 3-D input adds the bias out of place (`add`) when a dispatch mode is
  active (isTensorSubclassLike), in place (`add_`) otherwise, as on a GPU;
- the CPU build's sdpa kernel `_scaled_dot_product_flash_attention_for_cpu` is, for the float32
  unmasked calls used here (head_dim a multiple of 4), the memory-efficient kernel on CUDA, whose
  output is laid out (N, L, heads, hd) whatever the query's layout (the CPU kernel follows the
  query's (L, N, heads, hd)), so the composite's merge of heads copies it (`clone`) on CUDA.
The fast path is recorded without the oracle's TorchFunctionMode (fused_norms=False), which
would make torch leave it. Parameters are frozen (requires_grad False) where a Linear meets a
strided 3-D input: torch's matmul folds it into one mm (after a `clone`) when the weight's view
requires grad, and fake_torch's views do not carry requires_grad (a gap outside these modules).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft
from fake_torch import nn

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

_rng = np.random.default_rng(11)


def randn(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def as_cuda_eager(ops: list[str]) -> list[str]:
    """The oracle's list with the two mappings the module docstring gives."""
    out = []
    for i, name in enumerate(ops):
        if name == "add" and i > 0 and ops[i - 1] in ("mm", "bmm"):  # a linear's bias
            name = "add_"
        if name == "_scaled_dot_product_flash_attention_for_cpu":
            out += ["_scaled_dot_product_efficient_attention", "clone"]
            continue
        out.append(name)
    return out


def close(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    if theirs is None:
        assert ours is None
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(np.asarray(ours.numpy(force=True), np.float64),
                               theirs.detach().double().numpy(), rtol=tol, atol=tol)


def pair(build: Callable[[Any], Any], device: str = "cuda",
         frozen: bool = True) -> tuple[Any, Any]:
    """(torch module, fake_torch module on `device`) with torch's parameters; frozen: none
    requires grad (see the module docstring)."""
    theirs, ours = build(torch), build(ft)
    ours.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    ours = ours.to(device)
    if frozen:
        for p in (*theirs.parameters(), *ours.parameters()):
            p.requires_grad_(False)
    return theirs, ours


def run(theirs: Any, ours: Any, arrays: dict[str, np.ndarray], kwargs: dict[str, Any],
        grad: bool = True) -> tuple[Any, Any, list[str], list[str]]:
    """Both modules on the same inputs (query is key is value where the arrays are one):
    (torch's output pair, ours, torch's cuda launches, ours)."""
    def tensors(lib: Any, device: str) -> dict[str, Any]:
        made: dict[int, Any] = {}
        out = {}
        for name, a in arrays.items():
            if id(a) not in made:
                made[id(a)] = (torch.from_numpy(a.copy()) if lib is torch else
                               ft.tensor(a, device=device))
            out[name] = made[id(a)]
        return out

    t_args, f_args = tensors(torch, "cpu"), tensors(ft, "cuda")
    with torch.set_grad_enabled(grad), torch_launches(cuda=True, fused_norms=False) as want_ops:
        want = theirs(**t_args, **kwargs)
    with ft.set_grad_enabled(grad), launches() as ops:
        got = ours(**f_args, **kwargs)
    return want, got, as_cuda_eager(want_ops), ops


# --- construction -----------------------------------------------------------------------------

BUILDS: list[Callable[[Any], Any]] = [
    lambda t: t.nn.MultiheadAttention(8, 2),
    lambda t: t.nn.MultiheadAttention(8, 4, dropout=0.1, bias=False, batch_first=True),
    lambda t: t.nn.MultiheadAttention(8, 2, kdim=6, vdim=5),
    lambda t: t.nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True),
]


@pytest.mark.parametrize("build", BUILDS)
def test_construction_matches_torch(build: Callable[[Any], Any]) -> None:
    with torch_launches(cuda=True) as want_ops:
        theirs = build(torch)
    with ft.device("cuda"), launches() as ops:
        ours = build(ft)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert {k: tuple(v.shape) for k, v in ours.named_parameters()} == \
        {k: tuple(v.shape) for k, v in theirs.named_parameters()}
    for name in ("embed_dim", "kdim", "vdim", "num_heads", "head_dim", "dropout", "batch_first",
                 "add_zero_attn", "_qkv_same_embed_dim"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert type(ours.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(ours.out_proj, nn.Linear)
    assert ops == want_ops  # the out_proj Linear's own init, then xavier / constant / normal
    for name, p in ours.named_parameters():  # xavier bounds; the biases start at zero
        a, w = p.numpy(force=True), getattr(theirs, name.split(".")[0])
        if name in ("in_proj_bias", "out_proj.bias"):
            assert not a.any()
        elif name.endswith("proj_weight"):
            bound = np.sqrt(6 / (a.shape[0] + a.shape[1]))
            assert np.abs(a).max() <= bound and a.std() > bound / 2.5, name
        assert w is not None


def test_construction_errors_match_torch() -> None:
    assert_raises_like_torch(lambda t: t.nn.MultiheadAttention(0, 2))
    assert_raises_like_torch(lambda t: t.nn.MultiheadAttention(8, -1))
    assert_raises_like_torch(lambda t: t.nn.MultiheadAttention(8, 3))


# --- the composite path -----------------------------------------------------------------------

def _arrays(batch_first: bool, kdim: int = 8, vdim: int = 8, unbatched: bool = False,
            self_attn: bool = False) -> dict[str, np.ndarray]:
    if unbatched:
        return {"query": randn(5, 8), "key": randn(4, kdim), "value": randn(4, vdim)}
    n, lq, s = 3, 5, 4
    shape = (n, lq) if batch_first else (lq, n)
    if self_attn:
        x = randn(*shape, 8)
        return {"query": x, "key": x, "value": x}
    kshape = (n, s) if batch_first else (s, n)
    return {"query": randn(*shape, 8), "key": randn(*kshape, kdim),
            "value": randn(*kshape, vdim)}


def _mask_kwargs(kind: str, batch_first: bool, self_attn: bool = False) -> dict[str, Any]:
    s = 5 if self_attn else 4
    kpm = np.zeros((3, s), bool)
    kpm[0, 2:] = True
    am = np.triu(np.ones((5, s), bool), 1)
    out: dict[str, Any] = {}
    if "kpm" in kind:
        out["key_padding_mask"] = kpm
    if "attn" in kind:
        out["attn_mask"] = am
    if "float" in kind:
        out["attn_mask"] = np.where(am, -1e4, 0.5).astype(np.float32)
    return out


SLOW_CASES: list[tuple[Callable[[Any], Any], dict[str, Any], str, bool]] = [
    (BUILDS[0], {}, "", False),
    (BUILDS[0], {"average_attn_weights": False}, "kpm", False),
    (BUILDS[0], {}, "attn kpm", False),
    (BUILDS[0], {}, "float", False),
    (BUILDS[0], {"need_weights": False}, "", False),
    (BUILDS[1], {}, "attn", False),  # batch_first, no bias, 4 heads (dropout: eval below)
    (BUILDS[2], {}, "kpm", False),  # separate projections
    (BUILDS[2], {"need_weights": False}, "", False),
    (BUILDS[3], {}, "attn kpm", False),  # bias_k / bias_v and a zero attention row
    (BUILDS[0], {}, "", True),  # unbatched
    (lambda t: t.nn.MultiheadAttention(8, 2, batch_first=True), {"need_weights": False,
                                                                   "is_causal": True}, "attn",
     False),
]


@pytest.mark.parametrize(("build", "kwargs", "masks", "unbatched"), SLOW_CASES)
def test_composite_path_matches_torch(build: Callable[[Any], Any], kwargs: dict[str, Any],
                                      masks: str, unbatched: bool) -> None:
    theirs, ours = pair(build)
    theirs.eval()
    ours.eval()  # dropout off; grad stays on, so torch keeps to the composite
    arrays = _arrays(theirs.batch_first, theirs.kdim, theirs.vdim, unbatched)
    arrays.update({k: (v[0] if unbatched and k == "key_padding_mask" else v)
                   for k, v in _mask_kwargs(masks, theirs.batch_first).items()})
    if unbatched:
        arrays.pop("attn_mask", None)
    want, got, want_ops, ops = run(theirs, ours, arrays, kwargs)
    close(got[0], want[0])
    close(got[1], want[1])
    assert ops == want_ops
    assert "_transform_bias_rescale_qkv" not in ops


def test_functional_form_matches_torch_with_static_keys() -> None:
    e, h, n, lq, s = 8, 2, 3, 5, 4
    args = [randn(lq, n, e), randn(s, n, e), randn(s, n, e)]
    w_in, b_in, w_out, b_out = randn(3 * e, e), randn(3 * e), randn(e, e), randn(e)
    static_k, static_v = randn(n * h, 6, e // h), randn(n * h, 6, e // h)

    def call(lib: Any, x: list[Any]) -> Any:
        return lib.nn.functional.multi_head_attention_forward(
            *x[:3], e, h, x[3], x[4], None, None, False, 0.0, x[5], x[6], training=False,
            static_k=x[7], static_v=x[8], average_attn_weights=False)

    arrays = [*args, w_in, b_in, w_out, b_out, static_k, static_v]
    want = call(torch, [torch.from_numpy(a) for a in arrays])
    got = call(ft, [ft.tensor(a) for a in arrays])
    close(got[0], want[0])
    close(got[1], want[1])


def test_training_dropout_draws_on_the_weights() -> None:
    _, ours = pair(lambda t: t.nn.MultiheadAttention(8, 2, dropout=0.5))
    f_args = {k: ft.tensor(v, device="cuda") for k, v in _arrays(False).items()}
    with launches() as ops:
        out, weights = ours(**f_args)
    assert ops.count("native_dropout") == 1 and ops.index("native_dropout") == \
        ops.index("_softmax") + 1
    assert tuple(out.shape) == (5, 3, 8) and tuple(weights.shape) == (3, 5, 4)


# --- the fast path ----------------------------------------------------------------------------

FAST_CASES: list[tuple[dict[str, Any], str]] = [
    ({}, ""),
    ({"need_weights": False}, ""),  # sdpa's fused kernel between two addmm
    ({"average_attn_weights": False}, ""),
    ({}, "kpm"),
    ({"need_weights": False}, "attn"),
    ({}, "attn kpm"),  # masks merged by one add
]


@pytest.mark.parametrize(("kwargs", "masks"), FAST_CASES)
def test_fast_path_matches_torch(kwargs: dict[str, Any], masks: str) -> None:
    # embed 16 / 2 heads: head dim 8, which the fused sdpa branch needs
    theirs, ours = pair(lambda t: t.nn.MultiheadAttention(16, 2, batch_first=True).eval())
    x = randn(3, 5, 16)
    arrays = {"query": x, "key": x, "value": x, **_mask_kwargs(masks, True, self_attn=True)}
    with torch.no_grad():
        want, got, want_ops, ops = run(theirs, ours, arrays, kwargs, grad=False)
    # key padding masks a whole row of batch 0 nowhere; values compare everywhere
    close(got[0], want[0])
    close(got[1], want[1])
    assert ops == want_ops
    fused = kwargs.get("need_weights") is False and not masks
    assert ("_scaled_dot_product_efficient_attention" in ops) == fused
    assert ("_transform_bias_rescale_qkv" in ops) == (not fused)


def test_fast_path_launch_lists() -> None:
    """The lists the oracle derives, written out: what native_multi_head_attention_cuda runs."""
    _, ours = pair(lambda t: t.nn.MultiheadAttention(16, 2, batch_first=True).eval())
    x = ft.randn(2, 5, 16, device="cuda")
    kpm = ft.zeros(2, 5, dtype=ft.bool, device="cuda")
    with ft.no_grad():
        with launches() as ops:
            ours(x, x, x)
        assert ops == ["mm", "_transform_bias_rescale_qkv", "bmm", "_softmax", "bmm", "clone",
                       "addmm", "sum", "div_"]
        with launches() as ops:
            ours(x, x, x, need_weights=False)
        assert ops == ["addmm", "_scaled_dot_product_efficient_attention", "addmm"]
        with launches() as ops:
            ours(x, x, x, key_padding_mask=kpm, need_weights=False)
        assert ops == ["zeros_like", "masked_fill_", "mm", "_transform_bias_rescale_qkv", "bmm",
                       "_to_copy", "_masked_softmax", "bmm", "clone", "addmm"]
        half = ours.half()
        xh = x.half()
        with launches() as ops:
            half(xh, xh, xh, need_weights=False)
        assert ops == ["addmm", "_scaled_dot_product_flash_attention", "addmm"]


def test_a_fully_masked_row_is_nan_on_the_cpu_as_torch_and_zero_on_cuda() -> None:
    theirs, ours = pair(lambda t: t.nn.MultiheadAttention(8, 2, batch_first=True).eval(),
                        device="cpu")
    x, kpm = randn(2, 5, 8), np.zeros((2, 5), bool)
    kpm[1] = True  # every key of sample 1 masked
    with torch.no_grad():
        want, _ = theirs(*[torch.from_numpy(x)] * 3, key_padding_mask=torch.from_numpy(kpm))
    fx = ft.tensor(x)
    with ft.no_grad():
        got, _ = ours(fx, fx, fx, key_padding_mask=ft.tensor(kpm))
        np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(want.numpy()))
        assert np.isnan(got.numpy()[1]).all() and not np.isnan(got.numpy()[0]).any()
        close(got[0], want[0])
        ours.cuda()
        xc = fx.cuda()
        got_cuda, w_cuda = ours(xc, xc, xc, key_padding_mask=ft.tensor(kpm, device="cuda"))
    assert not w_cuda.numpy(force=True)[1].any()  # the CUDA kernel writes zeros
    np.testing.assert_allclose(got_cuda.numpy(force=True)[1],  # zero context: out_proj's bias
                               np.broadcast_to(ours.out_proj.bias.numpy(force=True), (5, 8)),
                               atol=1e-6)


# which path: torch's conditions, each alone
NOT_FAST: list[tuple[str, Callable[[Any], Any], dict[str, Any]]] = [
    ("training", lambda t: t.nn.MultiheadAttention(8, 2, batch_first=True), {}),
    ("odd heads", lambda t: t.nn.MultiheadAttention(9, 3, batch_first=True).eval(), {}),
    ("not batch_first", lambda t: t.nn.MultiheadAttention(8, 2).eval(), {}),
    ("bias_k", lambda t: t.nn.MultiheadAttention(8, 2, add_bias_kv=True,
                                                 batch_first=True).eval(), {}),
    ("zero attn", lambda t: t.nn.MultiheadAttention(8, 2, add_zero_attn=True,
                                                    batch_first=True).eval(), {}),
    ("no bias", lambda t: t.nn.MultiheadAttention(8, 2, bias=False, batch_first=True).eval(),
     {}),
    ("float mask", lambda t: t.nn.MultiheadAttention(8, 2, batch_first=True).eval(),
     {"attn_mask": np.zeros((5, 5), np.float32)}),
]


@pytest.mark.parametrize(("why", "build", "extra"), NOT_FAST, ids=[c[0] for c in NOT_FAST])
def test_fast_path_is_refused_where_torch_refuses_it(why: str, build: Callable[[Any], Any],
                                                     extra: dict[str, Any]) -> None:
    theirs, ours = pair(build)
    theirs.eval() if not theirs.training else None
    x = randn(3, 5, theirs.embed_dim)
    with torch.no_grad():
        want, got, want_ops, ops = run(theirs, ours, {"query": x, "key": x, "value": x, **extra},
                                       {}, grad=False)
    close(got[0], want[0])
    close(got[1], want[1])
    assert ops == want_ops
    assert "_transform_bias_rescale_qkv" not in ops


def test_fast_path_needs_no_grad_and_the_backend_switch() -> None:
    """Which path, decided as torch decides (the lists themselves: the tests above; with grad
    on, torch folds the strided Linear inputs into mm where fake_torch runs bmm, see the module
    docstring)."""
    theirs, ours = pair(lambda t: t.nn.MultiheadAttention(8, 2, batch_first=True).eval(),
                        frozen=False)
    x = randn(3, 5, 8)
    arrays = {"query": x, "key": x, "value": x}

    def fused(grad: bool) -> tuple[bool, bool]:
        want, got, want_ops, ops = run(theirs, ours, arrays, {}, grad=grad)
        close(got[0], want[0])
        return "_transform_bias_rescale_qkv" in ops, "_transform_bias_rescale_qkv" in want_ops

    assert fused(grad=True) == (False, False)  # the weights require grad
    assert fused(grad=False) == (True, True)
    try:
        torch.backends.mha.set_fastpath_enabled(False)
        ft.backends.mha.set_fastpath_enabled(False)
        assert fused(grad=False) == (False, False)
    finally:
        torch.backends.mha.set_fastpath_enabled(True)
        ft.backends.mha.set_fastpath_enabled(True)


# --- errors -----------------------------------------------------------------------------------

def _mha(t: Any, **kw: Any) -> Any:
    return t.nn.MultiheadAttention(8, 2, **kw)


ERRORS: list[Callable[[Any], Any]] = [
    lambda t: _mha(t)(t.ones(5, 3, 8), t.ones(4, 8), t.ones(4, 8)),
    lambda t: _mha(t)(t.ones(5, 8), t.ones(4, 3, 8), t.ones(4, 3, 8)),
    lambda t: _mha(t)(t.ones(2, 5, 3, 8), t.ones(4, 3, 8), t.ones(4, 3, 8)),
    lambda t: _mha(t)(t.ones(5, 3, 6), t.ones(4, 3, 6), t.ones(4, 3, 6)),
    lambda t: _mha(t)(t.ones(5, 3, 8), t.ones(4, 3, 8), t.ones(3, 3, 8)),
    lambda t: _mha(t)(t.ones(5, 3, 8), t.ones(4, 3, 8), t.ones(4, 3, 8),
                      key_padding_mask=t.zeros(3, 4, 1, dtype=t.bool)),
    lambda t: _mha(t)(t.ones(5, 3, 8), t.ones(4, 3, 8), t.ones(4, 3, 8),
                      key_padding_mask=t.zeros(3, 5, dtype=t.bool)),
    lambda t: _mha(t)(t.ones(5, 3, 8), t.ones(4, 3, 8), t.ones(4, 3, 8),
                      attn_mask=t.zeros(5, 5, dtype=t.bool)),
    lambda t: _mha(t)(t.ones(5, 3, 8), t.ones(4, 3, 8), t.ones(4, 3, 8),
                      attn_mask=t.zeros(2, 5, 4, dtype=t.bool)),
    lambda t: _mha(t)(t.ones(5, 3, 8), t.ones(4, 3, 8), t.ones(4, 3, 8),
                      attn_mask=t.zeros(5, 4, dtype=t.int64)),
    lambda t: _mha(t)(t.ones(5, 3, 8), t.ones(4, 3, 8), t.ones(4, 3, 8), is_causal=True),
    lambda t: _mha(t)(t.ones(5, 8), t.ones(4, 8), t.ones(4, 8),
                      attn_mask=t.zeros(3, 5, 4, dtype=t.bool)),
    lambda t: _mha(t, kdim=6)(t.ones(5, 3, 8), t.ones(4, 3, 6), t.ones(3, 3, 8)),
    lambda t: _mha(t, kdim=6)(t.ones(5, 3, 8), t.ones(4, 3, 5), t.ones(4, 3, 8)),
]


@pytest.mark.parametrize("program", ERRORS)
def test_forward_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_mismatched_mask_types_warn_as_torch() -> None:
    m = nn.MultiheadAttention(8, 2)
    x = ft.ones(5, 3, 8)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        m(x, x, x, key_padding_mask=ft.zeros(3, 5, dtype=ft.bool),
          attn_mask=ft.zeros(5, 5))


def test_fast_path_takes_sdpa_only_for_head_dims_that_are_multiples_of_8() -> None:
    """An H200 (torch 2.11.0+cu130, tests/gpu/nnmods_gpu.py) ran embed 16 / 4 heads through the
    unfused kernels (7) and embed 32 / 4 heads through gemm, fmha_cutlassF, gemm."""
    for embed, want in ((16, 7), (32, 3)):
        _, ours = pair(lambda t, e=embed: t.nn.MultiheadAttention(e, 4, batch_first=True).eval())
        x = ft.randn(2, 5, embed, device="cuda")
        with ft.no_grad(), launches() as ops:
            ours(x, x, x, need_weights=False)
        assert len(ops) == want
