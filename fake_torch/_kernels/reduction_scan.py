"""Ops along one dim that keep its size: softmax, log_softmax, cumsum (one launch each).

float16/bfloat16 compute in float32 and round once on store, as torch's kernels do.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from fake_torch._dtype import dtype, float16, float32, float64, int64
from fake_torch._kernels._common import launch, new_tensor, new_tensor_exact
from fake_torch._kernels._elementwise import enter_quiet, exit_quiet
from fake_torch._kernels._reduce_util import (
    CPP_NAME,
    SCALAR_NAME,
    acc_np,
    cast,
    check_dtype_arg,
    check_out,
)
from fake_torch._kernels._strides import same_meta
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import EXTERN, REDUCTION, method, op
from fake_torch._simulated import _dispatch, _machine
from fake_torch._simulated._dispatch import Kernel
from fake_torch._tensor import Tensor, wrap_dim


@op(REDUCTION, method=True, aten=("_softmax",))
def softmax(input: Tensor, dim: int, dtype: dtype | None = None) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along `dim`; launches `_softmax`."""
    if dtype is None:
        out = _plain_softmax("_softmax", input, dim)
        if out is not None:
            return out
    return _softmax_like("_softmax", "softmax", input, dim, dtype)


@op(REDUCTION, method=True, aten=("_log_softmax",))
def log_softmax(input: Tensor, dim: int, dtype: dtype | None = None) -> Tensor:
    """(x - max) - log(sum(exp(x - max))) along `dim`; launches `_log_softmax`."""
    if dtype is None:
        out = _plain_softmax("_log_softmax", input, dim)
        if out is not None:
            return out
    return _softmax_like("_log_softmax", "log_softmax", input, dim, dtype)


# op -> {(input dtype, dim, ndim): the bound kernel} of the calls `_plain_softmax` takes: only
# float32/float64 inputs of 1 dim or more, with an int dim in range (so a bounded few)
_PLAIN: dict[str, dict[tuple[dtype, int, int], Kernel]] = {"_softmax": {}, "_log_softmax": {}}


def _plain_softmax(op: str, x: Tensor, dim: int) -> Tensor | None:
    """The commonest call of softmax or log_softmax (`op`, its launch name), or None when
    this is not it: `x` a Tensor of float32 or float64 with 1 dim or more, `dim` a Python int
    in range, no dtype=. What `_softmax_like` then does, without its checks and calls: a
    row-major output of x's dtype and shape, the kernel `softmax_kernel_of` binds for that
    axis (looked up by (dtype, dim, ndim), not built from its normalized key), launched on x
    as it is (no conversion); on a single cuda device straight through the door (as
    `launch` would), any other device through `launch`. The caller falls back on None."""
    if dim.__class__ is not int or not isinstance(x, Tensor):
        return None
    a = x._a
    dt = x._dtype
    kernels = _PLAIN[op]
    kernel = kernels.get((dt, dim, a.ndim))
    if kernel is None:
        ndim = a.ndim
        if (dt is not float32 and dt is not float64) or not -ndim <= dim < ndim:
            return None  # (0-dim, out of range: the general path's texts)
        kernel = kernels[(dt, dim, ndim)] = softmax_kernel_of(
            dim % ndim, acc_np(dt), op == "_log_softmax", ndim == 1)
    dev = x._device
    out = new_tensor_exact(a.shape, dt, dev)
    if dev.type == "cuda" and len(_machine.MACHINE.devices) == 1:
        _dispatch.launch(op, kernel, (out._a,), (a,), None, on_cuda=True)
    else:  # (cpu, meta, one of several GPUs: `launch` knows what each needs)
        launch(op, kernel, out, (x,))
    return out


def _softmax_like(op: str, name: str, x: Tensor, dim: int, dt: dtype | None) -> Tensor:
    axis, out_dt = _softmax_plan(op, name, x, dim, dt)
    ndim = x._a.ndim
    # torch converts the input first (`_to_copy`), except that CUDA has a half-in, float-out
    # kernel: softmax(half_cuda, dtype=torch.float32) is the one `_softmax` launch.
    half_to_float = x._device.type == "cuda" and x._dtype is float16 and out_dt is float32
    src = x if half_to_float or x._dtype is out_dt else cast(x, out_dt)
    out = new_tensor_exact(x._a.shape, out_dt, x._device)
    launch(op, softmax_kernel_of(axis if ndim > 0 else None, acc_np(out_dt),
                                 op == "_log_softmax", ndim == 1), out, (src,))
    return out


