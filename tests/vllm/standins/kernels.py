"""Stand-ins for vLLM's fused CUDA kernels that its compilation passes match patterns against.

Each op is defined with the schema vLLM's csrc/torch_bindings.cpp gives it (the `Tensor!`
arguments are the ones the kernel writes, which is what lets `auto_functionalized` take it) and
a plain-torch body computing what the kernel computes, written here from the kernels' documented
meaning: RMS norm, fused residual add + RMS norm, SiLU-and-mul, rotary embedding and the fp8
quantizations (value / scale, clamped to the fp8 range). Variants no test here runs raise
NotImplementedError naming the kernel.
"""

from __future__ import annotations

from typing import Any

# name -> vLLM's schema for it (the argument order its vllm/_custom_ops.py calls with)
SCHEMAS = {
    "rms_norm": "rms_norm(Tensor! result, Tensor input, Tensor weight, float epsilon) -> ()",
    "fused_add_rms_norm": ("fused_add_rms_norm(Tensor! input, Tensor! residual, Tensor weight, "
                           "float epsilon) -> ()"),
    "fused_qk_norm_rope": ("fused_qk_norm_rope(Tensor! qkv, int num_heads_q, int num_heads_k, "
                           "int num_heads_v, int head_dim, float eps, Tensor q_weight, "
                           "Tensor k_weight, Tensor cos_sin_cache, bool is_neox, "
                           "Tensor position_ids) -> ()"),
    "rms_norm_static_fp8_quant": ("rms_norm_static_fp8_quant(Tensor! result, Tensor input, "
                                  "Tensor weight, Tensor scale, float epsilon) -> ()"),
    "fused_add_rms_norm_static_fp8_quant": (
        "fused_add_rms_norm_static_fp8_quant(Tensor! result, Tensor input, Tensor! residual, "
        "Tensor weight, Tensor scale, float epsilon) -> ()"),
    "rms_norm_dynamic_per_token_quant": (
        "rms_norm_dynamic_per_token_quant(Tensor! result, Tensor input, Tensor weight, "
        "Tensor! scale, float epsilon, Tensor? scale_ub, Tensor!? residual) -> ()"),
    "rms_norm_per_block_quant": (
        "rms_norm_per_block_quant(Tensor! result, Tensor input, Tensor weight, Tensor! scale, "
        "float epsilon, Tensor? scale_ub, Tensor!? residual, int group_size, "
        "bool is_scale_transposed) -> ()"),
    "rotary_embedding": ("rotary_embedding(Tensor positions, Tensor! query, Tensor!? key, "
                         "int head_size, Tensor cos_sin_cache, bool is_neox) -> ()"),
    "silu_and_mul": "silu_and_mul(Tensor! result, Tensor input) -> ()",
    "silu_and_mul_quant": "silu_and_mul_quant(Tensor! result, Tensor input, Tensor scale) -> ()",
    "silu_and_mul_per_block_quant": (
        "silu_and_mul_per_block_quant(Tensor! out, Tensor input, Tensor! scales, int group_size, "
        "Tensor? scale_ub=None, bool is_scale_transposed=False) -> ()"),
    "static_scaled_fp8_quant": ("static_scaled_fp8_quant(Tensor! result, Tensor input, "
                                "Tensor scale, (int, int)? group_shape=None) -> ()"),
    "dynamic_scaled_fp8_quant": ("dynamic_scaled_fp8_quant(Tensor! result, Tensor input, "
                                 "Tensor! scale) -> ()"),
    "dynamic_per_token_scaled_fp8_quant": (
        "dynamic_per_token_scaled_fp8_quant(Tensor! result, Tensor input, Tensor! scale, "
        "Tensor? scale_ub) -> ()"),
    "per_token_group_fp8_quant": (
        "per_token_group_fp8_quant(Tensor input, Tensor! output_q, Tensor! output_s, "
        "int group_size, float eps, float fp8_min, float fp8_max, bool scale_ue8m0, "
        "bool dummy_is_scale_transposed, bool dummy_is_tma_aligned) -> ()"),
}


def _fp8_max(dtype: Any) -> float:
    import torch

    return float(torch.finfo(dtype).max)


