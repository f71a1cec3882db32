"""torch.nn.functional's elementwise activations beyond relu/silu/gelu: hardswish, leaky_relu,
hardtanh, relu6, mish, softplus, threshold, prelu and rrelu, each ONE launch named as torch's
aten op (the in-place forms `hardswish_`, `leaky_relu_`, `hardtanh_`, `mish_`, `threshold_`;
relu6 is torch's hardtanh(0, 6), prelu launches `_prelu_kernel`, rrelu `rrelu_with_noise`).
Floating math runs in float32 for float16/bfloat16 and rounds once on store, as torch's kernels
do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import bool_, iinfo
from fake_torch._generator import Generator
from fake_torch._kernels import activation as _activation
from fake_torch._kernels._elementwise import (
    inplace,
    maybe_inplace_meta,
    not_implemented,
    pointwise,
    same_dtype_rule,
    tensor_arg,
)
from fake_torch._kernels.pointwise_math import kernel_name
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, POINTWISE, RANDOM, op
from fake_torch._tensor import Tensor

_F = "torch.nn.functional"


def _float_input(input: Any, fname: str, kernel: str) -> Tensor:
    """The input of a float-only kernel; torch's NotImplementedError names the kernel
    (`kernel` has a {dev} to fill: "hardswish_{dev}")."""
    x = tensor_arg(input, fname)
    if not x.dtype.is_floating_point:
        raise not_implemented(kernel_name(x, kernel.format(dev="cpu"),
                                          kernel.format(dev="cuda")), x.dtype)
    return x


def _hardswish(x: np.ndarray) -> Any:
    return x * np.clip(x + 3, 0, 6) / 6


def _mish(x: np.ndarray) -> Any:
    return x * np.tanh(np.log1p(np.exp(x)))


def _hardtanh(x: np.ndarray, *, low: Any, high: Any) -> Any:
    # torch's clamp keeps x where it is not out of range: -0.0 stays -0.0, nan stays nan
    return np.where(x < low, low, np.where(x > high, high, x))


@op(POINTWISE, namespace=_F, aten=("hardswish", "hardswish_"))
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6: one `hardswish` launch (`hardswish_` in place)."""
    x = _float_input(input, "hardswish", "hardswish_{dev}")
    return pointwise("hardswish_" if inplace else "hardswish", _hardswish, [x], promo=x.dtype,
                     result=x.dtype, out=x if inplace else None)


@op(POINTWISE, namespace=_F, aten=("mish", "mish_"))
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)): one `mish` launch (`mish_` in place)."""
    x = _float_input(input, "mish", "mish_{dev}")
    return pointwise("mish_" if inplace else "mish", _mish, [x], promo=x.dtype,
                     result=x.dtype, out=x if inplace else None)


def _softplus(x: np.ndarray, *, beta: float, threshold: float) -> Any:
    # torch's kernel, in the compute dtype: x where x * beta > threshold (exp would overflow
    # and softplus is x there to the dtype's precision), else log1p(exp(x * beta)) / beta
    b, t = x.dtype.type(beta), x.dtype.type(threshold)
    scaled = x * b
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return np.where(scaled > t, x, np.log1p(np.exp(scaled)) / b)


def _number(value: Any, fname: str, arg: str, position: int) -> float:
    """A Scalar argument as torch's parser takes it: a Python number or a one-element tensor
    (its error names the position, as torch's does for an argument given positionally)."""
    if isinstance(value, Tensor) and value.numel() == 1:
        return float(value.item())
    if isinstance(value, (bool, int, float, np.number)):
        return float(value)
    raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be Number, not "
                    f"{type(value).__name__}")


@op(POINTWISE, namespace=_F, aten=("softplus",))
def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold: one `softplus`
    launch."""
    x = _float_input(input, "softplus", "softplus_{dev}")
    params = {"beta": _number(beta, "softplus", "beta", 2),
              "threshold": _number(threshold, "softplus", "threshold", 3)}
    return pointwise("softplus", _softplus, [x], promo=x.dtype, result=x.dtype, kw=params)


@op(POINTWISE, namespace=_F, aten=("threshold", "threshold_"))
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value: one `threshold` launch (`threshold_` in place)."""
    return _activation.threshold_op("threshold_" if inplace else "threshold", input, threshold,
                                    value, inplace)


@op(POINTWISE, namespace=_F, aten=("threshold_",))
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _activation.threshold_op("threshold_", input, threshold, value, True)


