"""The oracles the tests hold fake_torch to, written once (test modules `from oracles import ...`;
tests/conftest.py puts this folder on sys.path).

Launches: real torch's dispatcher says which kernels a call launches. `torch_launches()` records,
under a TorchDispatchMode, the aten ops real torch runs that a GPU would launch: every op that
is not a view (a view's schema returns an alias it does not write) and not in NO_LAUNCH.
`launches()` records fake_torch's launches; a test asserts that the two lists are equal.

Where torch's CUDA build dispatches a call differently from the CPU build we run,
`torch_launches(cuda=True)` records what the CUDA build dispatches, decided from the call's
arguments (never by matching the CPU ops afterwards). One call does so today: rms_norm. On an
NVIDIA H200 (torch 2.11.0+cu130, torch.profiler counting kernel launches, 2026-11-29),
`F.rms_norm` launched ONE kernel, aten::_fused_rms_norm, whenever weight was None or of the
input's dtype (float32, bfloat16, float16; grad enabled or not, inference_mode, eps None,
normalized_shape of two dims); a weight of another dtype warned "Mismatch dtype between input
and weight ... Cannot dispatch to fused implementation." and launched the composite's ops, as
the CPU build does for every call (its `_fused_rms_norm` has no kernel of its own). So under
cuda=True a call of `torch.nn.functional.rms_norm` or `torch.rms_norm` whose dtypes match is
recorded as the single op `_fused_rms_norm` (a TorchFunctionMode sees the call; the ops it
dispatches on the CPU are not recorded), and any other call as the CPU build dispatches it.
A second H200 check the same day: that one aten op ran as one kernel for a contiguous float32
input, but as two for float64 (row moments, then the normalisation) and as none for an empty
one; fake_torch counts the op once in the first two cases, as it counts native_layer_norm (whose
CUDA kernels are the same family), and none for the empty one.

EMPTY: an op whose every output has no element is recorded as no launch. CUDA torch's kernels
return before launching then (TensorIterator's `gpu_kernel` in aten/src/ATen/native/cuda/
Loops.cuh returns when `iter.numel() == 0`; copy_ returns for an empty self; the H200 showed it
for rms_norm, above); fake_torch's door skips such launches the same way.
A non-contiguous input to either norm was first copied by one more kernel: fake_torch launches
a `clone` there, and cuda=True records a `clone` before either norm's op when its input is not
contiguous (the CPU kernels read strides, no copy).
Compiled by inductor, add + rms_norm was one Triton kernel, `triton_per_fused__fused_rms_norm_add_0`
(float32 and bfloat16, under no_grad and inference_mode).

Convolution, batch norm and pooling (`CUDA_RULES`): the CPU build records one op where the CUDA
build runs another, so cuda=True records, for each such CPU op, what torch 2.13's sources say
the CUDA build dispatches for the same arguments (read, not measured on a GPU):
  convolution   (aten/src/ATen/native/Convolution.cpp, _convolution and _select_conv_backend)
                a zero batch or zero channels: `mul` [+ `add_` for a bias]; else a `clone` of a
                strided input (a 1-D one always, then viewed 2-D), then: depthwise (not
                transposed, groups == C_in > 1, C_out a multiple of it) `_conv_depthwise2d`
                (`conv_depthwise3d` for 3-D) unless cuDNN's fp16 depthwise heuristic applies
                (2-D only); with cuDNN enabled (not deterministic-and-dilated, no output_padding
                >= its stride) `cudnn_convolution` / `cudnn_convolution_transpose` [+ `add_`
                for a bias]; else `_slow_conv2d_forward` (`slow_conv_dilated2d` if dilated;
                3-D: `slow_conv_dilated3d`, dilated or not, as cuda's fallback is;
                transposed: `slow_conv_transpose2d` / `3d`), per group [+ `clone` of a
                strided slice] and a final `cat` when groups > 1
  native_batch_norm   (aten/src/ATen/native/Normalization.cpp, _select_batch_norm_backend)
                `cudnn_batch_norm` (after a `clone` of a strided input) with cuDNN enabled,
                weight and bias given, running stats given (or neither in training), input of
                >= 3 dims, batch <= 65535 (eval) / 880801 (training), no bfloat16, a half input
                only with a float weight, eps >= 0 (CUDNN_BN_MIN_EPSILON since cuDNN 8), fewer
                than 2**31 - 1 elements; else `native_batch_norm`, as on the CPU
  max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d   (aten/src/ATen/native/cuda/
                DilatedMaxPool2d.cu, AveragePool2d.cu, AdaptiveAveragePooling.cu) the CUDA
                kernels copy a strided input first: one `clone` (the adaptive kernel only for a
                4-D input, the max kernel not when its output is empty)

  _native_multi_head_attention   (aten/src/ATen/native/transformers/cuda/attention.cu) the
                ops the CUDA kernel runs inside, decided from its arguments (`_cuda_native_mha`)
  pixel_shuffle, pixel_unshuffle   (aten/src/ATen/native/PixelShuffle.cpp) CUDA's math
                version: one `clone` (one elementwise kernel on an H200)
  upsample_nearest*, _upsample_nearest_exact*   a `clone` of a strided input first (measured
                on an H200 for upsample_nearest2d)
  native_group_norm   (aten/src/ATen/native/group_norm.cpp) cuda copies a channels_last
                input the cpu build keeps: one `clone` first

Errors: a user mistake raises torch's exception class with torch's message. `outcome()` runs a
call in either library and keeps its exception as the result; `assert_same_error()` compares two
outcomes' exceptions (class and first line), `assert_raises_like_torch()` runs one program in
both libraries and compares the same way, and `assert_raises_same()` compares two calls'
exceptions by their whole text. torch's text is its own on the machine it runs on for a few
errors (TORCH_CPU_VARIANTS: which backend the CPU build picks); there fake_torch's text stays the
one text it always prints, and torch's may be any of the listed variants.

Values: the dtype names both libraries share, their numpy dtypes, and bit-exact conversions
between numpy arrays and either library's tensors; `both()` makes the same values a tensor of
each library, `close()` compares them within a tolerance, `strided()` transposes the strides.

Machines: the oracles hold with torch 2.13 CPU on any x86-64 CPU. Where torch's own result
depends on the machine, torch's side (never ours) may be a listed variant: an error's text
(TORCH_CPU_VARIANTS: which conv backend the CPU build picks), a float's last bits
(`torch_ulps()`: torch's DEFAULT kernels). To check, run the suite with torch's kernels lowered
(ATEN_CPU_CAPABILITY=default, =avx2, =avx512), with oneDNN's ISA lowered
(ONEDNN_MAX_CPU_ISA=AVX2), on one thread (OMP_NUM_THREADS=1) and with oneDNN off
(FAKE_TORCH_TEST_MKLDNN=0, tests/conftest.py); give each ATEN_CPU_CAPABILITY its own
TORCHINDUCTOR_CACHE_DIR (inductor's cache does not key its C++ kernels by it, and one built for
AVX-512 fails to compile under =default).

`NoHostSync` stands in for CUDA-graph capture where a test only needs its refusal of host syncs.

Real torch is imported only inside the helpers that use it: a module whose torch tests skip
without it can still import this one.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import fake_torch as ft
from fake_torch._simulated import _dispatch
from fake_torch._simulated._timeline import TIMELINE

# --- launches -----------------------------------------------------------------------------------

NO_LAUNCH = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty",  # allocations: no kernel
    "_unsafe_view", "lift_fresh",  # views that their schemas do not mark as aliases
    # in-place view ops rewrite sizes and strides only
    "squeeze_", "unsqueeze_", "t_", "transpose_", "as_strided_", "detach_",
})


@contextmanager
def torch_launches(*, cuda: bool = False, fused_norms: bool = True) -> Iterator[list[str]]:
    """The names of the ops real torch dispatches inside the block that a GPU would launch;
    cuda=True: as torch's CUDA build dispatches them (rms_norm fused; see the module's
    docstring). The fused norms are seen by a TorchFunctionMode, and any such mode makes
    torch code that checks has_torch_function take its other path (nn.MultiheadAttention
    leaves its fast path): fused_norms=False records without it."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    names: list[str] = []
    inside_fused: list[bool] = []  # non-empty while a fused call runs its CPU ops

    class Record(TorchDispatchMode):  # type: ignore[misc]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            returns = func._schema.returns
            alias = returns[0].alias_info if returns else None
            name = func.overloadpacket.__name__
            out = func(*args, **(kwargs or {}))
            if (alias is None or alias.is_write) and name not in NO_LAUNCH and not inside_fused \
                    and func.namespace == "aten":  # prim ops (FakeTensor's device query) run none
                rule = CUDA_RULES.get(name) if cuda else None
                ops = rule(args) if rule is not None else [name]
                if _all_empty(out):  # no element to compute: the kernel returns before
                    # launching (EMPTY, above); a copy of a non-empty strided input made first
                    # still runs
                    ops = [op for op in ops if op == "clone" and not _all_empty(args[:1])]
                names.extend(ops)
            return out

    class FusedOnCuda(TorchFunctionMode):  # type: ignore[misc]
        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            norms = (torch.nn.functional.rms_norm, torch.rms_norm,
                     torch.nn.functional.layer_norm, torch.layer_norm)
            if func not in norms:
                return func(*args, **kwargs)
            x = args[0] if args else kwargs["input"]
            weight = args[2] if len(args) > 2 else kwargs.get("weight")
            rms = func in norms[:2]
            if rms and weight is not None and weight.dtype != x.dtype:
                return func(*args, **kwargs)  # no fused kernel: the composite, as on the CPU
            if x.numel() == 0:
                return func(*args, **kwargs)  # nothing to normalise: no kernel at all
            if not x.is_contiguous():
                names.append("clone")  # the CUDA norm kernels copy a strided input first
            if not rms:
                return func(*args, **kwargs)  # native_layer_norm, recorded by Record
            inside_fused.append(True)
            try:
                out = func(*args, **kwargs)
            finally:
                inside_fused.pop()
            names.append("_fused_rms_norm")
            return out

    with Record(), (FusedOnCuda() if cuda and fused_norms else nullcontext()):
        yield names


