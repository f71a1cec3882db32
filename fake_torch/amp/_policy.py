"""What autocast does to one op: torch's cast policies, per device type, and the layer that
applies them below the TorchFunctionModes (fake_torch._torch_function.set_layer).

Policies (torch's names, aten/src/ATen/autocast_mode.h):
  lower_precision_fp  floating inputs on the device are cast to autocast's dtype (float16 on
                      cuda by default, bfloat16 on cpu): GEMMs, convolutions, attention
  fp32                floating inputs are cast to float32: exp, log, pow, layer_norm, losses
  fp32_set_opt_dtype  ops with a `dtype=` argument (softmax, sum, cumsum) get dtype=float32
                      when the caller gave none and the first input is eligible: no cast of
                      their own; the op reads the input and writes float32
  fp32_append_dtype   norm: the same, through its dtype overload
  promote             inputs are cast to the widest floating dtype among them (cat, addcmul)
  banned              F.binary_cross_entropy on cuda: torch's RuntimeError
Eligible inputs: floating-point tensors on the autocast device type, float64 excepted.
Each cast is one `_to_copy` launch, as `Tensor.to` in torch. A float32 leaf tensor with
requires_grad (a model's nn.Parameter) cast to autocast's dtype is cast once per outermost
autocast block and reused (the cache, fake_torch.amp._state), unless cache_enabled=False or
inference_mode is on (torch 2.13 does not cache there: an inference tensor cannot be reused
for training); under no_grad the cache is used.

While a listed op runs, autocast is off (as torch's wrappers exclude its dispatch key), so
what the op calls inside is not cast again; an op not listed runs with autocast still on, so
the listed ops a composite calls through their public entries, or through `inner` (the aten
op torch's composite reaches: cross_entropy's nll_loss), are cast as in torch. The `out=`
forms are not listed in torch and are never cast. Ops fake_torch does not define yet
are listed too: defining one gives it torch's policy.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from fake_torch import _torch_function
from fake_torch._dtype import dtype, float32, float64
from fake_torch._grad_mode import is_inference_mode_enabled
from fake_torch._kernels.cast import to
from fake_torch._tensor import Tensor
from fake_torch.amp import _state

R = TypeVar("R")

LOWER = "lower_precision_fp"
FP32 = "fp32"
SET_OPT_DTYPE = "fp32_set_opt_dtype"
APPEND_DTYPE = "fp32_append_dtype"
PROMOTE = "promote"
BANNED = "banned"


def _table(**groups: str) -> dict[str, str]:
    return {name: policy for policy, names in groups.items() for name in names.split()}


# --- torch 2.13's lists (aten op names) -----------------------------------------------------------
# the ops its dispatcher has an AutocastCUDA / AutocastCPU kernel for (tests/test_autocast.py asks
# the CPU wheel's dispatcher, which registers both)

_LOWER_COMMON = (
    "_convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d "
    "conv_transpose3d convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot "
    "linear addbmm baddbmm bmm chain_matmul linalg_multi_dot lstm_cell gru_cell rnn_tanh_cell "
    "rnn_relu_cell scaled_dot_product_attention")

CUDA = _table(
    lower_precision_fp=_LOWER_COMMON + " _thnn_fused_lstm_cell _thnn_fused_gru_cell "
    "_scaled_dot_product_flash_attention cudnn_convolution cudnn_convolution_transpose",
    fp32="acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow "
    "softplus layer_norm native_layer_norm rms_norm group_norm frobenius_norm nuclear_norm "
    "cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d "
    "hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss "
    "margin_ranking_loss multilabel_margin_loss soft_margin_loss triplet_margin_loss "
    "multi_margin_loss binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp "
    "upsample_nearest1d _upsample_nearest_exact1d upsample_nearest2d _upsample_nearest_exact2d "
    "upsample_nearest3d _upsample_nearest_exact3d upsample_linear1d upsample_bilinear2d "
    "_upsample_bilinear2d_aa upsample_trilinear3d upsample_bicubic2d _upsample_bicubic2d_aa",
    fp32_set_opt_dtype="prod softmax log_softmax cumprod cumsum linalg_vector_norm "
    "linalg_matrix_norm sum",
    fp32_append_dtype="norm",
    promote="addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot "
    "scatter_add",
    banned="binary_cross_entropy",
)

CPU = _table(
    lower_precision_fp="conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm "
    "_addmm_activation addbmm linear _convolution matmul conv_tbc mkldnn_rnn_layer "
    "conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention "
    "_native_multi_head_attention",
    fp32="avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft "
    "cdist grid_sampler_2d _grid_sampler_2d_cpu_fallback grid_sampler_3d trace view_as_complex "
    "cholesky cholesky_inverse "
    "cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d "
    "max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d replication_pad1d "
    "replication_pad2d replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d "
    "hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss "
    "huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss "
    "ctc_loss kl_div multilabel_margin_loss binary_cross_entropy_with_logits fft_fft fft_ifft "
    "fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn "
    "fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_matrix_rank linalg_solve "
    "linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv "
    "linalg_householder_product linalg_tensorinv linalg_tensorsolve "
    "fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve "
    "fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d "
    "multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex linalg_svd linalg_eig "
    "linalg_eigh linalg_lstsq linalg_inv_ex",
    promote="stack cat index_copy",
)

POLICIES: dict[str, dict[str, str]] = {"cuda": CUDA, "cpu": CPU}

# the public names whose aten op is named otherwise
_ATEN_NAMES = {
    ("torch.nn.functional", "cross_entropy"): "cross_entropy_loss",
    ("torch.linalg", "matmul"): "matmul",  # an alias of torch.matmul
    (None, "__matmul__"): "matmul", (None, "__rmatmul__"): "matmul",
    (None, "__pow__"): "pow", (None, "__rpow__"): "pow",
}

BANNED_TEXT = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using "
    "torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")


def aten_name(namespace: str | None, name: str) -> str | None:
    """The aten op a public op dispatches as (None: an in-place dunder, never autocast)."""
    known = _ATEN_NAMES.get((namespace, name))
    if known is not None:
        return known
    if name.startswith("__"):
        return None
    return f"linalg_{name}" if namespace == "torch.linalg" else name


def policy_of(device_type: str, namespace: str | None, name: str) -> str | None:
    aten = aten_name(namespace, name)
    return None if aten is None else POLICIES.get(device_type, {}).get(aten)


# --- the layer ---------------------------------------------------------------------------------

_policies: dict[int, tuple[Any, str | None, str | None]] = {}  # id(entry) -> (entry, cuda, cpu)
# id(impl) -> (impl, has a `dtype` parameter, its position when positional)
_dtype_param: dict[int, tuple[Callable[..., Any], bool, int | None]] = {}


def _policies_for(entry: Any) -> tuple[str | None, str | None]:
    found = _policies.get(id(entry))
    if found is None or found[0] is not entry:
        opdef = getattr(entry, "_opdef", None)
        if opdef is None:
            found = (entry, None, None)
        else:
            found = (entry, policy_of("cuda", opdef.namespace, opdef.name),
                     policy_of("cpu", opdef.namespace, opdef.name))
        _policies[id(entry)] = found
    return found[1], found[2]


def run(entry: Any, impl: Callable[..., Any], args: tuple[Any, ...],
        kwargs: dict[str, Any]) -> Any:
    """Run `impl` for a call of `entry` with autocast on (a _torch_function layer)."""
    cuda, cpu = _policies_for(entry)
    if cuda is None and cpu is None:
        return impl(*args, **kwargs)
    return _apply(cuda, cpu, impl, args, kwargs)


def inner(aten: str, impl: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """Run `impl` as the aten op `aten` a composite op calls inside (cross_entropy's
    nll_loss): torch's dispatcher autocasts that call as it would a public one, so under
    autocast its policy applies here too; otherwise `impl` runs as it is."""
    if _torch_function.current_layer() is None:
        return impl(*args, **kwargs)
    out: R = _apply(CUDA.get(aten), CPU.get(aten), impl, args, kwargs)
    return out


def _apply(cuda: str | None, cpu: str | None, impl: Callable[..., Any], args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> Any:
    device_type = _device_type_of(args, kwargs)
    if device_type not in _state.enabled_types() or kwargs.get("out") is not None:
        return impl(*args, **kwargs)
    policy = cuda if device_type == "cuda" else cpu if device_type == "cpu" else None
    if policy is None:
        return impl(*args, **kwargs)
    before = _torch_function.set_layer(None)  # off while the op runs, as torch's wrappers
    try:
        if policy == BANNED:
            raise RuntimeError(BANNED_TEXT)
        if policy in (SET_OPT_DTYPE, APPEND_DTYPE):
            return _with_float_dtype(impl, device_type, args, kwargs)
        if policy == LOWER:
            target = _state.get_autocast_dtype(device_type)
        elif policy == FP32:
            target = float32
        else:
            target = _promote_type(device_type, (*args, *kwargs.values()))
        cast_args = tuple(_cast(a, target, device_type) for a in args)
        cast_kwargs = {k: _cast(v, target, device_type) for k, v in kwargs.items()}
        return impl(*cast_args, **cast_kwargs)
    finally:
        _torch_function.set_layer(before)


def _device_type_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The device type the op dispatches on: its first tensor's (as torch's dispatch key)."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            return a.device.type
        if isinstance(a, (list, tuple)):
            for t in a:
                if isinstance(t, Tensor):
                    return t.device.type
    return None


def _eligible(t: Any, device_type: str) -> bool:
    return (isinstance(t, Tensor) and t.dtype.is_floating_point and t.dtype is not float64
            and t.device.type == device_type)


def _cast(value: Any, target: dtype, device_type: str) -> Any:
    """torch's cached_cast: eligible tensors (also inside lists and tuples) to `target`."""
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, target, device_type) for v in value)
    if not _eligible(value, device_type) or value.dtype is target:
        return value
    if (target is _state.get_autocast_dtype(device_type) and value.dtype is float32
            and value.requires_grad and value.is_leaf and _state.is_autocast_cache_enabled()
            and not is_inference_mode_enabled() and not _state.is_cached(value)):
        hit = _state.cached(value)
        if hit is None:
            hit = to(value, target)
            _state.remember(value, hit)
        return hit
    return to(value, target)


