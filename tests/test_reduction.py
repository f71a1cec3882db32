"""Reductions (sum, mean, prod, max/min, argmax/argmin, amax/amin, all/any, var/std, norm),
softmax/log_softmax, cumsum and sorting (sort, argsort, topk): numpy oracles over random shapes,
dtypes and dims (hypothesis), real-torch parity for values, tie order, errors and kernels, and
exact launch counts on the simulated cuda device.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracles import DTYPES, FLOAT_DTYPES, NP_DTYPE, launches, to_numpy, to_torch, torch_launches

import fake_torch as ft

# relative tolerance of a result rounded once to the dtype (and summed in another order)
RTOL = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1.6e-2}


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def values(shape: Sequence[int], dtype: str, seed: int = 0, ties: bool = False) -> np.ndarray:
    """Random values of `dtype`; with `ties`, drawn from a few small integers."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if ties or dtype not in FLOAT_DTYPES:
        lo = 0 if dtype == "uint8" else -2
        return rng.integers(lo, 3, size=shape).astype(NP_DTYPE[dtype])
    return rng.standard_normal(shape).astype(np.float32).astype(NP_DTYPE[dtype])


def fake(a: np.ndarray, device: str = "cpu") -> ft.Tensor:
    """`a` as a fake tensor: on cpu its very memory and strides (views stay views)."""
    return ft.from_numpy(a) if device == "cpu" else ft.tensor(a, device=device)


def close(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    """`got` equals `want` (computed in float64) within `dtype`'s rounding."""
    assert got.shape == np.shape(want)
    if dtype in RTOL:
        np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64),
                                   rtol=RTOL[dtype], atol=RTOL[dtype], equal_nan=True)
    else:
        assert np.array_equal(got, want)


