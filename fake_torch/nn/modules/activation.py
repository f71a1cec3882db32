"""Activation modules: ReLU, SiLU, GELU, Tanh, Sigmoid, Softmax, LogSoftmax, Hardtanh, ReLU6,
LeakyReLU, Hardswish, Mish, Softplus, Threshold, PReLU, RReLU; MultiheadAttention and ELU, SELU,
CELU, GLU, Hardsigmoid, LogSigmoid, Softsign, Tanhshrink, Hardshrink, Softshrink, Softmin,
Softmax2d (their own files, re-exported here)."""

from __future__ import annotations

import warnings

from fake_torch._dtype import dtype
from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.nn import functional as F
from fake_torch.nn import init as init_module
from fake_torch.nn.modules._activations_extra import (
    CELU,
    ELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    LogSigmoid,
    Softmax2d,
    Softmin,
    Softshrink,
    Softsign,
    Tanhshrink,
)
from fake_torch.nn.modules._multihead_attention import MultiheadAttention
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter


class ReLU(Module):
    """max(0, x): one `relu` launch (`relu_` in place)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class SiLU(Module):
    """x * sigmoid(x): one `silu` launch (`silu_` in place)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """x * Phi(x), or its tanh approximation with approximate='tanh': one `gelu` launch."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class Softmax(Module):
    """softmax along `dim`: one `_softmax` launch."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax) along `dim`: one `_log_softmax` launch."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def _inplace_suffix(inplace: bool, first: bool = False) -> str:
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class Hardtanh(Module):
    """clamp(x, min_val, max_val): one `hardtanh` launch (`hardtanh_` in place)."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(0, x), 6): Hardtanh(0, 6), one `hardtanh` launch."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_suffix(self.inplace, first=True)


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x: one `leaky_relu` launch."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class Hardswish(Module):
    """x * relu6(x + 3) / 6: one `hardswish` launch."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)


class Mish(Module):
    """x * tanh(softplus(x)): one `mish` launch."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_suffix(self.inplace, first=True)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold: one `softplus`
    launch."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Threshold(Module):
    """x where x > threshold, else value: one `threshold` launch (`threshold_` in place)."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class PReLU(Module):
    """x where x > 0, else weight * x, with a learnable slope (one, or one per channel),
    initialised to `init` (one fill launch on cuda): one `_prelu_kernel` launch."""

    weight: Parameter

    def __init__(self, num_parameters: int = 1, init: float = 0.25,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init_module.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky relu: in training each negative element's slope is drawn from
    U(lower, upper) (one draw from the generator), in eval it is (lower + upper) / 2. One
    `rrelu_with_noise` launch either way."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


__all__ = ["CELU", "ELU", "GELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish",
           "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention",
           "PReLU", "RReLU", "ReLU", "ReLU6", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin",
           "Softshrink", "Softsign", "Tanh", "Tanhshrink"]