def _promote_type(device_type: str, values: tuple[Any, ...]) -> dtype:
    """The widest floating dtype among the eligible inputs (float64 ignored): float32 if any
    is, else autocast's dtype."""
    lower = _state.get_autocast_dtype(device_type)
    current = lower
    for v in values:
        for t in (v if isinstance(v, (list, tuple)) else (v,)):
            if not _eligible(t, device_type):
                continue
            if current is float32 or t.dtype is float32:
                current = float32
            elif not (current is lower and t.dtype is lower):
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _with_float_dtype(impl: Callable[..., Any], device_type: str, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> Any:
    """dtype=float32 unless the caller gave a dtype, when the first input is eligible."""
    if not args or not _eligible(args[0], device_type):
        return impl(*args, **kwargs)
    has_dtype, index = _dtype_param_of(impl)
    if "dtype" in kwargs or (index is not None and len(args) > index):
        return impl(*args, **kwargs)
    if not has_dtype:  # no dtype parameter: the op reads a float32 copy of its input
        return impl(to(args[0], float32), *args[1:], **kwargs)
    return impl(*args, **{**kwargs, "dtype": float32})


def _dtype_param_of(impl: Callable[..., Any]) -> tuple[bool, int | None]:
    """Whether impl has a `dtype` parameter, and its position if it can be given so."""
    found = _dtype_param.get(id(impl))
    if found is None or found[0] is not impl:
        params = list(inspect.signature(impl).parameters.values())
        named = [(i, p) for i, p in enumerate(params) if p.name == "dtype"]
        index = next((i for i, p in named
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)), None)
        found = (impl, bool(named), index)
        _dtype_param[id(impl)] = found
    return found[1], found[2]
