"""torch.nn.functional.scaled_dot_product_attention, launched as torch's CUDA build would.

torch picks the first backend whose constraints the call meets (sm80+ GPU, inference):
  flash      fp16/bf16, no attn_mask, 4-D inputs, equal head dims <= 256, GQA allowed, no causal
             mask on a non-square (L != S) problem. Launches one
             `_scaled_dot_product_flash_attention`, after one `constant_pad_nd` per input whose
             head dim is not a multiple of 8.
  efficient  fp32/fp16/bf16, any mask, 4-D inputs, equal head counts, q/k head dims equal and
             aligned (8 elements for 16-bit, 4 for fp32). A bool mask first becomes an additive
             one (scalar_tensor, scalar_tensor, where); a mask whose strides are not multiples
             of 8 is padded (constant_pad_nd) and sliced back. Then one
             `_scaled_dot_product_efficient_attention`.
  math       everything else (3-D inputs, GQA with a mask, fp64 ...): the composite's ops,
             one launch each (see `_math`).
This is torch's default order (sdp_utils.cpp). Not modelled: recent torch tries
`_scaled_dot_product_cudnn_attention` first on sm90/sm100 GPUs when the runtime cuDNN is newer
than 9.15 (fp16/bf16 only, GQA and masks allowed), unless TORCH_CUDNN_SDPA_DEPRIORITIZED is set.
The CPU build shows `_scaled_dot_product_flash_attention_for_cpu` for most calls instead; we
always follow the CUDA rules above, on either device. Fully masked rows give zeros (torch's safe
softmax).
"""

from __future__ import annotations

import math
import warnings

from fake_torch._dtype import CPP_NAME, SCALAR_NAME, bfloat16, bool_, dtype, float16, float32
from fake_torch._factories import ones
from fake_torch._generator import generator_for
from fake_torch._kernels._common import broadcast_shapes, launch, new_tensor
from fake_torch._kernels.cast import scalar_tensor
from fake_torch._kernels.compare import eq, where
from fake_torch._kernels.reduction import all as all_
from fake_torch._kernels.reduction_scan import softmax
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import EXTERN, REDUCTION, aten_op, op
from fake_torch._tensor import Tensor
from fake_torch.backends import _sdp
from fake_torch.nn import _fused_kernels
from fake_torch.nn._pad import constant_pad_nd

aten_op("_safe_softmax", REDUCTION)  # the math backend's softmax (a row of -inf gives 0s):
# ATen's composite, launched as its five ops (_safe_softmax below)

_HALF = (float16, bfloat16)
_MEM_EFF_ALIGNMENT = 8  # attention.cpp preprocess_mask: mask strides must be multiples of 8
_warned_mask_alignment = False


