"""torch.conv1d, conv2d and conv3d (torch.nn.functional's are the same functions), checked and
dispatched as torch 2.13's aten/src/ATen/native/Convolution.cpp does; `convolution` also runs
the transposed ones (conv_transpose.py).

Launches on cuda, by the backend torch's `_select_conv_backend` picks:
  depthwise (groups == C_in > 1, C_out a multiple of C_in), unless cuDNN's fp16 depthwise
      heuristic takes it (2-D only): one `_conv_depthwise2d` / `conv_depthwise3d`, the bias
      inside
  cuDNN (torch.backends.cudnn.enabled): one `cudnn_convolution`, then the bias in place, one
      `add_` of the bias viewed (1, C_out, 1, 1[, 1])
  cuDNN disabled: `_slow_conv2d_forward` (`slow_conv_dilated2d` when dilated; 3-D always
      `slow_conv_dilated3d`), the bias inside; with groups, one per group (each after a
      `clone` of its strided input slice), then `cat`
  an empty batch or zero channels: torch's Empty backend, `mul` (and `add_` for the bias)
before which a strided input is copied (one `clone`); padding='same' that cannot be symmetric
(an even kernel) pads the input first with one `constant_pad_nd` and warns once, as torch.
On the cpu: one `convolution` (what torch's CPU build dispatches; nothing is counted there).
A 1-D convolution runs as a 2-D one over (N, C, 1, L), as torch does. Kernels: 2-D in
window_kernels, 3-D and transposed in conv_nd_kernels. Each aten op counts once: on an H200
(torch 2.11.0+cu130, tests/gpu/nnmods_gpu.py) cuDNN's 3-D convolution ran as 4 kernels (NCHW ->
NHWC of input and weight, the GEMM, back) before the bias add_, the transposed 2-D one as 1, a
slow kernel as several per sample; the ops themselves were the ones listed here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from fake_torch._dtype import CPP_NAME, SCALAR_NAME, bfloat16, bool_, float16, float32
from fake_torch._kernels import conv_nd_kernels, window_kernels
from fake_torch._kernels._common import common_device, launch, new_tensor
from fake_torch._kernels.join import cat
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import EXTERN, op
from fake_torch._tensor import Tensor
from fake_torch.backends import cudnn

IntArg = int | Sequence[int]

# the aten ops a convolution launches, by backend (the bias add_, clone, cat, mul and
# constant_pad_nd are defined with their own ops)
_ATEN = ("cudnn_convolution", "_conv_depthwise2d", "conv_depthwise3d", "_slow_conv2d_forward",
         "slow_conv_dilated2d", "slow_conv_dilated3d", "convolution")


@op(EXTERN, aten=_ATEN)
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntArg = 1,
           padding: IntArg | str = 0, dilation: IntArg = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation: (N, C_in, L) or (C_in, L) x (C_out, C_in/groups, k) -> (N,
    C_out, L_out). padding: ints, 'valid' (none) or 'same' (stride 1 only)."""
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@op(EXTERN, aten=_ATEN)
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntArg = 1,
           padding: IntArg | str = 0, dilation: IntArg = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation: (N, C_in, H, W) or (C_in, H, W) x (C_out, C_in/groups, kh, kw)
    -> (N, C_out, H_out, W_out). padding: ints, 'valid' (none) or 'same' (stride 1 only)."""
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@op(EXTERN, aten=_ATEN)
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntArg = 1,
           padding: IntArg | str = 0, dilation: IntArg = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation: (N, C_in, D, H, W) or (C_in, D, H, W) x (C_out, C_in/groups, kd,
    kh, kw) -> (N, C_out, D_out, H_out, W_out). padding: ints, 'valid' or 'same'."""
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_nd(name: str, spatial: int, input: Tensor, weight: Tensor, bias: Tensor | None,
             stride: IntArg, padding: IntArg | str, dilation: IntArg, groups: int,
             output_padding: IntArg | None = None) -> Tensor:
    """torch's bias dtype check (not for the transposed ones) and batchify, then the
    convolution; an unbatched input loses its batch dim again. output_padding given: a
    transposed convolution."""
    batched = _check_conv_nd(name, spatial, input, bias, padding, output_padding)
    x = input if batched else input.unsqueeze(0)
    stride_, dilation_ = _as_list(stride, spatial), _as_list(dilation, spatial)
    if isinstance(padding, str):
        out = _convolution_mode(x, weight, bias, stride_, padding, dilation_, groups)
    elif output_padding is not None:
        out = convolution(x, weight, bias, stride_, _as_list(padding, spatial), dilation_,
                          groups, True, _as_list(output_padding, spatial))
    else:
        out = convolution(x, weight, bias, stride_, _as_list(padding, spatial), dilation_,
                          groups)
    return out if batched else out.squeeze(0)


