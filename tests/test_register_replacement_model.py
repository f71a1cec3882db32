"""register_replacement (fwd_only) on a toy model, against real torch 2.13: the RMSNorm
composite `x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w` replaced by a custom op
`toymodel::rms_norm` (one fused norm kernel), in the make_fx graph of a small model that has
the pattern twice around a Linear, next to a near miss (another eps) the matcher must leave
alone. The match count and the rewritten graph's targets are torch's; run eagerly on
fake_torch's cuda device, the rewritten model launches per step what the replacement's op
launches in place of each match, and nothing else changes (the launch counter is the oracle,
with torch's own dispatch of the same rewritten graph, its CUDA build's fused norm)."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from oracles import launches, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")
_FT: Any = ft  # fake_torch, its factories typed loosely as the torch-like module here


EPS = 1e-6


def _rms(L: ModuleType, x: Any, w: Any, eps: float = EPS) -> Any:
    return x * L.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


@functools.cache
def _fused(L: ModuleType) -> Any:
    """toymodel::rms_norm(x, w): RMSNorm of the last dim with eps 1e-6, a fake impl given."""
    def body(x: Any, w: Any) -> Any:
        return L.nn.functional.rms_norm(x, (x.shape[-1],), w, EPS)

    def fake(x: Any, w: Any) -> Any:
        return L.empty_like(x)
    op = L.library.custom_op("toymodel::rms_norm", mutates_args=(),
                             schema="(Tensor x, Tensor w) -> Tensor")(body)
    op.register_fake(fake)
    return L.ops.toymodel.rms_norm.default


def _forward(L: ModuleType, x: Any, w1: Any, w2: Any, wp: Any) -> Any:
    """The toy model's step: two RMSNorms around a Linear, a residual add, and an RMSNorm of
    another eps (a near miss). x: (4, 8); w1, w2: (8,); wp: (8, 8)."""
    h = L.nn.functional.linear(_rms(L, x, w1), wp)  # a match
    h = _rms(L, h, w2) + x  # a match
    return h, _rms(L, h, w1, eps=1e-5)


def _weights(L: ModuleType, device: str) -> tuple[Any, Any, Any]:
    L.manual_seed(0)
    return L.randn(8, device=device), L.randn(8, device=device), L.randn(8, 8, device=device)


def _rewritten(L: ModuleType, device: str) -> tuple[Any, int, Any]:
    """The step's make_fx graph (fake tracing, as a compiler's graph) with the pattern
    replaced: (graph module, matches, the weights)."""
    pm = importlib.import_module(f"{L.__name__}._inductor.pattern_matcher")
    make_fx = importlib.import_module(f"{L.__name__}.fx.experimental.proxy_tensor").make_fx
    fused = _fused(L)

    def search(x: Any, w: Any) -> Any:
        return _rms(L, x, w)

    def replace(x: Any, w: Any) -> Any:
        return fused(x, w)

    patterns = pm.PatternMatcherPass()
    example = [L.empty(4, 8), L.empty(8)]
    pm.register_replacement(search, replace, example, pm.fwd_only, patterns)
    weights = _weights(L, device)

    def step(x: Any, w1: Any, w2: Any, wp: Any) -> Any:
        return _forward(L, x, w1, w2, wp)
    gm = make_fx(step, tracing_mode="fake")(L.randn(4, 8, device=device), *weights)
    count = patterns.apply(gm.graph)
    gm.graph.lint()
    gm.recompile()
    return gm, count, weights


def _targets(gm: Any) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_replacement_matches_torchs_count_and_graph() -> None:
    ours, count, _ = _rewritten(ft, "cpu")
    theirs, torch_count, _ = _rewritten(torch, "cpu")
    assert count == torch_count == 2
    assert _targets(ours) == _targets(theirs) == [
        "toymodel.rms_norm.default", "aten.t.default", "aten.mm.default",
        "toymodel.rms_norm.default", "aten.add.Tensor",  # the near miss (eps 1e-5) stays:
        "aten.pow.Tensor_Scalar", "aten.mean.dim", "aten.add.Tensor", "aten.rsqrt.default",
        "aten.mul.Tensor", "aten.mul.Tensor"]


def test_rewritten_model_computes_the_model() -> None:
    gm, _, weights = _rewritten(ft, "cpu")
    x = _FT.randn(4, 8)
    for w, g in zip(_forward(ft, x, *weights), gm(x, *weights), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def test_launches_per_step_follow_the_replacement() -> None:
    """On the cuda device: each match's six launches (pow, mean, add, rsqrt, mul, mul) become
    the replacement's one fused norm; every other launch of the step is unchanged."""
    gm, count, weights = _rewritten(ft, "cuda")
    x = _FT.randn(4, 8, device="cuda")
    with launches() as fused:
        _fused(ft)(x, weights[0])
    with launches() as eager:
        _forward(ft, x, *weights)
    norm = ["pow", "mean", "add", "rsqrt", "mul", "mul"]
    assert fused == ["_fused_rms_norm"]
    assert eager == [*norm, "mm", *norm, "add", *norm]
    for _ in range(2):  # every step the same
        with launches() as step:
            gm(x, *weights)
        assert step == ["_fused_rms_norm", "mm", "_fused_rms_norm", "add", *norm]
    assert len(step) == len(eager) - count * (len(norm) - len(fused))
    # the oracles: torch's CUDA build runs the replacement's rms_norm as one fused kernel, and
    # torch dispatches the rest of its own rewritten graph as the step above does
    tx, tw = torch.randn(4, 8), torch.randn(8)
    with torch_launches(cuda=True) as torch_fused:
        torch.nn.functional.rms_norm(tx, (8,), tw, EPS)
    assert fused == torch_fused
    theirs, _, torch_weights = _rewritten(torch, "cpu")
    with torch_launches(cuda=True) as torch_step:
        theirs(tx, *torch_weights)
    assert [op for op in step if op not in fused] == torch_step  # its custom op's body unseen
