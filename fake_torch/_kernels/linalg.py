"""Matrix products: matmul/@, mm, bmm, addmm, baddbmm, dot, mv, outer (einsum: linalg_einsum).

`matmul` follows torch's `_matmul_impl` step by step, so it launches what torch's dispatcher
launches: dot (1-D @ 1-D), mv (2-D @ 1-D), mm (2-D @ 2-D, 1-D @ 2-D, and N-D @ 2-D "folded"
into one mm when the batch dims view as rows), else one bmm over the broadcast batch, with a
`clone` wherever torch's reshape has to copy.

float16/bfloat16 products accumulate in float32 and round once on store, as torch's GEMMs do.
Integer products work (torch's CPU GEMM supports them); bool raises torch's error.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fake_torch._dtype import CPP_NAME, SCALAR_NAME, bool_, dtype
from fake_torch._kernels import _linalg_views as v
from fake_torch._kernels._common import (
    broadcast_shapes,
    common_device,
    launch,
    new_tensor,
    new_tensor_exact,
    result_type,
)
from fake_torch._kernels._elementwise import enter_quiet, exit_quiet
from fake_torch._kernels._reduce_util import acc_np, check_out
from fake_torch._kernels._strides import same_meta
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, EXTERN, method, op
from fake_torch._simulated._dispatch import Kernel
from fake_torch._tensor import Number, Tensor
from fake_torch._torch_device import device


def _need_tensor(fn: str, name: str, position: int, x: object) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")


def _refuse_bool(kernel_name: str, dt: dtype) -> None:
    if dt is bool_:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for 'Bool'")


def _shape_text(t: Tensor) -> str:
    return "x".join(str(s) for s in t.shape)


# --- the GEMM entry points -------------------------------------------------------------------


@op(EXTERN, method=True)
def mm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """(n, m) @ (m, p) -> (n, p); into `out` when given (transformers' MoE fallback writes
    each expert's rows into a slice of one output)."""
    dev, shape = _check_mm(input, mat2)
    dt = input._dtype
    if out is not None:
        return _mm_out(input, mat2, out, dev)
    result = new_tensor_exact(shape, dt, dev)
    launch("mm", matmul_kernel_of(acc_np(dt)), result, (input, mat2))
    return result


def _product(shape: tuple[Any, ...], dt: dtype) -> TensorMeta:
    """A product's output: a fresh contiguous tensor."""
    return TensorMeta(shape, dt, contiguous_strides(shape))


@register_meta("torch.mm")
def _mm_rule(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> TensorMeta:
    _, shape = _check_mm(input, mat2, rule=True)
    if out is not None:
        raise NotImplementedError("torch.mm(..., out=): no output rule (writes `out`)")
    return _product(shape, input.dtype)


def _check_mm(input: Tensor, mat2: Tensor, *, rule: bool = False
              ) -> tuple[device, tuple[Any, Any]]:
    """mm's checks; its device and its output's shape. The kernel reads the shapes from the
    arrays; the output `rule` from Tensor.shape, whose sizes may be symbolic."""
    if not isinstance(mat2, Tensor):
        _need_tensor("mm", "mat2", 2, mat2)
    dev = input._device
    if mat2._device is not dev:
        dev = common_device(input, mat2)
    shape1, shape2 = (input.shape, mat2.shape) if rule else (input._a.shape, mat2._a.shape)
    if len(shape1) != 2:
        raise RuntimeError("self must be a matrix")
    if len(shape2) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if shape1[1] != shape2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(input)} "
                           f"and {_shape_text(mat2)})")
    dt = input._dtype
    if dt is not mat2._dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{CPP_NAME[dt]} != {CPP_NAME[mat2._dtype]}")
    if dt is bool_:
        _refuse_bool("addmm_impl_cpu_", dt)
    return dev, (shape1[0], shape2[1])


