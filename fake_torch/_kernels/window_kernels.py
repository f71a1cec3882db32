"""numpy kernels over sliding windows of (N, C, H, W) arrays: convolution and 2-D pooling.

Each writes into the output arrays it is given and reads only its arguments, so a captured
launch replays against the same buffers. A window is a strided view
(`sliding_window_view`); convolution turns the windows into one matrix product per group
(`tensordot`, im2col as numpy does it), so a (1, 64, 56, 56) 3x3 convolution takes
milliseconds. 16-bit inputs compute in float32 (torch's opmath type) and round once; integer
inputs accumulate in int64, as torch's CPU kernels do.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

Pair = tuple[int, int]


def compute_dtype(a: np.ndarray) -> np.dtype[Any]:
    """float64 stays, other floats compute in float32, integers in int64."""
    if a.dtype == np.float64:
        return np.dtype(np.float64)
    if np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_:
        return np.dtype(np.int64)
    return np.dtype(np.float32)


def windows(x: np.ndarray, kernel: Pair, stride: Pair, dilation: Pair,
            out_hw: Pair) -> np.ndarray:
    """(N, C, Ho, Wo, kh, kw): the window under each output position of an (already padded)
    x (N, C, H, W); x must reach every window's last element."""
    (kh, kw), (sh, sw), (dh, dw), (ho, wo) = kernel, stride, dilation, out_hw
    span = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    view = sliding_window_view(x, span, axis=(2, 3))  # (N, C, H-span+1, W-span+1, span)
    return view[:, :, : (ho - 1) * sh + 1 : sh, : (wo - 1) * sw + 1 : sw, ::dh, ::dw]


def pad_hw(x: np.ndarray, top: int, bottom: int, left: int, right: int,
           value: float | int) -> np.ndarray:
    """x (N, C, H, W) with rows and columns of `value` around it (no copy when none)."""
    if not (top or bottom or left or right):
        return x
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


# --- convolution ----------------------------------------------------------------------------


def conv2d_kernel(out: np.ndarray, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None,
                  *, stride: Pair, padding: Pair, dilation: Pair, groups: int) -> None:
    """out (N, O, Ho, Wo) = cross-correlation of x (N, C, H, W) with weight (O, C/groups, kh,
    kw), zero padding, plus bias (O,) when given. Group g reads channels [g*C/groups, ...)
    and writes outputs [g*O/groups, ...)."""
    acc = compute_dtype(x)
    n, c = x.shape[:2]
    o, _, kh, kw = weight.shape
    ho, wo = out.shape[2:]
    xf = pad_hw(x.astype(acc, copy=False), padding[0], padding[0], padding[1], padding[1], 0)
    wf = weight.astype(acc, copy=False)
    win = windows(xf, (kh, kw), stride, dilation, (ho, wo))  # (N, C, Ho, Wo, kh, kw)
    cg, og = c // groups, o // groups
    y = np.empty((n, ho, wo, o), acc)  # channels last: each group's GEMM writes a slice
    for g in range(groups):
        # (N, cg, Ho, Wo, kh, kw) x (og, cg, kh, kw) -> (N, Ho, Wo, og): im2col + one GEMM
        y[..., g * og:(g + 1) * og] = np.tensordot(
            win[:, g * cg:(g + 1) * cg], wf[g * og:(g + 1) * og], axes=([1, 4, 5], [1, 2, 3]))
    if bias is not None:
        y += bias.astype(acc, copy=False)
    out[...] = y.transpose(0, 3, 1, 2)


# --- pooling --------------------------------------------------------------------------------


def _lowest(dt: np.dtype[Any]) -> float | int:
    """The value a max pool pads with: -inf, or the integer type's minimum."""
    if np.issubdtype(dt, np.integer):
        return int(np.iinfo(dt).min)
    return -np.inf


