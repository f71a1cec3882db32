"""torch.nn.functional: the layers' math as functions.

Launch counts follow torch's CUDA eager path, op by op:
  linear            2-D input with bias: one `addmm`; contiguous N-D input with bias: views
                    around one `addmm`; otherwise `matmul` (one `mm`/`bmm`) then `add_(bias)`
  embedding         one `embedding` (plus one `embedding_renorm_` with max_norm)
  layer_norm        one `native_layer_norm` (after a `clone` of a non-contiguous cuda input)
  rms_norm          one fused `_fused_rms_norm` on cuda when weight is None or of input's
                    dtype; else (cpu, whose build has no fused kernel, or mixed dtypes, which
                    warn once) the ops torch's composite runs: [_to_copy] pow mean add_ rsqrt
                    mul [mul] [_to_copy]
  softmax           one `_softmax` ([_to_copy] first when `dtype` is given)
  dropout1d/2d/3d   training: bernoulli_, div_ and mul of channel noise (nn/_feature_dropout.py)
  dropout           training: one fused `native_dropout` (in place: bernoulli_, div_, mul_;
                    p=1: zeros, mul); eval, p=0 or an empty input: nothing
  pad               one `constant_pad_nd` (or `reflection_padNd` / `replication_padNd`)
  normalize         linalg_vector_norm, clamp_min, div
  hardswish, leaky_relu, hardtanh, relu6, mish, prelu, rrelu    one launch each
                    (fake_torch/nn/_activations.py)
  elu, selu, celu, glu, hardsigmoid, logsigmoid, hardshrink, softshrink: one launch each;
  softsign, tanhshrink, softmin: torch's composites (fake_torch/nn/_activations_extra.py)
  the losses        see fake_torch/nn/_losses.py
  conv1d, conv2d, conv3d    (torch.conv1d, ...) see fake_torch/_kernels/conv.py
  conv_transpose1d/2d/3d    (torch.conv_transpose1d, ...) see _kernels/conv_transpose.py
  batch_norm        see fake_torch/_kernels/batch_norm.py
  group_norm        [`clone` of a strided input] one `native_group_norm` (nn/_group_norm.py)
  instance_norm     a batch norm over (1, N * C, *), see nn/_instance_norm.py
  pixel_shuffle, pixel_unshuffle   (torch.pixel_shuffle, ...) one `clone` (nn/_pixel_shuffle.py)
  the 2-D pools     see fake_torch/_kernels/pooling.py
  cosine_similarity, pairwise_distance   ATen's composites (nn/_distance.py)
  interpolate       one upsample op, or adaptive_avg_pool1d / 2d for 'area' (nn/_interpolate.py)
  scaled_dot_product_attention   one fused kernel when torch's CUDA build has one for the call,
                    else the math composite's ops (see _attention.py)
Launches are counted on device="cuda" only, as everywhere in fake_torch. A fused norm counts
once, as one aten op, although an H200 (torch 2.11) ran rms_norm's in two kernels for float64
and in none for an empty input. Both norms copy a non-contiguous cuda input first (one `clone`),
as the H200 did.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import (
    CPP_NAME,
    SCALAR_NAME,
    bool_,
    dtype,
    finfo,
    float32,
    float64,
    int32,
    int64,
)
from fake_torch._factories import empty_like, zeros
from fake_torch._generator import generator_for
from fake_torch._kernels import pointwise_math as _pointwise_math
from fake_torch._kernels._common import broadcast_shapes, common_device, launch, new_tensor
from fake_torch._kernels._elementwise import (
    elementwise_meta,
    layout_of,
    maybe_inplace_meta,
    written_meta,
)
from fake_torch._kernels._strides import contiguous_strides, format_strides, numel
from fake_torch._kernels.batch_norm import batch_norm as batch_norm
from fake_torch._kernels.conv import conv1d as conv1d
from fake_torch._kernels.conv import conv2d as conv2d
from fake_torch._kernels.conv import conv3d as conv3d
from fake_torch._kernels.conv_transpose import conv_transpose1d as conv_transpose1d
from fake_torch._kernels.conv_transpose import conv_transpose2d as conv_transpose2d
from fake_torch._kernels.conv_transpose import conv_transpose3d as conv_transpose3d
from fake_torch._kernels.pooling import adaptive_avg_pool2d as adaptive_avg_pool2d
from fake_torch._kernels.pooling import avg_pool2d as avg_pool2d
from fake_torch._kernels.pooling import max_pool2d as max_pool2d
from fake_torch._kernels.pooling import max_pool2d_with_indices as max_pool2d_with_indices
from fake_torch._memory_format import preserve_format
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, EXTERN, POINTWISE, RANDOM, REDUCTION, aten_op, exports, op
from fake_torch._tensor import Tensor
from fake_torch._torch_device import device
from fake_torch.nn import _fused_kernels
from fake_torch.nn._activations import hardswish as hardswish
from fake_torch.nn._activations import hardtanh as hardtanh
from fake_torch.nn._activations import hardtanh_ as hardtanh_
from fake_torch.nn._activations import leaky_relu as leaky_relu
from fake_torch.nn._activations import leaky_relu_ as leaky_relu_
from fake_torch.nn._activations import mish as mish
from fake_torch.nn._activations import prelu as prelu
from fake_torch.nn._activations import relu6 as relu6
from fake_torch.nn._activations import rrelu as rrelu
from fake_torch.nn._activations import rrelu_ as rrelu_
from fake_torch.nn._activations import softplus as softplus
from fake_torch.nn._activations import threshold as threshold
from fake_torch.nn._activations import threshold_ as threshold_
from fake_torch.nn._activations_extra import celu as celu
from fake_torch.nn._activations_extra import celu_ as celu_
from fake_torch.nn._activations_extra import elu as elu
from fake_torch.nn._activations_extra import elu_ as elu_
from fake_torch.nn._activations_extra import glu as glu
from fake_torch.nn._activations_extra import hardshrink as hardshrink
from fake_torch.nn._activations_extra import hardsigmoid as hardsigmoid
from fake_torch.nn._activations_extra import logsigmoid as logsigmoid
from fake_torch.nn._activations_extra import selu as selu
from fake_torch.nn._activations_extra import selu_ as selu_
from fake_torch.nn._activations_extra import softmin as softmin
from fake_torch.nn._activations_extra import softshrink as softshrink
from fake_torch.nn._activations_extra import softsign as softsign
from fake_torch.nn._activations_extra import tanhshrink as tanhshrink
from fake_torch.nn._attention import scaled_dot_product_attention as scaled_dot_product_attention
from fake_torch.nn._distance import cosine_similarity as cosine_similarity
from fake_torch.nn._distance import pairwise_distance as pairwise_distance
from fake_torch.nn._feature_dropout import dropout1d as dropout1d
from fake_torch.nn._feature_dropout import dropout2d as dropout2d
from fake_torch.nn._feature_dropout import dropout3d as dropout3d
from fake_torch.nn._group_norm import group_norm as group_norm
from fake_torch.nn._instance_norm import instance_norm as instance_norm
from fake_torch.nn._interpolate import adaptive_avg_pool1d as adaptive_avg_pool1d
from fake_torch.nn._interpolate import interpolate as interpolate
from fake_torch.nn._interpolate import upsample as upsample
from fake_torch.nn._interpolate import upsample_bilinear as upsample_bilinear
from fake_torch.nn._interpolate import upsample_nearest as upsample_nearest
from fake_torch.nn._losses import (
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from fake_torch.nn._losses import cross_entropy as cross_entropy
from fake_torch.nn._losses import huber_loss as huber_loss
from fake_torch.nn._losses import l1_loss as l1_loss
from fake_torch.nn._losses import mse_loss as mse_loss
from fake_torch.nn._losses import nll_loss as nll_loss
from fake_torch.nn._losses import smooth_l1_loss as smooth_l1_loss
from fake_torch.nn._names import typename
from fake_torch.nn._one_hot import one_hot as one_hot
from fake_torch.nn._pad import pad as pad
from fake_torch.nn._pixel_shuffle import pixel_shuffle as pixel_shuffle
from fake_torch.nn._pixel_shuffle import pixel_unshuffle as pixel_unshuffle
from fake_torch.nn._unfold import unfold as unfold

# --- linear and embedding ---------------------------------------------------------------------


@op(COMPOSITE, namespace="torch.nn.functional")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = input @ weight.T + bias: (*, in) x (out, in) -> (*, out), as torch's at::linear."""
    if input.dim() == 2 and bias is not None:
        return bias.addmm(input, weight.t())  # the fused GEMM + bias: one launch
    if bias is not None and input.is_contiguous() and (input.dim() == 3 or bias.dim() == 1):
        flat = input.reshape(-1, input.shape[-1])  # a view: contiguous input folds for free
        out = bias.addmm(flat, weight.t())
        return out.view(*input.shape[:-1], out.shape[-1])
    out = input.matmul(weight.t())
    if bias is not None:
        out.add_(bias)  # torch adds the bias in place after the GEMM
    return out


