"""numpy kernels of the single fused aten ops that torch.nn.functional launches directly:
native_layer_norm, _fused_rms_norm, embedding, embedding_renorm_, constant_pad_nd (and the
reflection / replication pads), native_dropout, scalar_tensor, tril, and the fused
attention.

Each kernel writes into the output arrays it is given and reads only its arguments, so a
captured launch replays against the same buffers. 16-bit inputs compute in float32 (torch's
opmath type) and round once on store.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fake_torch._kernels.random_kernels import bernoulli_kernel


def acc_dtype(a: np.ndarray) -> type[np.floating[Any]]:
    """The accumulation dtype torch uses for `a`: float64 stays, everything else is float32."""
    return np.float64 if a.dtype == np.float64 else np.float32


def native_layer_norm_kernel(out: np.ndarray, mean: np.ndarray, rstd: np.ndarray,
                             x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                             *, axes: tuple[int, ...], eps: float) -> None:
    """out = (x - mean) * rstd * weight + bias over the trailing `axes`; mean and rstd keep
    x's leading shape with 1s for the normalised dims."""
    acc = acc_dtype(x)
    xf = x.astype(acc)
    mu = xf.mean(axis=axes, keepdims=True)
    centered = xf - mu
    r = 1.0 / np.sqrt((centered * centered).mean(axis=axes, keepdims=True) + acc(eps))
    y = centered * r
    if weight is not None:
        y = y * weight.astype(acc)
    if bias is not None:
        y = y + bias.astype(acc)
    out[...] = y
    mean[...] = mu
    rstd[...] = r


def fused_rms_norm_kernel(out: np.ndarray, rstd: np.ndarray, x: np.ndarray,
                          weight: np.ndarray | None, *, axes: tuple[int, ...], eps: float) -> None:
    """out = x * rsqrt(mean(x^2) + eps) * weight over the trailing `axes`; rstd keeps x's
    leading shape with 1s for the normalised dims. The steps (and roundings) are those of the
    composite's kernels, pow, mean, add_, rsqrt, mul, mul, in one pass: the same bits."""
    acc = acc_dtype(x)
    xf = x.astype(acc, copy=False)
    count = acc(math.prod(x.shape[a] for a in axes))
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty row's mean is nan
        r = np.reciprocal(np.sqrt(np.sum(xf * xf, axis=axes, keepdims=True) / count + acc(eps)))
    y = xf * r
    if weight is not None:
        y = y * weight.astype(acc, copy=False)
    out[...] = y
    rstd[...] = r


def embedding_kernel(out: np.ndarray, weight: np.ndarray, indices: np.ndarray) -> None:
    """out[..., :] = weight[indices[...], :]. An index outside the table raises torch's CPU
    error (on a GPU it is a device-side assert)."""
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    np.take(weight, indices, axis=0, out=out)


def embedding_renorm_kernel(weight: np.ndarray, indices: np.ndarray, *, max_norm: float,
                            norm_type: float) -> None:
    """In place: each row named in `indices` whose p-norm exceeds max_norm is scaled to it."""
    for i in np.unique(indices):
        row = weight[i].astype(np.float64)
        norm = float(np.linalg.norm(row, ord=norm_type))
        if norm > max_norm:
            weight[i] = row * (max_norm / (norm + 1e-7))


def constant_pad_kernel(out: np.ndarray, x: np.ndarray, *, src: tuple[slice, ...],
                        dst: tuple[slice, ...], value: float | int | bool) -> None:
    """Fill with `value`, then copy the (possibly cropped) input region into place."""
    out[...] = value
    out[dst] = x[src]


def np_pad_kernel(out: np.ndarray, x: np.ndarray, *, widths: tuple[tuple[int, int], ...],
                  mode: str) -> None:
    """numpy's 'reflect' (torch's reflection_pad) or 'edge' (torch's replication_pad)."""
    out[...] = np.pad(x, widths, mode=mode)  # type: ignore[call-overload]


