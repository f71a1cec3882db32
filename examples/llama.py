"""A small Llama/Qwen-style decoder, written as plain torch code.

It runs unchanged on real torch and on fake_torch (`python -m fake_torch run examples/generate.py`,
or `fake_torch.install()` before `import torch`). The idiom is vLLM's / nano-vllm's: fused QKV and
gate/up projections, rotary embedding from a precomputed cos/sin cache, a preallocated KV cache
written at each new token's slot, attention over the cache under a position mask, and sampling on
the device (greedy, or temperature by the exponential "Gumbel" trick: no host sync).

Shapes: B batch, T new tokens per sequence (the prompt length at prefill, 1 at decode),
S max_seq_len, C attended context (<= S), E hidden_size, H query heads, KVH key/value heads
(grouped-query attention: H % KVH == 0), D head_dim, I intermediate_size, V vocab_size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LlamaConfig:
    vocab_size: int = 256
    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 16
    intermediate_size: int = 128
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6
    max_seq_len: int = 32


class RotaryEmbedding(nn.Module):
    """cos/sin of every position's rotation angles, computed once at build time."""

    cos_cache: torch.Tensor  # buffers, registered in __init__
    sin_cache: torch.Tensor

    def __init__(self, head_dim: int, max_seq_len: int, theta: float) -> None:
        super().__init__()
        inv_freq = theta ** -(torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
        angles = torch.arange(max_seq_len, dtype=torch.float32)[:, None] * inv_freq  # [S, D/2]
        angles = torch.cat((angles, angles), dim=-1)  # [S, D]: rotate-half pairs i and i + D/2
        self.register_buffer("cos_cache", angles.cos(), persistent=False)
        self.register_buffer("sin_cache", angles.sin(), persistent=False)

    def forward(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # positions [B, T] -> cos, sin [B, T, 1, D] (the 1 broadcasts over heads)
        return self.cos_cache[positions].unsqueeze(2), self.sin_cache[positions].unsqueeze(2)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [B, T, heads, D] rotated by its positions' angles (rotate-half form)."""
    x1, x2 = x.chunk(2, dim=-1)
    rotated: torch.Tensor = x * cos + torch.cat((-x2, x1), dim=-1) * sin
    return rotated


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.num_heads, self.num_kv_heads, self.head_dim = (
            cfg.num_heads, cfg.num_kv_heads, cfg.head_dim)
        self.q_size = cfg.num_heads * cfg.head_dim
        self.kv_size = cfg.num_kv_heads * cfg.head_dim
        self.qkv_proj = nn.Linear(cfg.hidden_size, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = nn.Linear(self.q_size, cfg.hidden_size, bias=False)
        # [max_batch, S, KVH, D] views into the model's one KV-cache tensor (allocate_kv_cache)
        self.k_cache: torch.Tensor | None = None
        self.v_cache: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                slots: torch.Tensor, attn_bias: torch.Tensor) -> torch.Tensor:
        # x [B, T, E]; slots [B*T] rows of the flattened cache; attn_bias [B, 1, T, C]
        assert self.k_cache is not None and self.v_cache is not None, "allocate_kv_cache first"
        B, T, _ = x.shape
        H, KVH, D = self.num_heads, self.num_kv_heads, self.head_dim
        q, k, v = self.qkv_proj(x).split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = apply_rotary(q.view(B, T, H, D), cos, sin)  # [B, T, H, D]
        k = apply_rotary(k.view(B, T, KVH, D), cos, sin)  # [B, T, KVH, D]
        # store this step's keys/values at their slots (vLLM's reshape_and_cache)
        max_batch, S = self.k_cache.shape[:2]
        self.k_cache.view(max_batch * S, KVH, D).index_copy_(0, slots, k.view(B * T, KVH, D))
        self.v_cache.view(max_batch * S, KVH, D).index_copy_(0, slots, v.view(B * T, KVH, D))
        # attend over each sequence's cached prefix. Each KV head serves H // KVH query heads:
        # copy it out that many times, because on CUDA `enable_gqa=True` with a mask falls back
        # from the one fused (memory-efficient) kernel to the unfused math path
        C = attn_bias.shape[-1]
        k_ctx = self.k_cache[:B, :C].transpose(1, 2).repeat_interleave(H // KVH, dim=1)
        v_ctx = self.v_cache[:B, :C].transpose(1, 2).repeat_interleave(H // KVH, dim=1)
        o = F.scaled_dot_product_attention(q.transpose(1, 2), k_ctx, v_ctx,
                                           attn_mask=attn_bias)  # [B, H, T, D]; k, v [B, H, C, D]
        out: torch.Tensor = self.o_proj(o.transpose(1, 2).reshape(B, T, H * D))  # [B, T, E]
        return out


class MLP(nn.Module):
    """Gated SiLU feed-forward with one fused gate/up projection."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, T, E] -> [B, T, E]
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)  # 2 x [B, T, I]
        out: torch.Tensor = self.down_proj(F.silu(gate) * up)
        return out


class DecoderLayer(nn.Module):
    """Pre-norm attention and MLP blocks with residuals. `attention` builds the attention block
    (the flat-token runner in examples/vllm_runner brings its own); `attn_args` go to it."""

    def __init__(self, cfg: LlamaConfig,
                 attention: Callable[[LlamaConfig], nn.Module] | None = None) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.self_attn = (attention or Attention)(cfg)
        self.post_attention_layernorm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                *attn_args: torch.Tensor) -> torch.Tensor:
        # here attn_args are (slots, attn_bias)
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, *attn_args)
        out: torch.Tensor = x + self.mlp(self.post_attention_layernorm(x))
        return out


class Llama(nn.Module):
    cache_positions: torch.Tensor  # a buffer, registered in __init__

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_layers))
        self.norm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.rotary = RotaryEmbedding(cfg.head_dim, cfg.max_seq_len, cfg.rope_theta)
        self.register_buffer("cache_positions", torch.arange(cfg.max_seq_len), persistent=False)
        self.kv_cache: torch.Tensor | None = None
        self.cache_rows: torch.Tensor | None = None

    def allocate_kv_cache(self, max_batch: int) -> None:
        """One zeroed tensor [2, layers, max_batch, S, KVH, D]; each layer gets its k/v views."""
        cfg, weight = self.cfg, self.embed_tokens.weight
        self.kv_cache = torch.zeros(2, cfg.num_layers, max_batch, cfg.max_seq_len,
                                    cfg.num_kv_heads, cfg.head_dim,
                                    dtype=weight.dtype, device=weight.device)
        for i, layer in enumerate(self.layers):
            attn = cast(Attention, layer.self_attn)
            attn.k_cache, attn.v_cache = self.kv_cache[0, i], self.kv_cache[1, i]
        # sequence b's slots in a flattened [max_batch * S] cache start at b * S
        self.cache_rows = torch.arange(max_batch, device=weight.device) * cfg.max_seq_len

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor,
                context_len: int | None = None) -> torch.Tensor:
        """input_ids, positions [B, T] -> next-token logits [B, V] (of each row's last token).
        Attention reads the first `context_len` cache positions (default all S)."""
        assert self.cache_rows is not None, "call allocate_kv_cache(max_batch) first"
        B = input_ids.shape[0]
        C = self.cfg.max_seq_len if context_len is None else context_len
        slots = (positions + self.cache_rows[:B, None]).flatten()  # [B*T]
        # token t of row b sees cache position c iff c <= its position: causal at prefill,
        # and it hides the never-written tail of the cache at decode
        visible = self.cache_positions[:C] <= positions[:, :, None]  # [B, T, C]
        attn_bias = torch.where(visible, 0.0, float("-inf")).unsqueeze(1)  # [B, 1, T, C]
        cos, sin = self.rotary(positions)
        x = self.embed_tokens(input_ids)  # [B, T, E]
        for layer in self.layers:
            x = layer(x, cos, sin, slots, attn_bias)
        logits: torch.Tensor = self.lm_head(self.norm(x[:, -1]))  # [B, V]
        return logits


def sample(logits: torch.Tensor, temperature: float = 0.0) -> torch.Tensor:
    """logits [B, V] -> token ids [B]: greedy at temperature 0, else a draw from
    softmax(logits / temperature) as argmax(p / E) with E ~ Exp(1) (vLLM, nano-vllm)."""
    if temperature == 0.0:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits / temperature, dim=-1)
    return probs.div_(torch.empty_like(probs).exponential_()).argmax(dim=-1)


def prefill(model: Llama, prompt_ids: torch.Tensor, temperature: float = 0.0
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Run the prompts [B, T] -> (logits [B, V], next tokens [B], their positions [B, 1])."""
    B, T = prompt_ids.shape
    positions = torch.arange(T, device=prompt_ids.device).expand(B, T)
    logits = model(prompt_ids, positions)
    return logits, sample(logits, temperature), positions[:, -1:] + 1


def decode_step(model: Llama, tokens: torch.Tensor, positions: torch.Tensor,
                temperature: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One token for every row: tokens [B] at positions [B, 1] -> (logits, next tokens,
    next positions). This is the step a CUDA graph captures in later lessons."""
    logits = model(tokens[:, None], positions)
    return logits, sample(logits, temperature), positions + 1
