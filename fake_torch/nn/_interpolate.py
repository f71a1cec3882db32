"""torch.nn.functional.interpolate (and F.adaptive_avg_pool1d, which mode='area' uses on 3-D
inputs): torch's argument handling, then one upsample op, as torch dispatches it:

  nearest          upsample_nearest1d / 2d / 3d            (3-D / 4-D / 5-D input)
  nearest-exact    _upsample_nearest_exact1d / 2d / 3d
  linear, bilinear, trilinear   upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d
  bicubic          upsample_bicubic2d (4-D)
  area             adaptive average pooling (1-D and 2-D; see _kernels/pooling.py)

one launch each on cuda; the nearest ones copy a strided input first (one `clone`), as an H200
showed (torch 2.11.0+cu130, tests/gpu/nnmods_gpu.py: an elementwise copy, then the kernel;
bilinear read the strided input as it was; bicubic zero-filled its output first, a kernel
inside the op that is not counted apart). Source coordinates are computed as ATen's UpSample.h
does, in float32 (float64 for a float64 input): scale = 1 / scale_factor when one was given (and
not recomputed), else in / out; align_corners maps the corners onto each other. Not emulated
(NotImplementedError naming the call): antialias=True, lanczos, area over 3-D spatial inputs,
uint8 bilinear / bicubic.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, uint8
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels.pooling import adaptive_avg_pool2d
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, EXTERN, aten_op, op
from fake_torch._tensor import Tensor

_NEAREST = ("upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d")
_EXACT = ("_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d")
_LINEAR = {3: ("linear", "upsample_linear1d"), 4: ("bilinear", "upsample_bilinear2d"),
           5: ("trilinear", "upsample_trilinear3d")}
for _name in (*_NEAREST, *_EXACT, *(n for _, n in _LINEAR.values()), "upsample_bicubic2d"):
    aten_op(_name, EXTERN)


@op(COMPOSITE, namespace="torch.nn.functional")
def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) to `size`, or by `scale_factor`."""
    how, args = _interpolation(input, size, scale_factor, mode, align_corners,
                               recompute_scale_factor, antialias)
    if how == "upsample":
        return _upsample(input, *args)
    return adaptive_avg_pool1d(input, *args) if input.dim() == 3 else \
        adaptive_avg_pool2d(input, *args)


@register_meta("torch.nn.functional.interpolate")
def _interpolate_rule(input: Tensor, size: int | Sequence[int] | None = None,
                      scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                      align_corners: bool | None = None,
                      recompute_scale_factor: bool | None = None,
                      antialias: bool = False) -> Output:
    """An upsample's fresh contiguous (N, C, *output_size); mode='area' is an adaptive average
    pool's output."""
    how, args = _interpolation(input, size, scale_factor, mode, align_corners,
                               recompute_scale_factor, antialias)
    if how == "upsample":
        shape = (*input.shape[:2], *_upsample_size(input, *args[:4]))
        return TensorMeta(shape, input.dtype, contiguous_strides(shape))
    if input.dim() == 3:
        return _adaptive_avg_pool1d_rule(input, *args)
    return call_rule(adaptive_avg_pool2d, input, *args)


def _interpolation(input: Tensor, size: int | Sequence[int] | None,
                   scale_factor: float | Sequence[float] | None, mode: str,
                   align_corners: bool | None, recompute_scale_factor: bool | None,
                   antialias: bool) -> tuple[str, tuple[Any, ...]]:
    """interpolate's checks and its choice: ("upsample", _upsample's arguments after the
    input) or ("area", the adaptive pool's output size)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scales = _sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if antialias or mode == "lanczos":
        raise NotImplementedError(f"torch.nn.functional.interpolate(mode='{mode}', "
                                  f"antialias={antialias}) is not emulated by fake_torch")
    d = input.dim()
    if d in (3, 4, 5) and mode in ("nearest", "nearest-exact"):
        names = _NEAREST if mode == "nearest" else _EXACT
        return "upsample", (names[d - 3], output_size, scales, "nearest",
                            {"exact": mode == "nearest-exact"})
    if d in (3, 4, 5) and mode == "area":
        assert output_size is not None
        if d in (3, 4):
            return "area", (output_size,)
        raise NotImplementedError("torch.nn.functional.interpolate(mode='area') of a 5-D "
                                  "input (adaptive_avg_pool3d) is not emulated by fake_torch")
    if d in _LINEAR and mode == _LINEAR[d][0]:
        return "upsample", (_LINEAR[d][1], output_size, scales, "linear",
                            {"align_corners": bool(align_corners)})
    if d == 4 and mode == "bicubic":
        return "upsample", ("upsample_bicubic2d", output_size, scales, "cubic",
                            {"align_corners": bool(align_corners)})
    for have, name in _LINEAR.items():
        if mode == name[0] and d in (3, 4, 5):
            raise NotImplementedError(f"Got {d}D input, but {mode} mode needs {have}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {d}D) for the modes: "
        "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
        f"(got {mode})")


def _sizes(input: Tensor, size: int | Sequence[int] | None,
           scale_factor: float | Sequence[float] | None, recompute: bool | None,
           mode: str) -> tuple[list[int] | None, list[float] | None]:
    """(output_size, scale_factors) as interpolate hands them to the op (one is None)."""
    dim = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    output_size: list[int] | None = None
    scales: list[float] | None = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{spatial} and output size of {size}. Please provide input "
                                 "tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(isinstance(s, int) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, "
                                "int] or Tuple[int, int, int], but got size with types "
                                f"{[type(s) for s in size]}")
            output_size = list(size)
        else:
            one: Any = size  # an int (or anything int() takes, as torch's repeat does)
            output_size = [int(one)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{spatial} and scale_factor of shape {scale_factor}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            factor: Any = scale_factor
            scales = [float(factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute = True
    if recompute:
        assert scales is not None
        output_size = [math.floor(spatial[i] * scales[i]) for i in range(dim)]
        scales = None
    return output_size, scales


def _upsample(input: Tensor, name: str, output_size: list[int] | None,
              scales: list[float] | None, kind: str, params: dict[str, Any]) -> Tensor:
    """One upsample launch: the op's own checks (upsample_*_common_check), then the kernel."""
    output_size = _upsample_size(input, name, output_size, scales, kind)
    if kind == "nearest" and input.device.type == "cuda":
        input = input.contiguous()  # the CUDA nearest kernels read a contiguous input
    out = new_tensor((*input.shape[:2], *output_size), input.dtype, input.device)
    launch(name, upsample_kernel, out, (input,),
           {"kind": kind, "scales": None if scales is None else tuple(scales), **params})
    return out


