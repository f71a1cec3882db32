"""torch.conv1d / torch.conv2d (F.conv1d / F.conv2d) and nn.Conv1d / nn.Conv2d against real torch
(CPU build): values, shapes, errors (class and first line), launches, parameters.

Launch oracle: `torch_launches(cuda=True)`, which records for the CPU build's one `convolution`
op what torch 2.13's CUDA build dispatches for the same arguments (cudnn_convolution and the
bias add_, _conv_depthwise2d, the slow kernels without cuDNN, a clone of a strided input; see
tests/oracles.py).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import (
    assert_raises_like_torch,
    both,
    close,
    launches,
    torch_launches,
    torch_may_say,
)

import fake_torch as ft
from fake_torch import nn

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

_rng = np.random.default_rng(0)


def randn(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


# --- F.conv2d / F.conv1d: values and launches ------------------------------------------------

# (input shape, weight shape, with bias, keyword arguments, input made strided)
CASES: list[tuple[str, tuple[int, ...], tuple[int, ...], bool, dict[str, Any], bool]] = [
    ("3x3 pad 1 + bias", (2, 3, 9, 9), (4, 3, 3, 3), True, {"padding": 1}, False),
    ("no bias", (2, 3, 9, 9), (4, 3, 3, 3), False, {}, False),
    ("stride, tuple padding", (2, 3, 11, 8), (5, 3, 3, 2), True,
     {"stride": (2, 1), "padding": (1, 0)}, False),
    ("dilation", (1, 3, 12, 12), (4, 3, 3, 3), True, {"dilation": 2, "padding": 2}, False),
    ("groups", (2, 4, 8, 8), (6, 2, 3, 3), True, {"groups": 2}, False),
    ("depthwise", (2, 4, 8, 8), (8, 1, 3, 3), True, {"groups": 4, "padding": 1}, False),
    ("same, odd kernel", (2, 3, 8, 7), (4, 3, 3, 3), True, {"padding": "same"}, False),
    ("same, even kernel", (2, 3, 8, 7), (4, 3, 4, 2), True, {"padding": "same"}, False),
    ("valid", (2, 3, 8, 7), (4, 3, 3, 3), False, {"padding": "valid"}, False),
    ("unbatched", (3, 8, 8), (4, 3, 3, 3), True, {"padding": 1}, False),
    ("strided input", (2, 3, 9, 9), (4, 3, 3, 3), True, {"padding": 1}, True),
    ("empty batch", (0, 3, 9, 9), (4, 3, 3, 3), True, {}, False),
    ("zero channels", (2, 0, 9, 9), (4, 0, 3, 3), True, {}, False),
    ("7x7 stride 2 stem", (2, 3, 32, 32), (8, 3, 7, 7), False, {"stride": 2, "padding": 3},
     False),
]
CASES_1D: list[tuple[str, tuple[int, ...], tuple[int, ...], bool, dict[str, Any], bool]] = [
    ("1-D + bias", (2, 3, 10), (4, 3, 3), True, {"padding": 1}, False),
    ("1-D stride dilation", (2, 3, 17), (4, 3, 3), False, {"stride": 2, "dilation": 3}, False),
    ("1-D unbatched", (3, 10), (4, 3, 5), True, {}, False),
    ("1-D depthwise", (2, 4, 10), (4, 1, 3), True, {"groups": 4}, False),
    ("1-D same even", (2, 3, 10), (4, 3, 4), True, {"padding": "same"}, False),
    ("1-D strided input", (2, 3, 10), (4, 3, 3), True, {}, True),
]


def _call(lib: Any, fn: str, x: Any, w: Any, b: Any, kwargs: dict[str, Any],
          strided: bool) -> Any:
    if strided:
        x = x.transpose(-1, -2).contiguous().transpose(-1, -2)  # same values, other strides
    return getattr(lib.nn.functional, fn)(x, w, b, **kwargs)


@pytest.mark.parametrize(("fn", "case"), [("conv2d", c) for c in CASES] +
                         [("conv1d", c) for c in CASES_1D], ids=lambda c: c[0] if
                         isinstance(c, tuple) else c)
def test_conv_matches_torch_values_and_launches(fn: str, case: tuple[Any, ...]) -> None:
    _, x_shape, w_shape, with_bias, kwargs, strided = case
    (tx, fx), (tw, fw) = both(randn(*x_shape)), both(randn(*w_shape))
    tb, fb = both(randn(w_shape[0])) if with_bias else (None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # padding='same' with an even kernel warns, in both
        with torch_launches(cuda=True) as expected_ops:
            expected = _call(torch, fn, tx, tw, tb, kwargs, strided)
        with launches() as ops:
            got = _call(ft, fn, fx, fw, fb, kwargs, strided)
    close(got, expected, tol=1e-4)
    assert ops == expected_ops
    assert "convolution" not in ops  # the CPU build's op; cuda runs a backend's


def test_conv2d_launch_lists_by_backend() -> None:
    """The lists the oracle derives, written out: what torch's CUDA build runs."""
    x, w, b = (ft.randn(2, 4, 8, 8, device="cuda"), ft.randn(4, 2, 3, 3, device="cuda"),
               ft.randn(4, device="cuda"))
    dw, b8 = ft.randn(8, 1, 3, 3, device="cuda"), ft.randn(8, device="cuda")
    with launches() as ops:
        ft.conv2d(x, w, b, groups=2)
    assert ops == ["cudnn_convolution", "add_"]  # the bias is added after cuDNN, in place
    with launches() as ops:
        ft.conv2d(x, dw, b8, groups=4)
    assert ops == ["_conv_depthwise2d"]  # the bias inside
    with ft.backends.cudnn.flags(enabled=False), launches() as ops:
        ft.conv2d(x, w, b, groups=2)
    assert ops == ["clone", "_slow_conv2d_forward", "clone", "_slow_conv2d_forward", "cat"]
    with ft.backends.cudnn.flags(enabled=False), launches() as ops:
        ft.conv2d(x[:1], w, b, groups=2, dilation=2)  # one image: its channel slices are
    assert ops == ["slow_conv_dilated2d", "slow_conv_dilated2d", "cat"]  # contiguous


