"""torch.nn.functional.multi_head_attention_forward: torch's composite, op by op, so a call
launches what torch's launches (on cuda, the same ops; its scaled_dot_product_attention as
fake_torch's sdpa picks a backend, see _attention.py).

Shapes: query (L, N, E) or unbatched (L, E); key (S, N, E_k), value (S, N, E_v); masks bool
(True = masked) or float (added). Steps: the input projection (one packed linear for
self-attention, then a `clone` rearranging it to (3, L, N, E); else one linear per input or
two for a shared key/value), [bias_k / bias_v concatenated], heads split (views), [a zero
attention row], masks merged (`add`), then with need_weights: q * scale (`mul`), `bmm` or
`baddbmm` with the mask, `_softmax`, [dropout], `bmm`, `clone` + linear out, [`mean` over
heads]; without: scaled_dot_product_attention, `clone` + linear out.
"""

from __future__ import annotations

import math
import warnings

from fake_torch._dtype import bool_, dtype
from fake_torch._factories import zeros, zeros_like
from fake_torch._kernels.join import cat
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Size, Tensor
from fake_torch.nn import functional as F


def mha_shape_check(query: Tensor, key: Tensor, value: Tensor,
                    key_padding_mask: Tensor | None, attn_mask: Tensor | None,
                    num_heads: int) -> bool:
    """torch's _mha_shape_check: whether the call is batched, after checking the dims (a
    batched 3-D query wants 3-D key/value and a 2-D key_padding_mask, an unbatched 2-D one
    2-D and 1-D; attn_mask is 2-D or 3-D either way)."""
    n = query.dim()
    if n not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{n}-D query tensor")
    kind = "For batched (3-D) `query`" if n == 3 else "For unbatched (2-D) `query`"
    if key.dim() != n or value.dim() != n:
        raise AssertionError(f"{kind}, expected `key` and `value` to be {n}-D but found "
                             f"{key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != n - 1:
        raise AssertionError(f"{kind}, expected `key_padding_mask` to be `None` or {n - 1}-D "
                             f"but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"{kind}, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if n == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return n == 3


def canonical_mask(mask: Tensor | None, mask_name: str, other_type: dtype | None,
                   other_name: str, target_type: dtype, check_other: bool = True
                   ) -> Tensor | None:
    """torch's _canonical_mask: a bool mask becomes a float one, -inf where True
    (`zeros_like` then `masked_fill_`); a float mask stays."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask.dtype is not bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if not is_float:
        mask = zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """One weight (3E, E) for q, k and v: a single linear (and a `clone` into (3, ..., E))
    when q is k is v, two when only k is v, else three."""
    e = q.size(-1)
    if k is v:
        if q is k:
            proj = F.linear(q, w, b)  # (..., 3E) -> (3, ..., E), contiguous
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = F.linear(k, w_kv, b_kv)
        kv = kv.unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return F.linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                   b_q: Tensor | None, b_k: Tensor | None,
                   b_v: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """Three linears with torch's shape checks (E_q, E_k, E_v may differ)."""
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for what, w, shape in (("query", w_q, (eq, eq)), ("key", w_k, (eq, ek)),
                           ("value", w_v, (eq, ev))):
        if tuple(w.shape) != shape:
            raise AssertionError(f"expecting {what} weights shape of {shape}, but got "
                                 f"{w.shape}")
    for what, bias in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bias is not None and tuple(bias.shape) != (eq,):
            raise AssertionError(f"expecting {what} bias shape of {(eq,)}, but got "
                                 f"{bias.shape}")
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


@op(COMPOSITE, namespace="torch.nn.functional")
def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over (L, N, E) queries and (S, N, E_k/E_v) keys and values ->
    ((L, N, E), weights (N, L, S) averaged over heads, (N, heads, L, S), or None)."""
    is_batched = mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:  # one sequence: a batch of one in dim 1
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask",
                                      None if attn_mask is None else attn_mask.dtype,
                                      "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # sdpa applies the causal mask itself
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                   check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {Size(key.shape[:2])} do not "
                                 f"match value's {Size(value.shape[:2])}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        assert q_proj_weight is not None and k_proj_weight is not None \
            and v_proj_weight is not None
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)
    attn_mask = _check_attn_mask(attn_mask, tgt_len, key.shape[0], bsz, num_heads)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask,
                                                                       (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)  # (N*H, L, hd)
    k = _heads(k, static_k, "k", bsz * num_heads, head_dim)  # (N*H, S, hd)
    v = _heads(v, static_v, "v", bsz * num_heads, head_dim)
    if add_zero_attn:
        shape = (bsz * num_heads, 1, head_dim)
        k = cat([k, zeros(shape, dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros(shape, dtype=v.dtype, device=v.device)], dim=1)
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask,
                                                                       (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        return _with_weights(q, k, v, attn_mask, dropout_p, is_causal, out_proj_weight,
                             out_proj_bias, (tgt_len, bsz, embed_dim, num_heads, src_len),
                             average_attn_weights, is_batched)
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    return (out if is_batched else out.squeeze(1)), None


def _check_attn_mask(attn_mask: Tensor | None, tgt_len: int, src_len: int, bsz: int,
                     num_heads: int) -> Tensor | None:
    """A 2-D mask (L, S) gains a leading 1; a 3-D one must be (N * heads, L, S)."""
    if attn_mask is None:
        return None
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _heads(t: Tensor, static: Tensor | None, name: str, batch_heads: int,
           head_dim: int) -> Tensor:
    """(S, N, E) -> (N * heads, S, head_dim), or the given static_k / static_v."""
    if static is None:
        return t.view(t.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {batch_heads}, but got "
                             f"{static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{static.size(2)}")
    return static


def _with_weights(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, dropout_p: float,
                  is_causal: bool, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
                  sizes: tuple[int, int, int, int, int], average_attn_weights: bool,
                  is_batched: bool) -> tuple[Tensor, Tensor]:
    """The explicit path that also returns the attention weights (N, [heads,] L, S)."""
    tgt_len, bsz, embed_dim, num_heads, src_len = sizes
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    if attn_mask is not None:
        weights = attn_mask.baddbmm(q_scaled, k.transpose(-2, -1))
    else:
        weights = q_scaled.bmm(k.transpose(-2, -1))
    weights = F.softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    weights = weights.view(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        return out.squeeze(1), weights.squeeze(0)
    return out, weights