@st.composite
def reductions(draw: st.DrawFn, dtypes: Sequence[str]) -> tuple[np.ndarray, Any, bool, str]:
    """(array, dim, keepdim, dtype): 0-4 dims of 0-4, often a permuted (non-contiguous) view;
    dim None, an int or a tuple (negative dims included)."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    a = values(shape, dtype, seed=draw(st.integers(0, 2**16)), ties=draw(st.booleans()))
    a = np.transpose(a, draw(st.permutations(range(a.ndim))))
    ndim = max(len(shape), 1)
    one = st.integers(-ndim, ndim - 1)
    dim = draw(st.one_of(st.none(), one,
                         st.lists(one, max_size=ndim).map(tuple).filter(
                             lambda d: len({x % ndim for x in d}) == len(d))))
    return a, dim, draw(st.booleans()), dtype


def np_axes(a: np.ndarray, dim: Any) -> tuple[int, ...]:
    if a.ndim == 0:
        return ()
    if dim is None or dim == ():
        return tuple(range(a.ndim))
    return tuple(d % a.ndim for d in ((dim,) if isinstance(dim, int) else dim))


# --- sum, mean, prod ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(case=reductions(DTYPES))
def test_sum_prod_match_numpy(case: tuple[np.ndarray, Any, bool, str]) -> None:
    a, dim, keepdim, dtype = case
    axes = np_axes(a, dim)
    wide = a.astype(np.float64)
    out_dt = dtype if dtype in FLOAT_DTYPES else "int64"
    got = ft.sum(fake(a), dim, keepdim)
    assert got.dtype is getattr(ft, out_dt)
    close(to_numpy(got), np.sum(wide, axis=axes, keepdims=keepdim).astype(NP_DTYPE[out_dt]), out_dt)
    if dim is None or isinstance(dim, int):
        got = fake(a).prod(dim, keepdim) if dim is not None else fake(a).prod()
        want = np.prod(wide, axis=axes, keepdims=keepdim and dim is not None)
        close(to_numpy(got), want.astype(NP_DTYPE[out_dt]), out_dt)


@settings(max_examples=60, deadline=None)
@given(case=reductions(FLOAT_DTYPES))
def test_mean_matches_numpy(case: tuple[np.ndarray, Any, bool, str]) -> None:
    a, dim, keepdim, dtype = case
    axes = np_axes(a, dim)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.mean(a.astype(np.float64), axis=axes, keepdims=keepdim)
    got = fake(a).mean(dim, keepdim)
    assert got.dtype is getattr(ft, dtype)
    close(to_numpy(got), want, dtype)


def test_sum_and_mean_dtype_kwarg() -> None:
    a = values((3, 5), "float16", seed=1)
    s = ft.sum(fake(a), 1, dtype=ft.float32)
    assert s.dtype is ft.float32
    np.testing.assert_allclose(to_numpy(s), a.astype(np.float32).sum(1), rtol=1e-6)
    i = np.arange(6).reshape(2, 3)
    m = fake(i).mean(0, dtype=ft.float64)
    assert m.dtype is ft.float64 and np.array_equal(to_numpy(m), i.mean(0))
    f = ft.sum(fake(np.array([1.7, 2.9, -0.5], np.float32)), dtype=ft.int32)
    assert f.dtype is ft.int32 and to_numpy(f) == 3  # cast first (1 + 2 + 0), as torch does


# --- max/min, amax/amin, argmax/argmin: first index of the extreme, NaN wins ------------------


@settings(max_examples=60, deadline=None)
@given(case=reductions(DTYPES))
def test_extremes_match_numpy(case: tuple[np.ndarray, Any, bool, str]) -> None:
    a, dim, keepdim, dtype = case
    axes = np_axes(a, dim)
    assume(all(a.shape[ax] > 0 for ax in axes) and a.size > 0)
    wide = a.astype(np.float64) if dtype != "bool" else a
    for fn, ref in (("amax", np.max), ("amin", np.min)):
        got = getattr(fake(a), fn)(() if dim is None else dim, keepdim)
        assert got.dtype is getattr(ft, dtype)
        close(to_numpy(got), ref(wide, axis=axes, keepdims=keepdim).astype(a.dtype), dtype)
    if isinstance(dim, int):
        for fn, arg in (("max", np.argmax), ("min", np.argmin)):
            v, i = getattr(fake(a), fn)(dim, keepdim)
            want_i = arg(wide, axis=axes[0], keepdims=keepdim) if axes else np.zeros((), int)
            assert np.array_equal(to_numpy(i), want_i)
            take = np.take_along_axis(wide, want_i if keepdim else np.expand_dims(
                want_i, axes[0]), axes[0]) if axes else wide
            close(to_numpy(v), (take if keepdim or not axes else np.squeeze(take, axes[0])
                            ).astype(a.dtype), dtype)
    if dtype != "bool" and (dim is None or isinstance(dim, int)):
        got = fake(a).argmax(dim, keepdim)
        flat = np.argmax(wide) if dim is None else np.argmax(wide, axis=axes[0] if axes else
                                                              None)
        want = np.reshape(flat, to_numpy(got).shape)
        assert np.array_equal(to_numpy(got), want)


def test_max_with_nan_and_ties_matches_torch(torch: Any) -> None:
    a = np.array([[1.0, 3.0, 3.0, 2.0], [np.nan, 5.0, np.nan, 5.0], [-1.0, -1.0, -1.0, -1.0]],
                 np.float32)
    for fn in ("max", "min"):
        v, i = getattr(fake(a), fn)(1)
        tv, ti = getattr(to_torch(a), fn)(1)
        assert np.array_equal(to_numpy(i), ti.numpy())
        np.testing.assert_array_equal(to_numpy(v), tv.numpy())
        for arg in ("argmax", "argmin"):
            assert np.array_equal(to_numpy(getattr(fake(a), arg)(1)),
                                  getattr(to_torch(a), arg)(1).numpy())
    assert to_numpy(fake(a).argmax()) == to_torch(a).argmax().item()
    assert np.isnan(to_numpy(fake(a).max())) and np.isnan(to_numpy(fake(a).amax()))


def test_max_returns_named_pair() -> None:
    a = values((2, 3), "float32")
    r = fake(a).max(1, keepdim=True)
    assert isinstance(r, tuple) and isinstance(r, ft.return_types.max) and len(r) == 2
    values_, indices = r
    assert r.values is values_ and r.indices is indices and r[0] is values_
    assert indices.dtype is ft.int64 and tuple(indices.shape) == (2, 1)
    assert repr(r).startswith("torch.return_types.max(\nvalues=tensor(")
    assert isinstance(fake(a).min(0), ft.return_types.min)
    pair = ft.return_types.topk((values_, indices))
    assert pair.indices is indices
    with pytest.raises(TypeError, match="takes a 2-sequence"):
        ft.return_types.sort((values_,))


def test_binary_max_is_maximum() -> None:
    a, b = values((3,), "float32", 1), values((3,), "float32", 2)
    np.testing.assert_array_equal(to_numpy(ft.max(fake(a), fake(b))), np.maximum(a, b))
    np.testing.assert_array_equal(to_numpy(fake(a).min(fake(b))), np.minimum(a, b))


# --- all, any --------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(case=reductions(["bool", "float32", "uint8", "int64"]))
def test_all_any_match_numpy(case: tuple[np.ndarray, Any, bool, str]) -> None:
    a, dim, keepdim, dtype = case
    axes = () if dim == () else np_axes(a, dim)  # any(x, ()) folds nothing, as in torch
    for fn, ref in (("all", np.all), ("any", np.any)):
        got = getattr(fake(a), fn)(dim, keepdim)
        assert got.dtype is (ft.uint8 if dtype == "uint8" else ft.bool)
        assert np.array_equal(to_numpy(got), ref(a, axis=axes, keepdims=keepdim))


# --- var, std, norm ------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(case=reductions(FLOAT_DTYPES), correction=st.sampled_from([0, 1, 2, 0.5]))
def test_var_std_match_numpy(case: tuple[np.ndarray, Any, bool, str], correction: float) -> None:
    a, dim, keepdim, dtype = case
    axes = np_axes(a, dim)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.var(a.astype(np.float64), axis=axes, ddof=correction, keepdims=keepdim)
        got_var = fake(a).var(dim, keepdim=keepdim, correction=correction)
        got_std = ft.std(fake(a), dim, keepdim=keepdim, correction=correction)
    count = math.prod(a.shape[ax] for ax in axes)
    if count - correction <= 0:  # torch divides by max(0, N - correction): inf or nan
        want = np.where(want == 0, np.nan, np.inf) if count - correction < 0 else want
        assume(count - correction == 0)
    close(to_numpy(got_var), want, dtype)
    close(to_numpy(got_std), np.sqrt(want), dtype)


def test_var_unbiased_forms_and_warning(torch: Any) -> None:
    a = values((3, 4), "float32", 3)
    x, t = fake(a), to_torch(a)
    np.testing.assert_allclose(to_numpy(x.var(1, False)), t.var(1, False).numpy(), rtol=1e-6)
    np.testing.assert_allclose(to_numpy(ft.var(x, False)), torch.var(t, False).numpy(), rtol=1e-6)
    np.testing.assert_allclose(to_numpy(x.std(1, True, True)), t.std(1, True, True).numpy(),
                               rtol=1e-6)
    with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom is <= 0"):
        out = x.std(1, correction=4)
    assert np.all(np.isinf(to_numpy(out)))
    with pytest.warns(UserWarning, match=r"var\(\): degrees of freedom"):
        assert np.isnan(to_numpy(fake(np.array([3.0], np.float32)).var()))


@settings(max_examples=60, deadline=None)
@given(case=reductions(FLOAT_DTYPES), ord=st.sampled_from([2, 1, 0, 3, 0.5, math.inf, -math.inf]))
def test_vector_norm_matches_numpy(case: tuple[np.ndarray, Any, bool, str], ord: float) -> None:
    a, dim, keepdim, dtype = case
    axes = np_axes(a, dim)
    assume(not (ord in (math.inf, -math.inf) and any(a.shape[ax] == 0 for ax in axes)))
    wide = np.abs(a.astype(np.float64))
    kw: dict[str, Any] = {"axis": axes, "keepdims": keepdim}
    with np.errstate(all="ignore"):
        want = (np.max(wide, **kw) if ord == math.inf else np.min(wide, **kw)
                if ord == -math.inf else np.sum(wide != 0, **kw) if ord == 0
                else np.sum(wide ** ord, **kw) ** (1 / ord))
    import fake_torch.linalg

    got = fake_torch.linalg.vector_norm(fake(a), ord, dim, keepdim)
    assert got.dtype is getattr(ft, dtype)
    close(to_numpy(got), want, dtype)


def test_norm_forms_match_torch(torch: Any) -> None:
    a = values((2, 3, 4), "float32", 5)
    x, t = fake(a), to_torch(a)
    for args, kwargs in [((), {}), ((None,), {}), ((2, 1), {}), (("fro",), {"dim": (0, 1)}),
                         ((1,), {"dim": -1, "keepdim": True}), ((math.inf,), {}),
                         ((0,), {}), ((3,), {"dim": (0, 2)})]:
        np.testing.assert_allclose(to_numpy(x.norm(*args, **kwargs)),
                                   t.norm(*args, **kwargs).numpy(), rtol=1e-5)
    h = values((4, 5), "float16", 6)
    got = ft.norm(fake(h), dtype=ft.float32)
    assert got.dtype is ft.float32
    np.testing.assert_allclose(to_numpy(got), torch.norm(to_torch(h), dtype=torch.float32),
                               rtol=1e-6)


# --- softmax, log_softmax, cumsum ---------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(case=reductions(FLOAT_DTYPES))
def test_softmax_log_softmax_match_numpy(case: tuple[np.ndarray, Any, bool, str]) -> None:
    a, dim, _, dtype = case
    d = dim if isinstance(dim, int) else -1
    axis = d % max(a.ndim, 1)
    wide = a.astype(np.float64).reshape(a.shape if a.ndim else (1,))
    with np.errstate(all="ignore"):
        shifted = wide - (np.max(wide, axis=axis, keepdims=True) if wide.size else 0)
        total = np.sum(np.exp(shifted), axis=axis, keepdims=True)
        soft, log_soft = np.exp(shifted) / total, shifted - np.log(total)
    got = fake(a).softmax(d)
    assert got.dtype is getattr(ft, dtype) and tuple(got.shape) == a.shape
    close(to_numpy(got), soft.reshape(a.shape), dtype)
    close(to_numpy(ft.log_softmax(fake(a), d)), log_soft.reshape(a.shape), dtype)


def test_softmax_edge_rows_match_torch(torch: Any) -> None:
    inf = math.inf
    a = np.array([[-inf, -inf, -inf], [0.0, -inf, 1.0], [inf, 0.0, 1.0], [1e4, 1e4, -1e4]],
                 np.float32)
    for fn in ("softmax", "log_softmax"):
        np.testing.assert_allclose(to_numpy(getattr(fake(a), fn)(1)),
                                   getattr(to_torch(a), fn)(1).numpy(), rtol=1e-6)


@settings(max_examples=60, deadline=None)
@given(case=reductions(DTYPES))
def test_cumsum_matches_numpy(case: tuple[np.ndarray, Any, bool, str]) -> None:
    a, dim, _, dtype = case
    d = dim if isinstance(dim, int) else 0
    out_dt = dtype if dtype in FLOAT_DTYPES else "int64"
    want = np.cumsum(a.astype(np.float64 if dtype in FLOAT_DTYPES else np.int64),
                     axis=d % a.ndim if a.ndim else None).reshape(a.shape)
    got = fake(a).cumsum(d)
    assert got.dtype is getattr(ft, out_dt)
    close(to_numpy(got), want.astype(NP_DTYPE[out_dt]), out_dt)


def test_cumsum_inplace_through_a_view() -> None:
    base = fake(np.arange(12, dtype=np.float32).reshape(3, 4), "cuda")
    col = ft.Tensor._make(base._a[:, 1], base.device, base._storage)
    with launches() as ops:
        out = col.cumsum_(0)
    assert out is col and ops == ["cumsum_"]
    assert np.array_equal(to_numpy(base)[:, 1], np.cumsum([1.0, 5.0, 9.0]))
    assert np.array_equal(to_numpy(base)[:, 0], [0.0, 4.0, 8.0])


# --- sort, argsort, topk: stable, NaN largest ---------------------------------------------------


def np_stable_order(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    wide = a.astype(np.float64)
    if not descending:
        return np.argsort(wide, axis=axis, kind="stable")
    return np.lexsort((-wide, ~np.isnan(wide)), axis=axis)


@settings(max_examples=60, deadline=None)
@given(case=reductions(["float32", "float16", "bfloat16", "int64", "uint8", "bool"]),
       descending=st.booleans(), nans=st.booleans())
def test_sort_topk_match_a_stable_numpy_sort(case: tuple[np.ndarray, Any, bool, str],
                                             descending: bool, nans: bool) -> None:
    a, dim, _, dtype = case
    if nans and dtype in FLOAT_DTYPES and a.size:
        a = a.copy()
        a.flat[:: 3] = np.nan
    d = dim if isinstance(dim, int) else -1
    if a.ndim == 0:
        v, i = fake(a).sort(d, descending)
        assert to_numpy(i) == 0 and np.array_equal(to_numpy(v), a, equal_nan=True)
        return
    axis = d % a.ndim
    order = np_stable_order(a, axis, descending)
    v, i = fake(a).sort(d, descending)
    assert np.array_equal(to_numpy(i), order)
    assert np.array_equal(to_numpy(v), np.take_along_axis(a, order, axis),
                          equal_nan=dtype != "bool")
    assert np.array_equal(to_numpy(ft.argsort(fake(a), d, descending)), order)
    if dtype == "bool":
        return
    k = a.shape[axis] // 2
    tv, ti = fake(a).topk(k, d, largest=descending)
    want = np.take(order, np.arange(k), axis=axis)
    assert np.array_equal(to_numpy(ti), want)
    assert np.array_equal(to_numpy(tv), np.take_along_axis(a, want, axis), equal_nan=True)


@pytest.mark.parametrize("n", [5, 16, 40])
def test_sort_tie_order_matches_torch(torch: Any, n: int) -> None:
    """Stable sorts agree with torch everywhere; torch's unstable CPU sort is an insertion
    sort up to 16 elements (so it agrees there too) and std::sort beyond."""
    a = values((3, n), "float32", seed=n, ties=True)
    a[0, ::4] = np.nan
    for descending in (False, True):
        v, i = fake(a).sort(dim=1, descending=descending, stable=True)
        tv, ti = to_torch(a).sort(dim=1, descending=descending, stable=True)
        assert np.array_equal(to_numpy(i), ti.numpy())
        np.testing.assert_array_equal(to_numpy(v), tv.numpy())
        if n <= 16:
            _, ti = to_torch(a).sort(1, descending)
            assert np.array_equal(to_numpy(fake(a).argsort(1, descending)), ti.numpy())


def test_topk_values_match_torch_and_ties_are_lowest_index_first(torch: Any) -> None:
    """torch CPU's topk leaves ties in nth_element's order; ours puts the lowest index first
    (as its stable sort does). Values always agree; without ties, indices agree too."""
    tied = values((4, 50), "float32", seed=7, ties=True)
    for k, largest in ((1, True), (5, False), (50, True)):
        v, i = fake(tied).topk(k, largest=largest)
        tv, _ = to_torch(tied).topk(k, largest=largest)
        np.testing.assert_array_equal(to_numpy(v), tv.numpy())
        _, stable = to_torch(tied).sort(dim=1, descending=largest, stable=True)
        assert np.array_equal(to_numpy(i), stable.numpy()[:, :k])
    distinct = values((4, 50), "float32", seed=8)
    for k, largest in ((3, True), (7, False)):
        v, i = fake(distinct).topk(k, 0 if k == 3 else -1, largest)
        tv, ti = to_torch(distinct).topk(k, 0 if k == 3 else -1, largest)
        np.testing.assert_array_equal(to_numpy(v), tv.numpy())
        assert np.array_equal(to_numpy(i), ti.numpy())


# --- kernels: each call launches what torch launches, counted on cuda ----------------------


def test_launches_match_torch(torch: Any) -> None:
    f = values((2, 3, 4), "float32", 1)
    h = values((2, 3, 4), "float16", 2)
    i = values((2, 3), "int64", 3)
    b = values((2, 3), "bool", 4)
    cases: list[tuple[list[str], Callable[[Any, Callable[..., Any]], Any]]] = [
        (["sum"], lambda m, t: t(f).sum()),
        (["sum"], lambda m, t: m.sum(t(f), (0, -1), keepdim=True)),
        (["sum"], lambda m, t: t(h).sum(dtype=m.float32)),
        (["sum"], lambda m, t: t(b).sum()),
        (["mean"], lambda m, t: t(f).mean(-1, keepdim=True)),
        (["mean"], lambda m, t: t(i).mean(dtype=m.float32)),
        (["prod"], lambda m, t: t(i).prod(1)),
        (["max"], lambda m, t: t(f).max()),
        (["max"], lambda m, t: t(f).max(1)),
        (["min"], lambda m, t: m.min(t(f), dim=2, keepdim=True)),
        (["maximum"], lambda m, t: m.max(t(f), t(f))),
        (["argmax"], lambda m, t: t(f).argmax(-1)),
        (["argmin"], lambda m, t: t(f).argmin()),
        (["amax"], lambda m, t: t(f).amax((0, 1))),
        (["amin"], lambda m, t: t(f).amin()),
        (["all"], lambda m, t: t(b).all()),
        (["any"], lambda m, t: t(f).any(1)),
        (["var"], lambda m, t: t(f).var(1)),
        (["std"], lambda m, t: t(f).std(1, keepdim=True, correction=0)),
        (["linalg_vector_norm"], lambda m, t: t(f).norm()),
        (["linalg_vector_norm"], lambda m, t: m.norm(t(f), p=1, dim=-1)),
        (["linalg_vector_norm"], lambda m, t: m.linalg.vector_norm(t(f), 3, dim=(0, 2))),
        (["_softmax"], lambda m, t: t(f).softmax(-1)),
        (["_softmax"], lambda m, t: m.softmax(t(f), 1, dtype=m.float32)),
        (["_to_copy", "_softmax"], lambda m, t: t(i).softmax(0, dtype=m.float32)),
        (["_log_softmax"], lambda m, t: t(f).log_softmax(1)),
        (["cumsum"], lambda m, t: t(f).cumsum(1)),
        (["cumsum"], lambda m, t: t(i).cumsum(0, dtype=m.float32)),
        (["topk"], lambda m, t: t(f).topk(2)),
        (["topk"], lambda m, t: m.topk(t(f), 1, dim=0, largest=False, sorted=False)),
        (["sort"], lambda m, t: t(f).sort(descending=True)),
        (["sort"], lambda m, t: m.argsort(t(f), dim=1, stable=True)),
    ]
    made = {id(a): fake(a, "cuda") for a in (f, h, i, b)}  # their copies are not counted
    import fake_torch.linalg  # noqa: F401 - torch.linalg is there once imported

    for want, fn in cases:
        with launches() as ops:
            got = fn(ft, lambda a: made[id(a)])
        with torch_launches() as torch_ops:
            expected = fn(torch, to_torch)
        assert torch_ops == want
        assert ops == want
        got_t = got if isinstance(got, ft.Tensor) else got[0]
        expected_t = expected if isinstance(expected, torch.Tensor) else expected[0]
        assert tuple(got_t.shape) == tuple(expected_t.shape)
        assert str(got_t.dtype) == str(expected_t.dtype)
        np.testing.assert_allclose(to_numpy(got_t).astype(np.float64),
                                   to_numpy(expected_t).astype(np.float64), rtol=2e-3,
                                   atol=1e-5)


def test_half_softmax_to_float_is_one_kernel_on_cuda(torch: Any) -> None:
    """CUDA's softmax reads half and writes float in one `_softmax`; CPU converts first."""
    h = values((4, 8), "float16", 9)
    x = fake(h, "cuda")
    with launches() as ops:
        got = x.softmax(-1, dtype=ft.float32)
    assert ops == ["_softmax"] and got.dtype is ft.float32
    np.testing.assert_allclose(to_numpy(got), to_torch(h).softmax(-1, dtype=torch.float32),
                               rtol=1e-6)
    on_cpu = fake(h, "cpu")
    ft.LaunchCounter.reset()
    on_cpu.log_softmax(-1, dtype=ft.float32)
    assert ft.LaunchCounter.n == 0  # cpu work is never counted