@pytest.mark.parametrize("cudnn_enabled", [False, True])
@pytest.mark.parametrize("kwargs", [{"groups": 2}, {"dilation": 2}, {}])
def test_conv_without_cudnn_matches_torch(cudnn_enabled: bool, kwargs: dict[str, Any]) -> None:
    (tx, fx), (tw, fw), (tb, fb) = both(randn(2, 4, 9, 9)), both(randn(6, 4 // kwargs.get(
        "groups", 1), 3, 3)), both(randn(6))
    with torch.backends.cudnn.flags(enabled=cudnn_enabled), \
            ft.backends.cudnn.flags(enabled=cudnn_enabled):
        with torch_launches(cuda=True) as expected_ops:
            expected = torch.nn.functional.conv2d(tx, tw, tb, **kwargs)
        with launches() as ops:
            got = ft.nn.functional.conv2d(fx, fw, fb, **kwargs)
    close(got, expected, tol=1e-4)
    assert ops == expected_ops


def test_fp16_depthwise_takes_cudnn_where_torch_does() -> None:
    """torch's cuDNN >= 8.2 heuristic: fp16 depthwise with >= 32 channels, a 3x3 filter and
    stride 1 goes to cuDNN (cudnn_convolution + add_); float32 stays _conv_depthwise2d."""
    for dtype, expected in [("float16", ["cudnn_convolution", "add_"]),
                            ("float32", ["_conv_depthwise2d"])]:
        (tx, fx), (tw, fw), (tb, fb) = (both(randn(1, 32, 8, 8), dtype),
                                        both(randn(32, 1, 3, 3), dtype), both(randn(32), dtype))
        with torch_launches(cuda=True) as expected_ops:
            want = torch.nn.functional.conv2d(tx, tw, tb, groups=32, padding=1)
        with launches() as ops:
            got = ft.nn.functional.conv2d(fx, fw, fb, groups=32, padding=1)
        close(got, want, tol=1e-2 if dtype == "float16" else 1e-4)
        assert ops == expected_ops == expected


@pytest.mark.parametrize(("dtype", "tol"), [("float64", 1e-12), ("float16", 1e-2),
                                            ("bfloat16", 5e-2)])
def test_conv2d_dtypes_match_torch(dtype: str, tol: float) -> None:
    (tx, fx), (tw, fw), (tb, fb) = (both(randn(2, 3, 8, 8), dtype), both(randn(4, 3, 3, 3),
                                    dtype), both(randn(4), dtype))
    close(ft.conv2d(fx, fw, fb, padding=1), torch.conv2d(tx, tw, tb, padding=1), tol=tol)


