"""2-D pooling: torch.nn.functional.max_pool2d (and max_pool2d_with_indices), avg_pool2d and
adaptive_avg_pool2d, checked as torch 2.13's aten/src/ATen/native/Pool.h and the pooling meta
functions check them.

One launch each, on cuda as on the cpu: `max_pool2d_with_indices` (max_pool2d too: torch
keeps the indices kernel and drops the indices), `avg_pool2d`, and for adaptive_avg_pool2d
`_adaptive_avg_pool2d`, or `mean` over the last two dims when the output is 1x1 (torch's
shortcut). The CUDA kernels read a contiguous input: a strided one is copied first, one
`clone` (aten/src/ATen/native/cuda/{DilatedMaxPool2d,AveragePool2d,AdaptiveAveragePooling}.cu;
the adaptive kernel copies a strided 4-D input only, the max kernel nothing when its output is
empty). They are floating-point only; the cpu's take integers too (not bool).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_torch._dtype import SCALAR_NAME, bool_, int64
from fake_torch._kernels import window_kernels
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels._reduce_util import reduce_dims
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, op
from fake_torch._tensor import Tensor

IntArg = int | Sequence[int]
Pair = tuple[int, int]
Shape = tuple[Any, ...]


# --- max ------------------------------------------------------------------------------------


@op(POINTWISE, namespace="torch.nn.functional", aten=("max_pool2d_with_indices",))
def max_pool2d_with_indices(input: Tensor, kernel_size: IntArg, stride: IntArg | None = None,
                            padding: IntArg = 0, dilation: IntArg = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """(the max of each window, its flat index h * W + w in the input plane) over (N, C, H, W)
    or (C, H, W) inputs; the padding counts as -inf."""
    k, s, p, d, shape = _max_pool_plan(input, kernel_size, stride, padding, dilation,
                                       ceil_mode)
    out = new_tensor(shape, input.dtype, input.device)
    indices = new_tensor(shape, int64, input.device)
    x = input.contiguous() if input.is_cuda and out.numel() else input
    launch("max_pool2d_with_indices", window_kernels.max_pool2d_kernel,
           (_batched(out), _batched(indices)), (_batched(x),),
           {"kernel": k, "stride": s, "padding": p, "dilation": d})
    return out, indices


@op(POINTWISE, namespace="torch.nn.functional", aten=("max_pool2d_with_indices",))
def max_pool2d(input: Tensor, kernel_size: IntArg, stride: IntArg | None = None,
               padding: IntArg = 0, dilation: IntArg = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The max of each kernel_size window, stepping by stride (default: kernel_size); with
    return_indices, (values, indices) as max_pool2d_with_indices gives them."""
    out, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


# --- average --------------------------------------------------------------------------------


@op(POINTWISE, namespace="torch.nn.functional", aten=("avg_pool2d",))
def avg_pool2d(input: Tensor, kernel_size: IntArg, stride: IntArg | None = None,
               padding: IntArg = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window: its sum over the input divided by divisor_override, else by
    the window's size within the padded input (count_include_pad) or its input elements."""
    k, s, p, shape = _avg_pool_plan(input, kernel_size, stride, padding, ceil_mode,
                                    divisor_override)
    out = new_tensor(shape, input.dtype, input.device)
    x = input.contiguous() if input.is_cuda else input
    launch("avg_pool2d", window_kernels.avg_pool2d_kernel, _batched(out), (_batched(x),),
           {"kernel": k, "stride": s, "padding": p, "count_include_pad": count_include_pad,
            "divisor": divisor_override})
    return out


@op(POINTWISE, namespace="torch.nn.functional", aten=("_adaptive_avg_pool2d",))
def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None] | None
                        ) -> Tensor:
    """The mean over the windows that split H and W into output_size parts (None keeps that
    dim's size): rows [floor(i*H/Ho), ceil((i+1)*H/Ho)), columns likewise."""
    size = _adaptive_size(input, output_size)
    if size == [1, 1]:  # torch's shortcut: the mean over H and W
        return input.mean((-1, -2), keepdim=True)
    ndim = input.dim()
    _check_adaptive(input)
    out = new_tensor((*input.shape[:-2], *size), input.dtype, input.device)
    x = input.contiguous() if input.is_cuda and ndim == 4 else input
    launch("_adaptive_avg_pool2d", window_kernels.adaptive_avg_pool2d_kernel, out, (x,))
    return out


# --- torch's checks ---------------------------------------------------------------------------