def _check_conv_nd(name: str, spatial: int, input: Tensor, bias: Tensor | None,
                   padding: IntArg | str, output_padding: IntArg | None) -> bool:
    """_conv_nd's checks; whether the input is batched."""
    transposed = output_padding is not None
    if (bias is not None and bias.dtype != input.dtype and not isinstance(padding, str)
            and not transposed):
        raise RuntimeError(f"Input type ({CPP_NAME[input.dtype]}) and bias type "
                           f"({CPP_NAME[bias.dtype]}) should be the same")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) "
                           f"input to {name}, but got input of size: {list(input.shape)}")
    return bool(input.dim() == spatial + 2)


class _Shaped:
    """A tensor described with another shape (unsqueezed, padded): what the checks read."""

    def __init__(self, base: Tensor, shape: tuple[Any, ...]) -> None:
        self.base, self.shape, self.dtype, self.device = base, shape, base.dtype, base.device

    def dim(self) -> int:
        return len(self.shape)

    def numel(self) -> Any:
        n = 1
        for s in self.shape:
            n = n * s
        return n

    def type(self) -> str:
        return str(self.base.type())


def conv_rule(name: str, spatial: int, input: Tensor, weight: Tensor, bias: Tensor | None,
              stride: IntArg, padding: IntArg | str, dilation: IntArg, groups: int,
              output_padding: IntArg | None = None) -> TensorMeta:
    """The output rule of conv1d/2d/3d and conv_transpose1d/2d/3d: every backend writes a
    fresh contiguous tensor (an unbatched input's loses its batch dim again)."""
    batched = _check_conv_nd(name, spatial, input, bias, padding, output_padding)
    x = _Shaped(input, tuple(input.shape) if batched else (1, *input.shape))
    stride_, dilation_ = _as_list(stride, spatial), _as_list(dilation, spatial)
    if isinstance(padding, str):
        left, extra = _same_padding(x, weight, stride_, padding, dilation_)
        x = _Shaped(input, (*x.shape[:2], *(s + e for s, e in zip(x.shape[2:], extra,
                                                                    strict=True))))
        shape = _convolution_shape(x, weight, bias, stride_, left, dilation_, groups)
    elif output_padding is not None:
        shape = _convolution_shape(x, weight, bias, stride_, _as_list(padding, spatial),
                                   dilation_, groups, True, _as_list(output_padding, spatial))
    else:
        shape = _convolution_shape(x, weight, bias, stride_, _as_list(padding, spatial),
                                   dilation_, groups)
    out = shape if batched else shape[1:]
    return TensorMeta(out, input.dtype, contiguous_strides(out))


