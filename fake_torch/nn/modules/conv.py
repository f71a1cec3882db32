"""Conv1d, Conv2d, Conv3d: weight (out_channels, in_channels / groups, *kernel_size) and bias
(out_channels,); ConvTranspose1d/2d/3d: weight (in_channels, out_channels / groups,
*kernel_size). Initialised as torch initialises them (kaiming_uniform_ with a = sqrt(5), then
U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias: one `uniform_` launch each on cuda).
forward: F.conv1d / 2d / 3d, after F.pad for padding_mode 'reflect', 'replicate' or
'circular'; F.conv_transpose1d / 2d / 3d with the
output_padding that `output_size` asks for (zeros padding only, as torch)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from fake_torch._dtype import dtype
from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.nn import functional as F
from fake_torch.nn import init
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter

PaddingMode = Literal["zeros", "reflect", "replicate", "circular"]
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _set_text(items: set[str]) -> str:
    """A set as torch's f-string prints it, in sorted order: a set's iteration order follows the
    string hash seed, and our messages must read the same in every process."""
    return "{" + ", ".join(repr(i) for i in sorted(items)) + "}"


def _ntuple(value: int | Sequence[int], n: int) -> tuple[int, ...]:
    """torch's _single / _pair: an int repeated n times, a sequence as a tuple."""
    return tuple(value) if isinstance(value, Sequence) else (value,) * n


def _reverse_repeat_tuple(t: Sequence[int], n: int) -> tuple[int, ...]:
    """(p_h, p_w) -> (p_w, p_w, p_h, p_h): conv padding as F.pad takes it."""
    return tuple(x for x in reversed(t) for _ in range(n))


