"""nan_to_num (and nan_to_num_): NaN, +inf and -inf replaced by numbers; one launch.

As torch: the output keeps the input's dtype (an `out` of another dtype is refused); posinf
and neginf default to the dtype's largest and lowest finite values; the replacements are
converted to the dtype (a posinf too large for float16 becomes inf again); a complex input
has its real and imaginary parts replaced separately; an integer or bool input, which holds
no NaN or infinity, is copied (on CUDA a `copy_` kernel: still one launch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, finfo
from fake_torch._kernels._elementwise import elementwise_meta, inplace, pointwise, tensor_arg
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, op
from fake_torch._tensor import Tensor


def _replace(a: np.ndarray, nan: float, posinf: float, neginf: float) -> np.ndarray:
    """(...) array of a floating dtype: its NaN / +inf / -inf replaced, in its dtype."""
    if np.iscomplexobj(a):
        out = np.empty_like(a)  # parts set apart: 1j * inf would make the real part NaN
        out.real = _replace(a.real, nan, posinf, neginf)
        out.imag = _replace(a.imag, nan, posinf, neginf)
        return out
    with np.errstate(over="ignore"):  # a replacement past the dtype's range: inf, as torch
        values = [np.asarray(v).astype(a.dtype) for v in (nan, posinf, neginf)]
    out = np.where(np.isnan(a), values[0], a)
    out = np.where(a == np.inf, values[1], out)
    return np.where(a == -np.inf, values[2], out).astype(a.dtype, copy=False)


def _nan_to_num(op: str, input: Any, nan: float, posinf: float | None, neginf: float | None,
                out: Tensor | None) -> Tensor:
    x = tensor_arg(input, "nan_to_num")
    dt = x.dtype
    if out is not None and out.dtype != dt:
        raise RuntimeError(f"nan_to_num: dtype of out: {SCALAR_NAME[out.dtype]} should be same "
                           f"as input: {SCALAR_NAME[dt]}")
    if dt.is_floating_point or dt.is_complex:
        info = finfo(dt.to_real() if dt.is_complex else dt)
        hi = info.max if posinf is None else posinf
        lo = info.min if neginf is None else neginf
        return pointwise(op, lambda a: _replace(a, nan, hi, lo), [x], promo=dt, result=dt,
                         out=out)
    return pointwise(op, lambda a: a.copy(), [x], promo=dt, result=dt, out=out)


@op(POINTWISE, method=True)
def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out: Tensor | None = None) -> Tensor:
    return _nan_to_num("nan_to_num", input, nan, posinf, neginf, out)


@op(POINTWISE, method=True)
def nan_to_num_(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    return _nan_to_num("nan_to_num_", input, nan, posinf, neginf, input)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

@register_meta("torch.nan_to_num")
def _nan_to_num_rule(input: Tensor, nan: float = 0.0, posinf: float | None = None,
                     neginf: float | None = None, *, out: Tensor | None = None) -> TensorMeta:
    """The input's dtype, whatever the replacement numbers' types."""
    return elementwise_meta([input], input.dtype, out)


register_meta("torch.nan_to_num_")(inplace(_nan_to_num_rule))