@op(POINTWISE, namespace=_F, aten=("leaky_relu", "leaky_relu_"))
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else x * negative_slope: one `leaky_relu` launch (`leaky_relu_` in
    place)."""
    return _activation.leaky("leaky_relu_" if inplace else "leaky_relu", input,
                             negative_slope, inplace)


@op(POINTWISE, namespace=_F, aten=("leaky_relu_",))
def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _activation.leaky("leaky_relu_", input, negative_slope, True)


def _hardtanh_op(op: str, input: Any, min_val: float, max_val: float, inplace: bool) -> Tensor:
    """clamp(x, min_val, max_val) in x's own dtype: integral inputs too (the limits truncate
    to integers), never bool."""
    x = tensor_arg(input, "hardtanh")
    dt = x.dtype
    if dt is bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dt.is_floating_point:
        low: Any = float(min_val)
        high: Any = float(max_val)
    else:
        if not dt.is_signed and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        info = iinfo(dt)  # limits beyond the dtype clamp nothing more than its own range
        low, high = (min(max(int(v), info.min), info.max) for v in (min_val, max_val))
    return pointwise(op, _hardtanh, [x], promo=dt, result=dt, out=x if inplace else None,
                     kw={"low": low, "high": high})


@op(POINTWISE, namespace=_F, aten=("hardtanh", "hardtanh_"))
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """clamp(x, min_val, max_val): one `hardtanh` launch (`hardtanh_` in place)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh_op("hardtanh_" if inplace else "hardtanh", input, min_val, max_val,
                        inplace)


@op(POINTWISE, namespace=_F, aten=("hardtanh_",))
def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return _hardtanh_op("hardtanh_", input, min_val, max_val, True)


@op(COMPOSITE, namespace=_F)
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(0, x), 6): torch's hardtanh(x, 0, 6), one `hardtanh` launch (`hardtanh_`)."""
    return _hardtanh_op("hardtanh_" if inplace else "hardtanh", input, 0, 6, inplace)


@register_meta("torch.nn.functional.relu6")
def _relu6_rule(input: Tensor, inplace: bool = False) -> Output:
    return call_rule("torch.nn.functional.hardtanh", input, 0, 6, inplace)


@op(COMPOSITE, namespace=_F)
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """torch.prelu (torch's F.prelu is that function): one `_prelu_kernel` launch."""
    return _activation.prelu(input, weight)


@register_meta("torch.nn.functional.prelu")
def _prelu_rule(input: Tensor, weight: Tensor) -> Output:
    return call_rule(_activation.prelu, input, weight)


@op(COMPOSITE, namespace=_F)
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """torch.rrelu (or rrelu_ with inplace): one `rrelu_with_noise` launch; training draws
    each negative element's slope from U(lower, upper), eval uses (lower + upper) / 2."""
    if inplace:
        return _activation.rrelu_(input, lower, upper, training)
    return _activation.rrelu(input, lower, upper, training)


@register_meta("torch.nn.functional.rrelu")
def _rrelu_rule(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                training: bool = False, inplace: bool = False) -> Output:
    return call_rule(_activation.rrelu_ if inplace else _activation.rrelu, input, lower, upper,
                     training)


@op(RANDOM, namespace=_F, aten=("rrelu_with_noise_",))
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator: Generator | None = None) -> Tensor:
    """torch.rrelu_ (torch's F.rrelu_ is that function)."""
    return _activation.rrelu_(input, lower, upper, training, generator)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# in input's dtype, laid out like it; `inplace=True` (and the `_` forms) write input

@register_meta(f"{_F}.hardswish", f"{_F}.mish")
def _flagged_rule(input: Tensor, inplace: bool = False) -> TensorMeta:
    return maybe_inplace_meta(input, inplace)


@register_meta(f"{_F}.threshold")
def _threshold_rule(input: Tensor, threshold: float, value: float,
                    inplace: bool = False) -> TensorMeta:
    return maybe_inplace_meta(input, inplace)


@register_meta(f"{_F}.leaky_relu")
def _leaky_relu_rule(input: Tensor, negative_slope: float = 0.01,
                     inplace: bool = False) -> TensorMeta:
    return maybe_inplace_meta(input, inplace)


@register_meta(f"{_F}.hardtanh")
def _hardtanh_rule(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
                   inplace: bool = False) -> TensorMeta:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return maybe_inplace_meta(input, inplace)


register_meta(f"{_F}.softplus")(same_dtype_rule)
register_meta(f"{_F}.threshold_", f"{_F}.leaky_relu_", f"{_F}.hardtanh_", f"{_F}.rrelu_")(
    inplace(same_dtype_rule))