class _ConvNd(Module):
    """What Conv1d and Conv2d share: the checks, the parameters, their initialisation."""

    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    stride: tuple[int, ...]
    padding: str | tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int
    padding_mode: str
    _reversed_padding_repeated_twice: list[int] | tuple[int, ...]
    weight: Parameter
    bias: Parameter | None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple[int, ...],
                 stride: tuple[int, ...], padding: str | tuple[int, ...],
                 dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...],
                 groups: int, bias: bool, padding_mode: str, device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in {"same", "valid"}:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_set_text({'same', 'valid'})}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_set_text(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):  # 'same': each dim's d * (k - 1), the odd one right
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1),
                                   strict=False):
                    total = d * (k - 1)
                    pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) on the weight, U(+-1/sqrt(fan_in)) on the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L): one F.conv1d."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int],
                 stride: int | tuple[int] = 1, padding: str | int | tuple[int] = 0,
                 dilation: int | tuple[int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: PaddingMode = "zeros", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 1),
                         _ntuple(stride, 1),
                         padding if isinstance(padding, str) else _ntuple(padding, 1),
                         _ntuple(dilation, 1), False, (0,), groups, bias, padding_mode,
                         device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv1d(padded, weight, bias, self.stride, (0,), self.dilation, self.groups)
        return F.conv1d(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W): one F.conv2d."""

    def __init__(self, in_channels: int, out_channels: int,
                 kernel_size: int | tuple[int, int], stride: int | tuple[int, int] = 1,
                 padding: str | int | tuple[int, int] = 0,
                 dilation: int | tuple[int, int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: PaddingMode = "zeros", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 2),
                         _ntuple(stride, 2),
                         padding if isinstance(padding, str) else _ntuple(padding, 2),
                         _ntuple(dilation, 2), False, (0, 0), groups, bias, padding_mode,
                         device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv2d(padded, weight, bias, self.stride, (0, 0), self.dilation,
                            self.groups)
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W): one F.conv3d."""

    def __init__(self, in_channels: int, out_channels: int,
                 kernel_size: int | tuple[int, int, int],
                 stride: int | tuple[int, int, int] = 1,
                 padding: str | int | tuple[int, int, int] = 0,
                 dilation: int | tuple[int, int, int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: PaddingMode = "zeros", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 3),
                         _ntuple(stride, 3),
                         padding if isinstance(padding, str) else _ntuple(padding, 3),
                         _ntuple(dilation, 3), False, (0, 0, 0), groups, bias, padding_mode,
                         device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return F.conv3d(padded, weight, bias, self.stride, (0, 0, 0), self.dilation,
                            self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class _ConvTransposeNd(_ConvNd):
    """What the transposed convolutions share: zeros padding only, and the output_padding a
    requested output_size needs."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple[int, ...],
                 stride: tuple[int, ...], padding: tuple[int, ...], dilation: tuple[int, ...],
                 transposed: bool, output_padding: tuple[int, ...], groups: int, bias: bool,
                 padding_mode: str, device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         transposed, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Sequence[int] | None,
                        stride: Sequence[int], padding: Sequence[int],
                        kernel_size: Sequence[int], num_spatial_dims: int,
                        dilation: Sequence[int] | None = None) -> list[int]:
        """self.output_padding, or what makes the output output_size (its spatial sizes, or
        all of them), which must lie within one stride of the smallest."""
        if output_size is None:
            return list(self.output_padding)
        batched = input.dim() == num_spatial_dims + 2
        leading = 2 if batched else 1
        sizes = list(output_size)
        if len(sizes) == leading + num_spatial_dims:
            sizes = sizes[leading:]
        if len(sizes) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{leading + num_spatial_dims} elements (got {len(sizes)})")
        lows, highs = [], []
        for d in range(num_spatial_dims):
            dl = dilation[d] if dilation is not None else 1
            low = ((input.size(d + leading) - 1) * stride[d] - 2 * padding[d]
                   + dl * (kernel_size[d] - 1) + 1)
            lows.append(low)
            highs.append(low + stride[d] - 1)
        for size, low, high in zip(sizes, lows, highs, strict=True):
            if size < low or size > high:
                raise ValueError(f"requested an output size of {sizes}, but valid sizes range "
                                 f"from {lows} to {highs} (for an input of "
                                 f"torch.Size({list(input.shape[leading:])}))")
        return [size - low for size, low in zip(sizes, lows, strict=True)]

    def _transpose_forward(self, input: Tensor, output_size: Sequence[int] | None) -> Tensor:
        n = len(self.kernel_size)
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {type(self).__name__}")
        assert isinstance(self.padding, tuple)
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, n, self.dilation)
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                  self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or (C_in, L): one F.conv_transpose1d."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int],
                 stride: int | tuple[int] = 1, padding: int | tuple[int] = 0,
                 output_padding: int | tuple[int] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int] = 1, padding_mode: PaddingMode = "zeros",
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 1), _ntuple(stride, 1),
                         _ntuple(padding, 1), _ntuple(dilation, 1), True,
                         _ntuple(output_padding, 1), groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        return self._transpose_forward(input, output_size)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or (C_in, H, W): one
    F.conv_transpose2d."""

    def __init__(self, in_channels: int, out_channels: int,
                 kernel_size: int | tuple[int, int], stride: int | tuple[int, int] = 1,
                 padding: int | tuple[int, int] = 0, output_padding: int | tuple[int, int] = 0,
                 groups: int = 1, bias: bool = True, dilation: int | tuple[int, int] = 1,
                 padding_mode: PaddingMode = "zeros", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 2), _ntuple(stride, 2),
                         _ntuple(padding, 2), _ntuple(dilation, 2), True,
                         _ntuple(output_padding, 2), groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        return self._transpose_forward(input, output_size)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W): one
    F.conv_transpose3d."""

    def __init__(self, in_channels: int, out_channels: int,
                 kernel_size: int | tuple[int, int, int],
                 stride: int | tuple[int, int, int] = 1,
                 padding: int | tuple[int, int, int] = 0,
                 output_padding: int | tuple[int, int, int] = 0, groups: int = 1,
                 bias: bool = True, dilation: int | tuple[int, int, int] = 1,
                 padding_mode: PaddingMode = "zeros", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 3), _ntuple(stride, 3),
                         _ntuple(padding, 3), _ntuple(dilation, 3), True,
                         _ntuple(output_padding, 3), groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        return self._transpose_forward(input, output_size)


__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]