def _upsample_size(input: Tensor, name: str, output_size: list[int] | None,
                   scales: list[float] | None, kind: str) -> list[Any]:
    """upsample_*_common_check: the output's spatial sizes, checked."""
    spatial = list(input.shape[2:])
    if output_size is None:
        assert scales is not None
        output_size = [int(s * f) for s, f in zip(spatial, scales, strict=True)]
    if len(output_size) != len(spatial):
        raise RuntimeError(f"It is expected output_size equals to {len(spatial)}, but got size "
                           f"{len(output_size)}")
    if any(s <= 0 for s in spatial) or any(o <= 0 for o in output_size):
        labels = "DHW"[3 - len(spatial):]
        shown_in = ", ".join(f"{c}: {v}" for c, v in zip(labels, spatial, strict=True))
        shown_out = ", ".join(f"{c}: {v}" for c, v in zip(labels, output_size, strict=True))
        joint = " and" if len(spatial) == 1 else ""
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({shown_in}){joint} output ({shown_out})")
    _check_dtype(name, input, kind)
    return output_size


def _check_dtype(name: str, input: Tensor, kind: str) -> None:
    """Floating inputs; uint8 too for nearest (bilinear and bicubic take uint8 on torch's cpu
    with their own rounding, which fake_torch does not emulate). The texts name the CPU
    kernel that refuses the dtype."""
    if input.dtype.is_floating_point or (kind == "nearest" and input.dtype is uint8):
        return
    if input.dtype is uint8 and name in ("upsample_bilinear2d", "upsample_bicubic2d"):
        raise NotImplementedError(f"torch.nn.functional.interpolate of uint8 input ({name}) "
                                  "is not emulated by fake_torch")
    if input.dim() == 4 and kind in ("nearest", "linear"):
        kernel = f"upsample_{'nearest' if kind == 'nearest' else 'bilinear'}2d_channels_last"
    else:
        kernel = f"compute_indices_weights_{kind}"
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[input.dtype]}'")


