"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d: F.interpolate as modules (see
fake_torch/nn/_interpolate.py for the modes and launches)."""

from __future__ import annotations

from collections.abc import Sequence

from fake_torch._tensor import Tensor
from fake_torch.nn import functional as F
from fake_torch.nn.modules.module import Module


class Upsample(Module):
    """Resize the spatial dims of (N, C, *spatial) to `size` or by `scale_factor`."""

    name: str
    size: int | Sequence[int] | None
    scale_factor: float | tuple[float, ...] | None
    mode: str
    align_corners: bool | None
    recompute_scale_factor: bool | None

    def __init__(self, size: int | Sequence[int] | None = None,
                 scale_factor: float | tuple[float, ...] | None = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:  # (torch keeps a falsy factor, 0 or 0.0, as None)
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample(mode='nearest') of 4-D inputs."""

    def __init__(self, size: int | Sequence[int] | None = None,
                 scale_factor: float | tuple[float, ...] | None = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(mode='bilinear', align_corners=True) of 4-D inputs."""

    def __init__(self, size: int | Sequence[int] | None = None,
                 scale_factor: float | tuple[float, ...] | None = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
