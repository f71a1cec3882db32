"""The activations of torch's own namespace: torch.prelu (one `_prelu_kernel`), torch.rrelu
and torch.rrelu_ (one `rrelu_with_noise` / `rrelu_with_noise_`), torch.threshold(_) (one
`threshold` / `threshold_`), and the leaky-relu and threshold kernels they share with
torch.nn.functional (fake_torch/nn/_activations.py).

rrelu, training: each element x <= 0 becomes x * a with a ~ U(lower, upper) drawn from the
generator (one draw: the Philox offset advances as for any small draw); eval: leaky_relu with
the mean slope (lower + upper) / 2, no draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import bool_, float16
from fake_torch._generator import Generator, generator_for
from fake_torch._kernels import _common
from fake_torch._kernels import random_kernels as K
from fake_torch._kernels._elementwise import (
    elementwise_meta,
    inplace,
    is_number,
    layout_of,
    not_implemented,
    pointwise,
    same_dtype_rule,
    tensor_arg,
)
from fake_torch._kernels._strides import (
    checked_convert,
    contiguous_strides,
    scalar_type_name,
    view_strides,
)
from fake_torch._kernels.pointwise_math import kernel_name
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, RANDOM, op
from fake_torch._tensor import Tensor


def _leaky(x: np.ndarray, *, slope: float) -> Any:
    return np.where(x > 0, x, x * x.dtype.type(slope))


def leaky(op: str, input: Any, negative_slope: float, inplace: bool) -> Tensor:
    """x where x > 0, else x * negative_slope, as ONE launch named `op` (float inputs only)."""
    x = tensor_arg(input, "leaky_relu")
    if not is_number(negative_slope):
        raise TypeError("leaky_relu(): argument 'negative_slope' (position 2) must be Number, "
                        f"not {type(negative_slope).__name__}")
    if not x.dtype.is_floating_point:
        raise not_implemented(kernel_name(x, "leaky_relu_cpu", "leaky_relu_cuda"), x.dtype)
    return pointwise(op, _leaky, [x], promo=x.dtype, result=x.dtype,
                     out=x if inplace else None, kw={"slope": float(negative_slope)})


# --- threshold ---------------------------------------------------------------------------------

def _threshold(x: np.ndarray, *, threshold: Any, value: Any) -> Any:
    # torch's kernel: x <= threshold ? value : x (a NaN is kept: the comparison is false)
    return np.where(x <= threshold, x.dtype.type(value), x)


def threshold_op(op: str, input: Any, threshold: Any, value: Any, inplace: bool) -> Tensor:
    """x where x > threshold, else value, in x's dtype (both scalars converted into it, as
    torch's kernel converts them, overflow refused): ONE launch named `op`."""
    x = tensor_arg(input, "threshold")
    for name, number, position in (("threshold", threshold, 2), ("value", value, 3)):
        if not is_number(number):
            raise TypeError(f"threshold(): argument '{name}' (position {position}) must be "
                            f"Number, not {type(number).__name__}")
    if x.dtype is bool_ or x.dtype.is_complex:
        raise not_implemented(kernel_name(x, "threshold_cpu", "threshold_cuda"), x.dtype)
    limit, fill = (checked_convert(v, x.dtype) for v in (threshold, value))
    if not x.dtype.is_floating_point:  # an integral dtype truncates them, as a C++ cast
        limit, fill = int(limit.real), int(fill.real)
    return pointwise(op, _threshold, [x], promo=x.dtype, result=x.dtype,
                     out=x if inplace else None, kw={"threshold": limit, "value": fill})


@op(POINTWISE, aten=("threshold",))
def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """x where x > threshold, else value: one `threshold` launch."""
    return threshold_op("threshold", input, threshold, value, False)


@op(POINTWISE, aten=("threshold_",))
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """threshold in place: one `threshold_` launch."""
    return threshold_op("threshold_", input, threshold, value, True)


# --- prelu -------------------------------------------------------------------------------------

def _prelu(x: np.ndarray, w: np.ndarray) -> Any:
    return np.where(x > 0, x, w * x)


