"""Unary math, activations, sign and rounding: one launch each.

Floating math (exp, sqrt, sigmoid, ...) runs in float32 for float16/bfloat16 and rounds once on
store, as torch's CPU and CUDA kernels do; integer inputs of the float-only functions compute
in the default dtype (torch's int-to-float promotion).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fake_torch._dtype import (
    CPP_NAME,
    bool_,
    complex64,
    complex128,
    dtype,
    float32,
    float64,
    get_default_dtype,
)
from fake_torch._kernels._common import new_tensor_exact
from fake_torch._kernels._elementwise import (
    computes_into,
    elementwise_meta,
    enter_quiet,
    exit_quiet,
    inplace,
    new_output,
    not_implemented,
    pointwise,
    pointwise_rule,
    tensor_arg,
)
from fake_torch._kernels._erf import erf as _erf64
from fake_torch._kernels._erfinv import erfinv as _erfinv64
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, method, op
from fake_torch._simulated import _dispatch, _machine
from fake_torch._tensor import Tensor


def cpp_name(dt: dtype) -> str:
    """The C++ type name torch's clamp_ and lerp messages print for a dtype."""
    return CPP_NAME[dt]


def kernel_name(x: Tensor, cpu: str, cuda: str) -> str:
    """The kernel name torch's dtype-dispatch errors quote, by device."""
    return cuda if x.is_cuda else cpu


def _int_to_float(op: str, fn: Any, input: Any, out: Tensor | None) -> Tensor:
    """exp, log, sqrt, sigmoid, ...: integral inputs compute in the default float dtype."""
    x = tensor_arg(input, op)
    promo = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else get_default_dtype()
    return pointwise(op, fn, [x], promo=promo, result=promo, out=out)


def _rsqrt(x: np.ndarray) -> Any:
    return np.reciprocal(np.sqrt(x))


def _sigmoid(x: np.ndarray) -> Any:
    return np.reciprocal(1 + np.exp(-x))


@computes_into(_sigmoid)
def _sigmoid_into(out: np.ndarray, x: np.ndarray) -> None:
    token = enter_quiet()
    try:
        np.negative(x, out=out)
        np.exp(out, out=out)
        np.add(out, 1, out=out)
        np.reciprocal(out, out=out)
    finally:
        exit_quiet(token)


def _silu(x: np.ndarray) -> Any:
    return x / (1 + np.exp(-x))


# numpy dtype -> a read-only 0-dim 1 of it: `_silu_into` adds it as it is, where numpy would
# convert the Python 1 into an array on every call (the same value: 1 is exact in every dtype)
_ONES: dict[np.dtype[Any], np.ndarray] = {}


def _one_of(dt: np.dtype[Any]) -> np.ndarray:
    one = np.ones((), dt)
    one.flags.writeable = False
    return _ONES.setdefault(dt, one)


@computes_into(_silu)
def _silu_into(out: np.ndarray, x: np.ndarray, negative: np.ufunc = np.negative,
               exp: np.ufunc = np.exp, add: np.ufunc = np.add,
               divide: np.ufunc = np.divide) -> None:
    one = _ONES.get(out.dtype)
    if one is None:
        one = _one_of(out.dtype)
    token = enter_quiet()
    try:  # (positional outputs: no keyword parsing)
        negative(x, out)
        exp(out, out)
        add(out, one, out)
        divide(x, out, out)
    finally:
        exit_quiet(token)


def _gelu(x: np.ndarray) -> Any:
    return x * 0.5 * (1 + _erf64(x * math.sqrt(0.5)).astype(x.dtype))


def _gelu_tanh(x: np.ndarray) -> Any:
    beta = x.dtype.type(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5)
    kappa = x.dtype.type(0.044715)
    return 0.5 * x * (1 + np.tanh(beta * (x + kappa * x * x * x)))


def _erf(x: np.ndarray) -> Any:
    return _erf64(x).astype(x.dtype)


