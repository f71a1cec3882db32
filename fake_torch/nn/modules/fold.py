"""torch.nn.Unfold: F.unfold as a module (Fold, its inverse, is not emulated)."""

from __future__ import annotations

from typing import Any

from fake_torch._tensor import Tensor
from fake_torch.nn import functional as F
from fake_torch.nn.modules.module import Module


class Unfold(Module):
    """Sliding blocks of a (N, C, H, W) input as columns: one `im2col` launch per image."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
