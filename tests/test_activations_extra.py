"""F.elu / selu / celu (and their in-place forms), glu, hardsigmoid, logsigmoid, hardshrink,
softshrink, softsign, tanhshrink, softmin and their modules (with Softmax2d) against real torch
(CPU build): values across dtypes, launches (the same ops on both builds here), repr, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

_rng = np.random.default_rng(9)

CALLS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("elu", lambda t, x: t.nn.functional.elu(x)),
    ("elu alpha", lambda t, x: t.nn.functional.elu(x, 0.3)),
    ("elu inplace", lambda t, x: t.nn.functional.elu(x, 2.0, inplace=True)),
    ("elu_", lambda t, x: t.nn.functional.elu_(x)),
    ("selu", lambda t, x: t.nn.functional.selu(x)),
    ("selu inplace", lambda t, x: t.nn.functional.selu(x, inplace=True)),
    ("torch.selu", lambda t, x: t.selu(x)),
    ("torch.selu_", lambda t, x: t.selu_(x)),
    ("celu", lambda t, x: t.nn.functional.celu(x, 0.7)),
    ("torch.celu_", lambda t, x: t.celu_(x, 1.5)),
    ("glu", lambda t, x: t.nn.functional.glu(x)),
    ("glu dim 0", lambda t, x: t.nn.functional.glu(x, 0)),
    ("hardsigmoid", lambda t, x: t.nn.functional.hardsigmoid(x * 4)),
    ("hardsigmoid inplace", lambda t, x: t.nn.functional.hardsigmoid(x, inplace=True)),
    ("logsigmoid", lambda t, x: t.nn.functional.logsigmoid(x * 30)),
    ("hardshrink", lambda t, x: t.nn.functional.hardshrink(x)),
    ("Tensor.hardshrink", lambda t, x: x.hardshrink(0.2)),
    ("softshrink", lambda t, x: t.nn.functional.softshrink(x, 0.3)),
    ("softsign", lambda t, x: t.nn.functional.softsign(x)),
    ("tanhshrink", lambda t, x: t.nn.functional.tanhshrink(x)),
    ("softmin", lambda t, x: t.nn.functional.softmin(x, -1)),
    ("softmin dtype", lambda t, x: t.nn.functional.softmin(x, 0, dtype=t.float64)),
]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize(("dtype", "tol"), [("float32", 2e-6), ("float16", 2e-3),
                                            ("bfloat16", 1.6e-2), ("float64", 1e-12)])
def test_activation_matches_torch(name: str, call: Callable[[Any, Any], Any], dtype: str,
                                  tol: float) -> None:
    a = (_rng.standard_normal((4, 6)) * 2).astype(np.float32)
    stored = a.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else a.astype(dtype)
    tx = torch.from_numpy(a).to(getattr(torch, dtype))
    fx = ft.tensor(stored, device="cuda")
    with torch_launches(cuda=True) as want_ops:
        want = call(torch, tx)
    with launches() as ops:
        got = call(ft, fx)
    assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(force=True).astype(np.float64),
                               want.double().numpy(), rtol=tol, atol=tol)
    assert ops == want_ops
    if "inplace" in name or name.endswith("_"):
        assert got is fx


def test_composites_launch_their_ops() -> None:
    x = ft.randn(3, 4, device="cuda")
    for fn, want in ((ft.nn.functional.softsign, ["abs", "add", "div"]),
                     (ft.nn.functional.tanhshrink, ["tanh", "sub"]),
                     (ft.nn.functional.selu, ["elu"]), (ft.nn.functional.glu, ["glu"])):
        with launches() as ops:
            fn(x)
        assert ops == want


MODULES: list[Callable[[Any], Any]] = [
    lambda t: t.nn.ELU(), lambda t: t.nn.ELU(0.5, inplace=True), lambda t: t.nn.SELU(),
    lambda t: t.nn.SELU(inplace=True), lambda t: t.nn.CELU(2.0), lambda t: t.nn.GLU(1),
    lambda t: t.nn.Hardsigmoid(), lambda t: t.nn.LogSigmoid(), lambda t: t.nn.Softsign(),
    lambda t: t.nn.Tanhshrink(), lambda t: t.nn.Hardshrink(0.3), lambda t: t.nn.Softshrink(),
    lambda t: t.nn.Softmin(1), lambda t: t.nn.Softmax2d(),
]


@pytest.mark.parametrize("build", MODULES)
def test_activation_modules_match_torch(build: Callable[[Any], Any]) -> None:
    theirs, ours = build(torch), build(ft)
    assert repr(ours) == repr(theirs)
    a = _rng.standard_normal((2, 4, 3, 2)).astype(np.float32)
    want = theirs(torch.from_numpy(a.copy()))
    got = ours(ft.tensor(a))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=2e-6)


ERRORS: list[Callable[[Any], Any]] = [
    lambda t: t.nn.functional.elu(t.ones(3, dtype=t.int64)),
    lambda t: t.selu(t.ones(3, dtype=t.int32)),
    lambda t: t.nn.functional.celu(t.ones(3), alpha=0.0),
    lambda t: t.nn.functional.glu(t.ones(3)),
    lambda t: t.nn.functional.glu(t.ones(())),
    lambda t: t.nn.functional.glu(t.ones(4, 2), 2),
    lambda t: t.nn.functional.glu(t.ones(4, dtype=t.int64)),
    lambda t: t.nn.functional.hardsigmoid(t.ones(3, dtype=t.int64)),
    lambda t: t.nn.functional.logsigmoid(t.ones(3, dtype=t.int64)),
    lambda t: t.hardshrink(t.ones(3, dtype=t.int64)),
    lambda t: t.nn.functional.softshrink(t.ones(3), -1),
    lambda t: t.nn.functional.softshrink(t.ones(3, dtype=t.int64)),
    lambda t: t.nn.functional.softmin(t.ones(3, dtype=t.int64), 0),
    lambda t: t.nn.Softmax2d()(t.ones(2, 3)),
]


@pytest.mark.parametrize("program", ERRORS)
def test_activation_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_softmin_without_dim_warns_as_torch() -> None:
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        ft.nn.functional.softmin(ft.ones(2, 3))


# --- cosine_similarity, pairwise_distance ----------------------------------------------------

DISTANCES: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ("cosine_similarity", (4, 8), (4, 8), {}),
    ("cosine_similarity", (4, 8), (1, 8), {"dim": 1, "eps": 0.5}),
    ("cosine_similarity", (3, 4, 5), (4, 5), {"dim": 0}),
    ("cosine_similarity", (2, 6), (2, 6), {"dim": -1}),
    ("pairwise_distance", (4, 8), (4, 8), {}),
    ("pairwise_distance", (4, 8), (8,), {"p": 1.0, "keepdim": True}),
    ("pairwise_distance", (2, 3, 5), (2, 3, 5), {"p": 3.0, "eps": 0.1}),
]


@pytest.mark.parametrize(("fn", "s1", "s2", "kwargs"), DISTANCES)
def test_distances_match_torch(fn: str, s1: tuple[int, ...], s2: tuple[int, ...],
                               kwargs: dict[str, Any]) -> None:
    a, b = _rng.standard_normal(s1).astype(np.float32), _rng.standard_normal(s2).astype(
        np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    fa, fb = ft.tensor(a, device="cuda"), ft.tensor(b, device="cuda")
    with torch_launches(cuda=True) as want_ops:
        want = getattr(torch.nn.functional, fn)(ta, tb, **kwargs)
    with launches() as ops:
        got = getattr(ft.nn.functional, fn)(fa, fb, **kwargs)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(force=True), want.numpy(), rtol=1e-5, atol=1e-6)
    # torch.norm's aten op is `norm`; fake_torch's torch.norm launches it as linalg_vector_norm
    assert ops == ["linalg_vector_norm" if op == "norm" else op for op in want_ops]


def test_cosine_similarity_takes_an_integral_input_and_refuses_two() -> None:
    a = _rng.integers(-3, 3, (3, 4))
    b = _rng.standard_normal((3, 4)).astype(np.float32)
    want = torch.nn.functional.cosine_similarity(torch.from_numpy(a), torch.from_numpy(b))
    got = ft.nn.functional.cosine_similarity(ft.tensor(a), ft.tensor(b))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert_raises_like_torch(lambda t: t.nn.functional.cosine_similarity(
        t.ones(2, 3, dtype=t.int64), t.ones(2, 3, dtype=t.int64)))
    assert_raises_like_torch(lambda t: t.nn.functional.cosine_similarity(t.ones(4, 8),
                                                                         t.ones(4, 3)))
    assert_raises_like_torch(lambda t: t.nn.functional.pairwise_distance(t.ones(4, 8),
                                                                         t.ones(4, 3)))


@pytest.mark.parametrize("build", [lambda t: t.nn.CosineSimilarity(),
                                   lambda t: t.nn.CosineSimilarity(0, 1e-3),
                                   lambda t: t.nn.PairwiseDistance(),
                                   lambda t: t.nn.PairwiseDistance(1.0, 1e-3, True)])
def test_distance_modules_match_torch(build: Callable[[Any], Any]) -> None:
    theirs, ours = build(torch), build(ft)
    assert repr(ours) == repr(theirs)
    assert vars(ours).get("norm", vars(ours).get("dim")) == \
        vars(theirs).get("norm", vars(theirs).get("dim"))
    a, b = (_rng.standard_normal((3, 5)).astype(np.float32) for _ in range(2))
    np.testing.assert_allclose(ours(ft.tensor(a), ft.tensor(b)).numpy(),
                               theirs(torch.from_numpy(a), torch.from_numpy(b)).numpy(),
                               rtol=1e-5, atol=1e-6)