def test_integer_conv_on_the_cpu_is_exact_and_refused_on_cuda() -> None:
    x = _rng.integers(-5, 5, (2, 3, 6, 6))
    w = _rng.integers(-3, 3, (4, 3, 3, 3))
    got = ft.conv2d(ft.tensor(x), ft.tensor(w), stride=2)
    expected = torch.conv2d(torch.tensor(x), torch.tensor(w), stride=2)
    assert got.dtype is ft.int64
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    with pytest.raises(NotImplementedError, match=r"torch\.conv2d on cuda with torch\.int64"):
        ft.conv2d(ft.tensor(x, device="cuda"), ft.tensor(w, device="cuda"))


def test_same_padding_with_an_even_kernel_warns_like_torch() -> None:
    from fake_torch._kernels import conv

    conv._warned_same_padding = False
    with pytest.warns(UserWarning, match="Using padding='same' with even kernel lengths"):
        ft.conv2d(ft.randn(1, 1, 5, 5), ft.randn(1, 1, 2, 2), padding="same")


def test_a_resnet_sized_conv2d_takes_well_under_a_second() -> None:
    x, w = ft.randn(1, 64, 56, 56, device="cuda"), ft.randn(64, 64, 3, 3, device="cuda")
    ft.conv2d(x, w, padding=1)  # warm numpy's BLAS
    start = time.perf_counter()
    y = ft.conv2d(x, w, padding=1)
    assert time.perf_counter() - start < 0.5
    assert y.shape == (1, 64, 56, 56)


# --- errors ----------------------------------------------------------------------------------

def _f(lib: Any) -> Any:
    return lib.nn.functional


ERRORS: list[Callable[[Any], Any]] = [
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 2, 3, 3)),  # channels
    lambda t: _f(t).conv2d(t.ones(8, 8), t.ones(4, 3, 3, 3)),  # input dims
    lambda t: _f(t).conv2d(t.ones(1, 2, 3, 8, 8), t.ones(4, 3, 3, 3)),
    lambda t: _f(t).conv1d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 9, 9)),  # kernel too big
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), t.ones(3)),  # bias size
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), t.ones(4, 1)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3),
                           t.ones(4, dtype=t.float64)),  # bias dtype
    lambda t: _f(t).conv1d(t.ones(2, 3, 8), t.ones(4, 3, 3), t.ones(4, dtype=t.float64)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3, dtype=t.float64)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8, dtype=t.float16), t.ones(4, 3, 3, 3)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8, dtype=t.float64), t.ones(4, 3, 3, 3)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8, dtype=t.bool), t.ones(4, 3, 3, 3, dtype=t.bool)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), groups=2),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), groups=5),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 1, 3, 3), groups=3),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), groups=0),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), stride=0),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), padding=-1),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), dilation=0),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), dilation=-1),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), stride=(1, 1, 1)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), padding=(1, 1, 1)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3)),  # weight dims
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3)),
    lambda t: _f(t).conv1d(t.ones(2, 3, 8), t.ones(4, 3, 3, 3)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), stride=2, padding="same"),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), padding="full"),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3, 1), padding="same"),
    lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), padding="same",
                           dilation=(1, 1, 1)),
    lambda t: _f(t).conv2d(t.ones(2, 3, 0, 8), t.ones(4, 3, 3, 3), padding=2),
    lambda t: t.nn.Conv2d(3, 4, 3, groups=2),
    lambda t: t.nn.Conv2d(4, 3, 3, groups=2),
    lambda t: t.nn.Conv2d(4, 4, 3, groups=0),
    lambda t: t.nn.Conv2d(3, 4, 3, stride=2, padding="same"),
    lambda t: t.nn.Conv2d(3, 4, 3, padding="full"),
    lambda t: t.nn.Conv1d(3, 4, 3, padding_mode="mirror"),
]


@pytest.mark.parametrize("program", ERRORS)
def test_conv_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