def _mm_out(input: Tensor, mat2: Tensor, out: Tensor, dev: device) -> Tensor:
    """mm into `out` of the product's shape and dtype. cuBLAS writes a row- or column-major
    `out` (unit stride one way, a leading dimension >= the extent the other) in place; any
    other is first cloned contiguous and copied back (ATen's prepare_matrix_for_cublas:
    clone, gemm, copy_)."""
    _need_tensor("mm", "out", 3, out)
    shape = (input.shape[0], mat2.shape[1])
    if out.dtype is not input.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {CPP_NAME[input.dtype]}, but got "
                           f"{CPP_NAME[out.dtype]} instead")
    if out.device != dev:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {dev} and {out.device}!")
    if tuple(out.shape) != shape:
        raise NotImplementedError(f"torch.mm(..., out=): resizing an out tensor of shape "
                                  f"{list(out.shape)} to {list(shape)} is not emulated by "
                                  "fake_torch; pass one of the product's shape")
    params = {"acc": acc_np(input.dtype)}
    rows, cols = out.stride()
    if (cols == 1 and rows >= max(1, shape[1])) or (rows == 1 and cols >= max(1, shape[0])):
        launch("mm", _matmul_kernel, out, (input, mat2), params)
        return out
    from fake_torch._kernels.cast import copy_  # (cast imports the op modules' helpers)
    from fake_torch._kernels.shape import clone

    staged = clone(out)  # a non-dense tensor clones contiguous
    launch("mm", _matmul_kernel, staged, (input, mat2), params)
    copy_(out, staged)
    return out


@op(EXTERN, method=True)
def bmm(input: Tensor, mat2: Tensor, *, out: None = None) -> Tensor:
    """(b, n, m) @ (b, m, p) -> (b, n, p)."""
    check_out(out, "bmm")
    _need_tensor("bmm", "mat2", 2, mat2)
    dev = common_device(input, mat2)
    _check_batches(input, mat2)
    result = new_tensor((input.shape[0], input.shape[1], mat2.shape[2]), input.dtype, dev)
    launch("bmm", _matmul_kernel, result, (input, mat2), {"acc": acc_np(input.dtype)})
    return result


@register_meta("torch.bmm")
def _bmm_rule(input: Tensor, mat2: Tensor, *, out: None = None) -> TensorMeta:
    check_out(out, "bmm")
    _need_tensor("bmm", "mat2", 2, mat2)
    common_device(input, mat2)
    _check_batches(input, mat2)
    return _product((input.shape[0], input.shape[1], mat2.shape[2]), input.dtype)


def _check_batches(batch1: Tensor, batch2: Tensor) -> None:
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    want = [batch1.shape[0], batch1.shape[2]]
    if list(batch2.shape[:2]) != want:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"{want} but got: {list(batch2.shape[:2])}.")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_NAME[batch1.dtype]} but found "
                           f"{SCALAR_NAME[batch2.dtype]}")
    _refuse_bool("bmm", batch1.dtype)


@op(EXTERN, method=True)
def dot(input: Tensor, tensor: Tensor, *, out: None = None) -> Tensor:
    """The inner product of two 1-D tensors (a 0-dim tensor)."""
    dev = _check_dot(input, tensor, out)
    result = new_tensor((), input.dtype, dev)
    launch("dot", _matmul_kernel, result, (input, tensor), {"acc": acc_np(input.dtype)})
    return result


@register_meta("torch.dot")
def _dot_rule(input: Tensor, tensor: Tensor, *, out: None = None) -> TensorMeta:
    _check_dot(input, tensor, out)
    return _product((), input.dtype)


def _check_dot(input: Tensor, tensor: Tensor, out: None) -> device:
    check_out(out, "dot")
    _need_tensor("dot", "tensor", 2, tensor)
    dev = common_device(input, tensor)
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D "
                           "tensors")
    if input.dtype is not tensor.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{SCALAR_NAME[input.dtype]} and {SCALAR_NAME[tensor.dtype]}")
    n, m = input.shape[0], tensor.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    _refuse_bool("dot", input.dtype)
    return dev


@op(EXTERN, method=True)
def mv(input: Tensor, vec: Tensor, *, out: None = None) -> Tensor:
    """(n, m) @ (m,) -> (n,)."""
    dev = _check_mv(input, vec, out)
    result = new_tensor((input.shape[0],), input.dtype, dev)
    launch("mv", _matmul_kernel, result, (input, vec), {"acc": acc_np(input.dtype)})
    return result


