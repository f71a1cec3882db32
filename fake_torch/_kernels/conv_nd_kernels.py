"""numpy kernels for convolutions over any number of spatial dims: the 3-D convolution and
the transposed convolutions (1-D runs as 2-D over (N, C, 1, L), as torch does).

Each writes into the output array it is given and reads only its arguments, so a captured
launch replays against the same buffers. Accumulation as in window_kernels: 16-bit floats in
float32 (rounded once), float64 stays, integers in int64.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from fake_torch._kernels.window_kernels import compute_dtype

Ints = tuple[int, ...]


def conv_nd_kernel(out: np.ndarray, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
                   *, stride: Ints, padding: Ints, dilation: Ints, groups: int) -> None:
    """out (N, O, *S_out) = cross-correlation of x (N, C, *S) with weight (O, C/groups, *k),
    zero padding, plus bias (O,) when given."""
    acc = compute_dtype(x)
    d = x.ndim - 2
    kernel = weight.shape[2:]
    n, c = x.shape[:2]
    o = weight.shape[0]
    out_sizes = out.shape[2:]
    xf = np.pad(x.astype(acc, copy=False), [(0, 0), (0, 0), *((p, p) for p in padding)])
    spans = tuple((k - 1) * dl + 1 for k, dl in zip(kernel, dilation, strict=True))
    view = sliding_window_view(xf, spans, axis=tuple(range(2, 2 + d)))  # (N, C, *S', *span)
    picks = (*(slice(0, (s_o - 1) * s + 1, s) for s_o, s in zip(out_sizes, stride, strict=True)),
             *(slice(None, None, dl) for dl in dilation))
    win = view[(slice(None), slice(None), *picks)]  # (N, C, *S_out, *k)
    wf = weight.astype(acc, copy=False)
    cg, og = c // groups, o // groups
    y = np.empty((n, *out_sizes, o), acc)  # channels last: each group's GEMM writes a slice
    win_axes = [1, *range(2 + d, 2 + 2 * d)]
    w_axes = list(range(1, 2 + d))
    for g in range(groups):
        # (N, cg, *S_out, *k) x (og, cg, *k) -> (N, *S_out, og): im2col + one GEMM
        y[..., g * og:(g + 1) * og] = np.tensordot(
            win[:, g * cg:(g + 1) * cg], wf[g * og:(g + 1) * og], axes=(win_axes, w_axes))
    if bias is not None:
        y += bias.astype(acc, copy=False)
    out[...] = np.moveaxis(y, -1, 1)


def conv_transpose_nd_kernel(out: np.ndarray, x: np.ndarray, weight: np.ndarray,
                             bias: np.ndarray | None, *, stride: Ints, padding: Ints,
                             output_padding: Ints, dilation: Ints, groups: int) -> None:
    """out (N, O, *S_out) = the transposed convolution of x (N, C, *S) with weight (C,
    O/groups, *k): each input element adds weight * x at i * stride + j * dilation - padding,
    then bias (O,). S_out = (S - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1 (the output_padding positions get only what lands there, and bias)."""
    acc = compute_dtype(x)
    d = x.ndim - 2
    kernel = weight.shape[2:]
    n, c = x.shape[:2]
    og = weight.shape[1]
    in_sizes, out_sizes = x.shape[2:], out.shape[2:]
    # the full scatter target before cropping `padding` off each side
    full = tuple(max((i - 1) * s + (k - 1) * dl + 1, p + o) for i, s, k, dl, p, o in
                 zip(in_sizes, stride, kernel, dilation, padding, out_sizes, strict=True))
    y = np.zeros((n, groups * og, *full), acc)
    xf, wf = x.astype(acc, copy=False), weight.astype(acc, copy=False)
    cg = c // groups
    for g in range(groups):
        # (N, cg, *S) x (cg, og, *k) -> (N, *S, og, *k): each input element times the kernel
        cols = np.tensordot(xf[:, g * cg:(g + 1) * cg], wf[g * cg:(g + 1) * cg], axes=([1], [0]))
        cols = np.moveaxis(cols, 1 + d, 1).reshape(n, og, *in_sizes, -1)  # (N, og, *S, K)
        for flat, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
            target = tuple(slice(j * dl, j * dl + (i - 1) * s + 1, s) for j, dl, i, s in
                           zip(offset, dilation, in_sizes, stride, strict=True))
            y[(slice(None), slice(g * og, (g + 1) * og), *target)] += cols[..., flat]
    crop = tuple(slice(p, p + o) for p, o in zip(padding, out_sizes, strict=True))
    result = y[(slice(None), slice(None), *crop)]
    if bias is not None:
        result = result + bias.astype(acc, copy=False).reshape(-1, *([1] * d))
    out[...] = result