# fake_torch words a float input's dtype mismatch and a zero dilation as oneDNN's checks do, on
# every machine; torch's CPU build words them so where it picks oneDNN, and as the slow kernels'
# "expected scalar type ..." / "dilation should be greater than zero, but got [...]" elsewhere,
# where the transposed ones take a bias of another dtype (oracles.TORCH_CPU_VARIANTS, which
# assert_raises_like_torch accepts as torch's side only). Our text is pinned here, whatever the
# machine.
_ONEDNN = "should be the same or input should be a MKLDNN tensor and weight is a dense tensor"
OUR_ONEDNN_TEXTS: list[tuple[Callable[[Any], Any], str]] = [
    (lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8, dtype=t.float16), t.ones(4, 3, 3, 3)),
     f"Input type (torch.HalfTensor) and weight type (torch.FloatTensor) {_ONEDNN}"),
    (lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8, dtype=t.bfloat16), t.ones(4, 3, 3, 3)),
     f"Input type (CPUBFloat16Type) and weight type (torch.FloatTensor) {_ONEDNN}"),
    (lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 1, 1, dtype=t.float64)),
     f"Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) {_ONEDNN}"),
    (lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3, dtype=t.bfloat16)),
     f"Input type (torch.FloatTensor) and weight type (CPUBFloat16Type) {_ONEDNN}"),
    (lambda t: _f(t).conv_transpose2d(t.ones(2, 3, 8, 8, dtype=t.float16), t.ones(3, 4, 3, 3)),
     f"Input type (torch.HalfTensor) and weight type (torch.FloatTensor) {_ONEDNN}"),
    (lambda t: _f(t).conv1d(t.ones(2, 3, 8), t.ones(4, 3, 3, dtype=t.float64)),
     f"Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) {_ONEDNN}"),
    (lambda t: _f(t).conv_transpose2d(t.ones(2, 4, 4, 4), t.ones(4, 3, 3, 3),
                                      t.ones(3, dtype=t.float64)),
     "Input type (torch.FloatTensor) and bias type (torch.DoubleTensor) should be the same or "
     "input should be a MKLDNN tensor and bias is a dense tensor"),
    (lambda t: _f(t).conv2d(t.ones(2, 3, 8, 8), t.ones(4, 3, 3, 3), dilation=0),
     "non-positive dilation is not supported"),
    (lambda t: _f(t).conv1d(t.ones(2, 3, 8), t.ones(4, 3, 3), dilation=0),
     "non-positive dilation is not supported"),
]


@pytest.mark.parametrize(("program", "text"), OUR_ONEDNN_TEXTS)
def test_conv_onednn_texts_on_every_machine(program: Callable[[Any], Any], text: str) -> None:
    with pytest.raises(RuntimeError) as ours:
        program(ft)
    assert str(ours.value) == text
    assert_raises_like_torch(program)  # torch's text: this one, or its machine's variant


def test_torch_cpu_variants_are_the_same_error_only() -> None:
    half_float = f"Input type (torch.HalfTensor) and weight type (torch.FloatTensor) {_ONEDNN}"
    assert torch_may_say("expected scalar type Half but found Float", half_float)
    assert not torch_may_say("expected scalar type Float but found Half", half_float)
    assert not torch_may_say(None, half_float)  # torch refuses it with every backend
    assert not torch_may_say(half_float, "expected scalar type Half but found Float")
    zero = "non-positive dilation is not supported"
    assert torch_may_say("dilation should be greater than zero, but got [1, 0]", zero)
    assert not torch_may_say("dilation should be greater than zero, but got [1, 2]", zero)


# --- nn.Conv1d / nn.Conv2d -------------------------------------------------------------------

MODULES: list[Callable[[Any], Any]] = [
    lambda t: t.nn.Conv2d(3, 8, 3),
    lambda t: t.nn.Conv2d(4, 8, (3, 5), stride=(2, 1), padding=(1, 2), dilation=2, groups=2,
                          bias=False),
    lambda t: t.nn.Conv2d(3, 8, 4, padding="same", padding_mode="reflect"),
    lambda t: t.nn.Conv2d(3, 8, 3, padding=1, padding_mode="replicate"),
    lambda t: t.nn.Conv2d(3, 6, 1, padding="valid"),
    lambda t: t.nn.Conv1d(3, 8, 5, stride=2, padding=2),
    lambda t: t.nn.Conv1d(4, 4, 3, groups=4, padding="same", padding_mode="reflect"),
    lambda t: t.nn.Conv2d(3, 8, 3, padding=(1, 2), padding_mode="circular"),
]