@register_meta("torch.mv")
def _mv_rule(input: Tensor, vec: Tensor, *, out: None = None) -> TensorMeta:
    _check_mv(input, vec, out)
    return _product((input.shape[0],), input.dtype)


def _check_mv(input: Tensor, vec: Tensor, out: None) -> device:
    check_out(out, "mv")
    _need_tensor("mv", "vec", 2, vec)
    dev = common_device(input, vec)
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, "
                           f"{vec.dim()}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({_shape_text(input)}), vec ({vec.shape[0]})")
    if input.dtype is not vec.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{SCALAR_NAME[vec.dtype]}, {SCALAR_NAME[input.dtype]}, and "
                           f"{SCALAR_NAME[vec.dtype]}")
    _refuse_bool("addmv_impl_cpu", input.dtype)
    return dev


def _matmul_kernel(out: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                   acc: np.dtype[Any]) -> None:
    matmul_kernel_of(acc)(out, a, b)


_MATMUL_KERNELS: dict[np.dtype[Any], Kernel] = {}


def matmul_kernel_of(acc: np.dtype[Any]) -> Kernel:
    """The product kernel accumulating in `acc`, made once per acc: mm's launch passes the
    door no params (no dict to build, no keyword call)."""
    kernel = _MATMUL_KERNELS.get(acc)
    if kernel is None:
        def kernel(out: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
            token = enter_quiet()  # (inf * 0 in a product: numpy warns, torch says nothing)
            try:
                if a.dtype == acc and out.ndim >= 2:
                    np.matmul(a, b, out=out)  # a fresh output never overlaps its inputs
                else:
                    out[...] = np.matmul(a.astype(acc, copy=False), b.astype(acc, copy=False))
            finally:
                exit_quiet(token)
        kernel = _MATMUL_KERNELS.setdefault(acc, kernel)
    return kernel


# --- addmm, baddbmm: beta * input + alpha * (product) ------------------------------------------


@op(EXTERN, method=True)
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1, alpha: Number = 1,
          out: None = None) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), `input` broadcast to (n, p); beta=0 ignores it
    (NaN in it does not propagate)."""
    if out is not None:
        check_out(out, "addmm")
    dev = _check_addmm(input, mat1, mat2)
    bias = v.expand(input, (mat1._a.shape[0], mat2._a.shape[1]))
    result = new_tensor_exact(bias._a.shape, input._dtype, dev)
    _launch_addmm("addmm", result, bias, mat1, mat2, beta, alpha)
    return result


@register_meta("torch.addmm")
def _addmm_rule(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1,
                alpha: Number = 1, out: None = None) -> TensorMeta:
    check_out(out, "addmm")
    _check_addmm(input, mat1, mat2, rule=True)
    return _product(_bias_shape(input, (mat1.shape[0], mat2.shape[1])), input.dtype)


def _bias_shape(input: Tensor, want: tuple[Any, ...]) -> tuple[Any, ...]:
    """The shape `input` broadcasts to as the bias (expand's checks and errors)."""
    from fake_torch._kernels.expand import expand_geometry

    return expand_geometry(input, (want,))[0]


@method(EXTERN)
def addmm_(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1,
           alpha: Number = 1) -> Tensor:
    """In-place addmm into `input` (Tensor.addmm_)."""
    _check_addmm(input, mat1, mat2)
    _check_inplace_shape(input, (mat1.shape[0], mat2.shape[1]))
    _launch_addmm("addmm_", input, input, mat1, mat2, beta, alpha)
    return input


@register_meta("Tensor.addmm_")
def _addmm__rule(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1,
                 alpha: Number = 1) -> TensorMeta:
    _check_addmm(input, mat1, mat2, rule=True)
    _check_inplace_shape(input, (mat1.shape[0], mat2.shape[1]))
    return same_meta(input)


def _check_addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, rule: bool = False) -> device:
    """addmm's checks; its device. The kernel reads the shapes from the arrays; the output
    `rule` from Tensor.shape, whose sizes may be symbolic."""
    dev = input._device
    if mat1._device is not dev or mat2._device is not dev:
        dev = common_device(input, mat1, mat2)
    shape1, shape2 = (mat1.shape, mat2.shape) if rule else (mat1._a.shape, mat2._a.shape)
    for name, shape in (("mat1", shape1), ("mat2", shape2)):
        if len(shape) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(shape)}-D tensor")
    dt = mat1._dtype
    if dt is not mat2._dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                           f"{SCALAR_NAME[dt]} and {SCALAR_NAME[mat2._dtype]}")
    if input._dtype is not dt:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{SCALAR_NAME[input._dtype]} and {SCALAR_NAME[dt]}")
    if shape1[1] != shape2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(mat1)} "
                           f"and {_shape_text(mat2)})")
    if dt is bool_:
        _refuse_bool("addmm_impl_cpu_", dt)
    return dev


