"""The learnable per-feature weight and bias torch's norm layers share (LayerNorm, GroupNorm,
the batch and instance norms), written once: registered, then reset to ones and zeros."""

from __future__ import annotations

from fake_torch._dtype import dtype
from fake_torch._factories import torch_empty  # torch.empty: through the door
from fake_torch._torch_device import DeviceLike
from fake_torch.nn import init
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter


def register_affine(module: Module, shape: int | tuple[int, ...], affine: bool, bias: bool,
                    device: DeviceLike | None, dtype: dtype | None) -> None:
    """`weight` and `bias` of `shape` (uninitialised; see reset_affine) when `affine`, the bias
    only when `bias` too; a name without a parameter is registered as None, as torch does."""

    def param(wanted: bool) -> Parameter | None:
        return Parameter(torch_empty(shape, device=device, dtype=dtype)) if wanted else None

    module.register_parameter("weight", param(affine))
    module.register_parameter("bias", param(affine and bias))


def reset_affine(weight: Parameter | None, bias: Parameter | None) -> None:
    """weight to ones, bias to zeros (each when there is one)."""
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)
