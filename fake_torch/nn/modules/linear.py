"""Linear, Identity, and NonDynamicallyQuantizableLinear (MultiheadAttention's out_proj)."""

from __future__ import annotations

import math
from typing import Any

from fake_torch._dtype import dtype
from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.nn import functional as F
from fake_torch.nn import init
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter


class Identity(Module):
    """Returns its input unchanged (no launch); accepts and ignores any arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x @ weight.T + bias. weight (out_features, in_features), bias (out_features,);
    both drawn from U(-1/sqrt(in_features), 1/sqrt(in_features)) as in torch (one uniform_
    launch each on cuda)."""

    in_features: int
    out_features: int
    weight: Parameter
    bias: Parameter | None

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear that torch's dynamic quantization leaves alone (MultiheadAttention.out_proj);
    here, a Linear."""


__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear"]