def max_pool2d_kernel(out: np.ndarray, indices: np.ndarray, x: np.ndarray, *, kernel: Pair,
                      stride: Pair, padding: Pair, dilation: Pair) -> None:
    """out (N, C, Ho, Wo): the max of each window (NaN wins, as in torch); indices: where it
    is, as h * W + w in the unpadded (H, W) plane, the first such element in row-major order."""
    h, w = x.shape[2:]
    ho, wo = out.shape[2:]
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    # ceil_mode windows may run past the padded edge: pad far enough on the bottom and right
    bottom = max(0, (ho - 1) * sh + (kh - 1) * dh + 1 - h - ph)
    right = max(0, (wo - 1) * sw + (kw - 1) * dw + 1 - w - pw)
    # 16-bit floats compare in float32 (exact; numpy has no argmax for bfloat16)
    src = x if x.dtype.kind in "iu" else x.astype(compute_dtype(x), copy=False)
    xp = pad_hw(src, ph, bottom, pw, right, _lowest(src.dtype))
    win = windows(xp, kernel, stride, dilation, (ho, wo)).reshape(*out.shape, kh * kw)
    pos = np.argmax(win, axis=-1)  # the first maximum; np.argmax also stops at the first NaN
    out[...] = np.take_along_axis(win, pos[..., None], axis=-1)[..., 0]
    i, j = np.divmod(pos, kw)
    rows = np.arange(ho)[:, None] * sh - ph + i * dh
    cols = np.arange(wo)[None, :] * sw - pw + j * dw
    indices[...] = rows * w + cols


def _pool_sizes(size: int, out: int, k: int, s: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Per output position along one axis: the window's length clipped to the padded input
    (count_include_pad's divisor factor) and clipped to the input itself."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    padded = end - start
    return padded, np.minimum(end, size) - np.maximum(start, 0)


def avg_pool2d_kernel(out: np.ndarray, x: np.ndarray, *, kernel: Pair, stride: Pair,
                      padding: Pair, count_include_pad: bool, divisor: int | None) -> None:
    """out (N, C, Ho, Wo): each window's sum over the input elements it covers, divided by
    `divisor`, else by the window's size within the padded input (count_include_pad) or by
    the number of input elements it covers."""
    h, w = x.shape[2:]
    ho, wo = out.shape[2:]
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    acc = compute_dtype(x)
    bottom = max(0, (ho - 1) * sh + kh - h - ph)
    right = max(0, (wo - 1) * sw + kw - w - pw)
    xp = pad_hw(x.astype(acc, copy=False), ph, bottom, pw, right, 0)
    total = windows(xp, kernel, stride, (1, 1), (ho, wo)).sum(axis=(-2, -1))
    if divisor is None:
        ph_size, valid_h = _pool_sizes(h, ho, kh, sh, ph)
        pw_size, valid_w = _pool_sizes(w, wo, kw, sw, pw)
        size = np.outer(ph_size, pw_size) if count_include_pad else np.outer(valid_h, valid_w)
    else:
        size = np.full((ho, wo), divisor)
    if acc.kind == "i":  # C++ integer division truncates toward zero
        out[...] = np.sign(total) * (np.abs(total) // size)
    else:
        out[...] = total / size.astype(acc)


def adaptive_avg_pool2d_kernel(out: np.ndarray, x: np.ndarray) -> None:
    """out (..., Ho, Wo): the mean of x (..., H, W) over rows [floor(i*H/Ho), ceil((i+1)*H/Ho))
    and the columns likewise."""
    h, w = x.shape[-2:]
    ho, wo = out.shape[-2:]
    acc = compute_dtype(x)
    rows, cols = _adaptive_mask(h, ho), _adaptive_mask(w, wo)  # (Ho, H), (Wo, W) of 0/1
    total = np.einsum("...hw,ih,jw->...ij", x.astype(acc, copy=False), rows.astype(acc),
                      cols.astype(acc), optimize=True)
    out[...] = total / np.outer(rows.sum(1), cols.sum(1)).astype(acc)


def _adaptive_mask(size: int, out: int) -> np.ndarray:
    i = np.arange(out)
    start, end = (i * size) // out, -((-(i + 1) * size) // out)
    k = np.arange(size)
    return (k >= start[:, None]) & (k < end[:, None])