@register_meta("torch.conv1d")
def _conv1d_rule(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntArg = 1,
                 padding: IntArg | str = 0, dilation: IntArg = 1, groups: int = 1) -> TensorMeta:
    return conv_rule("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@register_meta("torch.conv2d")
def _conv2d_rule(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntArg = 1,
                 padding: IntArg | str = 0, dilation: IntArg = 1, groups: int = 1) -> TensorMeta:
    return conv_rule("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@register_meta("torch.conv3d")
def _conv3d_rule(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntArg = 1,
                 padding: IntArg | str = 0, dilation: IntArg = 1, groups: int = 1) -> TensorMeta:
    return conv_rule("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _as_list(value: IntArg, n: int) -> list[int]:
    """torch's argument parser: an int fills all `n` entries, a sequence is taken as given."""
    return [int(value)] * n if isinstance(value, int) else [int(v) for v in value]


# torch.constant_pad_nd (fake_torch/nn/_pad.py), which at::convolution pads an uneven 'same'
# input with: nn registers it here when imported (nn sits above the ops, fake_torch/_tools/
# _layers.py)
constant_pad_nd: Callable[[Tensor, list[int], float], Tensor] | None = None


def _convolution_mode(x: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int],
                      padding: str, dilation: list[int], groups: int) -> Tensor:
    """padding='valid': none. padding='same': the output keeps the input's size; torch splits
    dilation * (k - 1) as evenly as it can and pads the odd one out on the right first."""
    left, extra = _same_padding(x, weight, stride, padding, dilation)
    if any(extra):
        _warn_same_padding_once()
        dim = weight.dim() - 2
        pads = [p for i in reversed(range(dim)) for p in (0, extra[i])]  # F.pad order
        assert constant_pad_nd is not None, "fake_torch/nn/_pad.py registers it at import"
        x = constant_pad_nd(x, pads, 0)
    return convolution(x, weight, bias, stride, left, dilation, groups)


def _same_padding(x: Any, weight: Tensor, stride: list[int], padding: str,
                  dilation: list[int]) -> tuple[list[int], list[int]]:
    """A padding string's checks; the padding each side gets, and the extra one on the right
    ('valid': none)."""
    if padding == "valid":
        return [0], [0] * (weight.dim() - 2)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    k = weight.dim()
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    dim = k - 2
    if k != x.dim():
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight"
                           f"{list(weight.shape)}, but got {x.dim()}-dimensional input of size "
                           f"{list(x.shape)} instead")
    for what, values in (("stride", stride), ("dilation", dilation)):
        if len(values) not in (dim, 1):
            raise RuntimeError(f"{what} cannot broadcast to {dim} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, extra = [], []
    for i in range(dim):
        total = (dilation[0] if len(dilation) == 1 else dilation[i]) * (weight.shape[2 + i] - 1)
        left.append(total // 2)
        extra.append(total - 2 * (total // 2))
    return left, extra


_warned_same_padding = False  # torch warns once per process (TORCH_WARN_ONCE)


def _warn_same_padding_once() -> None:
    global _warned_same_padding
    if not _warned_same_padding:
        _warned_same_padding = True
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created", stacklevel=5)


# --- at::convolution ------------------------------------------------------------------------


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int],
                padding: list[int], dilation: list[int], groups: int, transposed: bool = False,
                output_padding: list[int] | None = None) -> Tensor:
    """torch's _convolution: the checks, then the backend's launches. A transposed weight is
    (C_in, C_out / groups, *k)."""
    k = weight.dim()
    dim = k - 2
    stride, padding, dilation, output_padding = _convolution_args(
        input, weight, bias, stride, padding, dilation, groups, transposed, output_padding)
    if input.shape[0] == 0 or input.shape[1] == 0:
        return _empty_backend(input, weight, bias, stride, padding, dilation, transposed,
                              output_padding, groups)
    if input.numel() == 0:
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {list(input.shape)}")
    dev = common_device(*(t for t in (input, weight, bias) if t is not None))
    _check_types(input, weight, bias, dev.type == "cuda")
    if k == 3:  # 1-D runs as 2-D over (N, C, 1, L); torch copies a strided input first
        x = input.contiguous() if dev.type == "cuda" else input
        out = convolution(x.unsqueeze(2), weight.unsqueeze(2), bias, [1, *stride],
                          [0, *padding], [1, *dilation], groups, transposed,
                          [0, *output_padding])
        return out.squeeze(2)
    if k > 5:
        raise NotImplementedError(f"torch.convolution over {dim} spatial dims is not emulated "
                                  "by fake_torch (1-D, 2-D and 3-D are)")
    sizes = _output_sizes(input, weight, stride, padding, dilation, transposed, output_padding)
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    shape = (input.shape[0], out_channels, *sizes)
    params: dict[str, object] = {"stride": tuple(stride), "padding": tuple(padding),
                                 "dilation": tuple(dilation), "groups": groups}
    kernel: Callable[..., None]
    if transposed:
        params["output_padding"] = tuple(output_padding)
        kernel = conv_nd_kernels.conv_transpose_nd_kernel
    else:
        kernel = window_kernels.conv2d_kernel if k == 4 else conv_nd_kernels.conv_nd_kernel
    if dev.type != "cuda":
        out = new_tensor(shape, input.dtype, dev)
        launch("convolution", kernel, out, (input, weight, bias), params)
        return out
    if _is_depthwise(input, weight, groups, transposed) and not _use_cudnn_depthwise(
            input, weight, stride, dilation):
        out = new_tensor(shape, input.dtype, dev)
        name = "_conv_depthwise2d" if k == 4 else "conv_depthwise3d"
        launch(name, kernel, out, (input.contiguous(), weight, bias), params)
        return out
    dilated = any(d != 1 for d in dilation)
    padding_big = any(p >= s for p, s in zip(output_padding, stride, strict=True))
    if cudnn.enabled and not (cudnn.deterministic and dilated) and not padding_big:
        out = new_tensor(shape, input.dtype, dev)
        name = "cudnn_convolution_transpose" if transposed else "cudnn_convolution"
        launch(name, kernel, out, (input.contiguous(), weight, None), params)
        if bias is not None:  # _convolution adds the bias after cuDNN, in place
            out.add_(bias.reshape(1, -1, *([1] * dim)))
        return out
    if transposed:
        name = f"slow_conv_transpose{dim}d"
    elif k == 5:  # cuda's 3-D fallback is the dilated kernel, dilated or not
        name = "slow_conv_dilated3d"
    else:
        name = "slow_conv_dilated2d" if dilated else "_slow_conv2d_forward"
    return _slow_backend(name, kernel, input.contiguous(), weight.contiguous(), bias, shape,
                         params, groups)


def _convolution_args(input: Any, weight: Tensor, bias: Tensor | None, stride: list[int],
                      padding: list[int], dilation: list[int], groups: int, transposed: bool,
                      output_padding: list[int] | None
                      ) -> tuple[list[int], list[int], list[int], list[int]]:
    """convolution's first checks; its stride, padding, dilation and output_padding, one per
    spatial dim."""
    dim = weight.dim() - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride = _expand(stride, "stride", dim)
    padding = _expand(padding, "padding", dim)
    dilation = _expand(dilation, "dilation", dim)
    output_padding = _expand(output_padding or [0], "output_padding", dim)
    _check_shape(input, weight, bias, stride, padding, dilation, groups, transposed,
                 output_padding)
    return stride, padding, dilation, output_padding


def _convolution_shape(input: Any, weight: Tensor, bias: Tensor | None, stride: list[int],
                       padding: list[int], dilation: list[int], groups: int,
                       transposed: bool = False, output_padding: list[int] | None = None
                       ) -> tuple[Any, ...]:
    """convolution's checks (as its kernel path makes them) and its output's shape."""
    stride, padding, dilation, output_padding = _convolution_args(
        input, weight, bias, stride, padding, dilation, groups, transposed, output_padding)
    channels = weight.shape[1] * groups if transposed else weight.shape[0]
    sizes = _output_sizes(input, weight, stride, padding, dilation, transposed, output_padding)
    if input.shape[0] == 0 or input.shape[1] == 0:  # the Empty backend
        return (input.shape[0], 0 if input.shape[1] == 0 else channels, *sizes)
    if input.numel() == 0:
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {list(input.shape)}")
    dev = common_device(*(t for t in (input.base, weight, bias) if t is not None))
    _check_types(input, weight, bias, dev.type == "cuda")
    if weight.dim() > 5:
        raise NotImplementedError(f"torch.convolution over {weight.dim() - 2} spatial dims is "
                                  "not emulated by fake_torch (1-D, 2-D and 3-D are)")
    return (input.shape[0], channels, *sizes)


def _output_sizes(input: Any, weight: Tensor, stride: list[int], padding: list[int],
                  dilation: list[int], transposed: bool, output_padding: list[int]) -> list[int]:
    """torch's conv_output_size, or conv_input_size for a transposed convolution."""
    dims = range(weight.dim() - 2)
    if transposed:
        return [(input.shape[2 + i] - 1) * stride[i] - 2 * padding[i]
                + dilation[i] * (weight.shape[2 + i] - 1) + output_padding[i] + 1 for i in dims]
    return [_out_size(input.shape[2 + i], weight.shape[2 + i], padding[i], stride[i],
                      dilation[i]) for i in dims]


def _slow_backend(name: str, kernel: Callable[..., None], input: Tensor, weight: Tensor,
                  bias: Tensor | None, shape: tuple[int, ...], params: dict[str, object],
                  groups: int) -> Tensor:
    """cuda without cuDNN: one slow kernel, or one per group on contiguous slices, then cat."""
    if groups == 1:
        out = new_tensor(shape, input.dtype, input.device)
        launch(name, kernel, out, (input, weight, bias), params)
        return out
    cin, wg = input.shape[1] // groups, weight.shape[0] // groups
    cout = shape[1] // groups
    parts = []
    for g in range(groups):
        x_g = input.narrow(1, g * cin, cin).contiguous()
        w_g = weight.narrow(0, g * wg, wg)
        b_g = None if bias is None else bias.narrow(0, g * cout, cout)
        out = new_tensor((shape[0], cout, *shape[2:]), input.dtype, input.device)
        launch(name, kernel, out, (x_g, w_g, b_g), {**params, "groups": 1})
        parts.append(out)
    return cat(parts, 1)


def _empty_backend(input: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int],
                   padding: list[int], dilation: list[int], transposed: bool,
                   output_padding: list[int], groups: int) -> Tensor:
    """torch's Empty backend: input times one weight element (mul), plus the bias's first
    element (add_), viewed as the output's shape; zero channels in give zero channels out."""
    flat = weight.reshape(-1)
    out: Tensor = input.reshape(-1) * flat if input.shape[1] == 0 else input * flat[0]
    if bias is not None:
        out.add_(bias[0])
    channels = weight.shape[1] * groups if transposed else weight.shape[0]
    size = [input.shape[0], 0 if input.shape[1] == 0 else channels]
    size += _output_sizes(input, weight, stride, padding, dilation, transposed, output_padding)
    return out.view(size)


def _expand(values: list[int], name: str, dim: int) -> list[int]:
    if len(values) == 1:
        return values * dim
    if len(values) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={values}")
    return values


def _out_size(size: int, k: int, pad: int, stride: int, dilation: int) -> int:
    return (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def _check_shape(input: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int],
                 padding: list[int], dilation: list[int], groups: int, transposed: bool,
                 output_padding: list[int]) -> None:
    """torch's check_shape_forward, in its order (then its dilation check)."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    w = list(weight.shape)
    k = input.dim()
    if weight.dim() != k:
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}"
                           f"-dimensional weight {w}, but got {k}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} "
                           f"at dimension 0, but got weight of size {w} instead")
    if w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size [{w}] instead")
    if transposed:
        _check_transposed_shape(input, w, bias, groups)
    else:
        _check_kernel_fits(input, w, bias, padding, dilation, groups)
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")


def _check_kernel_fits(input: Tensor, w: list[int], bias: Tensor | None, padding: list[int],
                       dilation: list[int], groups: int) -> None:
    if input.shape[1] != w[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {w}, expected input"
                           f"{list(input.shape)} to have {w[1] * groups} channels, but got "
                           f"{input.shape[1]} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != w[0]):
        raise RuntimeError(f"Given weight of size {w}, expected bias to be 1-dimensional with "
                           f"{w[0]} elements, but got bias of size {list(bias.shape)} instead")
    k = input.dim()
    padded = [input.shape[i] + 2 * padding[i - 2] for i in range(2, k)]
    kernel = [dilation[i - 2] * (w[i] - 1) + 1 for i in range(2, k)]
    if any(p < q for p, q in zip(padded, kernel, strict=True)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                           "than actual input size")


def _check_transposed_shape(input: Tensor, w: list[int], bias: Tensor | None,
                            groups: int) -> None:
    """A transposed weight is (C_in, C_out / groups, *k)."""
    if input.shape[1] != w[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {w}, expected input"
                           f"{list(input.shape)} to have {w[0]} channels, but got "
                           f"{input.shape[1]} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != w[1] * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {w}, expected bias to be "
                           f"1-dimensional with {w[1] * groups} elements, but got bias of "
                           f"size {list(bias.shape)} instead")


def _check_types(input: Tensor, weight: Tensor, bias: Tensor | None, on_cuda: bool) -> None:
    """Input, weight and bias of one type, with the text of the backend torch would pick: on
    the cpu, oneDNN's for float inputs, the slow kernel's dtype check otherwise."""
    if not input.dtype.is_floating_point and on_cuda:
        raise NotImplementedError("torch.conv_transpose1d/2d/3d, torch.conv3d, torch.conv1d / "
                                  f"torch.conv2d on cuda with {input.dtype} "
                                  "inputs is not emulated by fake_torch (torch's CUDA "
                                  "convolutions take floating types only)")
    if input.dtype is bool_:
        raise NotImplementedError("\"slow_conv2d_cpu\" not implemented for 'Bool'")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is None or t.dtype == input.dtype:
            continue
        if on_cuda:
            raise RuntimeError(f"Input type ({input.type()}) and {what} type ({t.type()}) "
                               "should be the same")
        if input.dtype in (float32, float16, bfloat16):
            raise RuntimeError(f"Input type ({_cpu_type_name(input)}) and {what} type "
                               f"({_cpu_type_name(t)}) should be the same or input should be "
                               f"a MKLDNN tensor and {what} is a dense tensor")
        raise RuntimeError(f"expected scalar type {SCALAR_NAME[input.dtype]} but found "
                           f"{SCALAR_NAME[t.dtype]}")


def _cpu_type_name(t: Tensor) -> str:
    """The tensor type's toString(), which names a bfloat16 cpu tensor CPUBFloat16Type."""
    return "CPUBFloat16Type" if t.dtype is bfloat16 else str(t.type())


# --- cuda's depthwise choice ------------------------------------------------------------------


def _is_depthwise(input: Tensor, weight: Tensor, groups: int, transposed: bool) -> bool:
    """torch's is_depthwise: not transposed, 2-D or 3-D, one group per input channel."""
    c = input.shape[1]
    return (not transposed and input.dim() in (4, 5) and c == groups and groups > 1
            and weight.shape[0] % c == 0)


def _use_cudnn_depthwise(input: Tensor, weight: Tensor, stride: list[int],
                         dilation: list[int]) -> bool:
    """torch's cuDNN >= 8.2 rule: fp16 depthwise convolutions of at least 32 channels, not
    dilated, square stride (or a 1-row input), where check_cudnn_depthwise_workload_with_filter
    says cuDNN is faster."""
    if not (cudnn.enabled and input.dim() == 4 and input.dtype is float16
            and weight.dtype is float16 and all(d == 1 for d in dilation) and input.shape[1] >= 32
            and (stride[0] == stride[1] or input.shape[2] == 1)):
        return False
    s = stride[1]
    if input.shape[2] == 1 and s == 1:
        return True
    kh, kw = weight.shape[2:]
    width, ch, bs = input.shape[3], input.shape[1], input.shape[0]
    if kh != kw or kw not in (1, 3, 5) or width < 7:
        return False
    if s == 1:
        return True
    if s != 2:
        return False
    if bs == 1:
        return (kw == 1 and width <= 28) or kw in (3, 5)
    if kw == 1:
        return bs <= 16 and ch >= 128 and width <= 7
    return ch >= 512 or (ch >= 256 and width >= 28)