def native_dropout_kernel(out: np.ndarray, mask: np.ndarray, x: np.ndarray,
                          philox: np.ndarray, *, intra: int, p: float) -> None:
    """mask ~ Bernoulli(1 - p); out = x * mask / (1 - p) (torch's fused CUDA dropout)."""
    bernoulli_kernel(mask, philox, 1.0 - p, intra=intra)
    acc = acc_dtype(x)
    out[...] = x.astype(acc) * mask * acc(1.0 / (1.0 - p))


def safe_softmax(s: np.ndarray, axis: int) -> np.ndarray:
    """softmax along `axis`; a row that is all -inf gives zeros instead of NaN. `s` is
    consumed: its buffer becomes the result (the same bits as a fresh one, without two
    temporaries of s's size per call)."""
    m = s.max(axis=axis, keepdims=True)
    finite = np.isfinite(m)
    # in s's own dtype (the accumulation dtype), as torch's kernels compute it
    s -= m if finite.all() else np.where(finite, m, m.dtype.type(0))
    e: np.ndarray = np.exp(s, out=s)
    total = e.sum(axis=axis, keepdims=True)
    positive = total > 0
    if positive.all():  # no fully masked row: divide in place, no zeroed buffer to fill
        e /= total
        return e
    out: np.ndarray = np.divide(e, total, out=np.zeros_like(e), where=positive)
    return out



def scalar_tensor_kernel(out: np.ndarray, *, value: float) -> None:
    out[...] = value


def eye_kernel(out: np.ndarray) -> None:
    """Ones on the main diagonal of a 2-D buffer, zeros elsewhere (nn.init.eye_)."""
    out[...] = np.eye(*out.shape, dtype=out.dtype)


def qr_kernel(q: np.ndarray, r: np.ndarray, a: np.ndarray) -> None:
    """The reduced QR factorisation of a 2-D buffer (linalg_qr, mode="reduced")."""
    qq, rr = np.linalg.qr(a.astype(np.float64), mode="reduced")
    q[...] = qq
    r[...] = rr


def diagonal_copy_kernel(out: np.ndarray, x: np.ndarray) -> None:
    """The main diagonal of a 2-D buffer, copied."""
    out[...] = np.diagonal(x)


def tril_kernel(out: np.ndarray, x: np.ndarray, *, diagonal: int) -> None:
    rows, cols = x.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool)
    out[...] = np.where(keep, x, np.zeros((), x.dtype))


def attention_kernel(out: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                     mask: np.ndarray | None, philox: np.ndarray | None, *, scale: float,
                     is_causal: bool, groups: int, dropout_p: float, intra: int) -> None:
    """Fused attention: softmax(q @ k^T * scale + mask) @ v over (..., heads, seq, dim).

    q (..., Hq, L, E), k (..., Hk, S, E), v (..., Hk, S, Ev) with Hq = groups * Hk; mask is an
    additive float mask broadcastable to (..., Hq, L, S); causal is top-left aligned (query i
    sees keys j <= i). Fully masked rows give zeros."""
    acc = acc_dtype(q)
    # copy=False: float32 inputs are read as they are (no copy of K and V per call)
    qf, kf, vf = q.astype(acc, copy=False), k.astype(acc, copy=False), v.astype(acc, copy=False)
    if groups > 1:  # GQA: each key/value head serves `groups` consecutive query heads
        kf, vf = np.repeat(kf, groups, axis=-3), np.repeat(vf, groups, axis=-3)
    s = qf @ np.swapaxes(kf, -1, -2)  # a fresh array: scaled and masked in place
    s *= acc(scale)
    if is_causal:
        s = np.where(np.tri(s.shape[-2], s.shape[-1], dtype=bool), s, -np.inf)
    if mask is not None:
        m = mask.astype(acc, copy=False)
        if np.broadcast_shapes(s.shape, m.shape) == s.shape:
            s += m
        else:  # a mask with more batch dims than the scores
            s = s + m
    p = safe_softmax(s, -1)  # (s, a fresh array, becomes p)
    if dropout_p > 0.0:
        assert philox is not None
        keep = np.empty(p.shape, dtype=bool)
        bernoulli_kernel(keep, philox, 1.0 - dropout_p, intra=intra)
        p = p * keep * acc(1.0 / (1.0 - dropout_p))
    out[...] = p @ vf
