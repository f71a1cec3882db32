"""hardswish, leaky_relu, hardtanh, relu6, mish, prelu, rrelu (eval) and their modules, and
nn.init's trunc_normal_, eye_, dirac_, against real torch CPU: values, launches as torch's
dispatcher records them, in-place forms, errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft
from fake_torch.nn import functional as F
from fake_torch.nn import init

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
TF = torch.nn.functional

# edges included: the kinks of each function, zeros of both signs, nan and the infinities
VALUES = np.array([-30.0, -4.0, -3.0, -1.5, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, 4.0, 6.5, 40.0,
                   np.nan, np.inf, -np.inf], dtype=np.float32)


def _pair(dtype: str = "float32", shape: tuple[int, ...] = (2, 8)) -> tuple[Any, ft.Tensor]:
    a = VALUES.reshape(shape)
    t = torch.from_numpy(a.copy()).to(getattr(torch, dtype))
    return t, ft.tensor(a, device="cuda").to(getattr(ft, dtype))


def _host(x: Any) -> np.ndarray:
    if isinstance(x, ft.Tensor):
        return np.asarray(x.numpy(force=True), dtype=np.float64)
    return x.detach().double().numpy()


PROGRAMS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "hardswish": lambda T, F_, x: F_.hardswish(x),
    "hardswish_inplace": lambda T, F_, x: F_.hardswish(x, inplace=True),
    "mish": lambda T, F_, x: F_.mish(x),
    "mish_inplace": lambda T, F_, x: F_.mish(x, True),
    "leaky_relu": lambda T, F_, x: F_.leaky_relu(x),
    "leaky_relu_slope": lambda T, F_, x: F_.leaky_relu(x, 0.2, inplace=True),
    "leaky_relu_": lambda T, F_, x: F_.leaky_relu_(x, 2.0),
    "hardtanh": lambda T, F_, x: F_.hardtanh(x),
    "hardtanh_limits": lambda T, F_, x: F_.hardtanh(x, -2.5, 0.5, True),
    "hardtanh_": lambda T, F_, x: F_.hardtanh_(x, 0.0, 3.0),
    "relu6": lambda T, F_, x: F_.relu6(x),
    "relu6_inplace": lambda T, F_, x: F_.relu6(x, inplace=True),
    "prelu_one": lambda T, F_, x: F_.prelu(x, T.tensor([0.25], device=x.device)),
    "prelu_channels": lambda T, F_, x: F_.prelu(x.view(2, 2, 4), T.tensor([0.1, -2.0],
                                                                          device=x.device)),
    "torch.prelu_0d_weight": lambda T, F_, x: T.prelu(x, T.tensor(0.5, device=x.device)),
    "Tensor.prelu": lambda T, F_, x: x[0].prelu(T.tensor([3.0], device=x.device)),
    "rrelu_eval": lambda T, F_, x: F_.rrelu(x),
    "rrelu_eval_inplace": lambda T, F_, x: F_.rrelu(x, 0.1, 0.5, False, True),
    "torch.rrelu_": lambda T, F_, x: T.rrelu_(x, 0.2, 0.4),
    "Hardswish": lambda T, F_, x: T.nn.Hardswish()(x),
    "LeakyReLU": lambda T, F_, x: T.nn.LeakyReLU(0.3, inplace=True)(x),
    "ReLU6": lambda T, F_, x: T.nn.ReLU6()(x),
    "Hardtanh": lambda T, F_, x: T.nn.Hardtanh(-0.5, 2.0)(x),
    "Mish": lambda T, F_, x: T.nn.Mish()(x),
    "RReLU_eval": lambda T, F_, x: T.nn.RReLU(0.1, 0.3).eval()(x),
    "PReLU": lambda T, F_, x: T.nn.PReLU(2, init=0.1, device=x.device)(x.view(2, 2, 4)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_and_launches_match_torch(name: str) -> None:
    tx, fx = _pair()
    with torch_launches(cuda=True) as expected:
        theirs = PROGRAMS[name](torch, TF, tx)
    with launches() as got:
        ours = PROGRAMS[name](ft, F, fx)
    np.testing.assert_allclose(_host(ours), _host(theirs), rtol=1e-6, atol=1e-7)
    number = ~np.isnan(_host(theirs))  # zeros keep their sign; a NaN's sign means nothing
    # (mish(nan) is -nan under torch's AVX2 kernels, +nan under its AVX-512 ones)
    np.testing.assert_array_equal(np.signbit(_host(ours))[number],
                                  np.signbit(_host(theirs))[number])
    # a prelu weight made inside the block is one host-to-device copy on fake_torch's cuda
    assert [n for n in got if n != "copy_"] == expected
    assert (ours is fx) == (name in INPLACE) == (theirs is tx)


INPLACE = {"hardswish_inplace", "mish_inplace", "leaky_relu_slope", "leaky_relu_",
           "hardtanh_limits", "hardtanh_", "relu6_inplace", "rrelu_eval_inplace", "torch.rrelu_",
           "LeakyReLU"}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", ["hardswish", "mish", "leaky_relu_slope", "hardtanh_limits",
                                  "relu6", "prelu_channels", "rrelu_eval"])
def test_other_float_dtypes(name: str, dtype: str) -> None:
    tx, fx = _pair(dtype)
    if name == "prelu_channels":  # prelu takes no mixed dtypes: the weight follows the input
        theirs = TF.prelu(tx.view(2, 2, 4), torch.tensor([0.1, -2.0], dtype=tx.dtype))
        ours = F.prelu(fx.view(2, 2, 4), ft.tensor([0.1, -2.0], dtype=fx.dtype, device="cuda"))
    else:
        theirs, ours = PROGRAMS[name](torch, TF, tx), PROGRAMS[name](ft, F, fx)
    assert repr(ours.dtype) == repr(theirs.dtype)
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(_host(ours), _host(theirs), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8", "int32"])
def test_hardtanh_and_relu6_keep_integral_dtypes(dtype: str) -> None:
    a = np.array([-7, -1, 0, 2, 5, 100]).astype(dtype)  # uint8 wraps the negatives
    for program in (lambda F_, x: F_.relu6(x), lambda F_, x: F_.hardtanh(x, 1.5, 4.9)):
        theirs = program(TF, torch.from_numpy(a.copy()))
        ours = program(F, ft.tensor(a, device="cuda"))
        assert repr(ours.dtype) == repr(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(force=True), theirs.numpy())


def test_module_reprs_match_torch() -> None:
    modules = [lambda nn: nn.Hardswish(), lambda nn: nn.LeakyReLU(0.2, True),
               lambda nn: nn.ReLU6(inplace=True), lambda nn: nn.ReLU6(),
               lambda nn: nn.Hardtanh(-2, 2), lambda nn: nn.Mish(inplace=True),
               lambda nn: nn.RReLU(0.1, 0.2), lambda nn: nn.PReLU(3)]
    for make in modules:
        assert repr(make(ft.nn)) == repr(make(torch.nn))
    p = ft.nn.PReLU(3, init=0.5)
    assert list(p.state_dict()) == ["weight"] and p.weight.tolist() == [0.5] * 3
    assert isinstance(ft.nn.ReLU6(), ft.nn.Hardtanh)


def test_prelu_module_initialises_with_one_fill() -> None:
    with launches() as got:
        ft.nn.PReLU(4, device="cuda")
    assert got == ["fill_"]


ERRORS: dict[str, Callable[[Any], Any]] = {
    "hardswish_long": lambda T: T.nn.functional.hardswish(T.tensor([1, 2])),
    "mish_long": lambda T: T.nn.functional.mish(T.tensor([1, 2])),
    "leaky_long": lambda T: T.nn.functional.leaky_relu(T.tensor([1, 2])),
    "leaky_bool": lambda T: T.nn.functional.leaky_relu(T.tensor([True])),
    "hardtanh_bool": lambda T: T.nn.functional.hardtanh(T.tensor([True])),
    "hardtanh_reversed": lambda T: T.nn.functional.hardtanh(T.ones(2), 2.0, 1.0),
    "hardtanh_unsigned": lambda T: T.nn.functional.hardtanh(T.ones(2, dtype=T.uint8)),
    "relu6_bool": lambda T: T.nn.functional.relu6(T.tensor([True])),
    "Hardtanh_reversed": lambda T: T.nn.Hardtanh(1.0, 1.0),
    "prelu_long": lambda T: T.prelu(T.tensor([1, 2]), T.tensor([1])),
    "prelu_dtypes": lambda T: T.prelu(T.ones(2, 3), T.ones(3, dtype=T.float64)),
    "prelu_channels": lambda T: T.prelu(T.ones(2, 3), T.ones(2)),
    "prelu_1d_channels": lambda T: T.prelu(T.ones(3), T.ones(2)),
    "prelu_0d_input": lambda T: T.prelu(T.tensor(1.0), T.ones(2)),
    "prelu_2d_weight": lambda T: T.prelu(T.ones(2, 3), T.ones(1, 3)),
    "rrelu_bounds": lambda T: T.rrelu(T.ones(2), 0.5, 0.2),
    "rrelu_long": lambda T: T.rrelu(T.tensor([1, 2])),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert_raises_like_torch(ERRORS[name])


# --- nn.init -------------------------------------------------------------------------------------

def test_eye_and_dirac_match_torch() -> None:
    programs: list[Callable[[Any, Any], Any]] = [
        lambda T, d: T.nn.init.eye_(T.empty(3, 5, device=d)),
        lambda T, d: T.nn.init.eye_(T.empty(4, 2, dtype=T.float64, device=d)),
        lambda T, d: T.nn.init.dirac_(T.empty(4, 2, 3, device=d)),
        lambda T, d: T.nn.init.dirac_(T.empty(6, 3, 3, 2, device=d), groups=2),
        lambda T, d: T.nn.init.dirac_(T.empty(2, 2, 3, 3, 3, device=d)),
    ]
    for program in programs:
        with torch_launches(cuda=True) as expected:
            theirs = program(torch, "cpu")
        with launches() as got:
            ours = program(ft, "cuda")
        assert got == expected
        assert repr(ours.dtype) == repr(theirs.dtype)
        np.testing.assert_array_equal(ours.numpy(force=True), theirs.numpy())


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments() -> None:
    ft.manual_seed(0)
    for mean, std, a, b in ((0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 1.5), (0.0, 1.0, 1.0, 1.5)):
        x = init.trunc_normal_(ft.empty(40_000), mean, std, a, b).numpy().astype(np.float64)
        assert a <= x.min() and x.max() <= b
        alpha, beta = (a - mean) / std, (b - mean) / std
        pdf = [math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in (alpha, beta)]
        cdf = [(1 + math.erf(v / math.sqrt(2))) / 2 for v in (alpha, beta)]
        z = cdf[1] - cdf[0]
        expected_mean = mean + (pdf[0] - pdf[1]) / z * std
        expected_var = std**2 * (1 + (alpha * pdf[0] - beta * pdf[1]) / z
                                 - ((pdf[0] - pdf[1]) / z) ** 2)
        assert abs(x.mean() - expected_mean) < 0.02 * std
        assert abs(x.var() - expected_var) < 0.03 * std**2


def test_trunc_normal_launches_as_torch_rejects() -> None:
    """Each round: a normal_ (a fresh one after the first, merged with where), the range
    check, and a host read of whether any value is out: one `_local_scalar_dense` on cuda
    (torch's two other reads are of cpu tensors)."""
    x = ft.empty(1000, device="cuda")
    with launches() as got:
        init.trunc_normal_(x)
    rounds = got.count("any")
    check = ["lt", "gt", "bitwise_or", "any", "_local_scalar_dense"]
    assert got == ["normal_", *check] + ["normal_", "where", *check] * (rounds - 1) + (
        ["copy_"] if rounds > 1 else [])
    with torch_launches(cuda=True) as expected:
        torch.nn.init.trunc_normal_(torch.empty(1000))
    rounds = expected.count("any")
    assert expected == ["_local_scalar_dense"] * 2 + ["normal_", *check] + [
        "normal_", "where", *check] * (rounds - 1) + (["copy_"] if rounds > 1 else [])


def test_trunc_normal_narrow_window_and_warning() -> None:
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(ft.empty(10), mean=10.0, a=-1.0, b=1.0)
    x = ft.empty(100, device="cuda")
    with launches() as got:
        init.trunc_normal_(x, a=1.0, b=1.2)  # p < 0.3: uniform proposals, accept/reject
    assert got[:7] == ["uniform_", "copy_", "sub_", "div_", "pow_", "mul_", "sub_"]
    assert got[7:10] == ["uniform_", "log_", "gt"]
    host = x.numpy(force=True)
    assert 1.0 <= host.min() and host.max() <= 1.2


def test_init_errors_match_torch() -> None:
    for program in (lambda T: T.nn.init.eye_(T.empty(2, 2, 2)),
                    lambda T: T.nn.init.dirac_(T.empty(2, 2)),
                    lambda T: T.nn.init.dirac_(T.empty(3, 2, 2), groups=2)):
        assert_raises_like_torch(program)
