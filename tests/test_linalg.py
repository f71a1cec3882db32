"""Matrix products (matmul/@, mm, bmm, addmm, baddbmm, dot, mv, outer, einsum) against numpy
and real torch: values, dtypes, error texts, and the kernels launched.

Launch oracle: `oracles.torch_launches`, real torch's dispatcher less the ops that launch nothing
on a GPU (1-D @ 2-D ends in an in-place `squeeze_`, which only rewrites sizes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import NP_DTYPE, first_line, launches, to_numpy, to_torch, torch_launches

import fake_torch as ft


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def rand(shape: Sequence[int], dtype: str = "float32", seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(-4, 5, size=shape).astype(NP_DTYPE[dtype])
    return rng.standard_normal(shape).astype(np.float32).astype(NP_DTYPE[dtype])


def fake(a: np.ndarray, device: str = "cuda", perm: Sequence[int] | None = None,
         requires_grad: bool = False) -> ft.Tensor:
    """A fake tensor holding `a`, optionally seen through a permuting view."""
    t = ft.tensor(a, device=device)
    if perm is not None:
        t = ft.Tensor._make(np.transpose(t._a, perm), t.device, t._storage)
    return t.requires_grad_(requires_grad)


def real(a: np.ndarray, perm: Sequence[int] | None = None, requires_grad: bool = False) -> Any:
    """A real torch tensor holding `a`, optionally seen through a permuting view."""
    t = to_torch(a)
    t = t.permute(*perm) if perm is not None else t
    return t.requires_grad_(requires_grad)


def base_shape(shape: Sequence[int], perm: Sequence[int] | None) -> tuple[int, ...]:
    """The stored shape whose permuted view by `perm` has `shape`."""
    if perm is None:
        return tuple(shape)
    out = [0] * len(shape)
    for i, p in enumerate(perm):
        out[p] = shape[i]
    return tuple(out)


# --- matmul: one row per dispatch path; launches equal torch's ------------------------------

# (shape1, perm1, shape2, perm2, requires_grad1, requires_grad2, the ops torch launches)
MATMUL_CASES = [
    ((3,), None, (3,), None, False, False, ["dot"]),
    ((2, 3), None, (3,), None, False, False, ["mv"]),
    ((3,), None, (3, 4), None, False, False, ["mm"]),
    ((2, 3), None, (3, 4), None, False, False, ["mm"]),
    ((5, 2, 3), None, (3, 4), None, False, False, ["mm"]),  # folded: one mm over 10 rows
    ((6, 5, 2, 3), None, (3, 4), None, False, False, ["mm"]),
    ((5, 2, 3), (1, 0, 2), (3, 4), None, False, False, ["bmm"]),  # rows do not fold
    ((5, 2, 3), (0, 2, 1), (3, 4), None, False, False, ["bmm"]),
    ((5, 2, 3), None, (3,), None, False, False, ["mv"]),
    ((5, 2, 3), (1, 0, 2), (3,), None, False, False, ["bmm"]),
    ((3,), None, (5, 3, 4), None, False, False, ["bmm"]),
    ((3,), None, (5, 3, 4), (0, 2, 1), False, False, ["mv"]),  # other.mT folds
    ((2, 3), None, (5, 3, 4), None, False, False, ["bmm"]),
    ((5, 2, 3), None, (5, 3, 4), None, False, False, ["bmm"]),
    ((5, 2, 3), (0, 2, 1), (5, 3, 4), None, False, False, ["bmm"]),
    ((1, 2, 3), None, (5, 3, 4), None, False, False, ["bmm"]),
    ((2, 5, 2, 3), None, (2, 5, 3, 4), None, False, False, ["bmm"]),
    ((2, 5, 2, 3), None, (5, 3, 4), None, False, False, ["clone", "bmm"]),  # expanded rhs
    ((2, 1, 2, 3), None, (1, 5, 3, 4), None, False, False, ["clone", "clone", "bmm"]),
    ((2, 5, 2, 3), (0, 2, 1, 3), (2, 5, 3, 4), None, False, False, ["clone", "bmm"]),
    ((3, 1, 2, 3), None, (1, 3, 4), None, False, False, ["bmm"]),
    ((5, 2, 0), None, (0, 4), None, False, False, ["mm"]),  # empty folds
    ((0, 2, 3), None, (3, 4), None, False, False, []),  # an empty product: no kernel runs
    ((5, 2, 0), None, (5, 0, 4), None, False, False, ["bmm"]),
    # a smaller operand that requires grad always folds (copying where it must)
    ((2, 3), None, (5, 3, 4), None, True, False, ["clone", "mm", "clone"]),
    ((3,), None, (5, 3, 4), None, True, False, ["clone", "mv"]),
    ((5, 2, 3), (1, 0, 2), (3, 4), None, False, True, ["clone", "mm"]),
    ((1, 2, 3), None, (5, 3, 4), None, True, False, ["clone", "mm", "clone"]),
    ((5, 2, 3), None, (1, 3, 4), None, False, True, ["mm"]),
]


@pytest.mark.parametrize(("s1", "p1", "s2", "p2", "g1", "g2", "want"), MATMUL_CASES)
def test_matmul_launches_what_torch_launches(torch: Any, s1: Any, p1: Any, s2: Any, p2: Any,
                                            g1: bool, g2: bool, want: list[str]) -> None:
    a, b = rand(base_shape(s1, p1), seed=1), rand(base_shape(s2, p2), seed=2)
    x, y = fake(a, perm=p1, requires_grad=g1), fake(b, perm=p2, requires_grad=g2)
    with launches() as ops:
        got = x @ y
    tx, ty = real(a, p1, g1), real(b, p2, g2)
    with torch_launches() as torch_ops:
        expected = tx @ ty
    assert torch_ops == want
    assert ops == want
    assert ft.LaunchCounter.by_op == {op: want.count(op) for op in want}
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.is_contiguous()
    np.testing.assert_allclose(to_numpy(got), to_numpy(expected), rtol=1e-5, atol=1e-5)
    ref = np.matmul(np.transpose(a, p1) if p1 else a, np.transpose(b, p2) if p2 else b)
    np.testing.assert_allclose(to_numpy(got), ref, rtol=1e-5, atol=1e-5)


def test_batch_of_one_is_a_bmm_in_eager_torch(torch: Any) -> None:
    """(b, n, m) @ (1, m, p): plain eager torch launches a bmm (the profiler sees it); only
    under a dispatch mode (or with requires_grad) does torch squeeze to an mm."""
    from torch.profiler import ProfilerActivity, profile

    a, b = rand((5, 2, 3)), rand((1, 3, 4))
    ta, tb = real(a), real(b)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        ta @ tb
    names = [e.name for e in prof.events()]
    assert "aten::bmm" in names and "aten::mm" not in names
    x, y = fake(a), fake(b)
    with launches() as ops:
        got = x @ y
    assert ops == ["bmm"]
    np.testing.assert_allclose(to_numpy(got), a @ b, rtol=1e-5)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_matmul_broadcasting_matches_numpy(data: st.DataObject) -> None:
    """Random 1-D..4-D operands with broadcastable batches, through random permuting views."""
    d1 = data.draw(st.integers(1, 4), label="dim1")
    d2 = data.draw(st.integers(1, 4), label="dim2")
    n, m, p = (data.draw(st.integers(0, 4)) for _ in range(3))
    batch = data.draw(st.lists(st.integers(1, 3), min_size=2, max_size=2))
    s1 = [*[data.draw(st.sampled_from([1, b])) for b in batch][2 - max(d1 - 2, 0):],
          *([n] if d1 > 1 else []), m]
    s2 = [*[data.draw(st.sampled_from([1, b])) for b in batch][2 - max(d2 - 2, 0):],
          *([m, p] if d2 > 1 else [m])]
    perm1 = data.draw(st.permutations(range(d1)), label="perm1")
    perm2 = data.draw(st.permutations(range(d2)), label="perm2")
    dtype = data.draw(st.sampled_from(["float32", "float64", "int64"]), label="dtype")
    a = rand(base_shape(s1, perm1), dtype, seed=3)
    b = rand(base_shape(s2, perm2), dtype, seed=4)
    got = fake(a, "cpu", perm1) @ fake(b, "cpu", perm2)
    ref = np.matmul(np.transpose(a, perm1).astype(np.float64),
                    np.transpose(b, perm2).astype(np.float64))
    assert tuple(got.shape) == ref.shape
    assert got.dtype is getattr(ft, dtype)
    np.testing.assert_allclose(to_numpy(got).astype(np.float64), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [((2, 3), (3, 4)), ((64, 64), (64, 64)), ((4, 7, 300),
                                                                           (300, 5)),
                                   ((3, 5, 33), (3, 33, 6))])
def test_half_precision_accumulates_in_float32_like_torch(torch: Any, dtype: str,
                                                          shape: Any) -> None:
    a, b = rand(shape[0], dtype, seed=5), rand(shape[1], dtype, seed=6)
    got = to_numpy(fake(a, "cpu") @ fake(b, "cpu"))
    want = to_numpy(real(a) @ real(b))
    assert got.dtype == want.dtype
    once = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(NP_DTYPE[dtype])
    assert np.array_equal(got.astype(np.float32), once.astype(np.float32))
    # torch's GEMM sums in another order: at most one rounding step apart
    ulp = float(np.finfo(np.float16).eps if dtype == "float16" else ml_dtypes.finfo(
        ml_dtypes.bfloat16).eps)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                               rtol=ulp, atol=ulp)


def test_integer_matmul_wraps_like_torch(torch: Any) -> None:
    a = np.full((2, 3), 100, np.int8)
    b = np.full((3, 2), 3, np.int8)
    got = fake(a, "cpu") @ fake(b, "cpu")
    want = real(a) @ real(b)
    assert got.dtype is ft.int8
    assert np.array_equal(to_numpy(got), want.numpy())


# --- mm, bmm, dot, mv, addmm, baddbmm, outer: values and single launches -----------------------


def test_products_match_torch_and_launch_once(torch: Any) -> None:
    m1, m2, v3 = rand((2, 3), seed=1), rand((3, 4), seed=2), rand((3,), seed=3)
    b1, b2, bias = rand((5, 2, 3), seed=4), rand((5, 3, 4), seed=5), rand((4,), seed=6)
    bb = rand((5, 2, 4), seed=7)
    v4 = rand((4,), seed=8)
    cases: list[tuple[str, Callable[[Any, Callable[..., Any]], Any]]] = [
        ("mm", lambda m, t: m.mm(t(m1), t(m2))),
        ("bmm", lambda m, t: m.bmm(t(b1), t(b2))),
        ("dot", lambda m, t: m.dot(t(v3), t(v3))),
        ("mv", lambda m, t: m.mv(t(m1), t(v3))),
        ("addmm", lambda m, t: m.addmm(t(bias), t(m1), t(m2))),
        ("addmm", lambda m, t: m.addmm(t(bias), t(m1), t(m2), beta=0.5, alpha=2.0)),
        ("addmm", lambda m, t: t(bias).addmm(t(m1), t(m2), beta=0)),
        ("baddbmm", lambda m, t: m.baddbmm(t(bb), t(b1), t(b2), beta=0.5, alpha=-1.5)),
        ("baddbmm", lambda m, t: m.baddbmm(t(bias), t(b1), t(b2))),
        ("mul", lambda m, t: m.outer(t(v3), t(v4))),
        ("mm", lambda m, t: t(m1).mm(t(m2))),
        ("matmul", lambda m, t: m.matmul(t(m1), t(m2))),
    ]
    made = {id(a): fake(a) for a in (m1, m2, v3, b1, b2, bias, bb, v4)}  # copies: not counted
    for op, fn in cases:
        with launches() as ops:
            got = fn(ft, lambda a: made[id(a)])
        with torch_launches() as torch_ops:
            want = fn(torch, real)
        assert ops == torch_ops, op
        np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-5, atol=1e-5)


def test_addmm_beta_zero_ignores_nan_in_input() -> None:
    bias = fake(np.full((2, 4), np.nan, np.float32), "cpu")
    a, b = rand((2, 3)), rand((3, 4))
    got = ft.addmm(bias, fake(a, "cpu"), fake(b, "cpu"), beta=0, alpha=2)
    np.testing.assert_allclose(to_numpy(got), 2 * (a @ b), rtol=1e-5)


def test_integer_addmm_truncates_scalars_like_torch(torch: Any) -> None:
    i = np.arange(6, dtype=np.int64).reshape(2, 3)
    for kw in ({"alpha": 0.5}, {"beta": 0.5}, {"beta": 2, "alpha": 3}):
        got = ft.addmm(fake(i[:, :2].copy(), "cpu"), fake(i, "cpu"), fake(i.T.copy(), "cpu"),
                       **kw)
        want = torch.addmm(real(i[:, :2].copy()), real(i), real(i.T.copy()),
                           **kw)
        assert np.array_equal(to_numpy(got), want.numpy()), kw


def test_inplace_addmm_writes_through_a_view() -> None:
    """addmm_ on a column slice updates the base tensor's storage: one `addmm_` launch."""
    base = fake(np.zeros((2, 6), np.float32))
    col = ft.Tensor._make(base._a[:, 1:5], base.device, base._storage)
    a, b = rand((2, 3)), rand((3, 4))
    x1, x2 = fake(a), fake(b)
    with launches() as ops:
        out = col.addmm_(x1, x2, alpha=2.0)
    assert out is col and ops == ["addmm_"]
    np.testing.assert_allclose(to_numpy(base)[:, 1:5], 2 * (a @ b), rtol=1e-5)
    assert np.all(to_numpy(base)[:, [0, 5]] == 0)


