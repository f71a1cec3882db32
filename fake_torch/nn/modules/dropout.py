"""Dropout: identity in eval mode, one fused `native_dropout` launch in training mode."""

from __future__ import annotations

from fake_torch._tensor import Tensor
from fake_torch.nn import functional as F
from fake_torch.nn.modules.module import Module


class Dropout(Module):
    """Zero each element with probability p while training and scale the rest by 1/(1-p);
    in eval mode return the input itself (nothing launches)."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


__all__ = ["Dropout"]
