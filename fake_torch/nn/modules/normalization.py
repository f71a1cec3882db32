"""LayerNorm and RMSNorm over the trailing `normalized_shape` dims; GroupNorm over groups of
channels."""

from __future__ import annotations

from collections.abc import Sequence

from fake_torch._dtype import dtype
from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.nn import functional as F
from fake_torch.nn import init
from fake_torch.nn.modules._affine import register_affine, reset_affine
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter


def _as_shape(normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) * weight + bias; weight starts at ones, bias at zeros.
    forward: one `native_layer_norm` launch."""

    normalized_shape: tuple[int, ...]
    eps: float
    elementwise_affine: bool
    weight: Parameter | None
    bias: Parameter | None

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        register_affine(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight; eps=None means finfo(x.dtype).eps. forward: the
    ops torch's composite launches (pow, mean, add_, rsqrt, mul, mul for fp32)."""

    normalized_shape: tuple[int, ...]
    eps: float | None
    elementwise_affine: bool
    weight: Parameter | None

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Normalise (N, C, *) over groups of C / num_groups channels; per-channel weight (ones)
    and bias (zeros). forward: F.group_norm, one `native_group_norm` launch."""

    num_groups: int
    num_channels: int
    eps: float
    affine: bool
    weight: Parameter | None
    bias: Parameter | None

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: DeviceLike | None = None,
                 dtype: dtype | None = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_affine(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


__all__ = ["GroupNorm", "LayerNorm", "RMSNorm"]
