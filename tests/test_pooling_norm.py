"""The pools (F.max_pool2d / max_pool2d_with_indices, F.avg_pool2d, F.adaptive_avg_pool2d and
their modules) and batch norm (F.batch_norm, nn.BatchNorm1d / BatchNorm2d) against real torch
(CPU build): values, indices, running statistics, shapes, errors (class and first line) and
launches.

Launch oracle: `torch_launches(cuda=True)`, which records for the CPU build's
`native_batch_norm` what torch 2.13's CUDA build picks (`cudnn_batch_norm` or the same op) and
the `clone` the CUDA pooling kernels make of a strided input (see tests/oracles.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import (
    assert_raises_like_torch,
    assert_trains_and_evaluates_like_torch,
    both,
    close,
    launches,
    strided,
    torch_launches,
)

import fake_torch as ft
from fake_torch import nn

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
TF = torch.nn.functional
F = ft.nn.functional

_rng = np.random.default_rng(1)


def randn(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def host(t: ft.Tensor) -> np.ndarray:
    return np.asarray(t.numpy(force=True), np.float64)


# --- pools ------------------------------------------------------------------------------------

MAX_CASES: list[dict[str, Any]] = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": (3, 2), "stride": (2, 3), "padding": (1, 1), "ceil_mode": True},
    {"kernel_size": 2, "stride": (1, 2), "padding": (1, 0), "dilation": (2, 1),
     "ceil_mode": True},
    {"kernel_size": [3], "stride": [], "padding": [0]},
]


@pytest.mark.parametrize("kwargs", MAX_CASES)
@pytest.mark.parametrize("layout", ["4-D", "3-D", "strided"])
def test_max_pool2d_values_indices_and_launches_match_torch(kwargs: dict[str, Any],
                                                            layout: str) -> None:
    a = randn(2, 3, 9, 8)
    a[0, 0, 0, 0] = np.nan  # NaN wins, as in torch
    a[1, 1, 2:4, 2:4] = 1.0  # ties: the first in row-major order
    tx, fx = both(a[0] if layout == "3-D" else a)
    with torch_launches(cuda=True) as expected_ops:
        want, want_idx = TF.max_pool2d(strided(tx) if layout == "strided" else tx,
                                       return_indices=True, **kwargs)
    with launches() as ops:
        got, got_idx = F.max_pool2d(strided(fx) if layout == "strided" else fx,
                                    return_indices=True, **kwargs)
    np.testing.assert_array_equal(got.numpy(force=True), want.numpy())
    np.testing.assert_array_equal(got_idx.numpy(force=True), want_idx.numpy())
    assert got_idx.dtype is ft.int64
    assert ops == expected_ops
    assert ops[-1] == "max_pool2d_with_indices"
    assert ops.count("clone") == (2 if layout == "strided" else 0)  # ours and the kernel's


def test_max_pool2d_without_indices_launches_the_indices_kernel() -> None:
    (tx, fx) = both(randn(2, 3, 8, 8))
    with torch_launches(cuda=True) as expected_ops:
        want = TF.max_pool2d(tx, 3, 2, 1)
    with launches() as ops:
        got = F.max_pool2d(fx, 3, 2, 1)
    close(got, want, tol=0)
    assert ops == expected_ops == ["max_pool2d_with_indices"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_max_pool2d_other_dtypes(dtype: str) -> None:
    tx, fx = both(randn(2, 3, 8, 8), dtype)
    close(F.max_pool2d(fx, 3, 2, 1), TF.max_pool2d(tx, 3, 2, 1), tol=0)


AVG_CASES: list[dict[str, Any]] = [
    {"kernel_size": 2},
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
    {"kernel_size": (3, 2), "stride": (2, 3), "padding": (1, 1), "ceil_mode": True},
    {"kernel_size": (3, 2), "stride": (2, 3), "padding": (1, 1), "ceil_mode": True,
     "count_include_pad": False},
    {"kernel_size": 3, "padding": 1, "divisor_override": 4},
]


@pytest.mark.parametrize("kwargs", AVG_CASES)
@pytest.mark.parametrize("layout", ["4-D", "3-D", "strided"])
def test_avg_pool2d_matches_torch(kwargs: dict[str, Any], layout: str) -> None:
    a = randn(2, 3, 9, 8)
    tx, fx = both(a[0] if layout == "3-D" else a)
    with torch_launches(cuda=True) as expected_ops:
        want = TF.avg_pool2d(strided(tx) if layout == "strided" else tx, **kwargs)
    with launches() as ops:
        got = F.avg_pool2d(strided(fx) if layout == "strided" else fx, **kwargs)
    close(got, want, tol=1e-6)
    assert ops == expected_ops and ops[-1] == "avg_pool2d"


def test_integer_pools_on_the_cpu_match_torch_and_are_refused_on_cuda() -> None:
    a = _rng.integers(-20, 20, (2, 3, 7, 7))
    tx, fx = torch.tensor(a), ft.tensor(a)
    np.testing.assert_array_equal(F.max_pool2d(fx, 3, 2).numpy(), TF.max_pool2d(tx, 3, 2))
    np.testing.assert_array_equal(F.avg_pool2d(fx, 3, 2, 1).numpy(),
                                  TF.avg_pool2d(tx, 3, 2, 1).numpy())
    with pytest.raises(NotImplementedError, match="max_pool2d_with_indices_out_cuda_frame"):
        F.max_pool2d(fx.cuda(), 2)
    with pytest.raises(NotImplementedError, match="avg_pool2d_out_cuda_frame"):
        F.avg_pool2d(fx.cuda(), 2)


@pytest.mark.parametrize("output_size", [1, (1, 1), (3, 3), (4, 5), (9, 8), (2, 7), (None, 3),
                                         (5, None), 0])
@pytest.mark.parametrize("layout", ["4-D", "3-D", "strided"])
def test_adaptive_avg_pool2d_matches_torch(output_size: Any, layout: str) -> None:
    a = randn(2, 3, 9, 8)
    tx, fx = both(a[0] if layout == "3-D" else a)
    with torch_launches(cuda=True) as expected_ops:
        want = TF.adaptive_avg_pool2d(strided(tx) if layout == "strided" else tx, output_size)
    with launches() as ops:
        got = F.adaptive_avg_pool2d(strided(fx) if layout == "strided" else fx, output_size)
    close(got, want, tol=1e-6)
    assert ops == expected_ops
    if output_size == 0:  # an empty output: no pooling kernel runs (a strided input's copy does)
        assert "_adaptive_avg_pool2d" not in ops
        return
    one = output_size in (1, (1, 1))
    assert ops[-1] == ("mean" if one else "_adaptive_avg_pool2d")  # torch's 1x1 shortcut


POOL_ERRORS: list[Callable[[Any], Any]] = [
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 3, 1, 2),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), (3, 3, 3)),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 2, (1, 1, 1)),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 2, 1, (1, 1, 1)),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 2, 1, 0, (1, 1, 1)),
    lambda t: t.nn.functional.max_pool2d(t.ones(8, 8), 2),
    lambda t: t.nn.functional.max_pool2d(t.ones(1, 2, 3, 8, 8), 2),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 1, 1), 2),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 2, 0),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 0),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 2, -1),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), -2, 1),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 2, padding=-1),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 2, dilation=0),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8), 2, 1, 2, dilation=3),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 0, 8, 8), 2),
    lambda t: t.nn.functional.max_pool2d(t.ones(2, 3, 8, 8, dtype=t.bool), 2),
    lambda t: t.nn.functional.avg_pool2d(t.ones(2, 3, 8, 8), 3, 1, 2),
    lambda t: t.nn.functional.avg_pool2d(t.ones(8, 8), 2),
    lambda t: t.nn.functional.avg_pool2d(t.ones(1, 2, 3, 8, 8), 2),
    lambda t: t.nn.functional.avg_pool2d(t.ones(2, 3, 8, 8), 2, divisor_override=0),
    lambda t: t.nn.functional.avg_pool2d(t.ones(2, 3, 8, 8), (3, 3, 3)),
    lambda t: t.nn.functional.avg_pool2d(t.ones(2, 3, 8, 8), 2, 0),
    lambda t: t.nn.functional.avg_pool2d(t.ones(2, 3, 1, 1), 2),
    lambda t: t.nn.functional.avg_pool2d(t.ones(2, 0, 8, 8), 2),
    lambda t: t.nn.functional.avg_pool2d(t.ones(2, 3, 8, 8, dtype=t.bool), 2),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(8), 2),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(1, 2, 3, 8, 8), 3),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(2, 3, 8, 8), -1),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(2, 3, 8, 8), (1, 2, 3)),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(2, 3, 8, 8), None),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(3, 8), (None, 2, 2)),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(2, 3, 0, 8), 3),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(2, 3, 8, 8, dtype=t.int64), 3),
    lambda t: t.nn.functional.adaptive_avg_pool2d(t.ones(2, 3, 8, 8, dtype=t.int64), 1),
]


@pytest.mark.parametrize("program", POOL_ERRORS)
def test_pool_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


POOL_MODULES: list[Callable[[Any], Any]] = [
    lambda t: t.nn.MaxPool2d(3, 2, 1),
    lambda t: t.nn.MaxPool2d((3, 2), ceil_mode=True, dilation=(1, 2)),
    lambda t: t.nn.MaxPool2d(2, return_indices=True),
    lambda t: t.nn.AvgPool2d(3, 2, 1),
    lambda t: t.nn.AvgPool2d((2, 3), count_include_pad=False, ceil_mode=True,
                             divisor_override=5),
    lambda t: t.nn.AdaptiveAvgPool2d((3, None)),
    lambda t: t.nn.AdaptiveAvgPool2d(1),
]


@pytest.mark.parametrize("build", POOL_MODULES)
def test_pool_modules_match_torch(build: Callable[[Any], Any]) -> None:
    theirs, ours = build(torch), build(ft)
    assert repr(ours) == repr(theirs)
    tx, fx = both(randn(2, 3, 9, 8))
    want, got = theirs(tx), ours(fx)
    if isinstance(want, tuple):
        np.testing.assert_array_equal(got[1].numpy(force=True), want[1].numpy())
        want, got = want[0], got[0]
    close(got, want, tol=1e-6)


# --- batch norm -------------------------------------------------------------------------------

def _stats(c: int) -> tuple[np.ndarray, np.ndarray]:
    return randn(c) * 0.5, np.abs(randn(c)) + 0.5


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (6, 3), (4, 3, 7), (2, 3, 2, 3, 4)])
def test_batch_norm_values_running_stats_and_launches_match_torch(
        training: bool, affine: bool, shape: tuple[int, ...]) -> None:
    c = shape[1]
    (tx, fx) = both(randn(*shape) * 2 + 1)
    mean, var = _stats(c)
    (tm, fm), (tv, fv) = both(mean), both(var)
    (tw, fw), (tb, fb) = (both(randn(c)), both(randn(c))) if affine else ((None, None),
                                                                         (None, None))
    with torch_launches(cuda=True) as expected_ops:
        want = TF.batch_norm(tx, tm, tv, tw, tb, training, 0.2, 1e-3)
    with launches() as ops:
        got = F.batch_norm(fx, fm, fv, fw, fb, training, 0.2, 1e-3)
    close(got, want, tol=1e-5)
    close(fm, tm, tol=1e-6)  # training updated both, in place, the same way
    close(fv, tv, tol=1e-6)
    assert ops == expected_ops
    cudnn = affine and len(shape) >= 3
    assert ops == ["cudnn_batch_norm" if cudnn else "native_batch_norm"]


@pytest.mark.parametrize(("x_dtype", "w_dtype", "op"), [
    ("float16", "float32", "cudnn_batch_norm"),  # half input with float params: cuDNN
    ("float16", "float16", "native_batch_norm"),
    ("bfloat16", "float32", "native_batch_norm"),  # no bfloat16 in torch's cuDNN batch norm
    ("float64", "float64", "cudnn_batch_norm"),
])
def test_batch_norm_dtypes_pick_the_backend_torch_picks(x_dtype: str, w_dtype: str,
                                                        op: str) -> None:
    (tx, fx) = both(randn(4, 3, 5, 5), x_dtype)
    mean, var = _stats(3)
    args = [both(a, w_dtype) for a in (mean, var, randn(3), randn(3))]
    with torch_launches(cuda=True) as expected_ops:
        want = TF.batch_norm(tx, *(t for t, _ in args))
    with launches() as ops:
        got = F.batch_norm(fx, *(f for _, f in args))
    close(got, want, tol=1e-12 if x_dtype == "float64" else 2e-2)
    assert ops == expected_ops == [op]


def test_batch_norm_special_cases_launch_as_torch() -> None:
    (tx, fx) = both(randn(4, 3, 5, 5))
    (tw, fw), (tb, fb) = both(randn(3)), both(randn(3))
    cases: list[Callable[[Any, Any, Any, Any], Any]] = [
        lambda f, x, w, b: f.batch_norm(x, None, None, w, b, True),  # no running stats
        lambda f, x, w, b: f.batch_norm(strided(x), None, None, w, b, True),  # a clone first
        lambda f, x, w, b: f.batch_norm(x[:0], None, None, w, b, True),  # empty: clone mul add
    ]
    for case in cases:
        with torch_launches(cuda=True) as expected_ops:
            want = case(TF, tx, tw, tb)
        with launches() as ops:
            got = case(F, fx, fw, fb)
        close(got, want)
        assert ops == expected_ops
    with ft.backends.cudnn.flags(enabled=False), launches() as ops:
        F.batch_norm(fx, None, None, fw, fb, True)
    assert ops == ["native_batch_norm"]


BN_ERRORS: list[Callable[[Any], Any]] = [
    lambda t: t.nn.functional.batch_norm(t.ones(2, 3, 4), None, None),
    lambda t: t.nn.functional.batch_norm(t.ones(2, 3, 4), t.zeros(3), None),
    lambda t: t.nn.functional.batch_norm(t.ones(2, 3, 4), t.zeros(4), t.ones(3)),
    lambda t: t.nn.functional.batch_norm(t.ones(2, 3, 4), t.zeros(3), t.ones(3), t.ones(4)),
    lambda t: t.nn.functional.batch_norm(t.ones(2, 3, 4), t.zeros(3), t.ones(3), None,
                                         t.ones(2)),
    lambda t: t.nn.functional.batch_norm(t.ones(1, 3, 1, 1), None, None, training=True),
    lambda t: t.nn.functional.batch_norm(t.ones(1, 3), None, None, training=True),
    lambda t: t.nn.functional.batch_norm(t.ones(2, 3, 4, dtype=t.int64), t.zeros(3),
                                         t.ones(3)),
    lambda t: t.nn.BatchNorm2d(3)(t.ones(2, 3, 4)),
    lambda t: t.nn.BatchNorm1d(3)(t.ones(2, 3, 4, 4)),
]


@pytest.mark.parametrize("program", BN_ERRORS)
def test_batch_norm_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


BN_MODULES: list[Callable[[Any], Any]] = [
    lambda t: t.nn.BatchNorm2d(3),
    lambda t: t.nn.BatchNorm2d(3, eps=1e-3, momentum=None),
    lambda t: t.nn.BatchNorm2d(3, affine=False),
    lambda t: t.nn.BatchNorm2d(3, bias=False),
    lambda t: t.nn.BatchNorm2d(3, track_running_stats=False),
    lambda t: t.nn.BatchNorm1d(3, momentum=0.3),
]


@pytest.mark.parametrize("build", BN_MODULES)
def test_batch_norm_module_trains_and_evaluates_like_torch(build: Callable[[Any], Any]) -> None:
    theirs, ours = build(torch), build(ft)
    shape = (4, 3) if isinstance(theirs, torch.nn.BatchNorm1d) else (4, 3, 5, 6)
    # training updates the buffers; the last step evaluates
    assert_trains_and_evaluates_like_torch(theirs, ours,
                                           [randn(*shape) + step for step in range(3)])


def test_batch_norm_module_init_launches_and_buffers() -> None:
    with torch_launches(cuda=True) as expected_ops:
        theirs = torch.nn.BatchNorm2d(5)
    with launches() as ops:
        ours = nn.BatchNorm2d(5, device="cuda")
    # torch.tensor(0) on cuda is one host-to-device copy (the cpu build records nothing)
    assert ops == [*expected_ops[:2], "copy_", *expected_ops[2:]]
    for name, buf in theirs.state_dict().items():
        got = ours.state_dict()[name]
        assert str(got.dtype) == str(buf.dtype) and got.is_cuda
        np.testing.assert_array_equal(got.numpy(force=True), buf.numpy())
