"""torch.conv_transpose1d / 2d / 3d (torch.nn.functional's are the same functions): at::convolution
with transposed=True, as torch 2.13's Convolution.cpp runs it (see conv.py for the checks and
the backends). A transposed weight is (C_in, C_out / groups, *kernel).

Launches on cuda: with cuDNN (enabled, not deterministic-and-dilated, every output_padding
below its stride) one `cudnn_convolution_transpose`, then the bias added in place (`add_`);
otherwise `slow_conv_transpose2d` / `slow_conv_transpose3d` with the bias inside, one per
group (after a `clone` of each strided channel slice) and a `cat` when groups > 1. A strided
input is copied first (`clone`); 1-D runs as 2-D over (N, C, 1, L); an empty batch or zero
channels launch torch's Empty backend's `mul` [+ `add_`]. On the cpu: one `convolution`.
"""

from __future__ import annotations

from fake_torch._kernels.conv import IntArg, _conv_nd, conv_rule
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import EXTERN, op
from fake_torch._tensor import Tensor

_ATEN = ("cudnn_convolution_transpose", "slow_conv_transpose2d", "slow_conv_transpose3d")


@op(EXTERN, aten=_ATEN)
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntArg = 1, padding: IntArg = 0, output_padding: IntArg = 0,
                     groups: int = 1, dilation: IntArg = 1) -> Tensor:
    """(N, C_in, L) or (C_in, L) x (C_in, C_out/groups, k) -> (N, C_out, L_out), L_out =
    (L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1."""
    return _conv_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


@op(EXTERN, aten=_ATEN)
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntArg = 1, padding: IntArg = 0, output_padding: IntArg = 0,
                     groups: int = 1, dilation: IntArg = 1) -> Tensor:
    """(N, C_in, H, W) or (C_in, H, W) x (C_in, C_out/groups, kh, kw) -> (N, C_out, H_out,
    W_out), each output size as conv_transpose1d's."""
    return _conv_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


@op(EXTERN, aten=_ATEN)
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntArg = 1, padding: IntArg = 0, output_padding: IntArg = 0,
                     groups: int = 1, dilation: IntArg = 1) -> Tensor:
    """(N, C_in, D, H, W) or (C_in, D, H, W) x (C_in, C_out/groups, kd, kh, kw) -> (N, C_out,
    D_out, H_out, W_out), each output size as conv_transpose1d's."""
    return _conv_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


def _transposed_rule(spatial: int) -> object:
    def rule(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntArg = 1,
             padding: IntArg = 0, output_padding: IntArg = 0, groups: int = 1,
             dilation: IntArg = 1) -> TensorMeta:
        return conv_rule(f"conv_transpose{spatial}d", spatial, input, weight, bias, stride,
                         padding, dilation, groups, output_padding)
    rule.__qualname__ = f"conv_transpose{spatial}d_rule"
    return register_meta(f"torch.conv_transpose{spatial}d")(rule)


for _spatial in (1, 2, 3):
    _transposed_rule(_spatial)