def _deprecated(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


@op(COMPOSITE, namespace="torch.nn.functional")
def upsample(input: Tensor, size: int | Sequence[int] | None = None,
             scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated: F.interpolate, after torch's warning."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


@register_meta("torch.nn.functional.upsample")
def _upsample_rule(input: Tensor, size: int | Sequence[int] | None = None,
                   scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                   align_corners: bool | None = None) -> Output:
    return _interpolate_rule(input, size, scale_factor, mode, align_corners)


@op(COMPOSITE, namespace="torch.nn.functional")
def upsample_nearest(input: Tensor, size: int | Sequence[int] | None = None,
                     scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """Deprecated: F.interpolate(mode='nearest'), after torch's warning."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


@register_meta("torch.nn.functional.upsample_nearest")
def _upsample_nearest_rule(input: Tensor, size: int | Sequence[int] | None = None,
                           scale_factor: float | Sequence[float] | None = None) -> Output:
    return _interpolate_rule(input, size, scale_factor, mode="nearest")


@op(COMPOSITE, namespace="torch.nn.functional")
def upsample_bilinear(input: Tensor, size: int | Sequence[int] | None = None,
                      scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """Deprecated: F.interpolate(mode='bilinear', align_corners=True), after torch's
    warning."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


@register_meta("torch.nn.functional.upsample_bilinear")
def _upsample_bilinear_rule(input: Tensor, size: int | Sequence[int] | None = None,
                            scale_factor: float | Sequence[float] | None = None) -> Output:
    return _interpolate_rule(input, size, scale_factor, mode="bilinear", align_corners=True)


@op(COMPOSITE, namespace="torch.nn.functional")
def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    """(N, C, L) or (C, L) -> (..., output_size): torch's adaptive_avg_pool2d over the input
    viewed (..., 1, L)."""
    size = _pool1d_size(input, output_size)
    return adaptive_avg_pool2d(input.unsqueeze(-2), [1, size[0]]).squeeze(-2)


def _adaptive_avg_pool1d_rule(input: Tensor, output_size: int | Sequence[int]) -> Output:
    """Not registered: adaptive_avg_pool2d's rule would have to describe the pool of input's
    unsqueezed view, which the rules cannot be handed (they read tensors)."""
    _pool1d_size(input, output_size)
    raise NotImplementedError("torch.nn.functional.adaptive_avg_pool1d: no output rule (its "
                              "2-D pool runs over a view of the input)")


def _pool1d_size(input: Tensor, output_size: int | Sequence[int]) -> list[int]:
    size = [output_size] if isinstance(output_size, int) else list(output_size)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    if len(size) != 1:
        raise RuntimeError("adaptive_avg_pool1d() argument 'output_size' should contain one "
                           f"int (got {len(size)})")
    return size


# --- kernel ---------------------------------------------------------------------------------


def upsample_kernel(out: np.ndarray, x: np.ndarray, *, kind: str,
                    scales: tuple[float, ...] | None, exact: bool = False,
                    align_corners: bool = False) -> None:
    """out (N, C, *out_sizes) resampled from x (N, C, *in_sizes), one spatial axis at a time
    (nearest: gather; linear: two taps; cubic: four, clamped at the edges)."""
    acc: Any = np.float64 if x.dtype == np.float64 else np.float32
    y = x if kind == "nearest" else x.astype(acc)
    for i, (n_in, n_out) in enumerate(zip(x.shape[2:], out.shape[2:], strict=True)):
        axis = 2 + i
        scale = None if scales is None else scales[i]
        if kind == "nearest":
            y = np.take(y, _nearest_index(n_in, n_out, scale, exact), axis=axis)
        else:
            taps = _cubic_taps if kind == "cubic" else _linear_taps
            shape = [1] * y.ndim
            shape[axis] = n_out
            total = None
            for index, weight in taps(n_in, n_out, scale, align_corners, acc):
                term = np.take(y, index, axis=axis) * weight.reshape(shape)
                total = term if total is None else total + term
            assert total is not None
            y = total
    out[...] = y


def _scale(n_in: int, n_out: int, scale: float | None, align_corners: bool,
           acc: Any) -> Any:
    """area_pixel_compute_scale: input steps per output step."""
    if align_corners:
        return acc((n_in - 1) / (n_out - 1)) if n_out > 1 else acc(0)
    if scale is not None and scale > 0:
        return acc(1.0 / scale)
    return acc(n_in) / acc(n_out)


def _nearest_index(n_in: int, n_out: int, scale: float | None, exact: bool) -> np.ndarray:
    """nearest_idx / nearest_neighbor(_exact)_compute_source_index, in float32."""
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return dst
    if not exact and n_out == 2 * n_in:
        return dst >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    pos = (dst.astype(np.float32) + np.float32(0.5)) * s if exact else dst.astype(np.float32) * s
    index: np.ndarray = np.minimum(np.floor(pos).astype(np.int64), n_in - 1)
    return index


def _source(n_in: int, n_out: int, scale: float | None, align_corners: bool, acc: Any,
            cubic: bool) -> np.ndarray:
    """area_pixel_compute_source_index for every output position."""
    s = _scale(n_in, n_out, scale, align_corners, acc)
    dst = np.arange(n_out).astype(acc)
    if align_corners:
        src: np.ndarray = s * dst
        return src
    src = s * (dst + acc(0.5)) - acc(0.5)
    return src if cubic else np.maximum(src, acc(0))


def _linear_taps(n_in: int, n_out: int, scale: float | None, align_corners: bool,
                 acc: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    src = _source(n_in, n_out, scale, align_corners, acc, cubic=False)
    i0 = src.astype(np.int64)
    lam = np.clip(src - i0.astype(acc), 0, 1).astype(acc)
    i1 = i0 + (i0 < n_in - 1)
    return [(i0, acc(1) - lam), (i1, lam)]


def _cubic_taps(n_in: int, n_out: int, scale: float | None, align_corners: bool,
                acc: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Keys' cubic convolution, A = -0.75, the four taps clamped into the input."""
    src = _source(n_in, n_out, scale, align_corners, acc, cubic=True)
    i = np.floor(src).astype(np.int64)
    t = (src - i.astype(acc)).astype(acc)
    a = acc(-0.75)

    def near(v: np.ndarray) -> np.ndarray:  # |v| <= 1
        w: np.ndarray = ((a + 2) * v - (a + 3)) * v * v + 1
        return w

    def far(v: np.ndarray) -> np.ndarray:  # 1 < |v| < 2
        w: np.ndarray = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
        return w

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    return [(np.clip(i + k - 1, 0, n_in - 1), w.astype(acc)) for k, w in enumerate(weights)]