@register_meta("torch.nn.functional.linear")
def _linear_rule(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> TensorMeta:
    """Every path (addmm, addmm over folded rows, matmul then add_) ends in a fresh contiguous
    tensor: matmul's with the transposed weight, the bias broadcast into it."""
    from fake_torch._kernels import linalg

    w = tuple(weight.shape)
    if input.dim() == 0 or weight.dim() == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.dim()}D and {weight.dim()}D")
    if input.dtype is not weight.dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                           f"{input.dtype} and {weight.dtype}")
    shape = linalg.matmul_shape(tuple(input.shape), w[::-1] if len(w) == 2 else w)
    if bias is not None and tuple(broadcast_shapes(shape, bias.shape)) != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(shape, bias.shape))}")
    return TensorMeta(shape, input.dtype, contiguous_strides(shape))


@op(POINTWISE, namespace="torch.nn.functional", aten=("embedding",))
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` (num_embeddings, dim) at integer `input`: (*) -> (*, dim)."""
    _check_embedding(input, weight, padding_idx)
    dev = common_device(weight, input)
    if max_norm is not None:  # renormalise the looked-up rows of weight in place first
        input = input.contiguous()
        launch("embedding_renorm_", _fused_kernels.embedding_renorm_kernel, weight, (input,),
               {"max_norm": float(max_norm), "norm_type": float(norm_type)}, dev=dev)
    out = new_tensor((*input.shape, weight.shape[1]), weight.dtype, dev)
    launch("embedding", _fused_kernels.embedding_kernel, out, (weight, input))
    return out


def _check_embedding(input: Tensor, weight: Tensor, padding_idx: int | None) -> None:
    if padding_idx is not None:
        if (padding_idx > 0 and padding_idx >= weight.size(0)) or (
                padding_idx < 0 and padding_idx < -weight.size(0)):
            raise AssertionError("Padding_idx must be within num_embeddings")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (int64, int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{typename(input)} instead (while checking arguments for "
                           "embedding)")


# --- activations ------------------------------------------------------------------------------


@op(COMPOSITE, namespace="torch.nn.functional")
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"relu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.relu_() if inplace else input.relu()


@register_meta("torch.nn.functional.relu")
def _relu_rule(input: Tensor, inplace: bool = False) -> Output:
    if not isinstance(input, Tensor):
        raise TypeError(f"relu(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return call_rule("torch.relu_" if inplace else "torch.relu", input)


@op(COMPOSITE, namespace="torch.nn.functional")
def relu_(input: Tensor) -> Tensor:
    return input.relu_()


@register_meta("torch.nn.functional.relu_")
def _relu__rule(input: Tensor) -> Output:
    return call_rule("torch.relu_", input)


@op(POINTWISE, namespace="torch.nn.functional", aten=("silu", "silu_"))
def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x): one `silu` launch (`silu_` in place)."""
    return _pointwise_math.silu(input, inplace=inplace)


@op(POINTWISE, namespace="torch.nn.functional", aten=("gelu",))
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """One `gelu` launch; approximate='tanh' uses the tanh formula."""
    return _pointwise_math.gelu(input, approximate=approximate)


@op(COMPOSITE, namespace="torch.nn.functional")
def tanh(input: Tensor) -> Tensor:
    return input.tanh()


@register_meta("torch.nn.functional.tanh")
def _tanh_rule(input: Tensor) -> Output:
    return call_rule("torch.tanh", input)


@op(COMPOSITE, namespace="torch.nn.functional")
def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


@register_meta("torch.nn.functional.sigmoid")
def _sigmoid_rule(input: Tensor) -> Output:
    return call_rule("torch.sigmoid", input)


def _softmax_dim(name: str, ndim: int, dim: int | None) -> int:
    """torch's legacy implicit dim (with its deprecation warning) when dim is None."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


@op(COMPOSITE, namespace="torch.nn.functional")
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: dtype | None = None) -> Tensor:
    """exp(x - max) / sum along `dim`: one `_softmax` (after a `_to_copy` if dtype is given)."""
    return input.softmax(_softmax_dim("softmax", input.dim(), dim), dtype=dtype)


@register_meta("torch.nn.functional.softmax")
def _softmax_rule(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                  dtype: dtype | None = None) -> Output:
    return call_rule("torch.softmax", input, _softmax_dim("softmax", input.dim(), dim),
                     dtype=dtype)


@op(COMPOSITE, namespace="torch.nn.functional")
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: dtype | None = None) -> Tensor:
    """One `_log_softmax` (after a `_to_copy` if dtype is given)."""
    return input.log_softmax(_softmax_dim("log_softmax", input.dim(), dim), dtype=dtype)


@register_meta("torch.nn.functional.log_softmax")
def _log_softmax_rule(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                      dtype: dtype | None = None) -> Output:
    return call_rule("torch.log_softmax", input, _softmax_dim("log_softmax", input.dim(), dim),
                     dtype=dtype)


# --- normalisation ----------------------------------------------------------------------------


def _shape_list(normalized_shape: int | Sequence[int], fn: str) -> list[int]:
    """The functional norms take a sequence (torch's argument parser refuses an int; the
    modules take one and make it a tuple)."""
    head = f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of ints"
    if not isinstance(normalized_shape, (list, tuple)):
        raise TypeError(f"{head}, not {type(normalized_shape).__name__}")
    for i, s in enumerate(normalized_shape):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{head}, but found element of type {type(s).__name__} at pos {i}")
    return [int(s) for s in normalized_shape]


def _check_norm_args(input: Tensor, shape: list[int], weight: Tensor | None,
                     bias: Tensor | None, star: str) -> None:
    """torch's _check_layer_norm_inputs (star "*, ") and _check_rms_norm_inputs (star "*")."""
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{shape}")
    if input.dim() < len(shape) or list(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[{star}{', '.join(str(s) for s in shape)}], but got input of "
                           f"size{list(input.shape)}")


@op(REDUCTION, namespace="torch.nn.functional", aten=("native_layer_norm",))
def layer_norm(input: Tensor, normalized_shape: int | Sequence[int],
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing `normalized_shape` dims: one `native_layer_norm`."""
    shape = _layer_norm_shape(input, normalized_shape, weight, bias)
    dev = common_device(*(t for t in (input, weight, bias) if t is not None))
    input = _contiguous_on_cuda(input, dev)
    n = len(shape)
    stat_dtype = input.dtype if input.dtype in (float32, float64) else float32  # cuda's acc type
    out = new_tensor(input.shape, input.dtype, dev)
    stat_shape = (*input.shape[:input.dim() - n], *([1] * n))
    mean, rstd = new_tensor(stat_shape, stat_dtype, dev), new_tensor(stat_shape, stat_dtype, dev)
    launch("native_layer_norm", _fused_kernels.native_layer_norm_kernel, (out, mean, rstd),
           (input, weight, bias), {"axes": tuple(range(input.dim() - n, input.dim())),
                                   "eps": float(eps)})
    return out


def _layer_norm_shape(input: Tensor, normalized_shape: int | Sequence[int],
                      weight: Tensor | None, bias: Tensor | None) -> list[int]:
    """layer_norm's checks; the normalized shape."""
    shape = _shape_list(normalized_shape, "layer_norm")
    _check_norm_args(input, shape, weight, bias, "*, ")
    if not input.dtype.is_floating_point:
        raise NotImplementedError('"LayerNormKernelImpl" not implemented for '
                                  f"'{SCALAR_NAME[input.dtype]}'")
    return shape


def _contiguous_on_cuda(input: Tensor, dev: device) -> Tensor:
    """torch's CUDA norm kernels read a contiguous input: a strided one is copied first, one
    `clone` (an H200 ran it as one more kernel, 2026-11-29; the CPU kernels read strides)."""
    return input.contiguous() if dev.type == "cuda" and not input.is_contiguous() else input


_warned_rms_norm_dtypes = False  # torch warns of mixed dtypes once per process


def _warn_mixed_dtypes(input: Tensor, weight: Tensor) -> None:
    """torch's warning (its CPU build gives it too) that rms_norm falls back to the composite."""
    global _warned_rms_norm_dtypes
    if not _warned_rms_norm_dtypes:
        _warned_rms_norm_dtypes = True
        warnings.warn(f"Mismatch dtype between input and weight: input dtype = "
                      f"{CPP_NAME[input.dtype]}, weight dtype = {CPP_NAME[weight.dtype]}, "
                      "Cannot dispatch to fused implementation.", UserWarning, stacklevel=3)


def _rms_norm_shape(input: Tensor, normalized_shape: int | Sequence[int],
                    weight: Tensor | None) -> list[int]:
    """rms_norm's checks; the normalized shape."""
    shape = _shape_list(normalized_shape, "rms_norm")
    if input.dim() < len(shape):
        raise ValueError(f"Input tensor must have at least {len(shape)} dimensions, but got "
                         f"{input.dim()}")
    _check_norm_args(input, shape, weight, None, "*")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"rms_norm\" not implemented for "
                                  f"'{SCALAR_NAME[input.dtype]}'")
    return shape


@op(REDUCTION, namespace="torch.nn.functional", aten=("_fused_rms_norm",))
def rms_norm(input: Tensor, normalized_shape: int | Sequence[int],
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the trailing `normalized_shape` dims, computed
    in float32 for 16-bit inputs (float64 for float64). On cuda one `_fused_rms_norm`; where
    torch's build has no fused kernel for the call (cpu; a weight of another dtype, which
    warns), the ops its composite launches: [_to_copy up] pow, mean, add_, rsqrt, mul,
    [mul weight], [_to_copy back]."""
    shape = _rms_norm_shape(input, normalized_shape, weight)
    opmath = float64 if input.dtype is float64 else float32
    if eps is None:
        eps = finfo(opmath).eps
    n = len(shape)
    fusable = weight is None or weight.dtype == input.dtype
    if weight is not None and not fusable:
        _warn_mixed_dtypes(input, weight)
    dev = common_device(input) if weight is None else common_device(input, weight)
    if fusable and dev.type == "cuda":  # the one kernel torch's CUDA build launches
        input = _contiguous_on_cuda(input, dev)
        out = new_tensor(input.shape, input.dtype, dev)
        rstd = new_tensor((*input.shape[:input.dim() - n], *([1] * n)), opmath, dev)
        launch("_fused_rms_norm", _fused_kernels.fused_rms_norm_kernel, (out, rstd),
               (input, weight), {"axes": tuple(range(input.dim() - n, input.dim())),
                                 "eps": float(eps)})
        return out
    x = input.to(opmath)  # a no-op (no launch) unless input is 16-bit
    dims = [input.dim() - 1 - i for i in range(n)]
    rstd = x.pow(2).mean(dims, keepdim=True).add_(eps).rsqrt()
    out = x.mul(rstd)
    if weight is not None:
        out = out.mul(weight)
    return out.type_as(input)


@op(COMPOSITE, namespace="torch.nn.functional")
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """input / max(||input||_p over dim, eps)."""
    if out is not None:
        raise NotImplementedError("torch.nn.functional.normalize(out=...) is not emulated by "
                                  "fake_torch")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    normalized: Tensor = input / denom
    return normalized


@register_meta("torch.nn.functional.normalize")
def _normalize_rule(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
                    out: Tensor | None = None) -> Output:
    """The norm's checks; then input / (its norm expanded to input's shape), typed and laid
    out as input / input (the divisor broadcasts along dim, in input's dim order)."""
    if out is not None:
        raise NotImplementedError("torch.nn.functional.normalize(out=...) is not emulated by "
                                  "fake_torch")
    call_rule("torch.norm", input, p, dim, keepdim=True)
    return call_rule("torch.div", input, input)


# --- dropout ----------------------------------------------------------------------------------


@op(RANDOM, namespace="torch.nn.functional", aten=("native_dropout",))
def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p); identity (the
    same tensor, no launch) when not training, when p == 0, or for an empty input."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:  # torch multiplies by a zero scalar tensor
        zero = zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input.mul(zero)
    if inplace:  # torch's unfused path: noise = bernoulli(1-p) / (1-p); input *= noise
        noise = empty_like(input)
        noise.bernoulli_(1.0 - p)
        noise.div_(1.0 - p)
        return input.mul_(noise)
    out = new_tensor(input.shape, input.dtype, input.device)
    mask = new_tensor(input.shape, bool_, input.device)
    philox, intra = generator_for(None, input.device).philox_args()
    launch("native_dropout", _fused_kernels.native_dropout_kernel, (out, mask), (input, philox),
           {"intra": intra, "p": float(p)})
    return out


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

def _fresh(shape: Sequence[Any], dt: dtype) -> TensorMeta:
    return TensorMeta(tuple(shape), dt, contiguous_strides(shape))


@register_meta("torch.nn.functional.embedding")
def _embedding_rule(input: Tensor, weight: Tensor, padding_idx: int | None = None,
                    *args: Any, **kwargs: Any) -> TensorMeta:
    _check_embedding(input, weight, padding_idx)
    return _fresh((*input.shape, weight.shape[1]), weight.dtype)


@register_meta("torch.nn.functional.silu")
def _silu_rule(input: Tensor, inplace: bool = False) -> TensorMeta:
    return maybe_inplace_meta(input, inplace)


@register_meta("torch.nn.functional.layer_norm")
def _layer_norm_rule(input: Tensor, normalized_shape: int | Sequence[int],
                     weight: Tensor | None = None, bias: Tensor | None = None,
                     eps: float = 1e-5) -> TensorMeta:
    _layer_norm_shape(input, normalized_shape, weight, bias)
    return _fresh(input.shape, input.dtype)


@register_meta("torch.nn.functional.rms_norm")
def _rms_norm_rule(input: Tensor, normalized_shape: int | Sequence[int],
                   weight: Tensor | None = None, eps: float | None = None) -> TensorMeta:
    """The fused cuda kernel's output is row-major; the composite's (x * rstd [* weight],
    cast back) is laid out as its multiplications lay it out."""
    n = len(_rms_norm_shape(input, normalized_shape, weight))
    if (weight is None or weight.dtype == input.dtype) and input.device.type == "cuda":
        return _fresh(input.shape, input.dtype)
    shape = tuple(input.shape)
    rstd = tuple(s if i < len(shape) - n else 1 for i, s in enumerate(shape))
    opmath = float64 if input.dtype is float64 else float32
    itemsize = opmath.itemsize
    x_strides = tuple(input.stride()) if input.dtype is opmath else \
        format_strides(shape, input.stride(), preserve_format)  # x = input.to(opmath)
    strides = layout_of(shape, [(shape, x_strides, itemsize),
                                (rstd, contiguous_strides(rstd), itemsize)])
    if weight is not None:
        strides = layout_of(shape, [(shape, strides, itemsize),
                                    (tuple(weight.shape), weight.stride(), itemsize)])
    return TensorMeta(shape, input.dtype, strides)


@register_meta("torch.nn.functional.dropout")
def _dropout_rule(input: Tensor, p: float = 0.5, training: bool = True,
                  inplace: bool = False) -> TensorMeta:
    """input itself when nothing drops; in place input written; else a row-major output
    (native_dropout), or input times zero when p is 1."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or numel(input.shape) == 0 or inplace:
        return written_meta(input, [input])
    if p == 1.0:
        return elementwise_meta([input], input.dtype)
    return _fresh(input.shape, input.dtype)


aten_op("embedding_renorm_", EXTERN)  # embedding(max_norm=...) renormalises rows in place first
# torch.nn.functional.conv2d IS torch.conv2d: the same entries
_TORCH_OPS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "pixel_shuffle", "pixel_unshuffle", "hardshrink", "selu_",
              "celu_", "cosine_similarity", "pairwise_distance")
globals().update(exports("torch.nn.functional"))  # the public entries, over the implementations
globals().update({name: exports("torch")[name] for name in _TORCH_OPS})
__all__ = sorted([*exports("torch.nn.functional"), *_TORCH_OPS])