_SOFTMAX_KERNELS: dict[tuple[int | None, np.dtype[Any], bool, bool], Kernel] = {}


def softmax_kernel_of(axis: int | None, acc: np.dtype[Any], log: bool, flat: bool) -> Kernel:
    """`_softmax_kernel` with its params bound, made once per (axis, acc, log, flat): the door
    calls it with the buffers alone (no params dict to build and pass). `flat`: a 1-d input,
    whose reductions are scalars (no keepdims row to broadcast: a third less of numpy's time)."""
    key = (axis, acc, log, flat)
    kernel = _SOFTMAX_KERNELS.get(key)
    if kernel is None:
        if flat and not log:
            kernel = _softmax_flat_of(acc)
        else:
            kernel = functools.partial(_softmax_kernel, axis=axis, acc=acc, log=log)
        kernel = _SOFTMAX_KERNELS.setdefault(key, kernel)
    return kernel


def _softmax_flat_of(acc: np.dtype[Any]) -> Kernel:
    """The kernel of softmax over a 1-d `x` into `out` computing in `acc`: `_softmax_kernel`'s
    steps, each reduction over the one row (the same numpy reductions, so the same values bit
    for bit) into a 0-dim array of this thread's: the next ufunc reads it as it is, where a
    numpy scalar result would be converted back into an array (a tenth of the kernel's
    instructions). One function, its ufuncs bound as defaults: no frame but its own."""
    scratch = threading.local()  # .row: this thread's 0-dim `acc` array (another thread's
    # kernel may run meanwhile: a cpu kernel runs outside the timeline's lock)

    def softmax_flat(out: np.ndarray, x: np.ndarray, acc: np.dtype[Any] = acc,
                     subtract: np.ufunc = np.subtract, exp: np.ufunc = np.exp,
                     divide: np.ufunc = np.divide, max_of: Any = np.maximum.reduce,
                     sum_of: Any = np.add.reduce, scratch: Any = scratch) -> None:
        if out.size == 0:
            return
        xd = x.dtype
        a = x if xd is acc or xd == acc else x.astype(acc)
        od = out.dtype
        in_place = od is acc or od == acc  # else compute in acc and round once on store
        shifted = out if in_place else np.empty(a.shape, acc)
        try:
            r = scratch.row
        except AttributeError:  # (this thread's first call)
            r = scratch.row = np.empty((), acc)
        token = enter_quiet()
        try:  # (positional arguments: no keyword parsing; r holds the max, then the sum)
            max_of(a, 0, None, r)
            subtract(a, r, shifted)  # <= 0
            exp(shifted, shifted)
            sum_of(shifted, 0, None, r)
            divide(shifted, r, shifted)
            if not in_place:
                out[...] = shifted
        finally:
            exit_quiet(token)
    return softmax_flat


def _softmax_plan(op: str, name: str, x: Tensor, dim: int, dt: dtype | None
                  ) -> tuple[int, dtype]:
    """softmax's checks; its (dim, output dtype)."""
    if not isinstance(dim, int):
        raise TypeError(f"{op[1:]}(): argument 'dim' must be int, not {type(dim).__name__}")
    if dt is not None:
        check_dtype_arg(dt, op[1:])
    ndim = x._a.ndim
    # (an int dim in range, the common call, wrapped without a call)
    axis = dim % ndim if dim.__class__ is int and -ndim <= dim < ndim else wrap_dim(dim, ndim)
    out_dt = dt or x._dtype
    if not out_dt.is_floating_point:  # the kernel torch's dtype dispatch names, by device
        kernel = ("host_softmax" if x.device.type == "cuda" else
                  f"{name}_lastdim_kernel_impl" if axis == max(ndim - 1, 0) else
                  f"{name}_kernel_impl")
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{SCALAR_NAME[out_dt]}'")
    return axis, out_dt