def test_a_sampling_step_counts_each_kernel_once() -> None:
    """softmax -> topk -> cumsum -> argmax: four launches, one per kernel, on cuda."""
    logits = fake(values((2, 32), "float32", 11), "cuda")
    ft.LaunchCounter.reset()
    probs = logits.softmax(-1)
    top, idx = probs.topk(5)
    cdf = top.cumsum(-1)
    pick = cdf.argmax(-1)
    assert ft.LaunchCounter.n == 4
    assert dict(ft.LaunchCounter.by_op) == {"_softmax": 1, "topk": 1, "cumsum": 1, "argmax": 1}
    assert pick.device == ft.device("cuda:0") and idx.dtype is ft.int64


# --- error parity ---------------------------------------------------------------------------

ERROR_CASES: list[tuple[str, Callable[[Any, Callable[..., Any]], Any]]] = [
    ("sum dim", lambda m, t: t((2, 3, 4)).sum(3)),
    ("sum neg dim", lambda m, t: t((2, 3, 4)).sum(-4)),
    ("sum dup dim", lambda m, t: t((2, 3, 4)).sum((0, -3))),
    ("sum 0d dim", lambda m, t: t(()).sum(1)),
    ("mean int", lambda m, t: t((2, 3), "int64").mean()),
    ("mean bool", lambda m, t: t((2, 3), "bool").mean()),
    ("mean int dtype", lambda m, t: t((2, 3)).mean(dtype=m.int64)),
    ("prod tuple", lambda m, t: t((2, 3)).prod((0, 1))),
    ("max dim", lambda m, t: t((2, 3)).max(5)),
    ("max empty", lambda m, t: t((0,)).max()),
    ("min empty", lambda m, t: t((2, 0)).min()),
    ("amax empty", lambda m, t: t((2, 0)).amax()),
    ("amin empty", lambda m, t: t((0,)).amin()),
    ("argmax empty", lambda m, t: t((0,)).argmax()),
    ("argmin empty", lambda m, t: t((0, 2)).argmin()),
    ("max empty dim", lambda m, t: t((2, 0)).max(1)),
    ("amax empty dim", lambda m, t: t((2, 0)).amax(1)),
    ("argmax empty dim", lambda m, t: t((2, 0)).argmax(1)),
    ("argmax bool", lambda m, t: t((2,), "bool").argmax()),
    ("argmin bool", lambda m, t: t((2,), "bool").argmin()),
    ("softmax int", lambda m, t: t((2, 3), "int64").softmax(0)),
    ("log_softmax int", lambda m, t: t((2, 3), "int64").log_softmax(0)),
    ("softmax dim", lambda m, t: t((2, 3)).softmax(2)),
    ("softmax no dim", lambda m, t: m.softmax(t((2, 3)))),
    ("cumsum dim", lambda m, t: t((2, 3)).cumsum(-3)),
    ("cumsum_ dtype", lambda m, t: t((3,)).cumsum_(0, dtype=m.float64)),
    ("topk k big", lambda m, t: t((2, 3)).topk(4)),
    ("topk k neg", lambda m, t: t((2, 3)).topk(-1)),
    ("topk dim", lambda m, t: t((2, 3)).topk(1, dim=2)),
    ("topk bool", lambda m, t: t((2, 3), "bool").topk(1)),
    ("sort dim", lambda m, t: t((2, 3)).sort(2)),
    ("var int", lambda m, t: t((2, 3), "int64").var()),
    ("std bool", lambda m, t: t((2, 3), "bool").std()),
    ("var both", lambda m, t: t((2, 3)).var(1, unbiased=True, correction=1)),
    ("norm int", lambda m, t: t((2, 3), "int64").norm()),
    ("norm fro 3 dims", lambda m, t: t((2, 3, 4)).norm(p="fro", dim=(0, 1, 2))),
    ("norm bad order", lambda m, t: t((2, 3)).norm(p="abc")),
    ("norm nuc 1 dim", lambda m, t: t((2, 3)).norm(p="nuc", dim=(0,))),
    ("vector_norm inf empty", lambda m, t: m.linalg.vector_norm(t((0,)), math.inf)),
    ("vector_norm -1 empty", lambda m, t: m.linalg.vector_norm(t((2, 0)), -1, dim=1)),
    ("vector_norm narrowing", lambda m, t: m.linalg.vector_norm(t((3,)), dtype=m.float16)),
    ("vector_norm str ord", lambda m, t: m.linalg.vector_norm(t((3,)), "fro")),
]


