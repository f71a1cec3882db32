"""torch.linalg.cholesky and torch.cholesky_inverse. Each is one launch that also writes each
matrix's LAPACK `info`, then ATen's _linalg_check_errors: `infos.any().item()` (an `any`
launch and, on cuda, a host sync reading it), raising torch.linalg.LinAlgError when some
matrix failed. Results are column-major per matrix (batch dims outermost), as LAPACK and
cuSOLVER write them."""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, float32, float64, int32
from fake_torch._kernels import _common
from fake_torch._kernels._strides import empty_strided
from fake_torch._kernels.host import item
from fake_torch._kernels.reduction import any as any_
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import EXTERN, op
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Tensor


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): a factorization or inversion failed."""


_LinAlgError.__module__ = "torch._C"


def _matrices(a: Tensor, fn: str) -> None:
    if a.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


def _kernel_dtype(a: Tensor, kernel: str) -> None:
    if a.dtype not in (float32, float64):  # complex tensors are not emulated
        raise NotImplementedError(f'"{kernel}_{"cuda" if a.is_cuda else "cpu"}" not '
                                  f"implemented for '{SCALAR_NAME[a.dtype]}'")


def _column_major(a: Tensor) -> Tensor:
    """An output shaped like `a`: each matrix column-major, the batch dims row-major."""
    return empty_strided(a.shape, column_major_strides(tuple(a.shape)), a.dtype, a.device)


def column_major_strides(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """Batched column-major strides: each matrix column-major, the batch dims row-major."""
    n = max(shape[-1], 1)  # (ATen's batched column-major strides count an empty dim as 1)
    batch: list[Any] = [0] * (len(shape) - 2)
    acc = n * n
    for i in range(len(shape) - 3, -1, -1):
        batch[i] = acc
        acc = acc * max(shape[i], 1)
    return (*batch, 1, n)


def _column_major_meta(a: Tensor) -> TensorMeta:
    """The rule's description of `_launch_checked`'s result (its info is checked on the
    values, when the kernel runs)."""
    return TensorMeta(tuple(a.shape), a.dtype, column_major_strides(tuple(a.shape)))


def _check_errors(info: Tensor, message: str, fn: str) -> None:
    """ATen's _linalg_check_errors: nothing to read when no info is set (`any`, then its
    `item()`, a host sync on cuda); else the first failing matrix's LinAlgError. On meta
    nothing is checked (torch's meta kernels leave info unread)."""
    if info.device.type == "meta" or not item(any_(info)):
        return
    flat = info._a.reshape(-1)
    first = int(np.flatnonzero(flat)[0])
    where = f"(Batch element {first}): " if info.dim() else ""
    raise _LinAlgError(f"{fn}: {where}{message.format(int(flat[first]))}")


def _launch_checked(aten: str, kernel: _dispatch.Kernel, a: Tensor, upper: bool, message: str,
                    fn: str) -> Tensor:
    """One `aten` launch writing a column-major result and each matrix's info, then the info
    check (`message` formats the first failing matrix's code)."""
    result = _column_major(a)
    info = _common.new_tensor(a.shape[:-2], int32, a.device)
    _common.launch(aten, kernel, (result, info), (a,), {"upper": upper})
    _check_errors(info, message, fn)
    return result


def _cholesky_kernel(out: np.ndarray, info: np.ndarray, a: np.ndarray, *,
                     upper: bool) -> None:
    if not out.size:  # 0 x 0 matrices: nothing to factor, nothing failed
        info[...] = 0
        return
    mats = a.reshape(-1, *a.shape[-2:])
    results, codes = out.reshape(-1, *out.shape[-2:]), info.reshape(-1)
    for i, m in enumerate(mats):
        lower = np.tril(m) + np.tril(m, -1).T if not upper else np.triu(m) + np.triu(m, 1).T
        try:
            factor = np.linalg.cholesky(lower, upper=upper)
            codes[i] = 0 if np.isfinite(factor).all() else _failing_minor(lower)
        except np.linalg.LinAlgError:
            factor = np.zeros_like(m)
            codes[i] = _failing_minor(lower)
        results[i] = factor


def _failing_minor(sym: np.ndarray) -> int:
    """The order of the first leading minor that is not positive-definite (LAPACK's info)."""
    for k in range(1, sym.shape[0] + 1):
        try:
            if not np.isfinite(np.linalg.cholesky(sym[:k, :k])).all():
                return k
        except np.linalg.LinAlgError:
            return k
    return int(sym.shape[0])


@op(EXTERN, namespace="torch.linalg", aten=("linalg_cholesky_ex",))
def cholesky(A: Tensor, *, upper: bool = False, out: None = None) -> Tensor:
    """L (lower, A = L L^T) or, with upper=True, U (A = U^T U) of each symmetric positive-
    definite matrix; only the triangle it returns is read from A."""
    _check_cholesky(A, upper, out)
    return _launch_checked("linalg_cholesky_ex", _cholesky_kernel, A, upper,
                           "The factorization could not be completed because the input is not "
                           "positive-definite (the leading minor of order {} is not "
                           "positive-definite).", "linalg.cholesky")


@register_meta("torch.linalg.cholesky")
def _cholesky_rule(A: Tensor, *, upper: bool = False, out: None = None) -> TensorMeta:
    _check_cholesky(A, upper, out)
    return _column_major_meta(A)


def _check_cholesky(A: Tensor, upper: bool, out: None) -> None:
    if out is not None:
        raise NotImplementedError("torch.linalg.cholesky(..., out=...) is not emulated by "
                                  "fake_torch")
    if not isinstance(upper, bool):
        raise TypeError("linalg_cholesky(): argument 'upper' must be bool, not "
                        f"{type(upper).__name__}")
    _matrices(A, "linalg.cholesky")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError("linalg.cholesky: Expected a floating point or complex tensor as "
                           f"input. Got {SCALAR_NAME[A.dtype]}")
    _kernel_dtype(A, "cholesky")


def _cholesky_inverse_kernel(out: np.ndarray, info: np.ndarray, factor: np.ndarray, *,
                             upper: bool) -> None:
    if not out.size:
        info[...] = 0
        return
    mats = factor.reshape(-1, *factor.shape[-2:])
    results, codes = out.reshape(-1, *out.shape[-2:]), info.reshape(-1)
    for i, f in enumerate(mats):
        tri = np.triu(f) if upper else np.tril(f)
        zeros = np.flatnonzero(np.diagonal(tri) == 0)
        if zeros.size:
            codes[i], results[i] = zeros[0] + 1, 0
            continue
        codes[i] = 0
        inv = np.linalg.inv(tri)
        results[i] = inv @ inv.T if upper else inv.T @ inv


@op(EXTERN, method=True)
def cholesky_inverse(input: Tensor, upper: bool = False, *, out: None = None) -> Tensor:
    """The inverse of A from its Cholesky factor (A = L L^T, or U^T U with upper=True)."""
    _check_cholesky_inverse(input, out)
    return _launch_checked("cholesky_inverse", _cholesky_inverse_kernel, input, upper,
                           "The diagonal element {} is zero, the inversion could not be "
                           "completed because the input matrix is singular.", "cholesky_inverse")


@register_meta("torch.cholesky_inverse")
def _cholesky_inverse_rule(input: Tensor, upper: bool = False, *, out: None = None
                           ) -> TensorMeta:
    _check_cholesky_inverse(input, out)
    return _column_major_meta(input)


def _check_cholesky_inverse(input: Tensor, out: None) -> None:
    if out is not None:
        raise NotImplementedError("torch.cholesky_inverse(..., out=...) is not emulated by "
                                  "fake_torch")
    _matrices(input, "cholesky_inverse")
    _kernel_dtype(input, "cholesky_inverse_out")