@op(EXTERN, method=True)
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
            alpha: Number = 1, out: None = None) -> Tensor:
    """beta * input + alpha * bmm(batch1, batch2), `input` broadcast to (b, n, p)."""
    check_out(out, "baddbmm")
    dev = common_device(input, batch1, batch2)
    bias = v.expand(input, (batch1.size(0), batch1.size(1), batch2.size(2)))
    _check_baddbmm(input, batch1, batch2)
    result = new_tensor(bias.shape, input.dtype, dev)
    _launch_addmm("baddbmm", result, bias, batch1, batch2, beta, alpha)
    return result


@register_meta("torch.baddbmm")
def _baddbmm_rule(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
                  alpha: Number = 1, out: None = None) -> TensorMeta:
    check_out(out, "baddbmm")
    common_device(input, batch1, batch2)
    shape = _bias_shape(input, (batch1.size(0), batch1.size(1), batch2.size(2)))
    _check_baddbmm(input, batch1, batch2)
    return _product(shape, input.dtype)


@method(EXTERN)
def baddbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
             alpha: Number = 1) -> Tensor:
    """In-place baddbmm into `input` (Tensor.baddbmm_)."""
    common_device(input, batch1, batch2)
    _check_inplace_shape(input, (batch1.size(0), batch1.size(1), batch2.size(2)))
    _check_baddbmm(input, batch1, batch2)
    _launch_addmm("baddbmm_", input, input, batch1, batch2, beta, alpha)
    return input


@register_meta("Tensor.baddbmm_")
def _baddbmm__rule(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
                   alpha: Number = 1) -> TensorMeta:
    common_device(input, batch1, batch2)
    _check_inplace_shape(input, (batch1.size(0), batch1.size(1), batch2.size(2)))
    _check_baddbmm(input, batch1, batch2)
    return same_meta(input)


def _check_baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor) -> None:
    if batch1.dim() == 3 and batch2.dim() == 3 and input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {CPP_NAME[input.dtype]}, "
                           f"batch1: {CPP_NAME[batch1.dtype]}, batch2: "
                           f"{CPP_NAME[batch2.dtype]}")
    _check_batches(batch1, batch2)


def _check_inplace_shape(input: Tensor, want: tuple[int, ...]) -> None:
    """An in-place result must already have the result's shape (broadcasting is refused)."""
    _bias_shape(input, want)  # torch's error text when it could not even broadcast
    if tuple(input.shape) != want:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(input.shape)} and "
                           f"output tensor size {list(want)} should match")


def _launch_addmm(op: str, result: Tensor, bias: Tensor, a: Tensor, b: Tensor, beta: Number,
                  alpha: Number) -> None:
    dt = result._dtype
    if not dt.is_floating_point:  # integer GEMMs take integer scalars, as in torch
        beta, alpha = int(beta), int(alpha)
    launch(op, _addmm_kernel, result, (bias, a, b),
           {"beta": beta, "alpha": alpha, "acc": acc_np(dt), "fresh": op == "addmm"})


