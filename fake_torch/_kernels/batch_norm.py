"""torch.nn.functional.batch_norm, as torch 2.13 dispatches it (aten/src/ATen/native/
Normalization.cpp: batch_norm -> _batch_norm_impl_index -> _select_batch_norm_backend).

One launch: `cudnn_batch_norm` when torch's CUDA build picks cuDNN, that is on cuda with
torch.backends.cudnn.enabled, weight and bias given, running stats given (or neither, in
training), an input of at least 3 dims whose batch is at most 65535 (eval) or 880801
(training) and has fewer than 2**31 - 1 elements, no bfloat16 input or weight, a float16
input only with a float32 weight, and eps >= CUDNN_BN_MIN_EPSILON (0.0 since cuDNN 8); a
strided input is copied first (one `clone`). Otherwise `native_batch_norm`, the CPU build's
op for every call. An empty input launches `clone`, then `mul` by weight[0] and `add` of
bias[0] (those given), as torch's early return does.

Eval normalises with the running stats; training with the batch's mean and biased variance
over every dim but 1, and updates the running stats in place (inside the same launch):
running = (1 - momentum) * running + momentum * batch stat, the variance's unbiased. The
statistics accumulate in float64 (torch's CPU accumulation type) and the normalisation runs in
float32 for 16-bit inputs (float64 for float64), as out = x * alpha + beta with alpha =
weight * invstd, beta = bias - mean * alpha.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, bfloat16, float16, float32, float64, result_type_of
from fake_torch._kernels._common import common_device, launch, new_tensor
from fake_torch._kernels._strides import format_strides, numel
from fake_torch._memory_format import contiguous_strides, preserve_format
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import REDUCTION, op
from fake_torch._tensor import Tensor
from fake_torch.backends import cudnn

_CUDNN_BN_MIN_EPSILON = 0.0


@op(REDUCTION, namespace="torch.nn.functional", aten=("cudnn_batch_norm", "native_batch_norm"))
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) of (N, C, *): (x - mean) / sqrt(var + eps) * weight +
    bias, with the batch's statistics in training (updating the running ones in place) and
    the running ones in eval."""
    if training:
        _verify_batch_size(input)
    if input.numel() == 0:  # torch's early return: no view of input, the same ops each time
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    _check_inputs(input, running_mean, running_var, weight, bias, training)
    given = [t for t in (input, weight, bias, running_mean, running_var) if t is not None]
    dev = common_device(*given)
    use_cudnn = _use_cudnn(input, weight, bias, running_mean, running_var, training, eps,
                           dev.type == "cuda")
    if use_cudnn:
        input = input.contiguous()
    name = "cudnn_batch_norm" if use_cudnn else "native_batch_norm"
    opmath = float64 if input.dtype is float64 else float32
    channels = input.shape[1]
    out = new_tensor(input.shape, input.dtype, dev)
    save_mean = new_tensor((channels if training else 0,), opmath, dev)
    save_invstd = new_tensor((channels if training else 0,), opmath, dev)
    if not training:
        launch(name, batch_norm_eval_kernel, (out, save_mean, save_invstd),
               (input, weight, bias, running_mean, running_var), {"eps": float(eps)})
        return out
    running = [t for t in (running_mean, running_var) if t is not None]
    launch(name, batch_norm_train_kernel, (out, save_mean, save_invstd, *running),
           (input, weight, bias), {"momentum": float(momentum), "eps": float(eps)})
    return out


def _check_inputs(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                  weight: Tensor | None, bias: Tensor | None, training: bool) -> None:
    """batch_norm's checks of a non-empty input: per-channel tensors of C, floating input."""
    num_features = input.shape[1] if input.dim() > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None:
            _check_features(name, num_features, t)
        elif not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None:
            _check_features(name, num_features, t)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"batch_norm\" not implemented for "
                                  f"'{SCALAR_NAME[input.dtype]}'")


def _verify_batch_size(input: Tensor) -> None:
    """torch.nn.functional's check: training needs more than one value per channel."""
    size = input.shape
    count = size[0]
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")


def _check_features(name: str, num_features: int, t: Tensor) -> None:
    if t.numel() != num_features:
        raise RuntimeError(f"{name} should contain {num_features} elements not {t.numel()}")


