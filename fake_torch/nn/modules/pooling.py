"""MaxPool2d, AvgPool2d and AdaptiveAvgPool2d: F.max_pool2d, F.avg_pool2d and
F.adaptive_avg_pool2d with the arguments given at construction (one launch each; see
fake_torch/_kernels/pooling.py)."""

from __future__ import annotations

from collections.abc import Sequence

from fake_torch._tensor import Tensor
from fake_torch.nn import functional as F
from fake_torch.nn.modules.module import Module

IntArg = int | Sequence[int]


class MaxPool2d(Module):
    """The max of each kernel_size window (stride defaults to kernel_size); with
    return_indices, (values, indices)."""

    kernel_size: IntArg
    stride: IntArg
    padding: IntArg
    dilation: IntArg
    return_indices: bool
    ceil_mode: bool

    def __init__(self, kernel_size: IntArg, stride: IntArg | None = None, padding: IntArg = 0,
                 dilation: IntArg = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """The mean of each kernel_size window (stride defaults to kernel_size)."""

    kernel_size: IntArg
    stride: IntArg
    padding: IntArg
    ceil_mode: bool
    count_include_pad: bool
    divisor_override: int | None

    def __init__(self, kernel_size: IntArg, stride: IntArg | None = None, padding: IntArg = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """The mean over the windows that split H and W into output_size parts."""

    output_size: int | Sequence[int | None] | None

    def __init__(self, output_size: int | Sequence[int | None] | None) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(Module):
    """The mean over the windows that split L into output_size parts (F.adaptive_avg_pool1d)."""

    output_size: int | Sequence[int]

    def __init__(self, output_size: int | Sequence[int]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool2d", "MaxPool2d"]
