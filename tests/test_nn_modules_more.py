"""torch.nn's 3-D and transposed convolutions, GroupNorm and BatchNorm3d (F.conv3d,
F.conv_transpose1d/2d/3d, F.group_norm and the modules) against real torch (CPU build): values,
shapes, parameters, repr, state_dict keys, errors (class and first line) and launches.

Launch oracle: `torch_launches(cuda=True)`, which records for the CPU build's `convolution` what
torch 2.13's CUDA build dispatches (cudnn_convolution[_transpose] and the bias add_,
conv_depthwise3d, the slow kernels without cuDNN, a clone of a strided input) and for
`native_group_norm` the clone cuda makes of a channels_last input (see tests/oracles.py).
Parameter init: fake_torch's generators do not draw torch's CPU stream, so init is checked by
its launches, bounds and spread; values are compared after loading torch's state_dict.
"""

from __future__ import annotations

import warnings
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

_rng = np.random.default_rng(7)


def randn(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


# --- F.conv3d and F.conv_transpose1d/2d/3d: values and launches -------------------------------

# (function, input shape, weight shape, with bias, keyword arguments, input made strided)
CASES: list[tuple[str, tuple[int, ...], tuple[int, ...], bool, dict[str, Any], bool]] = [
    ("conv3d", (2, 3, 5, 6, 7), (4, 3, 3, 3, 3), True, {"padding": 1}, False),
    ("conv3d", (2, 4, 6, 5, 7), (6, 2, 3, 2, 3), False,
     {"stride": (1, 2, 1), "padding": (1, 0, 1), "dilation": (2, 1, 1), "groups": 2}, False),
    ("conv3d", (2, 4, 5, 5, 5), (8, 1, 3, 3, 3), True, {"groups": 4}, False),  # depthwise
    ("conv3d", (3, 5, 6, 7), (4, 3, 2, 2, 2), True, {"padding": "same"}, False),  # unbatched
    ("conv3d", (2, 3, 4, 5, 6), (4, 3, 1, 3, 3), True, {"padding": "valid"}, True),
    ("conv3d", (0, 3, 4, 5, 6), (4, 3, 1, 3, 3), True, {}, False),  # empty batch
    ("conv_transpose1d", (2, 4, 7), (4, 3, 3), True,
     {"stride": 2, "padding": 1, "output_padding": 1}, False),
    ("conv_transpose1d", (4, 9), (4, 2, 5), False, {"dilation": 2, "groups": 2}, False),
    ("conv_transpose1d", (2, 4, 7), (4, 3, 3), True, {}, True),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 2), True,
     {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2), "groups": 2,
      "dilation": (1, 2)}, False),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 4, 4), False, {"stride": 2, "padding": 1}, True),
    ("conv_transpose2d", (2, 4, 5, 5), (4, 2, 3, 3), True,  # output_padding >= stride: no cuDNN
     {"stride": 1, "dilation": 2, "output_padding": 1}, False),
    ("conv_transpose2d", (0, 4, 5, 5), (4, 2, 3, 3), True, {}, False),  # empty batch
    ("conv_transpose3d", (2, 4, 3, 4, 5), (4, 2, 3, 3, 2), True,
     {"stride": 2, "padding": 1, "groups": 2}, False),
    ("conv_transpose3d", (4, 3, 3, 3), (4, 5, 2, 2, 2), False,
     {"stride": (1, 2, 2), "output_padding": (0, 1, 1)}, False),
]


def _call(lib: Any, case: tuple[Any, ...], x: Any, w: Any, b: Any) -> Any:
    fn, _, _, _, kwargs, is_strided = case
    return getattr(lib.nn.functional, fn)(strided(x) if is_strided else x, w, b, **kwargs)


