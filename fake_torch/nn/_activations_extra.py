"""More of torch.nn.functional's activations, each as torch dispatches it:

  elu, selu, celu       one `elu` launch (`elu_` in place): selu and celu are torch's elu with
                        its scale and input scale; celu's launch is named `celu` (`celu_`),
                        the op torch dispatches (its kernel is elu's)
  glu                   one `glu` launch: first half * sigmoid(second half) along dim
  hardsigmoid           one `hardsigmoid` (`hardsigmoid_`)
  logsigmoid            one `log_sigmoid_forward`
  hardshrink            one `hardshrink` (torch.hardshrink is F.hardshrink)
  softshrink            one `softshrink`
  softsign, tanhshrink  torch's Python composites: abs, add, div / tanh, sub
  softmin               neg, then one `_softmax` (a `_to_copy` first when dtype is given)

Floating math runs in float32 for float16/bfloat16 and rounds once on store.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, dtype, finfo
from fake_torch._kernels._elementwise import (
    inplace,
    layout_of,
    maybe_inplace_meta,
    not_implemented,
    pointwise,
    same_dtype_rule,
    tensor_arg,
)
from fake_torch._kernels.pointwise_math import kernel_name
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, POINTWISE, aten_op, op
from fake_torch._tensor import Tensor, wrap_dim

_F = "torch.nn.functional"
aten_op("celu", POINTWISE)
aten_op("celu_", POINTWISE)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _float_input(input: Any, fname: str, cpu: str, cuda: str) -> Tensor:
    x = tensor_arg(input, fname)
    if not x.dtype.is_floating_point:
        raise not_implemented(kernel_name(x, cpu, cuda), x.dtype)
    return x


# --- elu, selu, celu --------------------------------------------------------------------------


def _elu_kernel(x: np.ndarray, *, alpha: float, scale: float, input_scale: float) -> Any:
    """x * scale where x > 0, else (exp(x * input_scale) - 1) * alpha * scale."""
    neg = np.expm1(x * x.dtype.type(input_scale)) * x.dtype.type(alpha * scale)
    return np.where(x > 0, x * x.dtype.type(scale), neg)


def _elu(fname: str, input: Any, alpha: float, scale: float, input_scale: float,
         inplace: bool, launch: str = "elu") -> Tensor:
    x = _float_input(input, fname, "elu_cpu", "elu_cuda")
    return pointwise(f"{launch}_" if inplace else launch, _elu_kernel, [x], promo=x.dtype,
                     result=x.dtype, out=x if inplace else None,
                     kw={"alpha": alpha, "scale": scale, "input_scale": input_scale})


@op(POINTWISE, namespace=_F, aten=("elu", "elu_"))
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1): one `elu` launch (`elu_` in place)."""
    return _elu("elu", input, alpha, 1.0, 1.0, inplace)


@op(POINTWISE, namespace=_F, aten=("elu_",))
def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _elu("elu_", input, alpha, 1.0, 1.0, True)


@op(COMPOSITE, name="selu")
def torch_selu(input: Tensor) -> Tensor:
    """scale * elu(x, alpha) with SELU's fixed alpha and scale: one `elu` launch."""
    return _elu("selu", input, _SELU_ALPHA, _SELU_SCALE, 1.0, False)


@op(COMPOSITE)
def selu_(input: Tensor) -> Tensor:
    return _elu("selu_", input, _SELU_ALPHA, _SELU_SCALE, 1.0, True)


def _celu(fname: str, input: Any, alpha: float, inplace: bool) -> Tensor:
    _check_celu(alpha)
    return _elu(fname, input, alpha, 1.0, 1.0 / alpha, inplace, launch="celu")


def _check_celu(alpha: float) -> None:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


# selu and celu are elu with other constants: elu's output, or elu's written into the input
@register_meta("torch.selu")
def _selu_rule(input: Tensor) -> Output:
    return call_rule("torch.nn.functional.elu", input)


@register_meta("torch.selu_")
def _selu__rule(input: Tensor) -> Output:
    return call_rule("torch.nn.functional.elu", input, inplace=True)


@register_meta("torch.nn.functional.selu")
def _F_selu_rule(input: Tensor, inplace: bool = False) -> Output:
    return call_rule("torch.nn.functional.elu", input, inplace=inplace)


@register_meta("torch.celu")
def _celu_rule(input: Tensor, alpha: float = 1.0) -> Output:
    _check_celu(alpha)
    return call_rule("torch.nn.functional.elu", input, alpha)


@register_meta("torch.celu_")
def _celu__rule(input: Tensor, alpha: float = 1.0) -> Output:
    _check_celu(alpha)
    return call_rule("torch.nn.functional.elu", input, alpha, inplace=True)


