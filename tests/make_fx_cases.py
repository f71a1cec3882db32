"""Composite functions for make_fx's differential suite (tests/test_make_fx_suite.py): each a
`make(T) -> (f, args)` over a torch-like module `T` (fake_torch or torch), so the same code is
traced by both. The functions are the building blocks of an inference engine's forward step
(MLP, attention, norms, rotary, KV-cache writes, sampling) and the tensor plumbing around them
(indexing, views, joins, dtype changes, in-place updates)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Made = tuple[Callable[..., Any], tuple[Any, ...]]
Case = Callable[[Any], Made]


def _randn(T: Any, *shapes: tuple[int, ...]) -> tuple[Any, ...]:
    return tuple(T.randn(*s) for s in shapes)


def swiglu_mlp(T: Any) -> Made:
    F = T.nn.functional

    def f(x: Any, w_gate_up: Any, w_down: Any) -> Any:  # x: (B, T, 4), w_gate_up: (16, 4)
        gate, up = F.linear(x, w_gate_up).chunk(2, dim=-1)
        return F.linear(F.silu(gate) * up, w_down)
    return f, _randn(T, (2, 3, 4), (16, 4), (4, 8))


def gelu_mlp_bias(T: Any) -> Made:
    F = T.nn.functional

    def f(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:  # x: (N, 4)
        return F.linear(F.gelu(F.linear(x, w1, b1), approximate="tanh"), w2, b2)
    return f, _randn(T, (5, 4), (8, 4), (8,), (4, 8), (4,))


def attention_triu_mask(T: Any) -> Made:
    def f(q: Any, k: Any, v: Any) -> Any:  # (B, H, S, D)
        scale = 1.0 / math.sqrt(4)
        scores = T.matmul(q, k.transpose(2, 3)) * scale
        mask = T.triu(T.full((3, 3), float("-inf")), diagonal=1)
        probs = T.softmax(scores.float() + mask, dim=-1).to(q.dtype)
        out = T.matmul(probs, v)  # (B, H, S, D)
        return out.transpose(1, 2).contiguous().view(1, 3, 8)
    return f, _randn(T, (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4))


def attention_arange_mask(T: Any) -> Made:
    def f(q: Any, k: Any) -> Any:  # (H, S, D)
        pos = T.arange(3)
        causal = pos[None, :] > pos[:, None]
        scores = (q @ k.transpose(-1, -2)).masked_fill(causal, -1e9)
        return scores.softmax(dim=-1)
    return f, _randn(T, (2, 3, 4), (2, 3, 4))


def rmsnorm_llama(T: Any) -> Made:
    def f(x: Any, w: Any) -> Any:  # half in, float32 statistics, half out
        h = x.to(T.float32)
        var = h.pow(2).mean(-1, keepdim=True)
        h = h * T.rsqrt(var + 1e-5)
        return w * h.to(x.dtype)
    return f, (T.randn(2, 4).half(), T.randn(4).half())


def fused_add_rmsnorm(T: Any) -> Made:
    def f(x: Any, residual: Any, w: Any) -> Any:
        residual = residual + x
        var = residual.pow(2).mean(dim=-1, keepdim=True)
        return residual * T.rsqrt(var + 1e-6) * w, residual
    return f, _randn(T, (3, 4), (3, 4), (4,))


def rotary_neox_positions(T: Any) -> Made:
    def f(x: Any, positions: Any, cos_cache: Any, sin_cache: Any) -> Any:  # x: (S, H, D)
        cos = cos_cache[positions].unsqueeze(-2)  # (S, 1, D/2)
        sin = sin_cache[positions].unsqueeze(-2)
        x1, x2 = T.chunk(x, 2, dim=-1)
        return T.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    return f, (T.randn(3, 2, 4), T.tensor([0, 2, 1]), T.randn(5, 2), T.randn(5, 2))


def rotary_complex(T: Any) -> Made:
    def f(x: Any, freqs: Any) -> Any:  # x: (S, H, D), freqs: (S, D/2) angles
        freqs_cis = T.polar(T.ones_like(freqs), freqs)
        xc = T.view_as_complex(x.float().reshape(3, 2, 2, 2))
        out = T.view_as_real(xc * freqs_cis[:, None, :]).flatten(2)
        return out.type_as(x)
    return f, _randn(T, (3, 2, 4), (3, 2))


def kv_cache_slice_write(T: Any) -> Made:
    def f(k_cache: Any, v_cache: Any, k: Any, v: Any) -> Any:  # caches: (B, S_max, D)
        k_cache[:, 1:3] = k
        v_cache[:, 1:3] = v
        return k_cache[:, :3], v_cache[:, :3]
    return f, (T.zeros(2, 5, 4), T.zeros(2, 5, 4), T.randn(2, 2, 4), T.randn(2, 2, 4))


def kv_cache_flat_index_copy(T: Any) -> Made:
    def f(cache: Any, slots: Any, k: Any) -> Any:  # cache: (blocks, block, D)
        cache.view(-1, 4).index_copy_(0, slots, k)
        return cache
    return f, (T.zeros(3, 2, 4), T.tensor([5, 0, 3]), T.randn(3, 4))


def inplace_chain(T: Any) -> Made:
    def f(x: Any, y: Any) -> Any:
        x.mul_(2).add_(y, alpha=0.5)
        x.clamp_(min=0.0)
        y.sub_(1).div_(4)
        return x + y
    return f, _randn(T, (2, 3), (2, 3))


def layer_norm_manual(T: Any) -> Made:
    def f(x: Any, w: Any, b: Any) -> Any:
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / T.sqrt(var + 1e-5) * w + b
    return f, _randn(T, (2, 3, 4), (4,), (4,))


def layer_norm_functional(T: Any) -> Made:
    def f(x: Any, w: Any, b: Any) -> Any:
        return T.nn.functional.layer_norm(x, (4,), w, b, eps=1e-6)
    return f, _randn(T, (3, 4), (4,), (4,))


def softmax_dims(T: Any) -> Made:
    F = T.nn.functional

    def f(x: Any) -> Any:
        return F.softmax(x, dim=0) + x.log_softmax(1) + T.softmax(x, -1, dtype=T.float64).float()
    return f, _randn(T, (3, 4))


def embedding_positions(T: Any) -> Made:
    F = T.nn.functional

    def f(ids: Any, wte: Any, wpe: Any) -> Any:
        pos = T.arange(0, 3, dtype=T.long)
        return F.embedding(ids, wte) + F.embedding(pos, wpe)
    return f, (T.tensor([[1, 5, 2]]), T.randn(6, 4), T.randn(3, 4))


def topk_sampling(T: Any) -> Made:
    def f(logits: Any, temperature: Any) -> Any:  # logits: (B, V)
        logits = logits / temperature.unsqueeze(1)
        values, indices = T.topk(logits, 2, dim=-1)
        masked = T.full_like(logits, float("-inf")).scatter(-1, indices, values)
        probs = T.softmax(masked, dim=-1)
        return probs, probs.argmax(dim=-1)
    return f, (T.randn(2, 6), T.tensor([0.7, 1.0]))


def greedy_logprobs(T: Any) -> Made:
    def f(logits: Any, ids: Any) -> Any:
        logprobs = logits.log_softmax(dim=-1, dtype=T.float32)
        return logprobs.gather(-1, ids.unsqueeze(-1)).squeeze(-1), logits.argmax(-1)
    return f, (T.randn(3, 5), T.tensor([4, 0, 2]))


def gather_scatter(T: Any) -> Made:
    def f(x: Any, idx: Any, src: Any) -> Any:
        g = T.gather(x, 1, idx)
        s = T.zeros(2, 4).scatter_add(1, idx, src)
        x.scatter_(1, idx, 0.0)
        return g + s[:, :2], x
    return f, (T.randn(2, 4), T.tensor([[0, 3], [1, 1]]), T.randn(2, 2))


def cat_stack_split_chunk(T: Any) -> Made:
    def f(x: Any, y: Any) -> Any:
        a, b, c = T.split(T.cat([x, y], dim=1), [1, 2, 3], dim=1)
        p, q = y.chunk(2, dim=0)
        return T.stack([a.squeeze(1), c[:, 0]], dim=-1), T.cat([b, p.expand(2, 3)[:, :2]]), q
    return f, _randn(T, (2, 3), (2, 3))


def unbind_unflatten(T: Any) -> Made:
    def f(qkv: Any) -> Any:  # (S, 3*H*D) -> q, k, v: (S, H, D)
        q, k, v = qkv.unflatten(-1, (3, 2, 2)).unbind(1)
        return q.flatten(1) + k.flatten(-2) * v.reshape(4, -1)
    return f, _randn(T, (4, 12))


def masked_fill_variants(T: Any) -> Made:
    def f(x: Any, m: Any) -> Any:
        a = x.masked_fill(m, 0.0)
        b = T.masked_fill(x, ~m, T.tensor(-1.0))
        x.masked_fill_(m.logical_not(), 2.0)
        return a + b + x
    return f, (T.randn(2, 3), T.tensor([[True, False, True], [False, False, True]]))


def where_variants(T: Any) -> Made:
    def f(x: Any, y: Any) -> Any:
        return T.where(x > y, x, y) + T.where(x < 0, 0.0, x) + T.where(y >= 0, y, -1)
    return f, _randn(T, (2, 3), (2, 3))


def matmul_chains(T: Any) -> Made:
    def f(a: Any, b: Any, c: Any, v: Any) -> Any:  # 2-d @ 2-d, 2-d @ 1-d, 1-d @ 2-d
        ab = a @ b
        return (ab @ c) @ v, v @ c.t(), T.mm(a, b).sum()
    return f, _randn(T, (2, 3), (3, 4), (4, 5), (5,))


def matmul_broadcast(T: Any) -> Made:
    def f(x: Any, w: Any, y: Any) -> Any:  # (2, 3, 4) @ (4, 5); (3, 4) @ (2, 4, 5)
        return T.matmul(x, w), T.matmul(x[0], y)
    return f, _randn(T, (2, 3, 4), (4, 5), (2, 4, 5))


def linear_with_without_bias(T: Any) -> Made:
    F = T.nn.functional

    def f(x: Any, w: Any, b: Any) -> Any:
        return F.linear(x, w) + F.linear(x, w, b) + F.linear(x[0], w, b)
    return f, _randn(T, (2, 3, 4), (5, 4), (5,))


def view_chain(T: Any) -> Made:
    def f(x: Any) -> Any:  # (B, S, H*D) -> heads and back
        h = x.view(2, 3, 2, 2).transpose(1, 2)  # (B, H, S, D)
        p = h.permute(0, 2, 1, 3).contiguous().reshape(2, 3, 4)
        return p + x.reshape(6, 4).view(2, 3, 4) + h.reshape(2, -1, 4)[:, :3]
    return f, _randn(T, (2, 3, 4))


def indexing_mixed(T: Any) -> Made:
    def f(x: Any, idx: Any) -> Any:  # x: (3, 4, 5)
        return (x[0, :, None, 1:3].sum() + x[..., -1].sum() + x[idx, 1].sum()
                + x[:, idx].sum() + x[1:, ::2, idx].sum() + x[x > 0].sum())
    return f, (T.randn(3, 4, 5), T.tensor([2, 0]))


def dtype_conversions(T: Any) -> Made:
    def f(x: Any, y: Any) -> Any:
        return (x.to(T.float16).to(T.float32) + x.to(y).to(T.bfloat16).float()
                + x.long().float() + x.bool().float() + x.type(T.float64).float()
                + x.to("cpu") + x.to(dtype=T.float32, copy=True))
    return f, _randn(T, (2, 3), (2, 3))


def reductions_keepdim(T: Any) -> Made:
    def f(x: Any) -> Any:
        return (x.var(-1, keepdim=True, unbiased=False) + x.std(1, keepdim=True)
                + x.max(dim=-1, keepdim=True).values + x.min(-1, keepdim=True)[0]
                + x.argmax(-1, keepdim=True) + x.norm(dim=-1, keepdim=True)
                + x.prod(-1, keepdim=True) + x.logsumexp(-1, keepdim=True))
    return f, _randn(T, (3, 4))


def cumsum_flip_sort(T: Any) -> Made:
    def f(probs: Any) -> Any:  # top-p's plumbing: sort, cumsum, mask, scatter back
        sorted_p, order = probs.sort(dim=-1, descending=True)
        cum = sorted_p.cumsum(dim=-1)
        sorted_p = sorted_p.masked_fill(cum - sorted_p > 0.9, 0.0)
        return T.empty_like(probs).scatter_(-1, order, sorted_p), probs.flip(-1)
    return f, (T.randn(2, 5).softmax(-1),)


def expand_repeat(T: Any) -> Made:
    def f(k: Any, b: Any) -> Any:  # GQA's repeat_kv: (B, Hkv, S, D) -> (B, Hkv*2, S, D)
        rep = k[:, :, None, :, :].expand(1, 2, 2, 3, 4).reshape(1, 4, 3, 4)
        return rep + b.expand_as(rep) + k.repeat(1, 2, 1, 1) + k.repeat_interleave(2, dim=1)
    return f, _randn(T, (1, 2, 3, 4), (1, 1, 3, 4))


def like_factories(T: Any) -> Made:
    def f(x: Any) -> Any:
        return (T.zeros_like(x) + T.ones_like(x) * 2 + T.full_like(x, 3.0)
                + x.new_zeros(2, 3) + x.new_ones((2, 3)) + x.new_full((2, 3), 4.0)
                + T.empty_like(x).fill_(1.0) + x.new_tensor([1.0, 2.0, 3.0]))
    return f, _randn(T, (2, 3))


def index_select_add(T: Any) -> Made:
    def f(x: Any, idx: Any, src: Any) -> Any:
        picked = T.index_select(x, 0, idx)
        x.index_add_(0, idx, src, alpha=2)
        return picked, x.index_fill(1, T.tensor([0]), -1.0)
    return f, (T.randn(4, 3), T.tensor([3, 1]), T.randn(2, 3))


def normalize_clamp(T: Any) -> Made:
    F = T.nn.functional

    def f(x: Any) -> Any:
        return F.normalize(x, dim=-1) + x.clamp(-0.5, 0.5) + x.clamp_min(0.1) + T.clamp(x, max=1)
    return f, _randn(T, (2, 3))


def silu_and_mul(T: Any) -> Made:
    F = T.nn.functional

    def f(x: Any) -> Any:  # (N, 2d) -> (N, d)
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]
    return f, _randn(T, (3, 8))


def masked_mean_pool(T: Any) -> Made:
    def f(h: Any, mask: Any) -> Any:  # h: (B, S, D), mask: (B, S) of 0/1
        m = mask.unsqueeze(-1).to(h.dtype)
        return (h * m).sum(dim=1) / m.sum(dim=1).clamp(min=1e-9)
    return f, (T.randn(2, 3, 4), T.tensor([[1, 1, 0], [1, 0, 0]]))


def addmm_baddbmm(T: Any) -> Made:
    def f(b: Any, x: Any, w: Any, bb: Any, p: Any, q: Any) -> Any:
        return T.addmm(b, x, w, beta=0.5, alpha=2.0), T.baddbmm(bb, p, q), T.bmm(p, q)
    return f, _randn(T, (4,), (3, 2), (2, 4), (2, 3, 3), (2, 3, 4), (2, 4, 3))


def dropout_eval_residual(T: Any) -> Made:
    F = T.nn.functional

    def f(x: Any, y: Any) -> Any:
        return F.dropout(x, 0.1, training=False) + y * F.sigmoid(x) - F.relu(-y).pow(2)
    return f, _randn(T, (2, 3), (2, 3))


def composite_builders(T: Any) -> Made:
    def f(a: Any, b: Any, x: Any, i: Any) -> Any:  # a: (3,), b: (2,), x: (2, 4), i: (2, 2)
        gx, gy = T.meshgrid(a, b, indexing="xy")
        return (T.outer(a, b) + gx.t() + gy.t(), T.isfinite(x), T.tensor_split(x, 3, 1),
                T.take_along_dim(x, i, 1), T.diag(x[:, :2]), T.tensor(x), T.as_tensor(x))
    return f, (T.randn(3), T.randn(2), T.randn(2, 4), T.tensor([[0, 1], [1, 0]]))


CASES: dict[str, Case] = {c.__name__: c for c in (
    swiglu_mlp, gelu_mlp_bias, attention_triu_mask, attention_arange_mask, rmsnorm_llama,
    fused_add_rmsnorm, rotary_neox_positions, rotary_complex, kv_cache_slice_write,
    kv_cache_flat_index_copy, inplace_chain, layer_norm_manual, layer_norm_functional,
    softmax_dims, embedding_positions, topk_sampling, greedy_logprobs, gather_scatter,
    cat_stack_split_chunk, unbind_unflatten, masked_fill_variants, where_variants,
    matmul_chains, matmul_broadcast, linear_with_without_bias, view_chain, indexing_mixed,
    dtype_conversions, reductions_keepdim, cumsum_flip_sort, expand_repeat, like_factories,
    index_select_add, normalize_clamp, silu_and_mul, masked_mean_pool, addmm_baddbmm,
    dropout_eval_residual, composite_builders)}
