"""F.interpolate (every mode but lanczos and antialias), F.adaptive_avg_pool1d, nn.Upsample,
UpsamplingNearest2d and UpsamplingBilinear2d against real torch (CPU build): values, shapes,
launches (one upsample op each, the same op on both builds) and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

_rng = np.random.default_rng(3)

SHAPES_AND_SIZES: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 7), {"size": 11}),
    ((2, 3, 7), {"size": 4}),
    ((2, 3, 7), {"scale_factor": 2.5}),
    ((2, 3, 6), {"scale_factor": 2}),  # nearest's exact doubling shortcut
    ((2, 3, 5, 6), {"size": (9, 4)}),
    ((2, 3, 5, 6), {"scale_factor": (1.7, 0.6)}),
    ((2, 3, 5, 6), {"scale_factor": 1.3, "recompute_scale_factor": True}),
    ((1, 2, 3, 4, 5), {"size": (4, 7, 3)}),
    ((1, 2, 3, 4, 5), {"scale_factor": 1.5}),
]
MODES = {3: ["nearest", "nearest-exact", "linear", "area"],
         4: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
         5: ["nearest", "nearest-exact", "trilinear"]}


def _cases() -> list[tuple[tuple[int, ...], dict[str, Any], str, bool | None]]:
    out = []
    for shape, kw in SHAPES_AND_SIZES:
        for mode in MODES[len(shape)]:
            corners: list[bool | None] = [None] if mode in ("nearest", "nearest-exact",
                                                            "area") else [False, True]
            out += [(shape, kw, mode, c) for c in corners]
    return out


@pytest.mark.parametrize(("shape", "kwargs", "mode", "align_corners"), _cases())
def test_interpolate_matches_torch(shape: tuple[int, ...], kwargs: dict[str, Any], mode: str,
                                   align_corners: bool | None) -> None:
    a = _rng.standard_normal(shape).astype(np.float32)
    tx, fx = torch.from_numpy(a), ft.tensor(a, device="cuda")
    with torch_launches(cuda=True) as want_ops:
        want = torch.nn.functional.interpolate(tx, mode=mode, align_corners=align_corners,
                                               **kwargs)
    with launches() as ops:
        got = ft.nn.functional.interpolate(fx, mode=mode, align_corners=align_corners, **kwargs)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(force=True), want.numpy(), rtol=1e-5, atol=5e-6)
    assert ops == want_ops
    assert len(ops) == 1


@pytest.mark.parametrize(("dtype", "tol"), [("float16", 2e-3), ("bfloat16", 1.6e-2),
                                            ("float64", 1e-12)])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_dtypes_match_torch(dtype: str, tol: float, mode: str) -> None:
    a = _rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    stored = a.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else a.astype(dtype)
    want = torch.nn.functional.interpolate(torch.from_numpy(a).to(getattr(torch, dtype)),
                                           size=(7, 9), mode=mode)
    got = ft.nn.functional.interpolate(ft.tensor(stored), size=(7, 9), mode=mode)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.double().numpy(),
                               rtol=tol, atol=tol)


def test_nearest_takes_uint8_as_torch() -> None:
    a = _rng.integers(0, 255, (1, 2, 3, 4)).astype(np.uint8)
    want = torch.nn.functional.interpolate(torch.from_numpy(a), scale_factor=1.5)
    got = ft.nn.functional.interpolate(ft.tensor(a), scale_factor=1.5)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize(("shape", "size"), [((2, 3, 10), 4), ((3, 10), 3), ((2, 3, 7), [1])])
def test_adaptive_avg_pool1d_matches_torch(shape: tuple[int, ...], size: Any) -> None:
    a = _rng.standard_normal(shape).astype(np.float32)
    with torch_launches(cuda=True) as want_ops:
        want = torch.nn.functional.adaptive_avg_pool1d(torch.from_numpy(a), size)
    fx = ft.tensor(a, device="cuda")
    with launches() as ops:
        got = ft.nn.functional.adaptive_avg_pool1d(fx, size)
    np.testing.assert_allclose(got.numpy(force=True), want.numpy(), rtol=1e-6, atol=1e-6)
    assert ops == want_ops


MODULES: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda t: t.nn.Upsample(scale_factor=2), (2, 3, 4, 5)),
    (lambda t: t.nn.Upsample(size=(5, 7), mode="bilinear"), (2, 3, 4, 5)),
    (lambda t: t.nn.Upsample(scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True),
     (1, 2, 4, 5)),
    (lambda t: t.nn.Upsample(size=9, mode="linear"), (2, 3, 4)),
    (lambda t: t.nn.UpsamplingNearest2d(scale_factor=3), (1, 2, 3, 3)),
    (lambda t: t.nn.UpsamplingBilinear2d(size=(6, 6)), (1, 2, 3, 4)),
]


@pytest.mark.parametrize(("build", "shape"), MODULES)
def test_upsample_modules_match_torch(build: Callable[[Any], Any],
                                      shape: tuple[int, ...]) -> None:
    theirs, ours = build(torch), build(ft)
    assert repr(ours) == repr(theirs)
    assert (ours.scale_factor, ours.size, ours.mode, ours.align_corners) == \
        (theirs.scale_factor, theirs.size, theirs.mode, theirs.align_corners)
    a = _rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(ours(ft.tensor(a)).numpy(), theirs(torch.from_numpy(a)).numpy(),
                               rtol=1e-5, atol=5e-6)


def _i(t: Any, shape: tuple[int, ...] = (1, 2, 4, 5), **kw: Any) -> Any:
    return t.nn.functional.interpolate(t.ones(*shape), **kw)


ERRORS: list[Callable[[Any], Any]] = [
    lambda t: _i(t, size=3, mode="nearest", align_corners=True),
    lambda t: _i(t, size=3, scale_factor=2),
    lambda t: _i(t),
    lambda t: _i(t, size=(3, 4, 5)),
    lambda t: _i(t, size=(3, 4.0)),
    lambda t: _i(t, scale_factor=(2, 2, 2)),
    lambda t: _i(t, size=3, recompute_scale_factor=True),
    lambda t: _i(t, size=3, mode="linear"),
    lambda t: _i(t, (1, 2, 4), size=3, mode="bilinear"),
    lambda t: _i(t, (1, 2, 4, 5, 6), size=3, mode="bicubic"),
    lambda t: _i(t, (2, 4), size=3),
    lambda t: _i(t, size=3, mode="bogus"),
    lambda t: _i(t, size=3, mode="nearest", antialias=True),
    lambda t: _i(t, scale_factor=0.1),
    lambda t: _i(t, (1, 2, 4), scale_factor=0.1),
    lambda t: _i(t, (1, 2, 4, 5, 6), scale_factor=0.1),
    lambda t: t.nn.functional.interpolate(t.ones(1, 2, 4, 5, dtype=t.int64), size=3,
                                          mode="bilinear"),
    lambda t: t.nn.functional.interpolate(t.ones(1, 2, 4, dtype=t.int8), size=3),
    lambda t: t.nn.functional.interpolate(t.ones(1, 2, 4, 5, dtype=t.int32), size=3),
    lambda t: t.nn.functional.interpolate(t.ones(1, 2, 4, 5, dtype=t.bool), size=3,
                                          mode="bicubic"),
    lambda t: t.nn.functional.interpolate(t.ones(1, 2, 4, dtype=t.uint8), size=3,
                                          mode="linear"),
    lambda t: t.nn.functional.adaptive_avg_pool1d(t.ones(1, 2, 3, 4), 2),
    lambda t: t.nn.functional.adaptive_avg_pool1d(t.ones(1, 2, 3), (2, 2)),
]


@pytest.mark.parametrize("program", ERRORS)
def test_interpolate_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_antialias_and_3d_area_are_refused_by_name() -> None:
    with pytest.raises(NotImplementedError, match="antialias=True"):
        _i(ft, size=3, mode="bilinear", antialias=True)
    with pytest.raises(NotImplementedError, match="adaptive_avg_pool3d"):
        _i(ft, (1, 2, 3, 4, 5), size=2, mode="area")


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear"])
def test_only_the_nearest_kernels_copy_a_strided_input_on_cuda(mode: str) -> None:
    a = _rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    tx, fx = torch.from_numpy(a).transpose(2, 3), ft.tensor(a, device="cuda").transpose(2, 3)
    with torch_launches(cuda=True) as want_ops:
        want = torch.nn.functional.interpolate(tx, size=(7, 4), mode=mode)
    with launches() as ops:
        got = ft.nn.functional.interpolate(fx, size=(7, 4), mode=mode)
    np.testing.assert_allclose(got.numpy(force=True), want.numpy(), rtol=1e-5, atol=5e-6)
    assert ops == want_ops
    assert (ops[0] == "clone") == (mode != "bilinear")  # as an H200 ran them


@pytest.mark.parametrize(("fn", "kwargs"), [("upsample", {"scale_factor": 2}),
                                            ("upsample", {"size": 7, "mode": "bilinear"}),
                                            ("upsample_nearest", {"size": (3, 9)}),
                                            ("upsample_bilinear", {"scale_factor": 1.5})])
def test_deprecated_upsample_functions_warn_and_interpolate_as_torch(
        fn: str, kwargs: dict[str, Any]) -> None:
    a = _rng.standard_normal((1, 2, 4, 5)).astype(np.float32)
    with pytest.warns(UserWarning, match=f"`nn.functional.{fn}` is deprecated"):
        want = getattr(torch.nn.functional, fn)(torch.from_numpy(a), **kwargs)
    with pytest.warns(UserWarning, match=f"`nn.functional.{fn}` is deprecated"):
        got = getattr(ft.nn.functional, fn)(ft.tensor(a), **kwargs)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=5e-6)


def test_adaptive_avg_pool1d_module_matches_torch() -> None:
    theirs, ours = torch.nn.AdaptiveAvgPool1d(3), ft.nn.AdaptiveAvgPool1d(3)
    assert repr(ours) == repr(theirs)
    a = _rng.standard_normal((2, 4, 10)).astype(np.float32)
    np.testing.assert_allclose(ours(ft.tensor(a)).numpy(), theirs(torch.from_numpy(a)).numpy(),
                               rtol=1e-6, atol=1e-6)