def _max_pool_plan(input: Tensor, kernel_size: IntArg, stride: IntArg | None, padding: IntArg,
                   dilation: IntArg, ceil_mode: bool) -> tuple[Pair, Pair, Pair, Pair, Shape]:
    """max_pool2d's checks; its (kernel, stride, padding, dilation, output shape)."""
    k = _pair("max_pool2d", "kernel_size", kernel_size, "must either be a single int, or a "
              "tuple of two ints")
    s = k if stride is None or _as_list(stride) == [] else _pair(
        "max_pool2d", "stride", stride, "must either be omitted, a single int, or a tuple of "
        "two ints")
    p = _pair("max_pool2d", "padding", padding, "must either be a single int, or a tuple of "
              "two ints")
    d = _pair("max_pool2d", "dilation", dilation, "must be either a single int, or a tuple of "
              "two ints")
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    out_hw = _output_hw(input, k, s, p, d, ceil_mode)
    _check_pool_shape(input, k, s, p, d, out_hw)
    _check_dtype(input, "max_pool2d", "max_pool2d_with_indices_out_cuda_frame", ints=True)
    return k, s, p, d, (*input.shape[:-2], *out_hw)


def _avg_pool_plan(input: Tensor, kernel_size: IntArg, stride: IntArg | None, padding: IntArg,
                   ceil_mode: bool, divisor_override: int | None
                   ) -> tuple[Pair, Pair, Pair, Shape]:
    """avg_pool2d's checks; its (kernel, stride, padding, output shape)."""
    k = _pair("avg_pool2d", "kernel_size", kernel_size, "must either be a single int, or a "
              "tuple of two ints")
    s = k if stride is None or _as_list(stride) == [] else _pair(
        "avg_pool2d", "stride", stride, "must either be omitted, a single int, or a tuple of "
        "two ints")
    p = _pair("avg_pool2d", "padding", padding, "must either be a single int, or a tuple of "
              "two ints")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    for i in (-3, -2, -1):  # torch reads these sizes first: torch's IndexError text
        input.size(i)
    out_hw = _output_hw(input, k, s, p, (1, 1), ceil_mode)
    _check_pool_shape(input, k, s, p, (1, 1), out_hw)
    _check_dtype(input, "avg_pool2d", "avg_pool2d_out_cuda_frame", ints=True)
    return k, s, p, (*input.shape[:-2], *out_hw)


def _adaptive_size(input: Tensor, output_size: int | Sequence[int | None] | None) -> list[Any]:
    """adaptive_avg_pool2d's output (H, W), checked (None keeps that dim's size)."""
    if isinstance(output_size, int):
        size = [output_size, output_size]
    else:  # torch's _list_with_default (None alone has no len(): torch's TypeError)
        n = len(output_size)  # type: ignore[arg-type]
        if input.dim() <= n:
            raise ValueError(f"Input dimension should be at least {n + 1}")
        defaults = list(input.shape)[-n:]
        size = [d if v is None else int(v)
                for v, d in zip(output_size, defaults, strict=True)]  # type: ignore[arg-type]
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if size[0] < 0 or size[1] < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{size[0]}, {size[1]}}}")
    return size


def _check_adaptive(input: Tensor) -> None:
    """adaptive_avg_pool2d's checks of its input (when the output is not 1x1)."""
    ndim = input.dim()
    if ndim not in (3, 4):
        raise RuntimeError("adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    for i in (-2, -1):
        if input.shape[i] <= 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but input has sizes "
                               f"{list(input.shape)} with dimension {i + ndim} being empty")
    _check_dtype(input, "adaptive_avg_pool2d", "adaptive_avg_pool2d_cuda", ints=False)


def _as_list(value: IntArg) -> list[int]:
    return [int(value)] if isinstance(value, int) else [int(v) for v in value]


def _pair(fn: str, name: str, value: IntArg, rule: str) -> tuple[int, int]:
    """One int for both dims or a pair; torch's error for any other length."""
    values = _as_list(value)
    if len(values) not in (1, 2):
        raise RuntimeError(f"{fn}: {name} {rule}")
    return values[0], values[-1]