def _inputs(case: tuple[Any, ...]) -> tuple[tuple[Any, Any], ...]:
    fn, x_shape, w_shape, with_bias, kwargs, _ = case
    channels = w_shape[1] * kwargs.get("groups", 1) if "transpose" in fn else w_shape[0]
    bias = both(randn(channels)) if with_bias else (None, None)
    return both(randn(*x_shape)), both(randn(*w_shape)), bias


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[4]}")
@pytest.mark.parametrize("cudnn", [True, False])
def test_conv_nd_matches_torch_values_and_launches(case: tuple[Any, ...], cudnn: bool) -> None:
    (tx, fx), (tw, fw), (tb, fb) = _inputs(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # padding='same' with an even kernel warns, in both
        with torch.backends.cudnn.flags(enabled=cudnn), torch_launches(cuda=True) as want_ops:
            want = _call(torch, case, tx, tw, tb)
        with ft.backends.cudnn.flags(enabled=cudnn), launches() as ops:
            got = _call(ft, case, fx, fw, fb)
    close(got, want, tol=1e-4)
    assert ops == want_ops
    assert "convolution" not in ops  # the CPU build's op; cuda runs a backend's


def test_conv_nd_launch_lists_by_backend() -> None:
    """The lists the oracle derives, written out: what torch's CUDA build runs."""
    x3, w3, b = (ft.randn(2, 4, 5, 5, 5, device="cuda"), ft.randn(6, 4, 3, 3, 3, device="cuda"),
                 ft.randn(6, device="cuda"))
    with launches() as ops:
        F.conv3d(x3, w3, b)
    assert ops == ["cudnn_convolution", "add_"]
    w_depthwise = ft.randn(8, 1, 3, 3, 3, device="cuda")
    with launches() as ops:
        F.conv3d(x3, w_depthwise, None, groups=4)
    assert ops == ["conv_depthwise3d"]
    with ft.backends.cudnn.flags(enabled=False), launches() as ops:
        F.conv3d(x3, w3, b)
    assert ops == ["slow_conv_dilated3d"]  # cuda's 3-D fallback, although not dilated
    xt, wt = ft.randn(2, 4, 5, 5, device="cuda"), ft.randn(4, 3, 3, 3, device="cuda")
    bt = ft.randn(6, device="cuda")
    with launches() as ops:
        F.conv_transpose2d(xt, wt, bt, groups=2)
    assert ops == ["cudnn_convolution_transpose", "add_"]
    with ft.backends.cudnn.flags(enabled=False), launches() as ops:
        F.conv_transpose2d(xt, wt, bt, groups=2)
    assert ops == ["clone", "slow_conv_transpose2d", "clone", "slow_conv_transpose2d", "cat"]
    with launches() as ops:
        F.conv_transpose2d(xt, wt, None, dilation=2, output_padding=1)  # output_padding 1 >=
    assert ops == ["slow_conv_transpose2d"]  # stride 1: cuDNN refuses it


@pytest.mark.parametrize(("dtype", "tol"), [("float16", 2e-2), ("bfloat16", 6e-2),
                                            ("float64", 1e-12)])
def test_conv_nd_dtypes_match_torch(dtype: str, tol: float) -> None:
    for fn, xs, ws in (("conv3d", (2, 3, 4, 5, 6), (4, 3, 3, 3, 3)),
                       ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3))):
        (tx, fx), (tw, fw) = both(randn(*xs), dtype, "cpu"), both(randn(*ws), dtype, "cpu")
        close(getattr(F, fn)(fx, fw, stride=2), getattr(TF, fn)(tx, tw, stride=2), tol=tol)


def _f(lib: Any) -> Any:
    return lib.nn.functional