@pytest.mark.parametrize("build", MODULES)
def test_conv_module_matches_torch(build: Callable[[Any], Any]) -> None:
    theirs, ours = build(torch), build(ft)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.named_parameters()} == \
        {k: tuple(v.shape) for k, v in theirs.named_parameters()}
    for name in ("kernel_size", "stride", "padding", "dilation", "groups", "padding_mode",
                 "_reversed_padding_repeated_twice"):
        assert getattr(ours, name) == getattr(theirs, name), name
    ours.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    x = randn(2, theirs.in_channels, *([12, 11] if isinstance(theirs, torch.nn.Conv2d) else
                                       [13]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = theirs(torch.from_numpy(x))
    close(ours.cuda()(ft.tensor(x, device="cuda")), expected, tol=1e-4)


def test_conv_init_draws_kaiming_bounds_with_one_uniform_per_parameter() -> None:
    with launches() as ops:
        m = nn.Conv2d(4, 16, 3, groups=2, device="cuda")
    assert ops == ["uniform_", "uniform_"]  # weight first, then bias, as torch
    fan_in = 2 * 3 * 3  # in_channels / groups * kernel area
    bound = 1 / np.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives the same bound
    w, b = m.weight.numpy(force=True), m.bias.numpy(force=True)  # type: ignore[union-attr]
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert w.std() > bound / 2.5  # spread over the interval, not a constant


# --- torch.compile --------------------------------------------------------------------------

def _tiny_net(lib: Any) -> Any:
    nn_, F = lib.nn, lib.nn.functional

    class Net(nn_.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn_.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn = nn_.BatchNorm2d(8)
            self.pool = nn_.MaxPool2d(2)
            self.conv2 = nn_.Conv2d(8, 8, 3, padding=1)
            self.fc = nn_.Linear(8, 4)

        def forward(self, x: Any) -> Any:
            x = self.pool(F.relu(self.bn(self.conv(x))))
            x = F.relu(self.conv2(x))
            return self.fc(lib.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    return Net()


def test_compiled_conv_net_matches_eager_and_fuses_around_the_convolutions() -> None:
    theirs, ours = _tiny_net(torch).eval(), _tiny_net(ft).eval()
    ours.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    ours.cuda()
    x = randn(2, 3, 16, 16)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x))
    ft._dynamo.reset()
    ft._dynamo.utils.counters.clear()  # (reset() leaves counters, as torch's does)
    compiled = ft.compile(ours)
    xc = ft.tensor(x, device="cuda")
    with ft.no_grad():
        eager = ours(xc)
        first = compiled(xc)
        with launches() as ops:
            again = compiled(xc)
        with launches() as eager_ops:
            ours(xc)
    close(eager, expected, tol=1e-5)
    np.testing.assert_array_equal(first.numpy(force=True), eager.numpy(force=True))
    np.testing.assert_array_equal(again.numpy(force=True), eager.numpy(force=True))
    assert eager_ops == ["cudnn_convolution", "cudnn_batch_norm", "relu",
                         "max_pool2d_with_indices", "cudnn_convolution", "add_", "relu", "mean",
                         "addmm"]
    # the convolutions and the GEMM stay library calls; the norm, pools and activations fuse
    # into Triton kernels between them
    externs = [op for op in ops if not op.startswith("triton_")]
    assert externs == ["cudnn_convolution", "cudnn_convolution", "add_", "addmm"]
    assert len(ops) < len(eager_ops)
    assert ft._dynamo.utils.counters["stats"]["unique_graphs"] == 1
    ft._dynamo.reset()


def test_compiled_training_mode_batch_norm_updates_the_running_stats_as_eager() -> None:
    eager, compiled_net = _tiny_net(ft).cuda(), _tiny_net(ft).cuda()
    compiled_net.load_state_dict(eager.state_dict())
    x = ft.randn(4, 3, 8, 8, device="cuda")
    ft._dynamo.reset()
    compiled = ft.compile(compiled_net)
    with ft.no_grad():
        for _ in range(2):
            want, got = eager(x), compiled(x)
            np.testing.assert_allclose(got.numpy(force=True), want.numpy(force=True), atol=1e-6)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(compiled_net.bn, name).numpy(force=True),
                                   getattr(eager.bn, name).numpy(force=True), atol=1e-7)
    assert int(compiled_net.bn.num_batches_tracked.item()) == 2
    ft._dynamo.reset()