def _use_cudnn(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               eps: float, on_cuda: bool) -> bool:
    """torch's _select_batch_norm_backend choosing cuDNN."""
    if not (on_cuda and cudnn.enabled and weight is not None and bias is not None):
        return False
    stats = (running_mean is not None and running_var is not None) or (
        running_mean is None and running_var is None and training)
    return (stats and bfloat16 not in (input.dtype, weight.dtype)
            and (input.dtype is not float16 or weight.dtype is float32)
            and input.dim() >= 3 and input.shape[0] <= (880801 if training else 65535)
            and eps >= _CUDNN_BN_MIN_EPSILON and input.numel() < 2**31 - 1)


# --- kernels --------------------------------------------------------------------------------


def _channel_shape(x: np.ndarray) -> tuple[int, ...]:
    """(1, C, 1, ...): a per-channel vector broadcast over x (N, C, *)."""
    return (1, x.shape[1], *([1] * (x.ndim - 2)))


def _normalise(out: np.ndarray, x: np.ndarray, mean: np.ndarray, invstd: np.ndarray,
               weight: np.ndarray | None, bias: np.ndarray | None) -> None:
    """out = x * alpha + beta per channel, alpha = weight * invstd, beta = bias - mean * alpha,
    in the opmath dtype of mean and invstd."""
    acc = mean.dtype.type
    alpha = invstd if weight is None else invstd * weight.astype(acc)
    beta = -mean * alpha if bias is None else bias.astype(acc) - mean * alpha
    shape = _channel_shape(x)
    out[...] = x.astype(acc) * alpha.reshape(shape) + beta.reshape(shape)


def batch_norm_eval_kernel(out: np.ndarray, save_mean: np.ndarray, save_invstd: np.ndarray,
                           x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                           running_mean: np.ndarray, running_var: np.ndarray, *,
                           eps: float) -> None:
    """Normalise x (N, C, *) with the running statistics (C,); save_* are empty in eval."""
    acc: Any = np.float64 if x.dtype == np.float64 else np.float32
    mean = running_mean.astype(acc)
    invstd = (1 / np.sqrt(running_var.astype(acc) + acc(eps))).astype(acc)
    _normalise(out, x, mean, invstd, weight, bias)


def batch_norm_train_kernel(out: np.ndarray, save_mean: np.ndarray, save_invstd: np.ndarray,
                            *arrays: np.ndarray | None, momentum: float, eps: float) -> None:
    """Normalise x (N, C, *) with its own per-channel statistics, saved in save_mean and
    save_invstd; `arrays` is (running_mean, running_var, x, weight, bias) when the running
    stats are tracked (they are written, in place), else (x, weight, bias)."""
    *running, x, weight, bias = arrays
    assert x is not None
    axes = (0, *range(2, x.ndim))
    xf = x.astype(np.float64)
    mean = xf.mean(axis=axes)
    var = ((xf - mean.reshape(_channel_shape(x))) ** 2).mean(axis=axes)  # biased
    save_mean[...] = mean
    save_invstd[...] = 1 / np.sqrt(var + eps)
    if running:
        running_mean, running_var = running
        assert running_mean is not None and running_var is not None
        n = x.size // x.shape[1]
        running_mean[...] = (1 - momentum) * running_mean.astype(np.float64) + momentum * mean
        running_var[...] = ((1 - momentum) * running_var.astype(np.float64)
                            + momentum * var * n / (n - 1))
    _normalise(out, x, save_mean, save_invstd, weight, bias)


# --- output rule (fake_torch/_meta_registrations.py) ------------------------------------------

@register_meta("torch.nn.functional.batch_norm")
def _batch_norm_rule(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                     weight: Tensor | None = None, bias: Tensor | None = None,
                     training: bool = False, momentum: float = 0.1,
                     eps: float = 1e-5) -> TensorMeta:
    """A new row-major tensor of input's shape; an empty input: its clone (laid out as
    input) times weight[0] plus bias[0], which promote as 0-dim tensors."""
    if training:
        _verify_batch_size(input)
    if numel(input.shape) == 0:
        dt = input.dtype
        for t in (weight, bias):
            if t is not None:
                dt = result_type_of([(dt, 2), (t.dtype, 1)])
        return TensorMeta(tuple(input.shape), dt,
                          format_strides(input.shape, input.stride(), preserve_format))
    _check_inputs(input, running_mean, running_var, weight, bias, training)
    return TensorMeta(tuple(input.shape), input.dtype, contiguous_strides(input.shape))
