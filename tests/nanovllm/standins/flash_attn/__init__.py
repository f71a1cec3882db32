"""A plain-torch stand-in for the two `flash_attn` entry points nano-vllm calls.

Same names, parameters and defaults as flash-attn 2's Python API; the options nano-vllm never
passes (dropout, sliding windows, softcap, ALiBi, returned probabilities, rotary inside the kernel,
appending new k/v to the cache) raise NotImplementedError naming the option. `deterministic`
and `num_splits` only steer how flash-attn splits its work: they change no value here.

Shapes follow flash-attn: varlen q (total_q, Hq, D), k / v (total_k, Hk, D) or, with a block
table, the paged cache (num_blocks, block_size, Hk, D); kvcache q (B, Lq, Hq, D). Hq may be a
multiple of Hk (GQA). `causal` aligns the mask to the bottom right, as flash-attn does when
Lq < Lk: query i sees keys j <= i + Lk - Lq.

`flash_attn_varlen_func` is the prefill: it reads cu_seqlens on the host and attends one sequence
at a time. `flash_attn_with_kvcache` is the decode and runs inside CUDA-graph capture, so it
never syncs with the host and its shapes do not depend on the data: it gathers every block of
the block table, masks keys at positions >= cache_seqlens, and runs one batched
scaled_dot_product_attention.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def _reject(given: bool, option: str) -> None:
    """An option nano-vllm does not use: refuse it rather than ignore it."""
    if given:
        raise NotImplementedError(f"flash_attn stand-in: {option} is not emulated")


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, is_causal: bool,
            scale: float) -> Tensor:
    """q (B, Lq, Hq, D), k / v (B, S, Hk, D) -> (B, Lq, Hq, D); mask (B, 1, Lq, S) bool."""
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         attn_mask=mask, is_causal=is_causal, scale=scale,
                                         enable_gqa=True)
    return out.transpose(1, 2)


def _gather_pages(cache: Tensor, blocks: Tensor) -> Tensor:
    """cache (num_blocks, block_size, H, D), blocks (..., n) -> (..., n * block_size, H, D)."""
    pages = cache[blocks]  # (..., n, block_size, H, D); a -1 pad reads the last block (masked)
    return pages.flatten(-4, -3)


def flash_attn_varlen_func(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor,
                           cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int,
                           dropout_p: float = 0.0, softmax_scale: float | None = None,
                           causal: bool = False, window_size: tuple[int, int] = (-1, -1),
                           softcap: float = 0.0, alibi_slopes: Tensor | None = None,
                           deterministic: bool = False, return_attn_probs: bool = False,
                           block_table: Tensor | None = None) -> Tensor:
    """Attention over sequences packed back to back: q[cu_seqlens_q[i]:cu_seqlens_q[i+1]]
    attends k / v[cu_seqlens_k[i]:cu_seqlens_k[i+1]], or the first Lk cached tokens of
    sequence i's pages when `block_table` (B, max_blocks) is given. -> (total_q, Hq, D)."""
    _reject(dropout_p != 0.0, "dropout_p")
    _reject(tuple(window_size) != (-1, -1), "window_size")
    _reject(softcap != 0.0, "softcap")
    _reject(alibi_slopes is not None, "alibi_slopes")
    _reject(return_attn_probs, "return_attn_probs")
    scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
    starts_q, starts_k = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()  # prefill: host reads
    outs = []
    for i in range(len(starts_q) - 1):
        qi = q[starts_q[i]:starts_q[i + 1]]
        len_q, len_k = qi.shape[0], starts_k[i + 1] - starts_k[i]
        if block_table is None:
            ki, vi = k[starts_k[i]:starts_k[i + 1]], v[starts_k[i]:starts_k[i + 1]]
        else:
            ki = _gather_pages(k, block_table[i])[:len_k]
            vi = _gather_pages(v, block_table[i])[:len_k]
        mask = None
        if causal and len_q != len_k:  # bottom-right: query i sees keys <= i + len_k - len_q
            rows = torch.arange(len_q, device=q.device)[:, None] + (len_k - len_q)
            mask = (torch.arange(len_k, device=q.device)[None, :] <= rows)[None, None]
        out = _attend(qi[None], ki[None], vi[None], mask, causal and mask is None, scale)
        outs.append(out[0])
    return torch.cat(outs)


def flash_attn_with_kvcache(q: Tensor, k_cache: Tensor, v_cache: Tensor, k: Tensor | None = None,
                            v: Tensor | None = None, rotary_cos: Tensor | None = None,
                            rotary_sin: Tensor | None = None,
                            cache_seqlens: int | Tensor | None = None,
                            cache_batch_idx: Tensor | None = None,
                            cache_leftpad: Tensor | None = None,
                            block_table: Tensor | None = None,
                            softmax_scale: float | None = None, causal: bool = False,
                            window_size: tuple[int, int] = (-1, -1), softcap: float = 0.0,
                            rotary_interleaved: bool = True, alibi_slopes: Tensor | None = None,
                            num_splits: int = 0, return_softmax_lse: bool = False) -> Tensor:
    """q (B, Lq, Hq, D) attends the first cache_seqlens[b] tokens of its cache: the rows of
    k_cache / v_cache (B, S, Hk, D), or the pages block_table[b] of a paged cache
    (num_blocks, block_size, Hk, D). -> (B, Lq, Hq, D). Capture-safe: no host reads."""
    for name, value in (("k", k), ("v", v), ("rotary_cos", rotary_cos),
                        ("rotary_sin", rotary_sin), ("cache_batch_idx", cache_batch_idx),
                        ("cache_leftpad", cache_leftpad), ("alibi_slopes", alibi_slopes)):
        _reject(value is not None, name)
    _reject(tuple(window_size) != (-1, -1), "window_size")
    _reject(softcap != 0.0, "softcap")
    _reject(return_softmax_lse, "return_softmax_lse")
    scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
    batch, len_q = q.shape[0], q.shape[1]
    if block_table is None:
        keys, values = k_cache[:batch], v_cache[:batch]  # (B, S, Hk, D)
    else:
        keys, values = _gather_pages(k_cache, block_table), _gather_pages(v_cache, block_table)
    if not isinstance(cache_seqlens, Tensor):  # an int, or None: the whole cache
        lens = keys.shape[1] if cache_seqlens is None else cache_seqlens
        cache_seqlens = torch.full((batch,), lens, dtype=torch.int32, device=q.device)
    end = cache_seqlens[:, None]  # (B, 1): keys at positions >= cache_seqlens are not there yet
    if causal:  # query i of Lq sees positions < cache_seqlens - Lq + 1 + i
        end = end - len_q + 1 + torch.arange(len_q, device=q.device)[None, :]
    positions = torch.arange(keys.shape[1], device=q.device)  # (S,)
    mask = (positions[None, None, :] < end[:, :, None])[:, None]  # (B, 1, Lq, S)
    return _attend(q, keys, values, mask, False, scale).contiguous()
