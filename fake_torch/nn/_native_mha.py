"""torch._native_multi_head_attention: the fused self-attention nn.MultiheadAttention's fast path
calls (eval, no autograd, batch_first self-attention, ...: see MultiheadAttention.forward),
launched as torch's CUDA build runs it (aten/src/ATen/native/transformers/cuda/attention.cu,
native_multi_head_attention_cuda):

  need_weights=False, no mask, a head dim that is a multiple of 8, and scaled_dot_product_attention
  would take flash or efficient attention for the (B, heads, T, head_dim) views of the query:
      the input projection (one `addmm`), sdpa (its launches, see _attention.py; its output is
      already (B, T, heads, head_dim) in memory, so the merge of heads is a view), the output
      projection (one `addmm`)
  otherwise:
      `mm` (the input projection, without bias), `_transform_bias_rescale_qkv` (bias, q scaled
      by 1/sqrt(head_dim), heads split), `bmm` (q k^T), [`_to_copy` of a float mask to bool]
      `_masked_softmax` (`_softmax` without a mask), `bmm` (times v), `clone` (heads merged)
      and `addmm` (the output projection), [`sum` and `div_` when the weights are averaged]

Each aten op counts once (the softmax and the transform are one kernel each on a GPU; the GEMMs
one cuBLAS call each). Checked on an H200 (torch 2.11.0+cu130, tests/gpu/nnmods_gpu.py): embed
16 / 4 heads float32 ran the second list (7 kernels; 9 with weights), embed 32 / 4 heads the
first (gemm, fmha_cutlassF, gemm), a key padding mask the second with its _to_copy (10 with the
mask's two kernels before the op); float16 head dim 16 ran sdpa as cuDNN attention (a memset and
its kernel), which fake_torch's sdpa does not model (it launches flash).
Masks (bool, True = masked) by mask_type: 0 (L, S), 1 key padding (B, S), 2 broadcastable to
(B, heads, L, S). A fully masked row gives NaN on the cpu (torch's
CPU kernel divides 0 by 0) and zeros on cuda (the CUDA kernel writes 0 at masked positions).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fake_torch._dtype import bool_
from fake_torch._factories import empty_like
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._opdef import COMPOSITE, EXTERN, REDUCTION, aten_op, op
from fake_torch._tensor import Tensor
from fake_torch.nn import _attention
from fake_torch.nn import functional as F
from fake_torch.nn._fused_kernels import acc_dtype

aten_op("_transform_bias_rescale_qkv", EXTERN)
aten_op("_masked_softmax", REDUCTION)


@op(COMPOSITE)
def _native_multi_head_attention(query: Tensor, key: Tensor, value: Tensor, embed_dim: int,
                                 num_head: int, qkv_weight: Tensor, qkv_bias: Tensor,
                                 proj_weight: Tensor, proj_bias: Tensor,
                                 mask: Tensor | None = None, need_weights: bool = True,
                                 average_attn_weights: bool = True,
                                 mask_type: int | None = None) -> tuple[Tensor, Tensor | None]:
    """Self-attention over query (B, T, D) with packed qkv_weight (3D, D) -> ((B, T, D),
    weights (B, T, T) averaged over heads, (B, heads, T, T), or None)."""
    _check(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias)
    b, t, d = query.shape
    head_dim = d // num_head
    if query is key and key is value and head_dim % 8 == 0 and not need_weights \
            and mask is None and _sdpa_is_fused(query, num_head, head_dim):
        x = F.linear(query, qkv_weight, qkv_bias)  # (B, T, 3D)
        q, k, v = (c.view(b, -1, num_head, head_dim).transpose(1, 2) for c in x.chunk(3, -1))
        y = F.scaled_dot_product_attention(q, k, v, None, 0.0, False)
        return F.linear(y.transpose(1, 2).reshape(b, -1, d), proj_weight, proj_bias), None
    qkv = query.view(b * t, d).mm(qkv_weight.t()).view(b, t, 3 * d)
    if qkv.numel() == 0:
        return empty_like(query), None
    q, k, v = _transform_bias_rescale_qkv(qkv, qkv_bias, num_head)  # (B, H, T, hd) each
    scores = q.reshape(b * num_head, t, head_dim).bmm(
        k.reshape(b * num_head, t, head_dim).transpose(1, 2)).view(b, num_head, t, t)
    if mask is not None and mask.dtype is not bool_:
        mask = mask.to(bool_)
    weights = _masked_softmax(scores, mask, mask_type)
    ctx = weights.view(b * num_head, t, t).bmm(v.reshape(b * num_head, t, head_dim))
    merged = ctx.view(b, num_head, t, head_dim).permute(0, 2, 1, 3).contiguous()
    out = F.linear(merged.view(b * t, d), proj_weight, proj_bias).view(b, t, d)
    if not need_weights:
        return out, None
    if average_attn_weights:
        weights = weights.sum(1)
        weights.div_(num_head)
    return out, weights


def _check(query: Tensor, key: Tensor, value: Tensor, embed_dim: int, num_head: int,
           qkv_weight: Tensor, qkv_bias: Tensor) -> None:
    """native_multi_head_attention's checks, with its texts."""
    d = embed_dim
    if query.dim() != 3:
        raise RuntimeError(f"expected 3-D `query`, got {query.dim()}-D tensor")
    if query.shape[2] != d:
        raise RuntimeError(f"passed-in embed_dim {d} didn't match last dim of query "
                           f"{query.shape[2]}")
    for name, t in (("key", key), ("value", value)):
        if t.dim() != 3:
            raise RuntimeError(f"expected 3-D `{name}`, got {t.dim()}-D tensor")
    if not query.shape == key.shape == value.shape:
        raise RuntimeError("expected `query`/`key`/`value` shapes to match")
    if qkv_weight.dim() != 2:
        raise RuntimeError(f"expected 2-D `qkv_weight`, got {qkv_weight.dim()}-D tensor")
    if qkv_weight.shape[0] != 3 * d:
        raise RuntimeError("expected `qkv_weight` first dim to be 3x embed_dim")
    if qkv_weight.shape[1] != d:
        raise RuntimeError("expected `qkv_weight` second dim to be embed_Dim")
    if qkv_bias.dim() != 1:
        raise RuntimeError(f"expected 1-D `qkv_bias`, got {qkv_bias.dim()}-D tensor")
    if qkv_bias.shape[0] != 3 * d:
        raise RuntimeError("expected `qkv_bias` first dim and first dim of query to be equal")
    if d % num_head:
        raise RuntimeError("`embed_dim` must divide evenly by `num_heads`")


