"""Activation modules: ReLU, SiLU, GELU, Tanh, Sigmoid, Softmax, LogSoftmax."""

from __future__ import annotations

from fake_torch._tensor import Tensor
from fake_torch.nn import functional as F
from fake_torch.nn.modules.module import Module


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


__all__ = ["GELU", "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax", "Tanh"]
