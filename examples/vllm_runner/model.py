"""The example Llama in vLLM's layout: one flat row per scheduled token, attention as one op.

The layers, names and weights are examples/llama.py's (its state_dict loads here), but a batch is
not [B, T]: it is the step's tokens side by side, [num_tokens], prefill chunks and decode tokens
mixed, with per-token metadata saying where each belongs. Attention is a custom op (the splitting
op of the piecewise backend) that writes the step's keys/values into the paged-by-request KV cache
and attends over each token's own request. Every shape depends on num_tokens only, so the whole
forward, attention included, can be captured in one CUDA graph (AttentionCGSupport.ALWAYS).

Shapes: N tokens, R cache rows (max_num_seqs + 1: the last row takes the writes of padding
tokens), S max_seq_len, E hidden, H / KVH query / key-value heads, D head_dim.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from llama import DecoderLayer, LlamaConfig, RotaryEmbedding, apply_rotary
from torch import nn


@torch.library.custom_op("vllm_runner::attention", mutates_args=("kv_cache", "out"))
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv_cache: torch.Tensor,
              slot_mapping: torch.Tensor, seq_idx: torch.Tensor, positions: torch.Tensor,
              out: torch.Tensor) -> None:
    """q [N, H, D], k and v [N, KVH, D]; kv_cache [2, R, S, KVH, D]; slot_mapping, seq_idx,
    positions [N]; writes out [N, H, D]. Token i attends to cache positions <= positions[i] of
    its own request's row seq_idx[i]."""
    _, R, S, KVH, D = kv_cache.shape
    H = q.shape[1]
    flat = kv_cache.view(2, R * S, KVH, D)
    flat[0].index_copy_(0, slot_mapping, k)  # vLLM's reshape_and_cache
    flat[1].index_copy_(0, slot_mapping, v)
    # each token's request row, its KV heads repeated for the query heads they serve: [N, H, S, D]
    k_ctx = kv_cache[0][seq_idx].transpose(1, 2).repeat_interleave(H // KVH, dim=1)
    v_ctx = kv_cache[1][seq_idx].transpose(1, 2).repeat_interleave(H // KVH, dim=1)
    visible = torch.arange(S, device=q.device) <= positions[:, None]  # [N, S]
    bias = torch.where(visible, 0.0, float("-inf"))[:, None, None, :]  # [N, 1, 1, S]
    o = F.scaled_dot_product_attention(q[:, :, None], k_ctx, v_ctx, attn_mask=bias)
    out.copy_(o[:, :, 0])  # [N, H, 1, D] -> [N, H, D]


@attention.register_fake
def _(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, kv_cache: torch.Tensor,
      slot_mapping: torch.Tensor, seq_idx: torch.Tensor, positions: torch.Tensor,
      out: torch.Tensor) -> None:
    return None


class Attention(nn.Module):
    kv_cache: torch.Tensor  # [2, R, S, KVH, D], a buffer registered by allocate_kv_cache

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.num_heads, self.num_kv_heads, self.head_dim = (
            cfg.num_heads, cfg.num_kv_heads, cfg.head_dim)
        self.q_size = cfg.num_heads * cfg.head_dim
        self.kv_size = cfg.num_kv_heads * cfg.head_dim
        self.qkv_proj = nn.Linear(cfg.hidden_size, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = nn.Linear(self.q_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                slot_mapping: torch.Tensor, seq_idx: torch.Tensor,
                positions: torch.Tensor) -> torch.Tensor:
        # x [N, E]; cos, sin [N, 1, D]. N is written -1, as vLLM's models do: the backend runs
        # one traced graph for every token count
        H, KVH, D = self.num_heads, self.num_kv_heads, self.head_dim
        q, k, v = self.qkv_proj(x).split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = apply_rotary(q.view(-1, H, D), cos, sin)
        k = apply_rotary(k.view(-1, KVH, D), cos, sin)
        o = torch.empty_like(q)  # allocated before the op: a graph piece's output
        torch.ops.vllm_runner.attention(q, k, v.view(-1, KVH, D), self.kv_cache, slot_mapping,
                                        seq_idx, positions, o)
        out: torch.Tensor = self.o_proj(o.view(-1, H * D))
        return out


class FlatLlama(nn.Module):
    """forward(input_ids, positions, slot_mapping, seq_idx), each [N] -> hidden states [N, E];
    `compute_logits` turns the rows that sample into logits, outside any graph (as vLLM)."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg, Attention) for _ in range(cfg.num_layers))
        self.norm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.rotary = RotaryEmbedding(cfg.head_dim, cfg.max_seq_len, cfg.rope_theta)

    def allocate_kv_cache(self, num_rows: int) -> None:
        """A zeroed [2, num_rows, S, KVH, D] cache per layer; request row r's slots start at
        r * S in the flattened [num_rows * S] view."""
        cfg, weight = self.cfg, self.embed_tokens.weight
        for attn in (m for m in self.modules() if isinstance(m, Attention)):
            attn.register_buffer(
                "kv_cache", torch.zeros(2, num_rows, cfg.max_seq_len, cfg.num_kv_heads,
                                        cfg.head_dim, dtype=weight.dtype, device=weight.device),
                persistent=False)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor,
                slot_mapping: torch.Tensor, seq_idx: torch.Tensor) -> torch.Tensor:
        cos = self.rotary.cos_cache[positions].unsqueeze(1)  # [N, 1, D]
        sin = self.rotary.sin_cache[positions].unsqueeze(1)
        x = self.embed_tokens(input_ids)  # [N, E]
        for layer in self.layers:
            x = layer(x, cos, sin, slot_mapping, seq_idx, positions)
        hidden: torch.Tensor = self.norm(x)
        return hidden

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.lm_head(hidden)  # [n, E] -> [n, V]
        return logits