def _quantize(result: Any, x: Any, scale: Any) -> None:
    """result = clamp(x / scale, -fp8_max, fp8_max) in result's fp8 dtype (x in float32)."""
    import torch

    if not result.dtype.is_floating_point:
        raise NotImplementedError("torch.ops._C quantization to a non-fp8 dtype "
                                  f"({result.dtype}): not part of this check")
    bound = _fp8_max(result.dtype)
    result.copy_(torch.clamp(x / scale, -bound, bound).to(result.dtype))


def _normed(x: Any, weight: Any, epsilon: float, dtype: Any) -> Any:
    """RMS norm as vLLM's kernel does it: in float32, back to the input dtype, times weight."""
    import torch

    x = x.float()
    inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + epsilon)
    return (x * inv_rms).to(dtype) * weight


def rms_norm(result: Any, input: Any, weight: Any, epsilon: float) -> None:
    result.copy_(_normed(input, weight, epsilon, input.dtype))


def fused_add_rms_norm(input: Any, residual: Any, weight: Any, epsilon: float) -> None:
    residual.add_(input)  # residual <- input + residual; input <- rms_norm(residual)
    input.copy_(_normed(residual, weight, epsilon, input.dtype))


def rms_norm_static_fp8_quant(result: Any, input: Any, weight: Any, scale: Any,
                              epsilon: float) -> None:
    _quantize(result, _normed(input, weight, epsilon, input.dtype).float(), scale)


def fused_add_rms_norm_static_fp8_quant(result: Any, input: Any, residual: Any, weight: Any,
                                        scale: Any, epsilon: float) -> None:
    residual.add_(input)
    _quantize(result, _normed(residual, weight, epsilon, input.dtype).float(), scale)


def _per_token_scale(x: Any, scale_ub: Any, fp8_dtype: Any) -> Any:
    """Per row: max |x| (capped by scale_ub) / fp8_max, floored as vLLM's kernel floors it."""
    import torch

    amax = x.abs().amax(dim=-1, keepdim=True)
    if scale_ub is not None:
        amax = torch.minimum(amax, scale_ub)
    bound = _fp8_max(fp8_dtype)
    return torch.clamp(amax / bound, min=1.0 / (bound * 512.0))


def rms_norm_dynamic_per_token_quant(result: Any, input: Any, weight: Any, scale: Any,
                                     epsilon: float, scale_ub: Any, residual: Any) -> None:
    if residual is not None:
        residual.add_(input)
        input = residual
    normed = _normed(input, weight, epsilon, input.dtype).float()
    scale.copy_(_per_token_scale(normed, scale_ub, result.dtype))
    _quantize(result, normed, scale)


def silu_and_mul(result: Any, input: Any) -> None:
    import torch

    d = input.shape[-1] // 2
    result.copy_(torch.nn.functional.silu(input[..., :d]) * input[..., d:])


def silu_and_mul_quant(result: Any, input: Any, scale: Any) -> None:
    import torch

    d = input.shape[-1] // 2
    _quantize(result, (torch.nn.functional.silu(input[..., :d]) * input[..., d:]).float(),
              scale)