@op(EXTERN, namespace="torch.nn.functional", aten=("_scaled_dot_product_flash_attention",
                                                   "_scaled_dot_product_efficient_attention"))
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over (..., heads, seq, head_dim).
    query (N, ..., Hq, L, E), key (N, ..., H, S, E), value (N, ..., H, S, Ev) -> (N, ..., Hq,
    L, Ev); with enable_gqa, Hq may be a multiple of H."""
    _check_inputs(query, key, value, attn_mask, dropout_p, enable_gqa)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    backend = _cuda_backend(query, key, value, attn_mask, is_causal, enable_gqa)
    if backend == "math":
        mask = _additive(attn_mask, query.dtype) if attn_mask is not None else None
        return _math(query, key, value, mask, dropout_p, is_causal, scale, enable_gqa)
    groups = query.shape[1] // key.shape[1]
    if backend == "flash":
        return _flash(query, key, value, dropout_p, is_causal, scale, groups)
    mask = _additive(attn_mask, query.dtype) if attn_mask is not None else None
    return _efficient(query, key, value, mask, dropout_p, is_causal, scale)


@register_meta("torch.nn.functional.scaled_dot_product_attention")
def _sdpa_rule(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
               dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
               enable_gqa: bool = False) -> TensorMeta:
    """The backend the kernel picks, then its output: math's (a contiguous batched product,
    the mask broadcast into the scores), flash's (laid out like the query, its head dim
    padded to 8 then cut) or efficient's ((B, L, H, Ev) memory seen as (B, H, L, Ev))."""
    _check_inputs(query, key, value, attn_mask, dropout_p, enable_gqa)
    backend = _cuda_backend(query, key, value, attn_mask, is_causal, enable_gqa)
    q, k, v = tuple(query.shape), tuple(key.shape), tuple(value.shape)
    if backend == "math":
        if is_causal and attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        if enable_gqa and len(q) >= 3 and q[-3] != k[-3]:  # k, v repeated to q's heads
            k, v = (*k[:-3], q[-3], *k[-2:]), (*v[:-3], q[-3], *v[-2:])
        from fake_torch._kernels.linalg import matmul_shape

        scores = matmul_shape(q, (*k[:-2], k[-1], k[-2]))
        if attn_mask is not None:
            scores = tuple(broadcast_shapes(scores, attn_mask.shape))
        shape = matmul_shape(scores, v)
        return TensorMeta(shape, query.dtype, contiguous_strides(shape))
    b, h, seq_q, e = q
    if backend == "flash":  # (a padded query is a fresh contiguous tensor)
        dense = e % 8 != 0 or query.is_contiguous()
        padded = e + (8 - e % 8) % 8
        if dense:
            strides = contiguous_strides((b, h, seq_q, padded))
        else:
            s = contiguous_strides((b, seq_q, h, padded))
            strides = (s[0], s[2], s[1], s[3])
        return TensorMeta((b, h, seq_q, e), query.dtype, strides)
    s = contiguous_strides((b, seq_q, h, v[-1]))
    return TensorMeta((b, h, seq_q, v[-1]), query.dtype, (s[0], s[2], s[1], s[3]))


def _check_inputs(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float,
                  enable_gqa: bool) -> None:
    """torch's validate_sdpa_input, with its texts."""
    if not q.dtype is k.dtype is v.dtype:
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {CPP_NAME[q.dtype]} key.dtype: "
                           f"{CPP_NAME[k.dtype]} and value.dtype: {CPP_NAME[v.dtype]} "
                           "instead.")
    if not q.device == k.device == v.device:
        raise RuntimeError("Expected query, key, and value to have the same device type, but "
                           f"got query.device: {q.device} key.device: {k.device} and "
                           f"value.device: {v.device} instead.")
    if min(q.dim(), k.dim(), v.dim()) < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {q.dim()} key.dim: {k.dim()} and value.dim: "
                           f"{v.dim()} instead.")
    if mask is not None and mask.dtype not in (bool_, float32, q.dtype):
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {CPP_NAME[mask.dtype]} and  "
                           f"query.dtype: {CPP_NAME[q.dtype]} instead.")
    if not q.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {SCALAR_NAME[q.dtype]}")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa and q.dim() >= 3 and (q.shape[-3] % k.shape[-3] or
                                        q.shape[-3] % v.shape[-3]):
        raise RuntimeError("Number of heads in key and value must divide the number of heads "
                           "in ")


def _cuda_backend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, is_causal: bool,
                  enable_gqa: bool) -> str:
    """The first of flash / efficient / math whose constraints hold (sdp_utils.cpp, sm80+)."""
    if not q.dim() == k.dim() == v.dim() == 4:
        return _math_or_none()
    if any(t.stride(-1) != 1 or t.shape[-2] == 0 for t in (q, k, v)):
        return _math_or_none()
    if not q.shape[0] == k.shape[0] == v.shape[0]:
        return _math_or_none()
    same_heads = q.shape[1] == k.shape[1] == v.shape[1]
    gqa = enable_gqa and k.shape[1] == v.shape[1] and q.shape[1] % k.shape[1] == 0
    head_dim = q.shape[-1]
    align = 8 if q.dtype in _HALF else 4
    fits = {
        "flash": (q.dtype in _HALF and mask is None and (same_heads or gqa)
                  and head_dim == k.shape[-1] == v.shape[-1] <= 256
                  and not (is_causal and q.shape[-2] != k.shape[-2])),
        "mem_efficient": (q.dtype in (*_HALF, float32) and same_heads and head_dim == k.shape[-1]
                          and head_dim % align == 0 and v.shape[-1] % align == 0),
        "math": True,
    }
    for backend in _sdp.priority_order():  # (torch.nn.attention.sdpa_kernel's set_priority)
        name = _PICKED.get(backend)
        if name is not None and _sdp.enabled(name) and fits[name]:
            return "efficient" if name == "mem_efficient" else name
    raise RuntimeError("No available kernel. Aborting execution.")


