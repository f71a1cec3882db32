"""torch.nn.functional.unfold (im2col): every sliding kh x kw block of a (N, C, H, W) input as a
column, out (N, C * kh * kw, L) with L the blocks' count, rows ordered channel, then kernel row,
then kernel column (mistral-inference's vision encoder cuts its image grid with it).

Launches as ATen's CUDA im2col (aten/src/ATen/native/cuda/Im2Col.cu): a `clone` of a strided
input (its `.contiguous()`), then one `im2col` kernel per batch element. A 3-D input is one
unbatched image.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import bool_
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import not_implemented, tensor_arg
from fake_torch._kernels.pointwise_math import kernel_name
from fake_torch._kernels.shape import contiguous
from fake_torch._kernels.split import select
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, op
from fake_torch._tensor import Tensor

Pair = tuple[int, int]


def _pair(value: int | Sequence[int], name: str) -> Pair:
    pair = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(pair)}")
    return int(pair[0]), int(pair[1])


def _checks(x: Tensor, k: Pair, d: Pair, p: Pair, s: Pair) -> Pair:
    """torch's im2col_shape_check; returns the blocks' grid (rows, columns)."""
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    shape = list(x.shape)
    if x.dim() not in (3, 4) or 0 in shape[x.dim() - 3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {shape}")
    height, width = shape[-2:]
    rows = (height + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    cols = (width + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    if rows < 1 or cols < 1:
        raise RuntimeError(f"Given input with spatial size ({height}, {width}), kernel_size="
                           f"({k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, "
                           f"{p[1]}), calculated shape of the array of sliding blocks as ({rows}, "
                           f"{cols}), but its components must be at least one.")
    return rows, cols


def _im2col_kernel(out: np.ndarray, image: np.ndarray, *, k: Pair, d: Pair, p: Pair, s: Pair,
                   grid: Pair) -> None:
    """One image (C, H, W) into its columns (C * kh * kw, rows * cols)."""
    padded = np.pad(image, ((0, 0), (p[0], p[0]), (p[1], p[1])))
    c = image.shape[0]
    blocks = np.empty((c, k[0], k[1], grid[0], grid[1]), image.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            top, left = i * d[0], j * d[1]
            blocks[:, i, j] = padded[:, top:top + s[0] * (grid[0] - 1) + 1:s[0],
                                     left:left + s[1] * (grid[1] - 1) + 1:s[1]]
    out[...] = blocks.reshape(out.shape)


def _plan(input: Tensor, kernel_size: Any, dilation: Any, padding: Any, stride: Any
          ) -> tuple[Pair, Pair, Pair, Pair, Pair, tuple[Any, ...]]:
    """unfold's checks; its (kernel, dilation, padding, stride, grid, output shape)."""
    x = tensor_arg(input, "im2col")
    k, d = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    p, s = _pair(padding, "padding"), _pair(stride, "stride")
    grid = _checks(x, k, d, p, s)
    if not (x.dtype.is_floating_point or x.dtype is bool_):
        raise not_implemented(kernel_name(x, "im2col_out_cpu", "im2col_out_cuda"), x.dtype)
    shape = (x.shape[-3] * k[0] * k[1], grid[0] * grid[1])
    return k, d, p, s, grid, ((x.shape[0],) if x.dim() == 4 else ()) + shape


@op(POINTWISE, namespace="torch.nn.functional", aten=("im2col",))
def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """The sliding blocks of `input` as columns: (N, C, H, W) -> (N, C * kh * kw, L)."""
    k, d, p, s, grid, shape = _plan(input, kernel_size, dilation, padding, stride)
    batched = input.dim() == 4
    x = contiguous(input)  # one clone of a strided input
    images = [select(x, 0, n) for n in range(x.shape[0])] if batched else [x]
    result = _common.new_tensor(shape, x.dtype, x.device)
    params = {"k": k, "d": d, "p": p, "s": s, "grid": grid}
    for n, image in enumerate(images):  # one kernel per batch element, as CUDA's im2col
        _common.launch("im2col", _im2col_kernel, select(result, 0, n) if batched else result,
                       (image,), params)
    return result


# --- output rule (fake_torch/_meta_registrations.py) ------------------------------------------

@register_meta("torch.nn.functional.unfold")
def _unfold_rule(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> TensorMeta:
    shape = _plan(input, kernel_size, dilation, padding, stride)[-1]
    return TensorMeta(shape, input.dtype, contiguous_strides(shape))