@op(POINTWISE, method=True)
def exp(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("exp", np.exp, input, out)


@op(POINTWISE, method=True)
def log(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("log", np.log, input, out)


@op(POINTWISE, method=True)
def log10(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("log10", np.log10, input, out)


@op(POINTWISE, method=True)
def log2(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("log2", np.log2, input, out)


@op(POINTWISE, method=True)
def log1p(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("log1p", np.log1p, input, out)


@op(POINTWISE, method=True)
def expm1(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """exp(x) - 1, exact near 0 (where exp(x) - 1 would cancel)."""
    return _int_to_float("expm1", np.expm1, input, out)


@op(POINTWISE, method=True)
def sqrt(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("sqrt", np.sqrt, input, out)


@op(POINTWISE, method=True)
def rsqrt(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("rsqrt", _rsqrt, input, out)


@op(POINTWISE, method=True)
def reciprocal(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("reciprocal", np.reciprocal, input, out)


@op(POINTWISE, method=True)
def sin(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("sin", np.sin, input, out)


@op(POINTWISE, method=True)
def cos(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("cos", np.cos, input, out)


@op(POINTWISE, method=True)
def tanh(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("tanh", np.tanh, input, out)


@op(POINTWISE, method=True)
def sigmoid(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("sigmoid", _sigmoid, input, out)


@op(POINTWISE, method=True)
def erf(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _int_to_float("erf", _erf, input, out)


def _erfinv(x: np.ndarray) -> Any:
    return _erfinv64(x).astype(x.dtype)


@op(POINTWISE, method=True)
def erfinv(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse error function: erf(erfinv(x)) = x on [-1, 1]; +-inf at +-1, NaN outside."""
    return _int_to_float("erfinv", _erfinv, input, out)


@op(POINTWISE, method=True)
def exp_(input: Tensor) -> Tensor:
    return _int_to_float("exp_", np.exp, input, input)


@op(POINTWISE, method=True)
def log_(input: Tensor) -> Tensor:
    return _int_to_float("log_", np.log, input, input)


@op(POINTWISE, method=True)
def log10_(input: Tensor) -> Tensor:
    return _int_to_float("log10_", np.log10, input, input)


@op(POINTWISE, method=True)
def log2_(input: Tensor) -> Tensor:
    return _int_to_float("log2_", np.log2, input, input)


@op(POINTWISE, method=True)
def log1p_(input: Tensor) -> Tensor:
    return _int_to_float("log1p_", np.log1p, input, input)


@op(POINTWISE, method=True)
def expm1_(input: Tensor) -> Tensor:
    return _int_to_float("expm1_", np.expm1, input, input)


@op(POINTWISE, method=True)
def sqrt_(input: Tensor) -> Tensor:
    return _int_to_float("sqrt_", np.sqrt, input, input)


@op(POINTWISE, method=True)
def rsqrt_(input: Tensor) -> Tensor:
    return _int_to_float("rsqrt_", _rsqrt, input, input)


@op(POINTWISE, method=True)
def reciprocal_(input: Tensor) -> Tensor:
    return _int_to_float("reciprocal_", np.reciprocal, input, input)


@op(POINTWISE, method=True)
def sin_(input: Tensor) -> Tensor:
    return _int_to_float("sin_", np.sin, input, input)


@op(POINTWISE, method=True)
def cos_(input: Tensor) -> Tensor:
    return _int_to_float("cos_", np.cos, input, input)


@op(POINTWISE, method=True)
def tanh_(input: Tensor) -> Tensor:
    return _int_to_float("tanh_", np.tanh, input, input)


@op(POINTWISE, method=True)
def sigmoid_(input: Tensor) -> Tensor:
    return _int_to_float("sigmoid_", _sigmoid, input, input)


@op(POINTWISE, method=True)
def erf_(input: Tensor) -> Tensor:
    return _int_to_float("erf_", _erf, input, input)


@method(POINTWISE)
def erfinv_(input: Tensor) -> Tensor:  # Tensor.erfinv_ only: torch has no torch.erfinv_
    return _int_to_float("erfinv_", _erfinv, input, input)


# --- activations ------------------------------------------------------------------------------

@op(POINTWISE, method=True)
def relu(input: Tensor) -> Tensor:
    return _relu("relu", input, None)


@op(POINTWISE, method=True)
def relu_(input: Tensor) -> Tensor:
    return _relu("relu_", input, input)


def _relu(op: str, input: Any, out: Tensor | None) -> Tensor:
    x = tensor_arg(input, "relu")
    if x.dtype is bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return pointwise(op, np.maximum, [x, 0], promo=x.dtype, result=x.dtype, out=out)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """torch.nn.functional.silu: x * sigmoid(x), in one kernel."""
    if not inplace and isinstance(input, Tensor) and input._dtype in _PLAIN_SILU:
        a = input._a
        if a.ndim < 2 or a.flags.c_contiguous:
            return _plain_silu(input, a)
    x = _float_only(input, "silu", "silu_cpu", "silu_cuda", complex_ok=True)
    out = x if inplace else None
    return pointwise("silu_" if inplace else "silu", _silu, [x], promo=x._dtype,
                     result=x._dtype, out=out)


_PLAIN_SILU = frozenset((float32, float64))


def _plain_silu(x: Tensor, a: np.ndarray) -> Tensor:
    """silu's commonest call: a float32/float64 tensor, row-major when 2-d or more, into a
    fresh output. What `pointwise` does for it (`_plain_pointwise`: a row-major output of x's
    dtype, `_silu_into` launched into it, nothing on meta, the tensor's own device's stream),
    without the calls it takes to find that out."""
    dev = x._device
    res = new_tensor_exact(a.shape, x._dtype, dev)
    on_cuda = dev.type == "cuda"
    if not on_cuda and dev.type == "meta":
        return res  # the output is laid out: nothing to run or count (fake_torch/_meta.py)
    machine = _machine.MACHINE  # (one GPU: cuda:0 is current, no thread-local to read)
    if on_cuda and len(machine.devices) > 1 and dev.index != machine.thread.index:
        with _machine.device_guard(dev.index or 0):  # (c10's DeviceGuard: its stream)
            _dispatch.launch("silu", _silu_into, (res._a,), (a,), None, on_cuda=True)
        return res
    _dispatch.launch("silu", _silu_into, (res._a,), (a,), None, on_cuda=on_cuda)
    return res


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """torch.nn.functional.gelu: exact (erf) or tanh-approximated, in one kernel."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    x = _float_only(input, "gelu", "GeluKernelImpl", "GeluCUDAKernelImpl")
    fn = _gelu if approximate == "none" else _gelu_tanh
    return pointwise("gelu", fn, [x], promo=x.dtype, result=x.dtype)


def _float_only(input: Any, fname: str, cpu: str, cuda: str, complex_ok: bool = False) -> Tensor:
    x = tensor_arg(input, fname)
    dt = x._dtype
    if not (dt.is_floating_point or (complex_ok and dt.is_complex)):
        raise not_implemented(kernel_name(x, cpu, cuda), dt)
    return x


# --- sign, magnitude, rounding: integral dtypes stay integral ---------------------------------

def _same_dtype(op: str, fn: Any, input: Any, out: Tensor | None) -> Tensor:
    x = tensor_arg(input, op)
    return pointwise(op, fn, [x], promo=x.dtype, result=x.dtype, out=out)


def _check_neg(x: Any) -> None:
    if isinstance(x, Tensor) and x.dtype is bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@op(POINTWISE, method=True, aliases=("negative",))
def neg(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    _check_neg(input)
    return _same_dtype("neg", np.negative, input, out)


@op(POINTWISE, method=True, aliases=("negative_",))
def neg_(input: Tensor) -> Tensor:
    _check_neg(input)
    return _same_dtype("neg_", np.negative, input, input)


def _check_abs(x: Any) -> None:
    if isinstance(x, Tensor) and x.dtype is bool_:
        raise not_implemented(kernel_name(x, "abs_cpu", "abs_cuda"), x.dtype)


_COMPLEX = (complex64, complex128)


def complex_to_real(op: str, fn: Any, x: Tensor, out: Tensor | None) -> Tensor:
    """abs and angle of a complex tensor, as torch computes them: complex -> complex into a
    temporary, then its real parts copied into the real result (two launches, `op` and a
    `copy_`: ATen's unary_op_impl_with_complex_to_float_out; an H200 ran both kernels)."""
    temp = pointwise(op, fn, [x], promo=x._dtype, result=x._dtype)
    real = x._dtype.to_real()
    if out is None:
        out = new_output(temp.shape, real, temp.device, (temp,))
    elif out._dtype.is_complex or out.shape != temp.shape:
        raise NotImplementedError(f"torch.{op}(complex, out=) into a {out._dtype} tensor of "
                                  f"shape {list(out.shape)} is not emulated by fake_torch")
    return pointwise("copy_", np.real, [temp], promo=x._dtype, result=real, out=out)


@op(POINTWISE, method=True, aliases=("absolute",))
def abs(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """|x|, in x's dtype; of a complex tensor a real one (its magnitudes)."""
    x = tensor_arg(input, "abs")
    dt = x._dtype
    if dt is bool_:
        raise not_implemented(kernel_name(x, "abs_cpu", "abs_cuda"), dt)
    if dt in _COMPLEX:
        return complex_to_real("abs", np.abs, x, out)
    return pointwise("abs", np.abs, [x], promo=dt, result=dt, out=out)


@op(POINTWISE, method=True, method_aliases=("absolute_",))
def abs_(input: Tensor) -> Tensor:
    _check_abs(input)
    if isinstance(input, Tensor) and input.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _same_dtype("abs_", np.abs, input, input)


def sign_values(x: np.ndarray) -> Any:
    """torch's sign: (0 < x) - (x < 0), so sign(nan) is 0."""
    if x.dtype == np.bool_:
        return x
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


@op(POINTWISE, method=True)
def sign(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _same_dtype("sign", sign_values, input, out)


@method(POINTWISE)
def sign_(input: Tensor) -> Tensor:
    return _same_dtype("sign_", sign_values, input, input)


def _rounding(op: str, fn: Any, input: Any, out: Tensor | None) -> Tensor:
    """floor/ceil/round/trunc: a copy for integers, refused for bool."""
    name = op.rstrip("_")
    x = tensor_arg(input, name)
    if x.dtype is bool_:
        raise not_implemented(kernel_name(x, f"{name}_vml_cpu", f"{name}_cuda"), x.dtype)
    return _same_dtype(op, fn if x.dtype.is_floating_point else np.positive, x, out)


@op(POINTWISE, method=True)
def floor(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _rounding("floor", np.floor, input, out)


@op(POINTWISE, method=True)
def ceil(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _rounding("ceil", np.ceil, input, out)


@op(POINTWISE, method=True, aliases=("fix",))
def trunc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    return _rounding("trunc", np.trunc, input, out)


@op(POINTWISE, method=True)
def floor_(input: Tensor) -> Tensor:
    return _rounding("floor_", np.floor, input, input)


@op(POINTWISE, method=True)
def ceil_(input: Tensor) -> Tensor:
    return _rounding("ceil_", np.ceil, input, input)


@op(POINTWISE, method=True, aliases=("fix_",))
def trunc_(input: Tensor) -> Tensor:
    return _rounding("trunc_", np.trunc, input, input)


@op(POINTWISE, method=True)
def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:
    """Half to even; with `decimals`, torch's nearbyint(x * 10^d) / 10^d."""
    return _round("round", input, decimals, out)


@op(POINTWISE, method=True)
def round_(input: Tensor, *, decimals: int = 0) -> Tensor:
    return _round("round_", input, decimals, input)


def _round(op: str, input: Any, decimals: Any, out: Tensor | None) -> Tensor:
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"round(): argument 'decimals' must be int, not "
                        f"{type(decimals).__name__}")
    if decimals == 0:
        return _rounding(op, np.rint, input, out)
    x = tensor_arg(input, "round")
    if not x.dtype.is_floating_point:
        raise not_implemented(kernel_name(x, "round_cpu", "round_cuda"), x.dtype)
    return pointwise(op, _round_decimals, [x], promo=x.dtype, result=x.dtype, out=out,
                     kw={"decimals": decimals})


def _round_decimals(x: np.ndarray, decimals: int) -> Any:
    ten_pow = x.dtype.type(10.0 ** (-decimals if decimals < 0 else decimals))
    if decimals < 0:
        return np.rint(x / ten_pow) * ten_pow
    return np.rint(x * ten_pow) / ten_pow


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

_FLOAT_UNARY = ("exp", "log", "log10", "log2", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal",
                "sin", "cos", "tanh", "sigmoid", "erf", "erfinv")


@register_meta(*(f"torch.{name}" for name in _FLOAT_UNARY))
def _int_to_float_rule(input: Tensor, *, out: Tensor | None = None) -> TensorMeta:
    dt = input.dtype
    return elementwise_meta([input], dt if dt.is_floating_point or dt.is_complex
                            else get_default_dtype(), out)


register_meta(*(f"torch.{name}_" for name in _FLOAT_UNARY[:-1]), "Tensor.erfinv_")(
    inplace(_int_to_float_rule))
register_meta("torch.relu_", "torch.neg_", "torch.abs_", "Tensor.sign_", "torch.floor_",
              "torch.ceil_", "torch.trunc_", "torch.round_")(inplace(pointwise_rule))


@register_meta("torch.abs")
def _abs_rule(input: Tensor, *, out: Tensor | None = None) -> TensorMeta:
    """abs of a complex tensor is real."""
    dt = input.dtype
    return elementwise_meta([input], dt.to_real() if dt.is_complex else dt, out)
