"""nn.MultiheadAttention (torch.nn.modules.activation's): parameters as torch makes them
(in_proj_weight (3E, E), or q/k/v_proj_weight when kdim / vdim differ; in_proj_bias (3E,);
out_proj, a Linear(E, E); bias_k / bias_v (1, 1, E)), initialised as torch does: xavier_uniform_
on the projections, zeros on the biases, xavier_normal_ on bias_k / bias_v.

forward takes torch's fast path, torch._native_multi_head_attention (fake_torch/nn/
_native_mha.py), exactly when torch does: no float mask, the fast path enabled
(torch.backends.mha), batched batch_first self-attention (query is key is value) with packed
weights of the query's dtype and a bias, eval mode, an even head count, no bias_k / bias_v /
add_zero_attn, autocast off, no Tensor subclass, and no autograd to record (grad disabled, or
nothing requires grad). Otherwise F.multi_head_attention_forward, after transposing a
batch_first input to (L, N, E) (and the output back).
"""

from __future__ import annotations

from fake_torch._dtype import dtype
from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._grad_mode import is_grad_enabled
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.amp._state import is_autocast_enabled
from fake_torch.backends import mha
from fake_torch.nn import _mha
from fake_torch.nn import init as nn_init
from fake_torch.nn._native_mha import _native_multi_head_attention
from fake_torch.nn.modules.linear import NonDynamicallyQuantizableLinear
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter
from fake_torch.overrides import has_torch_function


class MultiheadAttention(Module):
    """Attention over `num_heads` heads of embed_dim / num_heads: (L, N, E) queries (N, L, E
    with batch_first; (L, E) unbatched) against (S, N, kdim) keys and (S, N, vdim) values."""

    embed_dim: int
    kdim: int
    vdim: int
    num_heads: int
    dropout: float
    batch_first: bool
    head_dim: int
    add_zero_attn: bool
    in_proj_weight: Parameter | None
    q_proj_weight: Parameter | None
    k_proj_weight: Parameter | None
    v_proj_weight: Parameter | None
    in_proj_bias: Parameter | None
    bias_k: Parameter | None
    bias_v: Parameter | None
    out_proj: NonDynamicallyQuantizableLinear

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def param(*shape: int) -> Parameter:
            return Parameter(empty(shape, device=device, dtype=dtype))

        if not self._qkv_same_embed_dim:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = param(1, 1, embed_dim)
            self.bias_v = param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self.in_proj_weight is not None:
            nn_init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                assert w is not None
                nn_init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            nn_init.constant_(self.in_proj_bias, 0.0)
            assert self.out_proj.bias is not None
            nn_init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            nn_init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            nn_init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """(attention output, weights averaged over heads / per head / None)."""
        float_mask = any(m is not None and m.dtype.is_floating_point
                         for m in (attn_mask, key_padding_mask))
        is_batched = query.dim() == 3
        key_padding_mask = _mha.canonical_mask(
            key_padding_mask, "key_padding_mask",
            None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype)
        attn_mask = _mha.canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                        check_other=False)
        if not float_mask and is_batched and self._fast_path_holds(query, key, value):
            merged, mask_type = self.merge_masks(attn_mask, key_padding_mask, query)
            if self.in_proj_bias is not None and self.in_proj_weight is not None:
                assert self.out_proj.bias is not None  # bias=True made both
                return _native_multi_head_attention(
                    query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
                    self.in_proj_bias, self.out_proj.weight, self.out_proj.bias, merged,
                    need_weights, average_attn_weights, mask_type)
        if self.batch_first and is_batched:  # (N, L, E) -> (L, N, E), keeping identities
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = _mha.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight if separate else None,
            k_proj_weight=self.k_proj_weight if separate else None,
            v_proj_weight=self.v_proj_weight if separate else None,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights

    def _fast_path_holds(self, query: Tensor, key: Tensor, value: Tensor) -> bool:
        """torch's conditions for the fused kernel, past the masks' dtypes and batching
        (fake_torch has no nested tensors, and no make_fx tracing to rule out)."""
        w, b = self.in_proj_weight, self.in_proj_bias
        if not (mha.get_fastpath_enabled() and query is key and key is value):
            return False
        if (b is not None and query.dtype != b.dtype) or w is None or query.dtype != w.dtype:
            return False
        if self.training or self.num_heads % 2 or not self.batch_first:
            return False
        if self.bias_k is not None or self.bias_v is not None or self.add_zero_attn:
            return False
        if not self._qkv_same_embed_dim or is_autocast_enabled():
            return False
        args = (query, key, value, w, b, self.out_proj.weight, self.out_proj.bias)
        if has_torch_function(args):
            return False
        if any(t is not None and t.device.type not in ("cpu", "cuda") for t in args):
            return False
        return not (is_grad_enabled() and any(t is not None and t.requires_grad for t in args))

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """One mask for the fused kernel and its type: 1 key padding (N, S), 2 (N, heads, L,
        S): attn_mask expanded, plus the key padding mask expanded when both are given."""
        mask_type: int | None = None
        merged: Tensor | None = None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged = expanded
            if key_padding_mask is not None:
                merged = expanded + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type


__all__ = ["MultiheadAttention"]