@pytest.mark.parametrize(("name", "fn"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch(torch: Any, name: str, fn: Callable[[Any, Any], Any]) -> None:
    import fake_torch.linalg  # noqa: F401

    def ours(shape: tuple[int, ...], dtype: str = "float32") -> ft.Tensor:
        return fake(values(shape, dtype))

    def theirs(shape: tuple[int, ...], dtype: str = "float32") -> Any:
        return to_torch(values(shape, dtype))

    with pytest.raises(Exception) as want:
        fn(torch, theirs)
    with pytest.raises(want.type) as got:
        fn(ft, ours)
    first = str(want.value).split("\n")[0]
    if want.type is TypeError:  # torch's argument parser lists the overloads after this
        assert first.startswith(str(got.value).split("\n")[0][:30])
    else:
        assert str(got.value).split("\n")[0] == first


def test_nuclear_norm_is_not_emulated() -> None:
    with pytest.raises(NotImplementedError, match=r"torch\.linalg\.matrix_norm"):
        fake(values((2, 3), "float32")).norm(p="nuc")


def test_out_is_refused() -> None:
    x = fake(values((2, 2), "float32"))
    with pytest.raises(NotImplementedError, match=r"torch\.sum"):
        ft.sum(x, 0, out=x)  # type: ignore[arg-type]