@register_meta("torch.nn.functional.celu")
def _F_celu_rule(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Output:
    _check_celu(alpha)
    return call_rule("torch.nn.functional.elu", input, alpha, inplace=inplace)


@op(COMPOSITE, name="celu")
def torch_celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): one `elu` launch."""
    return _celu("celu", input, alpha, False)


@op(COMPOSITE)
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _celu("celu_", input, alpha, True)


@op(COMPOSITE, namespace=_F)
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """F.selu: torch.selu, or torch.selu_ in place."""
    return _elu("selu", input, _SELU_ALPHA, _SELU_SCALE, 1.0, inplace)


@op(COMPOSITE, namespace=_F)
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """F.celu: torch.celu, or torch.celu_ in place."""
    return _celu("celu", input, alpha, inplace)


# --- glu, hardsigmoid, logsigmoid, the shrinks ------------------------------------------------


def _glu_kernel(a: np.ndarray, b: np.ndarray) -> Any:
    return a / (1 + np.exp(-b))


@op(POINTWISE, namespace=_F, aten=("glu",))
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of input along dim: one `glu` launch."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.dim())
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    x = _float_input(input, "glu", "glu_cpu", "glu_cuda")
    half = input.shape[d] // 2
    return pointwise("glu", _glu_kernel, [x.narrow(d, 0, half), x.narrow(d, half, half)],
                     promo=x.dtype, result=x.dtype)


def _hardsigmoid_kernel(x: np.ndarray) -> Any:
    return np.clip(x + 3, 0, 6) / 6


@op(POINTWISE, namespace=_F, aten=("hardsigmoid", "hardsigmoid_"))
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6: one `hardsigmoid` launch (`hardsigmoid_` in place)."""
    x = _float_input(input, "hardsigmoid", "hardsigmoid_cpu", "hardsigmoid_cuda")
    return pointwise("hardsigmoid_" if inplace else "hardsigmoid", _hardsigmoid_kernel, [x],
                     promo=x.dtype, result=x.dtype, out=x if inplace else None)


def _logsigmoid_kernel(x: np.ndarray) -> Any:
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


@op(POINTWISE, namespace=_F, aten=("log_sigmoid_forward",))
def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed stably: one `log_sigmoid_forward` launch."""
    x = _float_input(input, "log_sigmoid", "log_sigmoid_cpu", "log_sigmoid_forward_cuda")
    return pointwise("log_sigmoid_forward", _logsigmoid_kernel, [x], promo=x.dtype,
                     result=x.dtype)


def _hardshrink_kernel(x: np.ndarray, *, lambd: float) -> Any:
    return np.where((x >= -lambd) & (x <= lambd), x.dtype.type(0), x)


@op(POINTWISE, method=True, aten=("hardshrink",))
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 where -lambd <= x <= lambd, else x: one `hardshrink` launch."""
    x = _float_input(input, "hardshrink", "hardshrink_cpu", "hardshrink_cuda")
    return pointwise("hardshrink", _hardshrink_kernel, [x], promo=x.dtype, result=x.dtype,
                     kw={"lambd": lambd})


def _softshrink_kernel(x: np.ndarray, *, lambd: float) -> Any:
    lam = x.dtype.type(lambd)
    return np.where(x > lam, x - lam, np.where(x < -lam, x + lam, x.dtype.type(0)))


@op(POINTWISE, namespace=_F, aten=("softshrink",))
def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0: one `softshrink`."""
    x = tensor_arg(input, "softshrink")
    if not x.dtype.is_floating_point:
        raise not_implemented("softshrink_check", x.dtype)
    top = finfo(x.dtype).max
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{SCALAR_NAME[x.dtype]}, but found {lambd:g}")
    return pointwise("softshrink", _softshrink_kernel, [x], promo=x.dtype, result=x.dtype,
                     kw={"lambd": lambd})


# --- the Python composites --------------------------------------------------------------------


@op(COMPOSITE, namespace=_F)
def softsign(input: Tensor) -> Tensor:
    """x / (|x| + 1): abs, add, div."""
    out: Tensor = input / (input.abs() + 1)
    return out


@register_meta("torch.nn.functional.softsign")
def _softsign_rule(input: Tensor) -> Output:
    """x / (|x| + 1): the divisor is x's dtype, laid out as x, so the quotient is x / x's."""
    return call_rule("torch.div", input, input)


@op(COMPOSITE, namespace=_F)
def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x): tanh, sub."""
    out: Tensor = input - input.tanh()
    return out


@register_meta("torch.nn.functional.tanhshrink")
def _tanhshrink_rule(input: Tensor) -> Output:
    """x - tanh(x): tanh(x) is floating and laid out as x's pointwise output, and so is the
    difference."""
    return call_rule("torch.tanh", input)


@op(COMPOSITE, namespace=_F)
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: dtype | None = None) -> Tensor:
    """softmax(-x) along dim: neg, then `_softmax`."""
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the "
                      "call to include dim=X as an argument.", stacklevel=_stacklevel)
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


@register_meta("torch.nn.functional.softmin")
def _softmin_rule(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                  dtype: dtype | None = None) -> Output:
    """softmax(-x): -x is laid out as softmax lays out x (dense, in x's dim order), so the
    result is softmax(x)'s."""
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return call_rule("torch.softmax", input, dim, dtype=dtype)
# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# in input's dtype, laid out like it; `inplace=True` (and the `_` forms) write input

@register_meta(f"{_F}.elu")
def _elu_rule(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> TensorMeta:
    return maybe_inplace_meta(input, inplace)


@register_meta(f"{_F}.hardsigmoid")
def _hardsigmoid_rule(input: Tensor, inplace: bool = False) -> TensorMeta:
    return maybe_inplace_meta(input, inplace)


register_meta(f"{_F}.logsigmoid", "torch.hardshrink", f"{_F}.softshrink")(same_dtype_rule)
register_meta(f"{_F}.elu_")(inplace(same_dtype_rule))


@register_meta(f"{_F}.glu")
def _glu_rule(input: Tensor, dim: int = -1) -> TensorMeta:
    """Half of input along dim, laid out over the two halves (narrow views: input's
    strides)."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.dim())
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    shape = tuple(input.shape[d] // 2 if i == d else s for i, s in enumerate(input.shape))
    half = (shape, tuple(input.stride()), input.dtype.itemsize)
    return TensorMeta(shape, input.dtype, layout_of(shape, [half, half]))