CONV_ERRORS: list[Callable[[Any], Any]] = [
    lambda t: _f(t).conv3d(t.ones(2, 3, 4, 4, 4), t.ones(4, 2, 3, 3, 3)),  # channels
    lambda t: _f(t).conv3d(t.ones(2, 3, 4, 4), t.ones(4, 3, 3, 3, 3)),  # unbatched 4-D
    lambda t: _f(t).conv3d(t.ones(3, 4, 4), t.ones(4, 3, 3, 3, 3)),  # input dims
    lambda t: _f(t).conv3d(t.ones(2, 3, 4, 4, 4), t.ones(4, 3, 5, 3, 3)),  # kernel too big
    lambda t: _f(t).conv3d(t.ones(2, 3, 4, 4, 4), t.ones(4, 3, 3, 3, 3),
                           t.ones(4, dtype=t.float64)),  # bias dtype
    lambda t: _f(t).conv3d(t.ones(2, 3, 4, 4, 4), t.ones(4, 3, 3, 3, 3), stride=(1, 1)),
    lambda t: _f(t).conv_transpose2d(t.ones(2, 3, 4, 4), t.ones(4, 3, 3, 3)),  # channels
    lambda t: _f(t).conv_transpose2d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3, 3), t.ones(4)),
    lambda t: _f(t).conv_transpose2d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3, 3), groups=3),
    lambda t: _f(t).conv_transpose2d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3, 3),
                                     output_padding=-1),
    lambda t: _f(t).conv_transpose2d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3, 3), padding=-1),
    lambda t: _f(t).conv_transpose2d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3, 3), stride=0),
    lambda t: _f(t).conv_transpose2d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3, 3),
                                     t.ones(3, dtype=t.float64)),  # bias dtype: backend text
    lambda t: _f(t).conv_transpose1d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3)),
    lambda t: _f(t).conv_transpose3d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3, 3, 3)),  # unbatched
    lambda t: _f(t).conv_transpose3d(t.ones(4, 4, 4), t.ones(4, 3, 3, 3, 3)),
    lambda t: t.nn.Conv3d(3, 4, 3, groups=2),
    lambda t: t.nn.Conv3d(3, 4, 3, stride=2, padding="same"),
    lambda t: t.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
    lambda t: t.nn.ConvTranspose1d(4, 3, 3, groups=2),
    lambda t: t.nn.ConvTranspose2d(4, 3, 3, stride=2)(t.ones(1, 4, 5, 5), output_size=[8, 8]),
    lambda t: t.nn.ConvTranspose2d(4, 3, 3, stride=2)(t.ones(1, 4, 5, 5), output_size=[1, 11]),
]


@pytest.mark.parametrize("program", CONV_ERRORS)
def test_conv_nd_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


# --- nn.Conv3d, nn.ConvTranspose1d/2d/3d --------------------------------------------------------

CONV_MODULES: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda t: t.nn.Conv3d(3, 8, 3), (2, 3, 5, 6, 7)),
    (lambda t: t.nn.Conv3d(4, 8, (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), groups=2,
                           bias=False, dilation=(1, 1, 2)), (2, 4, 3, 9, 9)),
    (lambda t: t.nn.Conv3d(3, 6, 2, padding="same", padding_mode="replicate"), (3, 4, 5, 6)),
    (lambda t: t.nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1),
     (2, 4, 9)),
    (lambda t: t.nn.ConvTranspose2d(4, 8, (3, 4), stride=(2, 1), padding=(1, 2), groups=2,
                                    bias=False, dilation=(1, 2)), (2, 4, 5, 6)),
    (lambda t: t.nn.ConvTranspose2d(4, 3, 2, stride=2), (4, 5, 5)),
    (lambda t: t.nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1, output_padding=(1, 0, 1)),
     (2, 4, 3, 4, 3)),
]