def _sdpa_is_fused(query: Tensor, num_head: int, head_dim: int) -> bool:
    """Whether sdpa would take flash or efficient attention for the query's head views."""
    q = query.view(query.shape[0], -1, num_head, head_dim).transpose(1, 2)
    try:
        return _attention._cuda_backend(q, q, q, None, False, False) != "math"
    except RuntimeError:  # no backend at all: torch's selection returns an error, not raises
        return False


def _transform_bias_rescale_qkv(qkv: Tensor, qkv_bias: Tensor,
                                num_head: int) -> tuple[Tensor, Tensor, Tensor]:
    """qkv (B, T, 3D) + bias, q scaled by 1/sqrt(head_dim), as three (B, heads, T, head_dim)
    parts of one (3B, heads, T, head_dim) output: one launch."""
    b, t, three_d = qkv.shape
    d = three_d // 3
    out = new_tensor((3 * b, num_head, t, d // num_head), qkv.dtype, qkv.device)
    launch("_transform_bias_rescale_qkv", transform_bias_rescale_qkv_kernel, out,
           (qkv, qkv_bias), {"num_head": num_head})
    return out[:b], out[b:2 * b], out[2 * b:]


def _masked_softmax(scores: Tensor, mask: Tensor | None, mask_type: int | None) -> Tensor:
    """Softmax over the last dim of scores (B, H, L, S), masked positions excluded: one
    `_masked_softmax`, or one `_softmax` (in place, as torch's _softmax_out) without a mask."""
    if mask is None:
        launch("_softmax", masked_softmax_kernel, scores, (scores, None),
               {"mask_type": None, "zero_masked_rows": False})
        return scores
    out = new_tensor(scores.shape, scores.dtype, scores.device)
    launch("_masked_softmax", masked_softmax_kernel, out, (scores, mask),
           {"mask_type": mask_type, "zero_masked_rows": scores.device.type == "cuda"})
    return out


def transform_bias_rescale_qkv_kernel(out: np.ndarray, qkv: np.ndarray, bias: np.ndarray, *,
                                      num_head: int) -> None:
    """out (3B, H, T, hd) from qkv (B, T, 3D) + bias (3D,), the q part over sqrt(hd)."""
    b, t, three_d = qkv.shape
    d = three_d // 3
    acc = acc_dtype(qkv)
    x = qkv.astype(acc) + bias.astype(acc)
    x = x.reshape(b, t, 3, num_head, d // num_head).transpose(2, 0, 3, 1, 4)  # (3, B, H, T, hd)
    x[0] = x[0] / acc(math.sqrt(d // num_head))
    out[...] = x.reshape(out.shape)


def masked_softmax_kernel(out: np.ndarray, scores: np.ndarray, mask: np.ndarray | None, *,
                          mask_type: int | None, zero_masked_rows: bool) -> None:
    """out = softmax over the last dim of scores (B, H, L, S) where mask is False; a row
    with every position masked gives zeros (zero_masked_rows, cuda) or NaN (cpu)."""
    acc: Any = acc_dtype(scores)
    x = scores.astype(acc)
    if mask is not None:
        if mask_type == 1:  # key padding (B, S)
            m = mask.reshape(mask.shape[0], 1, 1, mask.shape[-1])
        elif mask_type == 0:  # (L, S)
            m = mask.reshape(1, 1, *mask.shape[-2:])
        else:
            m = mask
        x = np.where(m, -np.inf, x)
    top = x.max(axis=-1, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0))  # a masked row: exp(-inf) = 0
    total = e.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        y = e / total
    if zero_masked_rows:
        y = np.where(total > 0, y, 0)
    out[...] = y