_PICKED = {_sdp.SDPBackend.FLASH_ATTENTION: "flash",
           _sdp.SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", _sdp.SDPBackend.MATH: "math"}


def _math_or_none() -> str:
    if _sdp.enabled("math"):
        return "math"
    raise RuntimeError("No available kernel. Aborting execution.")


def _scalar_tensor(value: float, dt: dtype, like: Tensor) -> Tensor:
    out = new_tensor((), dt, like.device)
    launch("scalar_tensor", _fused_kernels.scalar_tensor_kernel, out, (), {"value": value})
    return out


def _additive(mask: Tensor, dt: dtype) -> Tensor:
    """A bool mask (True = attend) as an additive float mask: where(mask, 0, -inf)."""
    if mask.dtype is not bool_:
        return mask
    neg_inf = _scalar_tensor(-math.inf, dt, mask)
    zero = _scalar_tensor(0.0, dt, mask)
    return zero.where(mask, neg_inf)


def _philox(dropout_p: float, like: Tensor) -> tuple[object, int]:
    if dropout_p <= 0.0:
        return None, 0
    return generator_for(None, like.device).philox_args()


def _pad_head_dim(t: Tensor) -> Tensor:
    """attention.cpp pad_last_dim<8>: flash wants head dims that are multiples of 8."""
    rem = t.shape[-1] % 8
    return t if rem == 0 else constant_pad_nd(t, [0, 8 - rem], 0)


def _flash(q: Tensor, k: Tensor, v: Tensor, dropout_p: float, is_causal: bool, scale: float,
           groups: int) -> Tensor:
    head_dim = q.shape[-1]
    qp, kp, vp = _pad_head_dim(q), _pad_head_dim(k), _pad_head_dim(v)
    b, h, seq_q, e = qp.shape
    # flash allocates its output like the (B, L, H, E)-transposed query (empty_like): a
    # contiguous query gives a contiguous output, a (B, L, H, E)-laid-out one a transposed view
    if qp.is_contiguous():
        out = new_tensor((b, h, seq_q, e), q.dtype, q.device)
    else:
        out = new_tensor((b, seq_q, h, e), q.dtype, q.device).transpose(1, 2)
    philox, intra = _philox(dropout_p, q)
    launch("_scaled_dot_product_flash_attention", _fused_kernels.attention_kernel, out,
           (qp, kp, vp, None, philox), {"scale": scale, "is_causal": is_causal,
                                        "groups": groups, "dropout_p": dropout_p,
                                        "intra": intra})
    return out if e == head_dim else out[..., :head_dim]


def _efficient(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float,
               is_causal: bool, scale: float) -> Tensor:
    if mask is not None:
        mask = _aligned_mask(mask).expand(q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    b, h, seq_q, _ = q.shape  # the kernel writes (B, L, H, Ev) memory; we return (B, H, L, Ev)
    out = new_tensor((b, seq_q, h, v.shape[-1]), q.dtype, q.device).transpose(1, 2)
    philox, intra = _philox(dropout_p, q)
    launch("_scaled_dot_product_efficient_attention", _fused_kernels.attention_kernel, out,
           (q, k, v, mask, philox), {"scale": scale, "is_causal": is_causal, "groups": 1,
                                     "dropout_p": dropout_p, "intra": intra})
    return out


def _aligned_mask(mask: Tensor) -> Tensor:
    """attention.cpp preprocess_mask: pad the last dim so every stride is a multiple of 8,
    then slice back to the original size (one constant_pad_nd launch)."""
    global _warned_mask_alignment
    strides = mask.stride()
    if all(s % _MEM_EFF_ALIGNMENT == 0 for s in strides[:-1]) and strides[-1] == 1:
        return mask
    if not _warned_mask_alignment:
        _warned_mask_alignment = True
        warnings.warn("Memory efficient kernel not used because:Memory Efficient attention "
                      f"requires attn_mask to be aligned to, {_MEM_EFF_ALIGNMENT} elements. "
                      "Prior to calling SDPA, pad the last dimension of the attn_mask to be at "
                      f"least a multiple of {_MEM_EFF_ALIGNMENT} and then slice the attn_mask to "
                      "the original size.", stacklevel=4)
    size = mask.shape[-1]
    padded = constant_pad_nd(mask, [0, _MEM_EFF_ALIGNMENT - size % _MEM_EFF_ALIGNMENT], 0)
    return padded[..., :size]


def _math(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float,
          is_causal: bool, scale: float, enable_gqa: bool) -> Tensor:
    """torch's _scaled_dot_product_attention_math, op for op: [_to_copy x3 for 16-bit] mul
    [causal: ones tril scalar_tensor scalar_tensor where] [GQA: clone clone] mul bmm [add]
    _safe_softmax [native_dropout] [_to_copy] bmm [_to_copy]."""
    if is_causal and mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    origin = q.dtype
    if origin in _HALF:  # the math path keeps q, k, v in float32 for accuracy
        q, k, v = q.to(float32), k.to(float32), v.to(float32)
    factor = math.sqrt(scale)  # scale split between q and k, as torch does
    q = q * factor
    if is_causal:
        causal = _tril(ones(q.shape[-2], k.shape[-2], dtype=bool_, device=q.device))
        mask = _additive(causal, origin)
    if enable_gqa and q.dim() >= 3 and q.shape[-3] != k.shape[-3]:
        k, v = _repeat_heads(k, q.shape[-3]), _repeat_heads(v, q.shape[-3])
    scores = q @ (k.transpose(-2, -1) * factor)
    if mask is not None:
        scores = scores + mask
    attn = _safe_softmax(scores)
    if dropout_p > 0.0:
        from fake_torch.nn.functional import dropout

        attn = dropout(attn, dropout_p)
    if origin in _HALF:
        attn.to(origin)  # torch also returns the weights in the input dtype: one more copy
    out: Tensor = attn @ v
    return out.to(origin) if origin in _HALF else out


def _safe_softmax(scores: Tensor) -> Tensor:
    """ATen's _safe_softmax, a composite on every backend (decompositions.py's safe_softmax):
    softmax, then zeros for the rows that were all -inf: _softmax, eq, all, scalar_tensor,
    where, five launches (an H200 ran transformers' eager decode step 4 launches per layer
    above one softmax kernel)."""
    out = softmax(scores, -1)
    masked_rows = all_(eq(scores, -math.inf), -1, keepdim=True)
    zero = scalar_tensor(0.0, dtype=out.dtype, device=out.device)
    result: Tensor = where(masked_rows, zero, out)
    return result


def _tril(x: Tensor) -> Tensor:
    out = new_tensor(x.shape, x.dtype, x.device)
    launch("tril", _fused_kernels.tril_kernel, out, (x,), {"diagonal": 0})
    return out


def _repeat_heads(t: Tensor, num_heads: int) -> Tensor:
    """repeat_interleave over the head dim: (..., H, S, E) -> (..., num_heads, S, E), as
    torch does it: unsqueeze, expand, one clone into contiguous memory, view."""
    *batch, h, s, e = t.shape
    groups = num_heads // h
    expanded = t.unsqueeze(-3).expand(*batch, h, groups, s, e)
    return expanded.contiguous().view(*batch, num_heads, s, e)