def _cdiv(a: int, b: int) -> int:
    """C++ integer division: toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _output_size(size: int, k: int, pad: int, stride: int, dilation: int, ceil: bool) -> int:
    """torch's pooling_output_shape, with its checks; a ceil_mode window must start inside
    the input or its left padding."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _cdiv((k - 1) * dilation + 1, 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={dilation}")
    out = (size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil else 0)) // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _output_hw(input: Tensor, k: tuple[int, int], s: tuple[int, int], p: tuple[int, int],
               d: tuple[int, int], ceil: bool) -> tuple[int, int]:
    return (_output_size(input.shape[-2], k[0], p[0], s[0], d[0], ceil),
            _output_size(input.shape[-1], k[1], p[1], s[1], d[1], ceil))


def _check_pool_shape(input: Tensor, k: tuple[int, int], s: tuple[int, int],
                      p: tuple[int, int], d: tuple[int, int], out_hw: tuple[int, int]) -> None:
    """torch's pool2d_shape_check."""
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                           f"kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} "
                           f"dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    shape = input.shape
    valid = input.dim() >= 3 and shape[1] != 0 and shape[2] != 0
    if not ((input.dim() == 3 and shape[0] != 0 and valid)
            or (input.dim() == 4 and valid and shape[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(shape)}")
    if k[1] // 2 < p[1] or k[0] // 2 < p[0]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                           f"got padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    if out_hw[0] < 1 or out_hw[1] < 1:
        planes, h, w = shape[-3], shape[-2], shape[-1]
        raise RuntimeError(f"Given input size: ({planes}x{h}x{w}). Calculated output size: "
                           f"({planes}x{out_hw[0]}x{out_hw[1]}). Output size is too small")


def _check_dtype(input: Tensor, cpu_name: str, cuda_name: str, *, ints: bool) -> None:
    """The kernels' dtype dispatch: floating types, and on the cpu integers where `ints`."""
    if input.dtype.is_floating_point:
        return
    if input.is_cuda:
        raise NotImplementedError(f"\"{cuda_name}\" not implemented for "
                                  f"'{SCALAR_NAME[input.dtype]}'")
    if not ints or input.dtype is bool_:
        raise NotImplementedError(f"\"{cpu_name}\" not implemented for "
                                  f"'{SCALAR_NAME[input.dtype]}'")


def _batched(t: Tensor) -> Tensor:
    """(C, H, W) as (1, C, H, W): the kernels take a batch (a view)."""
    return t if t.dim() == 4 else t.unsqueeze(0)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

def _fresh(shape: Shape, dt: Any) -> TensorMeta:
    return TensorMeta(tuple(shape), dt, contiguous_strides(shape))


@register_meta("torch.nn.functional.max_pool2d_with_indices")
def _max_pool2d_with_indices_rule(input: Tensor, kernel_size: IntArg,
                                  stride: IntArg | None = None, padding: IntArg = 0,
                                  dilation: IntArg = 1, ceil_mode: bool = False,
                                  return_indices: bool = False) -> tuple[TensorMeta, TensorMeta]:
    *_, shape = _max_pool_plan(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _fresh(shape, input.dtype), _fresh(shape, int64)


@register_meta("torch.nn.functional.max_pool2d")
def _max_pool2d_rule(input: Tensor, kernel_size: IntArg, stride: IntArg | None = None,
                     padding: IntArg = 0, dilation: IntArg = 1, ceil_mode: bool = False,
                     return_indices: bool = False) -> TensorMeta | tuple[TensorMeta, TensorMeta]:
    out, indices = _max_pool2d_with_indices_rule(input, kernel_size, stride, padding, dilation,
                                                 ceil_mode)
    return (out, indices) if return_indices else out


@register_meta("torch.nn.functional.avg_pool2d")
def _avg_pool2d_rule(input: Tensor, kernel_size: IntArg, stride: IntArg | None = None,
                     padding: IntArg = 0, ceil_mode: bool = False,
                     count_include_pad: bool = True,
                     divisor_override: int | None = None) -> TensorMeta:
    *_, shape = _avg_pool_plan(input, kernel_size, stride, padding, ceil_mode, divisor_override)
    return _fresh(shape, input.dtype)


@register_meta("torch.nn.functional.adaptive_avg_pool2d")
def _adaptive_avg_pool2d_rule(input: Tensor, output_size: int | Sequence[int | None] | None
                              ) -> TensorMeta:
    size = _adaptive_size(input, output_size)
    if size == [1, 1]:  # the mean over H and W
        from fake_torch._kernels.reduction import reduced_meta

        return reduced_meta(input, reduce_dims(input.dim(), (-1, -2)), True, input.dtype)
    _check_adaptive(input)
    return _fresh((*input.shape[:-2], *size), input.dtype)