def _addmm_kernel(out: np.ndarray, bias: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                  beta: Number, alpha: Number, acc: np.dtype[Any], fresh: bool = False) -> None:
    if fresh and beta == 1 and alpha == 1 and out.dtype == acc and a.dtype == acc:
        # (F.linear's call) the product, then the bias, in out itself: the same two roundings
        # without the temporaries; `fresh`: out is a new buffer, overlapping no input
        np.matmul(a, b, out=out)
        np.add(out, bias, out=out)
        return
    product = np.matmul(a.astype(acc, copy=False), b.astype(acc, copy=False))
    if alpha != 1:
        product = product * acc.type(alpha)
    if beta != 0:  # beta == 0: the input is not read at all, so its NaN/inf cannot leak in
        term = bias.astype(acc, copy=False)
        product = product + (term if beta == 1 else term * acc.type(beta))
    out[...] = product


# --- matmul ------------------------------------------------------------------------------------


@op(COMPOSITE, method=True)
def matmul(input: Tensor, other: Tensor, *, out: None = None) -> Tensor:
    """torch.matmul: dot, mv, mm, folded mm or broadcast bmm, by the operands' dims."""
    if out is not None:
        check_out(out, "matmul")
    if not isinstance(other, Tensor):
        _need_tensor("matmul", "other", 2, other)
    d1, d2 = input._a.ndim, other._a.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(input, other)
    if d1 == 2 and d2 == 1:
        return mv(input, other)
    if d1 == 1 and d2 == 2:  # (1, m) @ (m, p) then squeeze_(0): metadata, no launch
        row = mm(v.unsqueeze(input, 0), other)
        return v.view(row, (other.shape[1],))
    if d1 == 2 and d2 == 2:
        return mm(input, other)
    common_device(input, other)  # (the paths above check it in their one kernel)
    if _should_fold(input, other):
        return _folded(input, other)
    return _batched(input, other)


@register_meta("torch.matmul", "torch.linalg.matmul")
def _matmul_rule(input: Tensor, other: Tensor, *, out: None = None) -> TensorMeta:
    """Every path of matmul ends in a fresh contiguous tensor (mm/bmm/mv/dot outputs viewed,
    or a transposed fold made contiguous): of the broadcast batch and the product's dims."""
    check_out(out, "matmul")
    _need_tensor("matmul", "other", 2, other)
    d1, d2 = input.dim(), other.dim()
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return _dot_rule(input, other)
    if d1 == 2 and d2 == 1:
        return _mv_rule(input, other)
    if d1 == 2 and d2 == 2:
        return _mm_rule(input, other)
    common_device(input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{CPP_NAME[input.dtype]} != {CPP_NAME[other.dtype]}")
    return _product(matmul_shape(tuple(input.shape), tuple(other.shape)), input.dtype)


def matmul_shape(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """matmul's output shape for operands of shapes `a` and `b` (each at least 1-D)."""
    d1, d2 = len(a), len(b)
    n = a[-2] if d1 > 1 else 1
    m1, m2 = a[-1], (b[-2] if d2 > 1 else b[0])
    p = b[-1] if d2 > 1 else 1
    if m1 != m2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{m1} and {m2}x{p})")
    batch = tuple(broadcast_shapes(a[:max(d1 - 2, 0)], b[:max(d2 - 2, 0)]))
    return (*batch, *((n,) if d1 > 1 else ()), *((p,) if d2 > 1 else ()))


def _should_fold(t1: Tensor, t2: Tensor) -> bool:
    """torch's should_fold: can the larger operand's batch dims fold into mm/mv rows
    without a copy? (A smaller operand that requires grad folds regardless, as in torch.)"""
    t1_larger = t1.dim() >= t2.dim()
    big = t1 if t1_larger else v.mT(t2)
    small_dim = t2.dim() if t1_larger else t1.dim()
    if not (big.dim() >= 3 and small_dim <= 2):
        return False
    if (t2 if t1_larger else t1).requires_grad:
        return True
    if t1.dim() == 2:  # folding would need a transposed, copied result
        return False
    if big.numel() == 0:
        return True
    shape, strides = big.shape, big.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.dim() - 2))


