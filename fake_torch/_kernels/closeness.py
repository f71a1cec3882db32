"""isclose, allclose, equal.

isclose is built from the same ops as torch's composite, so it launches what torch launches (13
kernels for floats). allclose and equal are one launch each, as torch's dispatcher sees them,
and the host then reads the answer (a sync).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch import _meta
from fake_torch._dtype import bool_, from_numpy_dtype, get_default_dtype
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import DTYPE_NAMES, cast_array, quiet_call, tensor_arg
from fake_torch._kernels.arith import add, mul, sub
from fake_torch._kernels.cast import to
from fake_torch._kernels.compare import (
    bitwise_and,
    bitwise_and_,
    bitwise_or_,
    eq,
    isfinite,
    isnan,
    le,
)
from fake_torch._kernels.pointwise_math import abs as abs_
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, register_meta
from fake_torch._opdef import COMPOSITE, HOST, data_dependent, op
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Tensor
from fake_torch._torch_device import CPU


def _check_close_args(a: Tensor, b: Tensor, rtol: float, atol: float) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{DTYPE_NAMES[a.dtype]} did not match {DTYPE_NAMES[b.dtype]}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tol:g}")


@op(COMPOSITE, method=True)
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other|, elementwise. Built from the same ops as
    torch's composite, so it launches what torch launches (13 kernels for floats)."""
    a = tensor_arg(input, "isclose")
    b = tensor_arg(other, "isclose", "other", 2)
    _check_close_args(a, b, rtol, atol)
    close = eq(a, b)
    if equal_nan and (a.dtype.is_floating_point or a.dtype.is_complex):
        close = bitwise_or_(close, bitwise_and(isnan(a), isnan(b)))
    if rtol == 0 and atol == 0:
        return close
    cast_a = to(a, get_default_dtype()) if a.dtype is bool_ else a
    cast_b = b if b.dtype.is_floating_point or b.dtype.is_complex else to(b, get_default_dtype())
    allowed = add(abs_(mul(cast_b, rtol)), atol)
    actual = abs_(sub(cast_a, cast_b))
    return bitwise_or_(close, bitwise_and_(isfinite(actual), le(actual, allowed)))


@register_meta("torch.isclose")
def _isclose_rule(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                  equal_nan: bool = False) -> Output:
    """Every further step is written into `eq(a, b)` in place: its output is the result."""
    a = tensor_arg(input, "isclose")
    b = tensor_arg(other, "isclose", "other", 2)
    _check_close_args(a, b, rtol, atol)
    return call_rule(eq, a, b)


def isclose_np(a: np.ndarray, b: np.ndarray, rtol: float, atol: float,
                equal_nan: bool) -> Any:
    """isclose's arithmetic in numpy, in the dtypes torch's composite uses."""
    close = a == b
    floating = from_numpy_dtype(a.dtype).is_floating_point or a.dtype.kind == "c"
    if equal_nan and floating:
        close |= np.isnan(a) & np.isnan(b)
    if rtol == 0 and atol == 0:
        return close
    fdt = get_default_dtype().np
    ca = a.astype(fdt) if a.dtype == np.bool_ else a
    cb = b if floating else b.astype(fdt)
    allowed = np.abs(cb * cb.dtype.type(rtol)) + cb.dtype.type(atol)
    actual = np.abs(ca - cb)
    return close | (np.isfinite(actual) & (actual <= allowed))


def _allclose_kernel(out: np.ndarray, a: np.ndarray, b: np.ndarray, *, rtol: float,
                     atol: float, equal_nan: bool) -> None:
    def run() -> None:
        out[...] = bool(np.all(isclose_np(a, b, rtol, atol, equal_nan)))

    quiet_call(run)


@op(HOST, method=True, graph_break=data_dependent("aten.allclose.default"))
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element isclose: one "allclose" launch, then the host reads the answer."""
    a = tensor_arg(input, "allclose")
    b = tensor_arg(other, "allclose", "other", 2)
    _check_close_args(a, b, rtol, atol)
    dev = _common.common_device(a, b)
    _common.broadcast_shapes(a._a.shape, b._a.shape)
    if dev.type == "meta":  # torch's reads its answer with item()
        raise RuntimeError(_meta.ITEM)
    answer = Tensor._make(np.zeros((), np.bool_), CPU)
    _common.launch("allclose", _allclose_kernel, answer, (a, b),
                   {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}, dev=dev)
    if dev.type == "cuda":
        _dispatch.host_sync("allclose", reads=(a._a, b._a))
    return bool(answer._a)


def _equal_kernel(out: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                  promo: np.dtype[Any]) -> None:
    def run() -> None:
        same = a.shape == b.shape and bool(np.all(cast_array(a, promo) == cast_array(b, promo)))
        out[...] = same

    quiet_call(run)


@op(HOST, method=True, graph_break=data_dependent("aten.equal.default"))
def equal(input: Tensor, other: Tensor) -> bool:
    """Same shape and equal elements (after type promotion; NaN is unequal to itself):
    one "equal" launch, then the host reads the answer."""
    a = tensor_arg(input, "equal")
    b = tensor_arg(other, "equal", "other", 2)
    dev = _common.common_device(a, b)
    answer = Tensor._make(np.zeros((), np.bool_), CPU)
    _common.launch("equal", _equal_kernel, answer, (a, b),
                   {"promo": _common.result_type(a, b).np}, dev=dev)
    if dev.type == "cuda":
        _dispatch.host_sync("equal", reads=(a._a, b._a))
    return bool(answer._a)