def static_scaled_fp8_quant(result: Any, input: Any, scale: Any,
                            group_shape: Any = None) -> None:
    """One scale per (rows x cols) group of the 2-D input [M, N]: group_shape (rows, cols),
    -1 meaning the whole extent; a one-element scale is per-tensor."""
    if scale.numel() == 1:
        _quantize(result, input.float(), scale)
        return
    if group_shape is None:
        raise NotImplementedError("torch.ops._C.static_scaled_fp8_quant with a many-element "
                                  "scale and no group_shape: not part of this check")
    x = input.float().reshape(-1, input.shape[-1])
    m, n = x.shape
    rows, cols = (g if g > 0 else whole for g, whole in zip(group_shape, (m, n), strict=True))
    per_group = scale.reshape(m // rows, 1, n // cols, 1)
    full = per_group.expand(m // rows, rows, n // cols, cols).reshape(m, n)
    _quantize(result, x.reshape(input.shape), full.reshape(input.shape))


def dynamic_scaled_fp8_quant(result: Any, input: Any, scale: Any) -> None:
    x = input.float()
    scale.copy_((x.abs().amax() / _fp8_max(result.dtype)).reshape(scale.shape))
    _quantize(result, x, scale)


def dynamic_per_token_scaled_fp8_quant(result: Any, input: Any, scale: Any,
                                       scale_ub: Any) -> None:
    x = input.float()
    scale.copy_(_per_token_scale(x, scale_ub, result.dtype))
    _quantize(result, x, scale)


def per_token_group_fp8_quant(input: Any, output_q: Any, output_s: Any, group_size: int,
                              eps: float, fp8_min: float, fp8_max: float, scale_ue8m0: bool,
                              dummy_is_scale_transposed: bool,
                              dummy_is_tma_aligned: bool) -> None:
    """One scale per group_size consecutive features of each token: max |x| of the group
    (at least eps) / fp8_max; output_s [..., features / group_size] (possibly a transposed
    view: written through its logical shape)."""
    import torch

    x = input.float()
    groups = x.reshape(*x.shape[:-1], x.shape[-1] // group_size, group_size)
    scale = torch.clamp(groups.abs().amax(dim=-1, keepdim=True), min=eps) / fp8_max
    if scale_ue8m0:  # an exponent-only scale: rounded up to a power of two
        scale = torch.pow(2.0, torch.ceil(torch.log2(scale)))
    q = torch.clamp(groups / scale, fp8_min, fp8_max).reshape(x.shape)
    output_q.copy_(q.to(output_q.dtype))
    output_s.copy_(scale.squeeze(-1))


def rotary_embedding(positions: Any, query: Any, key: Any, head_size: int,
                     cos_sin_cache: Any, is_neox: bool) -> None:
    """Rotate the first rot_dim features of each head of query (and key) by the angle of its
    token's position: cos_sin_cache[pos] = [cos | sin], rot_dim wide. NeoX style pairs feature
    i with i + rot_dim/2; GPT-J style pairs 2i with 2i + 1."""
    tokens = positions.numel()
    cos, sin = cos_sin_cache[positions.reshape(-1)].chunk(2, dim=-1)  # [tokens, rot_dim/2]
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    half = cos.shape[-1]
    for x in (query, key):
        if x is None:
            continue
        heads = x.view(tokens, -1, head_size)
        if is_neox:
            x1, x2 = heads[..., :half], heads[..., half:2 * half]
        else:
            x1, x2 = heads[..., 0:2 * half:2], heads[..., 1:2 * half:2]
        r1 = (x1.float() * cos - x2.float() * sin).to(x.dtype)
        r2 = (x2.float() * cos + x1.float() * sin).to(x.dtype)
        x1.copy_(r1)
        x2.copy_(r2)


def _refused(name: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"torch.ops._C.{name}: a kernel compiled into vLLM, not part "
                                  "of this check")
    return call


BODIES = {
    "rms_norm": rms_norm, "fused_add_rms_norm": fused_add_rms_norm,
    "rms_norm_static_fp8_quant": rms_norm_static_fp8_quant,
    "fused_add_rms_norm_static_fp8_quant": fused_add_rms_norm_static_fp8_quant,
    "rms_norm_dynamic_per_token_quant": rms_norm_dynamic_per_token_quant,
    "silu_and_mul": silu_and_mul, "silu_and_mul_quant": silu_and_mul_quant,
    "static_scaled_fp8_quant": static_scaled_fp8_quant,
    "dynamic_scaled_fp8_quant": dynamic_scaled_fp8_quant,
    "dynamic_per_token_scaled_fp8_quant": dynamic_per_token_scaled_fp8_quant,
    "rotary_embedding": rotary_embedding,
    "per_token_group_fp8_quant": per_token_group_fp8_quant,
    "fused_qk_norm_rope": _refused("fused_qk_norm_rope"),
    "rms_norm_per_block_quant": _refused("rms_norm_per_block_quant"),
    "silu_and_mul_per_block_quant": _refused("silu_and_mul_per_block_quant"),
}


def _no_output(*args: Any, **kwargs: Any) -> None:
    """Fake impl: these kernels only write into their `Tensor!` arguments, returning nothing."""


def register(lib: Any) -> None:
    """Define every kernel on the `_C` library fragment `lib`, with its body and a fake impl."""
    import torch

    for name, schema in SCHEMAS.items():
        lib.define(schema)
        lib.impl(name, BODIES[name], "CompositeExplicitAutograd")
        torch.library.register_fake(f"_C::{name}", _no_output, lib=lib)