def _folded(input: Tensor, other: Tensor) -> Tensor:
    """(..., n, m) @ (m, p) as one mm over (prod(...) * n, m) rows (or mv for a vector)."""
    transpose = other.dim() > input.dim()
    if transpose:  # (n, m) @ (..., m, p) is ((..., p, m) @ (m, n)) transposed
        t1 = v.mT(other)
        t2 = v.mT(input) if input.dim() == 2 else input
    else:
        t1, t2 = input, other
    rows_shape = list(t1.shape[:-1])
    t1_folded = v.reshape(t1, (math.prod(rows_shape), t1.shape[-1]))
    if t2.dim() == 1:
        return v.view(mv(t1_folded, t2), rows_shape)
    result = v.view(mm(t1_folded, t2), [*rows_shape, t2.shape[1]])
    return v.contiguous(v.mT(result)) if transpose else result


def _batched(input: Tensor, other: Tensor) -> Tensor:
    """Broadcast the batch dims, reshape both to 3-D (copying where torch must) and bmm."""
    d1, d2 = input.dim(), other.dim()
    if d1 == 3 and d2 == 3 and input.shape[0] != other.shape[0]:
        # torch drops a batch of 1 that requires grad, to reach the folded mm path. (It does
        # the same for "tensor subclasses", which includes every tensor while a
        # TorchDispatchMode is active: a dispatch-mode probe of (b,n,m) @ (1,m,p) sees an mm
        # where plain eager torch launches a bmm.)
        if input.shape[0] == 1 and input.requires_grad:
            return matmul(v.view(input, input.shape[1:]), other)
        if other.shape[0] == 1 and other.requires_grad:
            return matmul(input, v.view(other, other.shape[1:]))
    n = input.shape[-2] if d1 > 1 else 1
    m1 = input.shape[-1]
    m2 = other.shape[-2] if d2 > 1 else other.shape[0]
    p = other.shape[-1] if d2 > 1 else 1
    batch = broadcast_shapes(input.shape[:max(d1 - 2, 0)], other.shape[:max(d2 - 2, 0)])
    count = math.prod(batch)
    a = v.reshape(v.expand(input, (*batch, n, m1)), (count, n, m1))
    if d2 == 1:
        b = v.unsqueeze(v.reshape(v.expand(other, (*batch, m2)), (count, m2)), -1)
    else:
        b = v.reshape(v.expand(other, (*batch, m2, p)), (count, m2, p))
    out_shape = [*batch, *([n] if d1 > 1 else []), *([p] if d2 > 1 else [])]
    return v.view(bmm(a, b), out_shape)


def rmatmul(self: Tensor, other: object) -> Any:
    """`other @ self` for a non-tensor `other`: NotImplemented, so Python raises TypeError."""
    if isinstance(other, Tensor):
        return matmul(other, self)
    return NotImplemented


@op(COMPOSITE, method=True)
def outer(input: Tensor, vec2: Tensor, *, out: None = None) -> Tensor:
    """input[i] * vec2[j]: torch launches one broadcast `mul`."""
    dev, dt = _check_outer(input, vec2, out)
    result = new_tensor((input.shape[0], vec2.shape[0]), dt, dev)
    launch("mul", _outer_kernel, result, (input, vec2), {"acc": acc_np(dt)})
    return result


@register_meta("torch.outer")
def _outer_rule(input: Tensor, vec2: Tensor, *, out: None = None) -> TensorMeta:
    _, dt = _check_outer(input, vec2, out)
    return _product((input.shape[0], vec2.shape[0]), dt)


def _check_outer(input: Tensor, vec2: Tensor, out: None) -> tuple[device, dtype]:
    """outer's checks; its device and its output's dtype (the two promoted)."""
    check_out(out, "outer")
    _need_tensor("outer", "vec2", 2, vec2)
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return common_device(input, vec2), result_type(input, vec2)


def _outer_kernel(out: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                  acc: np.dtype[Any]) -> None:
    out[...] = np.multiply.outer(a.astype(acc, copy=False), b.astype(acc, copy=False))