def _all_empty(out: Any) -> bool:
    """Every tensor an op returned has no element (and it returned one at least)."""
    import torch
    from torch.utils._pytree import tree_leaves

    tensors = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
    return bool(tensors) and all(t.numel() == 0 for t in tensors)


def _cuda_convolution(args: tuple[Any, ...]) -> list[str]:
    """What torch's CUDA build launches for aten.convolution(input, weight, bias, stride,
    padding, dilation, transposed, output_padding, groups)."""
    import torch

    x, w, b, stride, _, dilation, transposed, output_padding, groups = args[:9]
    bias = ["add_"] if b is not None else []
    if x.shape[0] == 0 or x.shape[1] == 0:
        return ["mul", *bias]
    ops = [] if x.is_contiguous() else ["clone"]
    if w.dim() == 3:  # viewed as (N, C, 1, L)
        x, w, stride, dilation = x.unsqueeze(2), w.unsqueeze(2), [1, *stride], [1, *dilation]
        output_padding = [0, *output_padding]
    dim = w.dim() - 2
    stride, dilation = _expand(stride, dim), _expand(dilation, dim)
    output_padding = _expand(output_padding, dim)
    depthwise = (not transposed and x.shape[1] == groups > 1 and w.shape[0] % groups == 0)
    cudnn = torch.backends.cudnn
    if depthwise and not (dim == 2 and _cudnn_depthwise(x, w, stride, dilation)):
        return [*ops, "_conv_depthwise2d" if dim == 2 else "conv_depthwise3d"]
    dilated = any(d != 1 for d in dilation)
    padding_big = any(p >= s for p, s in zip(output_padding, stride, strict=True))
    if cudnn.enabled and not (cudnn.deterministic and dilated) and not padding_big:
        return [*ops, "cudnn_convolution_transpose" if transposed else "cudnn_convolution",
                *bias]
    if transposed:
        slow = f"slow_conv_transpose{dim}d"
    elif dim == 3:  # cuda's 3-D fallback: the dilated kernel, dilated or not
        slow = "slow_conv_dilated3d"
    else:
        slow = "slow_conv_dilated2d" if dilated else "_slow_conv2d_forward"
    if groups == 1:
        return [*ops, slow]
    part = x.narrow(1, 0, x.shape[1] // groups)
    return [*ops, *(([] if part.is_contiguous() else ["clone"]) + [slow]) * groups, "cat"]


def _expand(values: Any, dim: int) -> list[int]:
    """A convolution argument of one value or one per spatial dim, as one per dim."""
    values = list(values)
    return values * dim if len(values) == 1 else values


def _cudnn_depthwise(x: Any, w: Any, stride: list[int], dilation: list[int]) -> bool:
    """torch's use_cudnn_depthwise (cuDNN >= 8.2): fp16, >= 32 channels, not dilated, and
    check_cudnn_depthwise_workload_with_filter."""
    import torch

    if not (torch.backends.cudnn.enabled and x.dtype == w.dtype == torch.float16
            and all(d == 1 for d in dilation) and x.shape[1] >= 32
            and (stride[0] == stride[1] or x.shape[2] == 1)):
        return False
    kh, kw = w.shape[2:]
    s, width, ch, bs = stride[1], x.shape[3], x.shape[1], x.shape[0]
    if x.shape[2] == 1 and s == 1:
        return True
    if kh != kw or kw not in (1, 3, 5) or width < 7 or s not in (1, 2):
        return False
    if s == 1:
        return True
    if bs == 1:
        return bool((kw == 1 and width <= 28) or kw in (3, 5))
    if kw == 1:
        return bool(bs <= 16 and ch >= 128 and width <= 7)
    return bool(ch >= 512 or (ch >= 256 and width >= 28))


def _cuda_batch_norm(args: tuple[Any, ...]) -> list[str]:
    """aten.native_batch_norm(input, weight, bias, running_mean, running_var, training,
    momentum, eps) on the CUDA build: cuDNN's op, or the same native one."""
    import torch

    x, w, b, rm, rv, training, _, eps = args
    stats = (rm is not None and rv is not None) or (rm is None and rv is None and training)
    cudnn = (torch.backends.cudnn.enabled and w is not None and b is not None and stats
             and torch.bfloat16 not in (x.dtype, w.dtype)
             and (x.dtype != torch.float16 or w.dtype == torch.float32) and x.dim() >= 3
             and x.shape[0] <= (880801 if training else 65535) and eps >= 0.0
             and x.numel() < 2**31 - 1)
    if not cudnn:
        return ["native_batch_norm"]
    return ["cudnn_batch_norm"] if x.is_contiguous() else ["clone", "cudnn_batch_norm"]


def _cuda_pool(name: str) -> Callable[[tuple[Any, ...]], list[str]]:
    """A pooling op, after the `clone` its CUDA kernel makes of a strided input."""

    def rule(args: tuple[Any, ...]) -> list[str]:
        x = args[0]
        copies = not x.is_contiguous() and (name != "_adaptive_avg_pool2d" or x.dim() == 4)
        if name == "max_pool2d_with_indices" and copies:  # no kernel for an empty output
            import torch  # (ops a rule runs are not recorded: the mode is off in a dispatch)

            copies = torch.ops.aten.max_pool2d_with_indices(*args)[0].numel() > 0
        return ["clone", name] if copies else [name]

    return rule


def _cuda_group_norm(args: tuple[Any, ...]) -> list[str]:
    """aten.native_group_norm(X, ...): torch's group_norm passes X = input.contiguous() on
    cuda but input.contiguous(suggest_memory_format) on the cpu, so a channels_last input the
    cpu build kept as it is is copied first on cuda (aten/src/ATen/native/group_norm.cpp)."""
    return ["native_group_norm"] if args[0].is_contiguous() else ["clone", "native_group_norm"]


def _cuda_native_mha(args: tuple[Any, ...]) -> list[str]:
    """aten._native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight,
    qkv_bias, proj_weight, proj_bias, mask=None, need_weights=True, average_attn_weights=True,
    mask_type=None) as native_multi_head_attention_cuda runs it (aten/src/ATen/native/
    transformers/cuda/attention.cu): self-attention without weights or mask, a head dim that
    is a multiple of 8, whose head views sdpa would run fused: linear (`addmm`), sdpa's
    kernel, linear (`addmm`); else `mm`,
    `_transform_bias_rescale_qkv`, `bmm`, [`_to_copy` of a non-bool mask] `_masked_softmax`
    (`_softmax` without a mask), `bmm`, `clone` (transform_0213), `addmm`, [`sum`, `div_`
    averaging the weights]. The CPU build records the op alone. An H200 (torch 2.11.0+cu130,
    tests/gpu/nnmods_gpu.py) ran exactly these kernels for head dims 4 and 8, with and without
    weights and a key padding mask."""
    query, key, value, embed_dim, num_head = args[:5]
    given = list(args[9:13])  # the optional trailing arguments, defaults where not passed
    mask, need_weights, average = (given + [None, True, True][len(given):])[:3]
    head_dim = embed_dim // num_head
    fused = _sdpa_fused_ops(query.dtype, head_dim)
    if query is key and key is value and head_dim % 8 == 0 and not need_weights \
            and mask is None and fused:
        return ["addmm", *fused, "addmm"]
    import torch

    softmax = ["_softmax"] if mask is None else (
        ["_masked_softmax"] if mask.dtype == torch.bool else ["_to_copy", "_masked_softmax"])
    weights = ["sum", "div_"] if need_weights and average else []
    return ["mm", "_transform_bias_rescale_qkv", "bmm", *softmax, "bmm", "clone", "addmm",
            *weights]


def _sdpa_fused_ops(dtype: Any, head_dim: int) -> list[str]:
    """The launches of sdpa's fused backend for contiguous-last-dim 4-D q = k = v views and no
    mask (torch's sdp_utils.cpp order: flash for 16-bit with head_dim <= 256, padding the head
    dim to a multiple of 8 first; memory-efficient for 16-bit or float32 with head_dim aligned
    to 8 / 4), or [] when sdpa would take its math path."""
    import torch

    half = dtype in (torch.float16, torch.bfloat16)
    if torch.backends.cuda.flash_sdp_enabled() and half and head_dim <= 256:
        return ["constant_pad_nd"] * 3 * (head_dim % 8 != 0) + \
            ["_scaled_dot_product_flash_attention"]
    if torch.backends.cuda.mem_efficient_sdp_enabled() and (half or dtype == torch.float32) \
            and head_dim % (8 if half else 4) == 0:
        return ["_scaled_dot_product_efficient_attention"]
    return []


def _cuda_upsample_nearest(name: str) -> Callable[[tuple[Any, ...]], list[str]]:
    """The CUDA nearest kernels copy a strided input first (input.contiguous(); an H200 ran an
    elementwise copy before upsample_nearest2d's kernel, tests/gpu/nnmods_gpu.py); the CPU
    kernels read strides."""

    def rule(args: tuple[Any, ...]) -> list[str]:
        return [name] if args[0].is_contiguous() else ["clone", name]

    return rule


def _cuda_pixel_shuffle(args: tuple[Any, ...]) -> list[str]:
    """pixel_shuffle / pixel_unshuffle: the CPU build's own kernel; CUDA's math_pixel_shuffle
    (aten/src/ATen/native/PixelShuffle.cpp) views, permutes and clones (one `clone`)."""
    return ["clone"]


def _safe_softmax_ops(args: tuple[Any, ...]) -> list[str]:
    """_safe_softmax (SDPA's math backend): ATen's CompositeExplicitAutograd kernel runs
    softmax, eq(-inf), all, scalar_tensor(0), where, each its own kernel on a GPU; a dispatch
    mode sees the one op. An H200 ran transformers' eager decode step 4 launches per layer
    above a single softmax there (tests/gpu/results/transformers_h200.json)."""
    return ["_softmax", "eq", "all", "scalar_tensor", "where"]


CUDA_RULES: dict[str, Callable[[tuple[Any, ...]], list[str]]] = {
    "_safe_softmax": _safe_softmax_ops,
    **{op: _cuda_upsample_nearest(op) for op in (
        "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
        "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d")},
    "pixel_shuffle": _cuda_pixel_shuffle,
    "pixel_unshuffle": _cuda_pixel_shuffle,
    "_native_multi_head_attention": _cuda_native_mha,
    "convolution": _cuda_convolution,
    "native_group_norm": _cuda_group_norm,
    "native_batch_norm": _cuda_batch_norm,
    **{op: _cuda_pool(op) for op in ("max_pool2d_with_indices", "avg_pool2d",
                                      "_adaptive_avg_pool2d")},
}


@contextmanager
def launches() -> Iterator[list[str]]:
    """The op names fake_torch launches inside the block, in order; LaunchCounter starts the block
    at zero and must have counted exactly these launches."""
    ft.LaunchCounter.reset()
    with _dispatch.record_ops() as names:
        yield names
    assert ft.LaunchCounter.n == len(names)


class NoHostSync(_dispatch.Mode):
    """Refuses host syncs (`.item()`, D2H copies, synchronize) as CUDA-graph capture does:
    raises RuntimeError("host sync: <what>")."""

    def host_sync(self, what: str) -> None:
        raise RuntimeError(f"host sync: {what}")


# --- errors -------------------------------------------------------------------------------------

def outcome(fn: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """(fn(), None), or (None, the exception fn raised); warnings are silenced."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # the exception is the result under comparison
        return None, e


def first_line(e: BaseException) -> str:
    """The message's first line (torch appends hints and overload lists after it), with each
    printed set's items sorted: torch prints Python sets whose order follows the hash seed of the
    process that compiled its .pyc, so only the members are comparable."""
    return re.sub(r"\{([^{}]*)\}", _sorted_set, str(e).split("\n")[0])


def _sorted_set(m: re.Match[str]) -> str:
    return "{" + ", ".join(sorted(i.strip() for i in m.group(1).split(","))) + "}"


# torch's CPU build words a few errors by the backend it picks for the call on the machine it
# runs on. fake_torch prints ONE text for each, always (oneDNN's: the text of the CPU build where
# it picks oneDNN; the tests pin it), and a comparison with torch accepts, as torch's side only,
# the texts listed here for the same error. Each entry: fake_torch's text (a regular expression
# its whole text matches), and, built from that match, what torch may give instead on another
# machine: regular expressions its text matches, or None where torch returns a result.
#
# The two conv backends of the CPU build (aten/src/ATen/native/Convolution.cpp): oneDNN
# (mkldnn) checks the arguments first, "Input type (torch.HalfTensor) and weight type
# (torch.FloatTensor) should be the same or input should be a MKLDNN tensor and weight is a
# dense tensor", "non-positive dilation is not supported"; the native slow kernels say
# "expected scalar type Half but found Float", "dilation should be greater than zero, but got
# [0, 0]", or take a transposed conv's bias of another dtype.
# torch 2.13 CPU picks the slow kernels (seen on an x86-64 CPU with AVX-512, without
# AVX512-FP16): for a float16 input where oneDNN has no fp16 kernels (no AVX512-FP16 or AMX-FP16:
# that machine), a bfloat16 input where oneDNN has no bf16 kernels (ONEDNN_MAX_CPU_ISA=AVX2 there,
# as on an AVX2-only CPU), a float32 1x1 kernel of stride 1 and batch < 16 when torch runs one
# thread (OMP_NUM_THREADS=1 there, as on a one-core machine), and always with
# torch.backends.mkldnn.enabled = False. Another machine (AVX-512 with oneDNN's fp16) printed
# oneDNN's text for the float16 input.
_SCALAR_OF_TYPE = {"torch.HalfTensor": "Half", "CPUBFloat16Type": "BFloat16",
                   "torch.FloatTensor": "Float", "torch.DoubleTensor": "Double"}
_TYPES = "|".join(re.escape(name) for name in _SCALAR_OF_TYPE)


def _slow_dtype_text(m: re.Match[str]) -> str:
    return re.escape(f"expected scalar type {_SCALAR_OF_TYPE[m['input']]} but found "
                     f"{_SCALAR_OF_TYPE[m['other']]}")


TORCH_CPU_VARIANTS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], list[str | None]]]] = [
    (re.compile(rf"Input type \((?P<input>{_TYPES})\) and weight type \((?P<other>{_TYPES})\) "
                r"should be the same or input should be a MKLDNN tensor and weight is a dense "
                r"tensor"),
     lambda m: [_slow_dtype_text(m)]),
    # a transposed conv's bias of another dtype (the other convs check a bias before picking a
    # backend: "Input type (float) and bias type (double) should be the same" everywhere): the
    # slow kernels check it with the dtype text (3-d) or not at all (1-d, 2-d: torch returns a
    # result; seen with oneDNN off)
    (re.compile(rf"Input type \((?P<input>{_TYPES})\) and bias type \((?P<other>{_TYPES})\) "
                r"should be the same or input should be a MKLDNN tensor and bias is a dense "
                r"tensor"),
     lambda m: [_slow_dtype_text(m), None]),
    # the slow kernels print every dilation (a 1-d conv's as 2-d: [1, 0]), one of them 0
    (re.compile(r"non-positive dilation is not supported"),
     lambda m: [r"dilation should be greater than zero, but got \[(\d+, )*0(, \d+)*\]"]),
]


def torch_may_say(theirs: str | None, ours: str) -> bool:
    """torch's text `theirs` (None: torch returned a result) is fake_torch's `ours` (first
    lines, or whole one-line messages), or a variant of it that torch's CPU build gives on some
    machines (TORCH_CPU_VARIANTS)."""
    if theirs == ours:
        return True
    for pattern, variants in TORCH_CPU_VARIANTS:
        m = pattern.fullmatch(ours)
        if m is not None and any(theirs is None if v is None
                                 else theirs is not None and re.fullmatch(v, theirs)
                                 for v in variants(m)):
            return True
    return False


def assert_same_error(ours: BaseException | None, theirs: BaseException | None) -> None:
    """Neither raised, or both raised the same class with the same first message line (torch's
    may be a machine's variant of ours: TORCH_CPU_VARIANTS)."""
    if theirs is None and ours is not None and torch_may_say(None, first_line(ours)):
        return  # torch's CPU build returns a result there on some machines (TORCH_CPU_VARIANTS)
    assert (ours is None) == (theirs is None), f"torch: {theirs!r}, fake_torch: {ours!r}"
    if ours is not None and theirs is not None:
        assert type(ours) is type(theirs), f"torch: {theirs!r}, fake_torch: {ours!r}"
        assert torch_may_say(first_line(theirs), first_line(ours)), \
            f"torch: {first_line(theirs)!r}, fake_torch: {first_line(ours)!r}"


def assert_raises_like_torch(program: Callable[[Any], Any]) -> None:
    """program(torch) raises, and program(fake_torch) raises the same class with the same first
    message line (`program` takes the library as its argument)."""
    import torch

    _, theirs = outcome(lambda: program(torch))
    _, ours = outcome(lambda: program(ft))
    assert theirs is not None or (ours is not None and torch_may_say(None, first_line(ours))), \
        "torch accepted the call"
    assert_same_error(ours, theirs)


def assert_raises_same(torch_call: Callable[[], Any], ft_call: Callable[[], Any]) -> None:
    """Both calls raise; ours is an instance of torch's exception class with torch's whole message
    (our module paths read as torch's: under install(), fake_torch is torch), or one of its
    machine variants (TORCH_CPU_VARIANTS)."""
    with pytest.raises(Exception) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        ft_call()
    assert torch_may_say(str(expected.value), str(got.value).replace("fake_torch.", "torch."))


# --- dtypes and values --------------------------------------------------------------------------

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
NP_DTYPE = {name: np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name) for name in DTYPES}


def to_torch(a: np.ndarray) -> Any:
    """A real torch cpu tensor holding a copy of `a` bit for bit (bfloat16 from ml_dtypes')."""
    import torch

    if a.dtype == NP_DTYPE["bfloat16"]:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def to_numpy(t: Any) -> np.ndarray:
    """Either library's tensor, on any device, as a numpy array (bfloat16 as ml_dtypes')."""
    if isinstance(t, ft.Tensor):
        return t.numpy(force=True)
    import torch

    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(NP_DTYPE["bfloat16"])
    return t.numpy()


def pair(shape: tuple[int, ...], dtype: str = "float32") -> tuple[ft.Tensor, Any]:
    """The same contiguous arange as a fake_torch and a real torch cpu tensor (own memory each)."""
    base = np.arange(int(np.prod(shape))).astype(NP_DTYPE[dtype]).reshape(shape)
    return ft.from_numpy(base.copy()), to_torch(base)


def both(a: np.ndarray, dtype: str = "float32", device: str = "cuda") -> tuple[Any, ft.Tensor]:
    """(real torch cpu tensor, fake_torch tensor on `device`) holding `a`'s values in `dtype`."""
    import torch

    t = torch.from_numpy(np.ascontiguousarray(a)).to(getattr(torch, dtype))
    values = a.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else a.astype(dtype)
    return t, ft.tensor(values, device=device)


def close(ours: ft.Tensor, theirs: Any, tol: float = 1e-5) -> None:
    """Same shape and dtype, values within `tol` (relative and absolute, compared in float64)."""
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(np.asarray(ours.numpy(force=True), np.float64),
                               theirs.detach().double().numpy(), rtol=tol, atol=tol)


def strided(t: Any) -> Any:
    """The same values with transposed strides (either library; one clone)."""
    return t.transpose(-1, -2).contiguous().transpose(-1, -2)


def assert_trains_and_evaluates_like_torch(theirs: Any, ours: Any,
                                           inputs: list[np.ndarray]) -> list[list[str]]:
    """A module with running statistics (a batch or instance norm) built in both libraries: the
    same repr and state_dict keys; then each input through both, ours on cuda, in training
    mode but the last (eval): the same output (1e-5), launches and buffers (1e-6). Returns our
    launches, a list a step."""
    import torch

    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.cuda()
    steps = []
    for step, x in enumerate(inputs):
        if step == len(inputs) - 1:
            theirs.eval()
            ours.eval()
        tx, fx = both(x)
        with torch.no_grad(), torch_launches(cuda=True) as want_ops:
            want = theirs(tx)
        with launches() as ops:
            got = ours(fx)
        close(got, want, tol=1e-5)
        assert ops == want_ops
        for name, buf in theirs.named_buffers():
            close(dict(ours.named_buffers())[name], buf, tol=1e-6)
        steps.append(ops)
    return steps


def torch_ulps() -> int:
    """How many units in the last place torch's float results may differ by from the bits the
    tests hold fake_torch to (torch's vectorized CPU kernels, AVX2 or AVX-512, fused
    multiply-adds): 0 there; 4 where torch runs its DEFAULT kernels (ATEN_CPU_CAPABILITY=default,
    or an x86-64 CPU without AVX2), whose lerp (torch.lerp; quantile's interpolation) rounds the
    product and the sum apart, an error of the ends' magnitude, not the result's (seen: 1 ulp
    in float32 lerp, 2 in float32 and 1 in float64 quantile)."""
    import torch

    return 0 if torch.backends.cpu.get_cpu_capability() != "DEFAULT" else 4


def same_bits(a: np.ndarray, b: np.ndarray, ulps: int = 0) -> bool:
    """Equal bit for bit (any NaN equals any NaN), or, for float16/32/64 given `ulps`, within
    that many units in the last place of b's largest finite magnitude (an interpolation's
    rounding error is of its ends' magnitude, which can be far above a result near zero's)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    nan = np.isnan(a64) & np.isnan(b64)
    equal = (a64 == b64) & (np.signbit(a64) == np.signbit(b64))
    if ulps and a.dtype in (np.float16, np.float32, np.float64):
        with np.errstate(invalid="ignore"):
            finite = np.abs(b[np.isfinite(b)])
            scale = np.spacing(finite.max() if finite.size else b.dtype.type(0))
            equal |= np.abs(a64 - b64) <= ulps * np.float64(scale)
    return bool(np.all(nan | equal))


def assert_same_tensor(ours: Any, theirs: Any) -> None:
    """Same shape, dtype and values (NaN equal to NaN); sequences of tensors element-wise."""
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            assert_same_tensor(o, t)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(_comparable(ours), _comparable(theirs))


def _comparable(t: Any) -> np.ndarray:
    # numpy's NaN-aware equality does not know ml_dtypes' bfloat16; float64 holds it exactly
    a = to_numpy(t)
    return a.astype(np.float64) if a.dtype == NP_DTYPE["bfloat16"] else a


def cuda_event_time(fn: Callable[[], object]) -> tuple[float, float]:
    """The torch.compile tutorial's timing loop on fake_torch's simulated device: (milliseconds
    between two CUDA events around `fn`, the fraction of them some kernel ran). It synchronizes
    first, so that earlier work does not delay the start event."""
    ft.cuda.synchronize()
    busy = TIMELINE.busy_ns
    start = ft.cuda.Event(enable_timing=True)
    end = ft.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    ft.cuda.synchronize()
    ms = start.elapsed_time(end)
    return ms, (TIMELINE.busy_ns - busy) * 1e-6 / ms