@pytest.mark.parametrize(("build", "x_shape"), CONV_MODULES)
def test_conv_nd_module_matches_torch(build: Callable[[Any], Any],
                                      x_shape: tuple[int, ...]) -> None:
    theirs, ours = build(torch), build(ft)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert {k: tuple(v.shape) for k, v in ours.named_parameters()} == \
        {k: tuple(v.shape) for k, v in theirs.named_parameters()}
    for name in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                 "transposed", "output_padding", "groups", "padding_mode",
                 "_reversed_padding_repeated_twice"):
        assert getattr(ours, name) == getattr(theirs, name), name
    ours.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    x = randn(*x_shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad(), torch_launches(cuda=True) as want_ops:
            want = theirs(torch.from_numpy(x))
        ours.cuda()
        fx = ft.tensor(x, device="cuda")
        with launches() as ops:
            got = ours(fx)
    close(got, want, tol=1e-4)
    assert ops == want_ops


def test_conv_transpose_output_size_picks_the_output_padding_torch_picks() -> None:
    theirs = torch.nn.ConvTranspose2d(4, 3, 3, stride=3, padding=1)
    ours = nn.ConvTranspose2d(4, 3, 3, stride=3, padding=1)
    ours.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    tx, fx = both(randn(2, 4, 5, 5), device="cpu")
    for size in ([13, 15], [2, 3, 14, 13], [15, 14]):
        with torch.no_grad():
            want = theirs(tx, output_size=size)
        close(ours(fx, output_size=size), want, tol=1e-5)
    assert ours._output_padding(fx, [14, 15], [3, 3], [1, 1], [3, 3], 2) == \
        theirs._output_padding(tx, [14, 15], [3, 3], [1, 1], [3, 3], 2) == [1, 2]


@pytest.mark.parametrize("cls", ["Conv3d", "ConvTranspose1d", "ConvTranspose3d"])
def test_conv_nd_init_draws_kaiming_bounds_with_one_uniform_per_parameter(cls: str) -> None:
    with torch_launches(cuda=True) as want_ops:
        theirs = getattr(torch.nn, cls)(4, 6, 3, groups=2)
    with launches() as ops:
        ours = getattr(nn, cls)(4, 6, 3, groups=2, device="cuda")
    assert ops == want_ops == ["uniform_", "uniform_"]  # weight first, then bias, as torch
    fan_in = theirs.weight.shape[1] * int(np.prod(theirs.weight.shape[2:]))
    bound = 1 / np.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives the same bound
    w, b = ours.weight.numpy(force=True), ours.bias.numpy(force=True)
    assert w.shape == tuple(theirs.weight.shape)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert w.std() > bound / 2.5  # spread over the interval, not a constant


def test_conv_transpose_refuses_other_padding_modes_in_forward_as_torch() -> None:
    theirs, ours = torch.nn.ConvTranspose1d(2, 2, 3), nn.ConvTranspose1d(2, 2, 3)
    theirs.padding_mode = ours.padding_mode = "reflect"
    with pytest.raises(ValueError) as want:
        theirs(torch.ones(1, 2, 5))
    with pytest.raises(ValueError) as got:
        ours(ft.ones(1, 2, 5))
    assert str(got.value) == str(want.value)


# --- F.group_norm, nn.GroupNorm -----------------------------------------------------------------

GN_CASES: list[tuple[tuple[int, ...], int, bool, bool]] = [
    ((4, 6, 5, 5), 3, True, False),
    ((4, 6, 5, 5), 6, False, False),  # instance-norm-like, no affine
    ((2, 8, 7), 1, True, True),  # layer-norm-like, strided input: one clone first
    ((3, 4), 2, True, False),
    ((2, 6, 3, 4, 5), 2, True, False),
    ((0, 6, 4), 3, True, False),  # empty: nothing to launch
]


@pytest.mark.parametrize(("shape", "groups", "affine", "is_strided"), GN_CASES)
def test_group_norm_values_and_launches_match_torch(shape: tuple[int, ...], groups: int,
                                                    affine: bool, is_strided: bool) -> None:
    c = shape[1]
    tx, fx = both(randn(*shape) * 3 + 1)
    (tw, fw), (tb, fb) = (both(randn(c)), both(randn(c))) if affine else ((None, None),
                                                                         (None, None))
    if is_strided:
        tx, fx = strided(tx), strided(fx)
    with torch_launches(cuda=True) as want_ops:
        want = TF.group_norm(tx, groups, tw, tb, 1e-3)
    with launches() as ops:
        got = F.group_norm(fx, groups, fw, fb, 1e-3)
    # 1e-4: torch's DEFAULT kernels (ATEN_CPU_CAPABILITY=default) sum a group's moments in
    # another order than its AVX2/AVX-512 ones; a group of two values, (3, 4) in 2 groups,
    # differed by 1e-4 relative in float32 there
    close(got, want, tol=1e-4)
    assert ops == want_ops
    assert ops == ((["clone"] if is_strided else []) + ["native_group_norm"]
                   if shape[0] else [])


@pytest.mark.parametrize(("x_dtype", "w_dtype", "tol"), [
    ("bfloat16", "float32", 3e-2), ("float16", "float32", 4e-3), ("bfloat16", "bfloat16", 3e-2),
    ("float64", "float64", 1e-12)])
def test_group_norm_dtypes_match_torch(x_dtype: str, w_dtype: str, tol: float) -> None:
    tx, fx = both(randn(3, 6, 4, 4) * 2, x_dtype, "cpu")
    (tw, fw), (tb, fb) = both(randn(6), w_dtype, "cpu"), both(randn(6), w_dtype, "cpu")
    close(F.group_norm(fx, 2, fw, fb), TF.group_norm(tx, 2, tw, tb), tol=tol)


GN_ERRORS: list[Callable[[Any], Any]] = [
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4), 4),
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4), 0),
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4), -3),
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4), 3, t.ones(5)),
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4), 3, t.ones(6, 1)),
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4), 3, None, t.ones(2, 3)),
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4), 3, t.ones(6), t.ones(2, 3)),
    lambda t: t.nn.functional.group_norm(t.ones(6), 3),
    lambda t: t.nn.functional.group_norm(t.ones(1, 3), 3),
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4, dtype=t.int64), 3),
    lambda t: t.nn.functional.group_norm(t.ones(2, 6, 4), 3, t.ones(6, dtype=t.bfloat16)),
    lambda t: t.nn.GroupNorm(4, 6),
    lambda t: t.nn.GroupNorm(3, 6)(t.ones(2, 4, 5)),
]