@op(POINTWISE, method=True, aten=("_prelu_kernel",))
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x; weight is one slope, or one per channel (dim 1)."""
    x, w = tensor_arg(input, "prelu"), tensor_arg(weight, "prelu", "weight", 2)
    if x.dtype is not w.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{scalar_type_name(x.dtype)} and {scalar_type_name(w.dtype)}")
    if w.numel() != 1:
        if x.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = x.shape[1] if x.dim() > 1 else 1
        if channels != w.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {w.numel()} and channel size = "
                               f"{channels}.")
    if w.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w.dim()}")
    if not x.dtype.is_floating_point:
        raise not_implemented(kernel_name(x, "prelu_cpu", "prelu_cuda"), x.dtype)
    if x.dim() != w.dim():  # weight (C,) broadcasts along dim 1: a view of shape (1, C, 1, ...)
        shape = [1] * x.dim()
        if x.dim() > 1:
            shape[1] = w.numel()
        w = w.reshape(shape)
    return pointwise("_prelu_kernel", _prelu, [x, w], promo=x.dtype, result=x.dtype)


# --- rrelu -------------------------------------------------------------------------------------

def _rrelu(op: str, input: Any, lower: float, upper: float, training: bool,
           generator: Generator | None, inplace: bool) -> Tensor:
    x = tensor_arg(input, "rrelu_" if inplace else "rrelu")
    if not float(lower) <= float(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:  # the mean slope, computed in double as torch does
        return leaky(op, x, (float(lower) + float(upper)) / 2, inplace)
    # torch's CPU kernel has no float16 (its CUDA kernel has)
    if not x.dtype.is_floating_point or (x.dtype is float16 and not x.is_cuda):
        raise not_implemented(kernel_name(x, "rrelu_with_noise_out_cpu",
                                          "rrelu_with_noise_out_cuda"), x.dtype)
    out = x if inplace else _common.new_tensor(x.shape, x.dtype, x.device)
    if x.numel() == 0:  # nothing to draw: the generator stays where it is
        return out
    philox, intra = generator_for(generator, x.device).philox_args()
    _common.launch(op, K.rrelu_kernel, out, (philox, x),
                   {"intra": intra, "lower": float(lower), "upper": float(upper)})
    return out


@op(RANDOM, aten=("rrelu_with_noise",))
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, generator: Generator | None = None) -> Tensor:
    """Randomized leaky relu: one `rrelu_with_noise` launch."""
    return _rrelu("rrelu_with_noise", input, lower, upper, training, generator, False)


@op(RANDOM, aten=("rrelu_with_noise_",))
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator: Generator | None = None) -> Tensor:
    """rrelu in place: one `rrelu_with_noise_` launch."""
    return _rrelu("rrelu_with_noise_", input, lower, upper, training, generator, True)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

register_meta("torch.threshold")(same_dtype_rule)
register_meta("torch.threshold_", "torch.rrelu_")(inplace(same_dtype_rule))  # self, written


@register_meta("torch.prelu")
def _prelu_rule(input: Tensor, weight: Tensor) -> TensorMeta:
    """x's shape and dtype, laid out over x and the weight's (1, C, 1, ...) view."""
    x, w = input, weight
    w_shape, w_strides = tuple(w.shape), tuple(w.stride())
    if x.dim() != w.dim():
        w_shape = tuple(w.numel() if d == 1 else 1 for d in range(x.dim()))
        w_strides = view_strides(tuple(w.shape), tuple(w.stride()), w_shape) or \
            contiguous_strides(w_shape)
    shape = tuple(x.shape)
    return TensorMeta(shape, x.dtype, layout_of(shape, [(shape, x.stride(), x.dtype.itemsize),
                                                        (w_shape, w_strides, w.dtype.itemsize)]))


@register_meta("torch.rrelu")
def _rrelu_rule(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                training: bool = False, generator: Generator | None = None) -> TensorMeta:
    """Training draws into a fresh row-major tensor; evaluation is leaky_relu's layout."""
    if training:
        return TensorMeta(tuple(input.shape), input.dtype, contiguous_strides(input.shape))
    return elementwise_meta([input], input.dtype)