def _softmax_kernel(out: np.ndarray, x: np.ndarray, *, axis: int | None, acc: np.dtype[Any],
                    log: bool) -> None:
    if out.size == 0:
        return
    a = x if x.dtype == acc else x.astype(acc)
    in_place = out.dtype == acc  # else compute in float32 and round once on store
    shifted = out if in_place else np.empty(a.shape, acc)
    if axis is None:  # a 0-dim input: a one-element row
        a, shifted, axis = a.reshape(1), shifted.reshape(1), 0
    # one ufunc call per step, each into a buffer it is given (the ndarray methods a.max(),
    # e.sum() are the same reductions behind a Python wrapper). Quiet: a row whose max is +-inf
    # gives inf - inf = nan there, as in torch, where numpy would warn.
    token = enter_quiet()
    try:
        np.subtract(a, np.maximum.reduce(a, axis=axis, keepdims=True), out=shifted)  # <= 0
        if log:
            total = np.add.reduce(np.exp(shifted), axis=axis, keepdims=True)
            np.subtract(shifted, np.log(total), out=shifted)
        else:
            np.exp(shifted, out=shifted)  # cannot overflow: shifted <= 0
            np.divide(shifted, np.add.reduce(shifted, axis=axis, keepdims=True), out=shifted)
        if not in_place:
            out[...] = shifted.reshape(out.shape)  # (one rounding, on store)
    finally:
        exit_quiet(token)


@op(EXTERN, method=True)
def cumsum(input: Tensor, dim: int, *, dtype: dtype | None = None,
           out: None = None) -> Tensor:
    """Running sum along `dim`; ints and bools accumulate into int64."""
    axis, dt = _cumsum_args(input, dim, dtype, out)
    result = new_tensor(input.shape, dt, input.device)
    launch("cumsum", _cumsum_kernel, result, (input,),
           {"axis": axis if input.dim() > 0 else None, "acc": acc_np(dt)})
    return result


@register_meta("torch.cumsum")
def _cumsum_rule(input: Tensor, dim: int, *, dtype: dtype | None = None,
                 out: None = None) -> TensorMeta:
    _, dt = _cumsum_args(input, dim, dtype, out)
    shape = tuple(input.shape)
    return TensorMeta(shape, dt, contiguous_strides(shape))


def _cumsum_args(input: Tensor, dim: int, dtype: dtype | None, out: None) -> tuple[int, dtype]:
    """cumsum's checks; the dim it runs along and its output's dtype."""
    check_out(out, "cumsum")
    if not isinstance(dim, int):
        raise TypeError(f"cumsum(): argument 'dim' must be int, not {type(dim).__name__}")
    check_dtype_arg(dtype, "cumsum")
    axis = wrap_dim(dim, input.dim())
    dt = dtype or (input.dtype if input.dtype.is_floating_point or input.dtype.is_complex
                   else int64)
    return axis, dt


@method(EXTERN)
def cumsum_(input: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
    """In-place running sum along `dim` (Tensor.cumsum_); keeps input's dtype."""
    axis = _cumsum__dim(input, dim, dtype)
    launch("cumsum_", _cumsum_kernel, input, (input,),
           {"axis": axis if input.dim() > 0 else None, "acc": acc_np(input.dtype)})
    return input


@register_meta("Tensor.cumsum_")
def _cumsum__rule(input: Tensor, dim: int, *, dtype: dtype | None = None) -> TensorMeta:
    _cumsum__dim(input, dim, dtype)
    return same_meta(input)


def _cumsum__dim(input: Tensor, dim: int, dtype: dtype | None) -> int:
    if dtype is not None and dtype is not input.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {CPP_NAME[input.dtype]} and "
                           f"output tensor dtype {CPP_NAME[dtype]} should match")
    return wrap_dim(dim, input.dim())


def _cumsum_kernel(out: np.ndarray, x: np.ndarray, *, axis: int | None,
                   acc: np.dtype[Any]) -> None:
    out[...] = np.cumsum(x.astype(acc, copy=False), axis=axis).reshape(out.shape)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

def _softmax_rule(op: str, name: str) -> Any:
    def rule(input: Tensor, dim: int, dtype: dtype | None = None) -> TensorMeta:
        """A new row-major tensor of input's shape, in the output dtype."""
        _, out_dt = _softmax_plan(op, name, input, dim, dtype)
        return TensorMeta(tuple(input.shape), out_dt, contiguous_strides(input.shape))
    return rule


register_meta("torch.softmax")(_softmax_rule("_softmax", "softmax"))
register_meta("torch.log_softmax")(_softmax_rule("_log_softmax", "log_softmax"))
