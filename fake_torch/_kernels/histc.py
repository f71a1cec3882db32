"""torch.histc: a histogram of equal-width bins between `min` and `max` (transformers' MoE
experts count the tokens routed to each expert with it).

What CUDA torch launches: the output's zeros (a memset), then one histogram kernel; with
min == max (the default: the data's range) first a min and a max reduction, each read back to
the host (a sync, as `self.min().cpu()`). A value's bin is computed as both of torch's kernels
compute it (below); NaN and values outside [min, max] are not counted.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, bool_
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels._reduce_util import check_out
from fake_torch._kernels.host import item
from fake_torch._kernels.reduction import max as max_
from fake_torch._kernels.reduction import min as min_
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import EXTERN, op
from fake_torch._tensor import Number, Tensor


def _check(x: Tensor, bins: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"histc(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise TypeError(f"histc(): argument 'bins' must be int, not {type(bins).__name__}")
    dt, on_cuda = x.dtype, x.device.type == "cuda"
    if dt is bool_ or dt.is_complex:
        kernel = ("histogram_cuda" if on_cuda else "aminmax_cpu" if dt.is_complex
                  else "linspace_cpu")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[dt]}'")
    if not (dt.is_floating_point or on_cuda):  # CUDA's histc takes integer inputs too
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{SCALAR_NAME[dt]}'")
    if bins <= 0:
        raise RuntimeError("bins must be > 0" if on_cuda else
                           f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _number(v: float) -> str:
    """A bound as c10 prints a double in the error (`1`, `2.5`, `-inf`)."""
    return f"{v:g}"


@op(EXTERN, method=True)
def histc(input: Tensor, bins: int = 100, min: Number = 0, max: Number = 0, *,
          out: None = None) -> Tensor:
    """(bins,) counts of input's elements in equal-width bins over [min, max] (the data's
    range when min == max), in input's dtype."""
    _check(input, bins)
    check_out(out, "histc")
    lo, hi = float(min), float(max)
    result = new_tensor((bins,), input.dtype, input.device)
    launch("zeros", _zero_kernel, result, (), kind="memset")
    # the data's range, read back to the host (torch's meta kernel reads nothing)
    if lo == hi and input.numel() > 0 and input.device.type != "meta":
        lo, hi = float(item(min_(input))), float(item(max_(input)))
    lo, hi = _check_range(lo, hi)
    if input.numel() > 0:
        launch("histc", _histc_kernel, result, (input,), {"bins": bins, "lo": lo, "hi": hi})
    return result


@register_meta("torch.histc")
def _histc_rule(input: Tensor, bins: int = 100, min: Number = 0, max: Number = 0, *,
                out: None = None) -> TensorMeta:
    """(bins,) counts in input's dtype. A range taken from the data (min == max) is checked
    when the kernel reads it."""
    _check(input, bins)
    check_out(out, "histc")
    if float(min) != float(max):
        _check_range(float(min), float(max))
    return TensorMeta((bins,), input.dtype, (1,))


def _check_range(lo: float, hi: float) -> tuple[float, float]:
    """The bins' range: widened by 1 each way when empty, refused when not finite or
    reversed."""
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_number(lo)}, {_number(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return lo, hi


def _zero_kernel(out: np.ndarray) -> None:
    out[...] = 0


def _histc_kernel(out: np.ndarray, x: np.ndarray, *, bins: int, lo: float, hi: float) -> None:
    """ATen's histc (CPU's linear interpolation without the local search, CUDA's getBin):
    bin = (int)((x - lo) * bins / (hi - lo)) in the input's type, `hi` itself in the last
    bin; lo and hi are the ends of linspace(lo, hi, bins + 1) in that type."""
    v = x.reshape(-1)
    t = v.dtype.type
    left, right = t(lo), t(hi)
    v = v[(v >= left) & (v <= right)]  # NaN compares False: not counted
    if v.dtype.kind in "iu":  # CUDA's integer histc divides integers
        pos = (v.astype(np.int64) - int(left)) * bins // (int(right) - int(left))
    else:  # each step rounded to the type (c10::Half and BFloat16 operators round too)
        pos = np.trunc(((v - left) * t(bins)).astype(v.dtype) / (right - left)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    out[...] = np.bincount(pos, minlength=bins)[:bins].astype(out.dtype)