@pytest.mark.parametrize("program", GN_ERRORS)
def test_group_norm_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


@pytest.mark.parametrize("build", [
    lambda t: t.nn.GroupNorm(3, 6),
    lambda t: t.nn.GroupNorm(2, 6, eps=1e-3, affine=False),
    lambda t: t.nn.GroupNorm(6, 6, bias=False),
])
def test_group_norm_module_matches_torch(build: Callable[[Any], Any]) -> None:
    theirs, ours = build(torch), build(ft)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, p in theirs.state_dict().items():  # ones and zeros: init equal without a seed
        np.testing.assert_array_equal(ours.state_dict()[name].numpy(), p.numpy())
    if theirs.weight is not None:
        with torch.no_grad():
            theirs.weight.mul_(torch.from_numpy(randn(6)))
        ours.load_state_dict({k: ft.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    tx, fx = both(randn(2, 6, 5, 4))
    with torch.no_grad(), torch_launches(cuda=True) as want_ops:
        want = theirs(tx)
    ours.cuda()
    with launches() as ops:
        got = ours(fx)
    close(got, want)
    assert ops == want_ops == ["native_group_norm"]


# --- nn.BatchNorm3d -----------------------------------------------------------------------------

def test_batch_norm3d_trains_and_evaluates_like_torch() -> None:
    theirs, ours = torch.nn.BatchNorm3d(3, momentum=0.3), nn.BatchNorm3d(3, momentum=0.3)
    # training updates the buffers; the last step evaluates
    steps = assert_trains_and_evaluates_like_torch(
        theirs, ours, [randn(2, 3, 4, 5, 3) + step for step in range(3)])
    assert all(ops[-1] == "cudnn_batch_norm" for ops in steps)


@pytest.mark.parametrize("program", [
    lambda t: t.nn.BatchNorm3d(3)(t.ones(2, 3, 4, 4)),
    lambda t: t.nn.BatchNorm3d(3)(t.ones(2, 4, 2, 2, 2)),
])
def test_batch_norm3d_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


# --- F.instance_norm, nn.InstanceNorm1d/2d/3d -----------------------------------------------

IN_MODULES: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda t: t.nn.InstanceNorm1d(3), (2, 3, 7)),
    (lambda t: t.nn.InstanceNorm1d(3, affine=True), (3, 7)),  # unbatched
    (lambda t: t.nn.InstanceNorm2d(3, track_running_stats=True), (2, 3, 4, 5)),
    (lambda t: t.nn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.3,
                                   eps=1e-3), (2, 3, 4, 5)),
    (lambda t: t.nn.InstanceNorm3d(2, affine=True, bias=False), (2, 2, 3, 4, 5)),
]


@pytest.mark.parametrize(("build", "shape"), IN_MODULES)
def test_instance_norm_modules_train_and_evaluate_like_torch(build: Callable[[Any], Any],
                                                             shape: tuple[int, ...]) -> None:
    # two training steps update tracked stats; then eval
    assert_trains_and_evaluates_like_torch(build(torch), build(ft),
                                           [randn(*shape) * 2 + step for step in range(3)])


def test_instance_norm_launch_list() -> None:
    m = nn.InstanceNorm2d(3, affine=True, track_running_stats=True).cuda()
    x = ft.randn(2, 3, 4, 5, device="cuda")
    with launches() as ops:
        m(x)
    assert ops == ["repeat", "repeat", "repeat", "repeat", "cudnn_batch_norm", "mean", "copy_",
                   "mean", "copy_"]  # weight, bias and both stats repeated N times


