"""torch.nn.init: in-place initialisers. Each one is a single launch on the tensor it fills
(uniform_, normal_, fill_ or zero_), as in torch."""

from __future__ import annotations

import math
import warnings

from fake_torch._generator import Generator
from fake_torch._tensor import Tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (torch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return tensor.zero_()


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight laid out (out, in, *receptive_field)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return tensor.uniform_(-bound, bound, generator=generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return tensor.normal_(0.0, std, generator=generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return tensor.uniform_(-bound, bound, generator=generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return tensor.normal_(0.0, std, generator=generator)


__all__ = [
    "calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_",
    "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
]