def test_inplace_baddbmm_accumulates() -> None:
    acc = fake(np.ones((5, 2, 4), np.float32))
    b1, b2 = rand((5, 2, 3)), rand((5, 3, 4))
    x1, x2 = fake(b1), fake(b2)
    with launches() as ops:
        out = acc.baddbmm_(x1, x2, beta=3)
    assert out is acc and ops == ["baddbmm_"]
    np.testing.assert_allclose(to_numpy(acc), 3 + b1 @ b2, rtol=1e-5)


def test_matmul_operators() -> None:
    a, b = rand((2, 3)), rand((3, 4))
    x1, x2 = fake(a, "cpu"), fake(b, "cpu")
    np.testing.assert_allclose(to_numpy(x1 @ x2), a @ b, rtol=1e-6)
    np.testing.assert_allclose(to_numpy(x2.__rmatmul__(x1)), a @ b, rtol=1e-6)
    with pytest.raises(TypeError, match="unsupported operand type"):
        x1 @ 3  # type: ignore[operator]
    with pytest.raises(TypeError, match="unsupported operand type"):
        3 @ x1  # type: ignore[operator]


# --- einsum: values against numpy, kernels against torch ---------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("bhqd,bhkd->bhqk", [(2, 4, 5, 8), (2, 4, 6, 8)]),
    ("bhqk,bhkd->bhqd", [(2, 4, 5, 6), (2, 4, 6, 8)]),
    ("bqhd,bkhd->bhqk", [(2, 5, 4, 8), (2, 6, 4, 8)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("i,i->", [(3,), (3,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("bi,ji->bj", [(3, 4), (5, 4)]),
    ("bsd,de->bse", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,jk", [(2, 5, 2, 3), (3, 4)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bii->bi", [(2, 3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ij,kj->ikj", [(1, 4), (3, 4)]),
]


@pytest.mark.parametrize(("equation", "shapes"), EINSUM_CASES)
def test_einsum_matches_numpy_and_torch_kernels(torch: Any, equation: str,
                                                shapes: list[tuple[int, ...]]) -> None:
    arrays = [rand(s, seed=i) for i, s in enumerate(shapes)]
    xs = [fake(a) for a in arrays]
    with launches() as ops:
        got = ft.einsum(equation, *xs)
    ts = [real(a) for a in arrays]
    with torch_launches() as torch_ops:
        want = torch.einsum(equation, *ts)
    assert ops == torch_ops
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(to_numpy(got), np.einsum(equation, *arrays), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-5, atol=1e-5)


def test_einsum_list_form_and_views() -> None:
    a = rand((3, 3))
    x = fake(a, "cpu")
    np.testing.assert_allclose(to_numpy(ft.einsum("ij,jk->ik", [x, x])), a @ a, rtol=1e-5)
    with launches() as ops:
        diag = ft.einsum("ii->i", x)
    assert ops == []  # a diagonal view, as in torch: writes show through
    diag._a[...] = 7.0
    assert np.all(np.diag(to_numpy(x)) == 7.0)


# --- error parity: same class, same leading text --------------------------------------------

ERROR_CASES: list[tuple[str, Callable[[Any, Callable[..., Any]], Any]]] = [
    ("mm shape", lambda m, t: m.mm(t((2, 3)), t((2, 3)))),
    ("mm 1d", lambda m, t: m.mm(t((3,)), t((3, 2)))),
    ("mm 3d", lambda m, t: m.mm(t((2, 3)), t((1, 3, 2)))),
    ("mm dtype", lambda m, t: m.mm(t((2, 3)), t((3, 2), "float64"))),
    ("mm dtype half", lambda m, t: m.mm(t((2, 3), "float16"), t((3, 2)))),
    ("mm dtype int", lambda m, t: m.mm(t((2, 3)), t((3, 2), "int64"))),
    ("mm bool", lambda m, t: m.mm(t((2, 3), "bool"), t((3, 2), "bool"))),
    ("bmm shape", lambda m, t: m.bmm(t((5, 2, 3)), t((5, 2, 3)))),
    ("bmm batch", lambda m, t: m.bmm(t((5, 2, 3)), t((4, 3, 2)))),
    ("bmm 2d", lambda m, t: m.bmm(t((2, 3)), t((5, 3, 2)))),
    ("bmm 2d b", lambda m, t: m.bmm(t((5, 2, 3)), t((3, 2)))),
    ("bmm dtype", lambda m, t: m.bmm(t((5, 2, 3), "float64"), t((5, 3, 2)))),
    ("bmm bool", lambda m, t: m.bmm(t((2, 2, 3), "bool"), t((2, 3, 2), "bool"))),
    ("dot size", lambda m, t: m.dot(t((3,)), t((4,)))),
    ("dot 2d", lambda m, t: m.dot(t((2, 3)), t((3,)))),
    ("dot dtype", lambda m, t: m.dot(t((3,), "float64"), t((3,)))),
    ("dot bool", lambda m, t: m.dot(t((3,), "bool"), t((3,), "bool"))),
    ("mv size", lambda m, t: m.mv(t((2, 3)), t((4,)))),
    ("mv dims", lambda m, t: m.mv(t((2, 3)), t((3, 1)))),
    ("mv dtype", lambda m, t: m.mv(t((2, 3), "float64"), t((3,)))),
    ("matmul 0d", lambda m, t: m.matmul(t(()), t((3,)))),
    ("matmul 1d1d", lambda m, t: t((3,)) @ t((4,))),
    ("matmul 2d1d", lambda m, t: t((2, 3)) @ t((4,))),
    ("matmul 1d2d", lambda m, t: t((3,)) @ t((4, 2))),
    ("matmul 3d2d", lambda m, t: t((5, 2, 3)) @ t((4, 2))),
    ("matmul 3d1d", lambda m, t: t((5, 2, 3)) @ t((4,))),
    ("matmul 3d3d", lambda m, t: t((5, 2, 3)) @ t((5, 4, 2))),
    ("matmul batch", lambda m, t: t((5, 2, 3)) @ t((4, 3, 2))),
    ("matmul 2d3d", lambda m, t: t((2, 3)) @ t((5, 4, 2))),
    ("matmul dtype", lambda m, t: t((2, 3)) @ t((3, 2), "float64")),
    ("matmul dtype bmm", lambda m, t: t((5, 2, 3)) @ t((5, 3, 2), "float64")),
    ("matmul list", lambda m, t: m.matmul(t((2, 3)), [1.0, 2.0, 3.0])),
    ("addmm shape", lambda m, t: m.addmm(t((4,)), t((2, 3)), t((2, 4)))),
    ("addmm bias", lambda m, t: m.addmm(t((5,)), t((2, 3)), t((3, 4)))),
    ("addmm bias 2d", lambda m, t: m.addmm(t((3, 4)), t((2, 3)), t((3, 4)))),
    ("addmm bias 3d", lambda m, t: m.addmm(t((1, 2, 4)), t((2, 3)), t((3, 4)))),
    ("addmm bias 3d bf16", lambda m, t: m.addmm(t((1, 2, 4), "bfloat16"), t((2, 3), "bfloat16"),
                                                t((3, 4), "bfloat16"))),
    ("addmm 1d", lambda m, t: m.addmm(t((4,)), t((3,)), t((3, 4)))),
    ("addmm dtype m", lambda m, t: m.addmm(t((4,)), t((2, 3), "float64"), t((3, 4)))),
    ("addmm dtype self", lambda m, t: m.addmm(t((4,), "float64"), t((2, 3)), t((3, 4)))),
    ("addmm_ shape", lambda m, t: t((4,)).addmm_(t((2, 3)), t((3, 4)))),
    ("baddbmm shape", lambda m, t: m.baddbmm(t((5, 2, 4)), t((5, 2, 3)), t((5, 2, 4)))),
    ("baddbmm bias", lambda m, t: m.baddbmm(t((5, 3, 4)), t((5, 2, 3)), t((5, 3, 4)))),
    ("baddbmm dtype", lambda m, t: m.baddbmm(t((5, 2, 4), "float64"), t((5, 2, 3)),
                                             t((5, 3, 4)))),
    ("baddbmm dtype2", lambda m, t: m.baddbmm(t((5, 2, 4)), t((5, 2, 3)),
                                              t((5, 3, 4), "float64"))),
    ("baddbmm_ shape", lambda m, t: t((2, 4)).baddbmm_(t((5, 2, 3)), t((5, 3, 4)))),
    ("outer 2d", lambda m, t: m.outer(t((2, 2)), t((3,)))),
    ("outer 2d b", lambda m, t: m.outer(t((2,)), t((2, 2)))),
    ("einsum sizes", lambda m, t: m.einsum("ij,jk->ik", t((2, 3)), t((4, 5)))),
    ("einsum ndim", lambda m, t: m.einsum("ij,jk->ik", t((2, 3, 1)), t((3, 5)))),
    ("einsum out twice", lambda m, t: m.einsum("ij->ii", t((2, 3)))),
    ("einsum out unknown", lambda m, t: m.einsum("ij->k", t((2, 3)))),
    ("einsum too few", lambda m, t: m.einsum("ij,jk->ik", t((2, 3)))),
    ("einsum too many", lambda m, t: m.einsum("ij->ij", t((2, 3)), t((2, 3)))),
    ("einsum bad label", lambda m, t: m.einsum("i1->i", t((2, 3)))),
    ("einsum repeated", lambda m, t: m.einsum("ii->i", t((2, 3)))),
    ("einsum none", lambda m, t: m.einsum("i->i")),
]


@pytest.mark.parametrize(("name", "fn"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch(torch: Any, name: str, fn: Callable[[Any, Any], Any]) -> None:
    def ours(shape: tuple[int, ...], dtype: str = "float32") -> ft.Tensor:
        if dtype == "bool":
            return fake(np.ones(shape, bool), "cpu")
        return fake(rand(shape, dtype), "cpu")

    def theirs(shape: tuple[int, ...], dtype: str = "float32") -> Any:
        if dtype == "bool":
            return torch.ones(shape, dtype=torch.bool)
        return real(rand(shape, dtype))

    with pytest.raises(Exception) as want:
        fn(torch, theirs)
    with pytest.raises(want.type) as got:
        fn(ft, ours)
    if want.type is TypeError and "invalid combination" in str(want.value):
        assert first_line(want.value).startswith(first_line(got.value)[:40])
    else:
        assert first_line(got.value) == first_line(want.value)


def test_mixed_devices_raise() -> None:
    with pytest.raises(RuntimeError, match=re.escape("Expected all tensors to be on the same")):
        fake(rand((2, 3)), "cuda") @ fake(rand((3, 4)), "cpu")


def test_out_is_refused() -> None:  # (mm takes out=: tests/test_transformers_gaps.py)
    x = fake(rand((1, 2, 2)), "cpu")
    with pytest.raises(NotImplementedError, match=r"torch\.bmm"):
        ft.bmm(x, x, out=x)  # type: ignore[arg-type]