IN_ERRORS: list[Callable[[Any], Any]] = [
    lambda t: t.nn.functional.instance_norm(t.ones(2, 3, 1)),
    lambda t: t.nn.functional.instance_norm(t.ones(2, 3, 4), use_input_stats=False),
    lambda t: t.nn.InstanceNorm2d(3)(t.ones(2, 3)),
    lambda t: t.nn.InstanceNorm1d(4, affine=True)(t.ones(2, 3, 5)),
]


@pytest.mark.parametrize("program", IN_ERRORS)
def test_instance_norm_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_instance_norm_warns_of_a_feature_mismatch_as_torch() -> None:
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        nn.InstanceNorm1d(4)(ft.ones(2, 3, 5))


# --- F.dropout1d/2d/3d, nn.Dropout1d/2d/3d ---------------------------------------------------

DROPOUTS: list[tuple[str, tuple[int, ...]]] = [
    ("dropout1d", (4, 6, 5)), ("dropout1d", (6, 5)), ("dropout2d", (4, 6, 3, 5)),
    ("dropout2d", (4, 6, 5)), ("dropout3d", (2, 6, 3, 2, 4)), ("dropout3d", (6, 3, 2, 4)),
]


@pytest.mark.parametrize(("fn", "shape"), DROPOUTS)
@pytest.mark.parametrize("inplace", [False, True])
def test_channel_dropout_zeroes_whole_channels_and_launches_as_torch(
        fn: str, shape: tuple[int, ...], inplace: bool) -> None:
    ft.manual_seed(0)  # the channels dropped depend on the generator: the same every run
    a = np.abs(randn(*shape)) + 1  # no zero of its own
    tx, fx = both(a.copy())  # (torch's tensor shares the array it is given)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout2d of 3-D input warns, in both
        with torch_launches(cuda=True) as want_ops:
            getattr(TF, fn)(tx, 0.5, True, inplace)
        with launches() as ops:
            got = getattr(F, fn)(fx, 0.5, True, inplace)
    assert ops == want_ops  # the RNG differs (fake_torch's is not torch's); the ops do not
    y = got.numpy(force=True)
    unbatched = (fn == "dropout1d" and len(shape) == 2) or (fn == "dropout3d" and len(shape) == 4)
    per_channel = y.reshape(*(shape[:1] if unbatched else shape[:2]), -1)
    zero, kept = (per_channel == 0).all(-1), np.isclose(per_channel,
                                                        2 * a.reshape(per_channel.shape))
    assert (zero | kept.all(-1)).all()  # each channel all zero or all scaled by 1/(1-p)
    assert zero.any() and (~zero).any()
    assert (got is fx) == inplace


def test_channel_dropout_is_the_input_itself_in_eval_and_zeros_at_p_one() -> None:
    x = ft.randn(2, 3, 4, 5, device="cuda")
    with launches() as ops:
        assert F.dropout2d(x, 0.5, training=False) is x
        assert nn.Dropout2d(0.0)(x) is x
    assert ops == []
    ones = torch.ones(2, 3, 4, 5)
    with torch_launches(cuda=True) as want_ops:
        TF.dropout2d(ones, 1.0)
    with launches() as ops:
        y = F.dropout2d(x, 1.0)
    assert ops == want_ops == ["zeros", "mul"]
    assert not y.numpy(force=True).any()


@pytest.mark.parametrize("build", [lambda t: t.nn.Dropout1d(), lambda t: t.nn.Dropout2d(0.2),
                                   lambda t: t.nn.Dropout3d(0.7, inplace=True)])
def test_channel_dropout_modules_match_torch_repr(build: Callable[[Any], Any]) -> None:
    assert repr(build(ft)) == repr(build(torch))


@pytest.mark.parametrize("program", [
    lambda t: t.nn.functional.dropout1d(t.ones(2, 3, 4, 5)),
    lambda t: t.nn.functional.dropout2d(t.ones(2, 3, 4, 5), p=1.5),
    lambda t: t.nn.Dropout3d(-0.1),
])
def test_channel_dropout_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_dropout2d_warns_of_a_3d_input_as_torch() -> None:
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d"):
        F.dropout2d(ft.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d"):
        F.dropout2d(ft.ones(3, 4))
