"""The loss kernels behind torch.nn.functional's losses, named as torch's aten ops:
mse_loss, smooth_l1_loss, huber_loss (elementwise loss and its reduction),
binary_cross_entropy_with_logits (with its weight and pos_weight), nll_loss_forward
((N, C) or (C,) input) and nll_loss2d_forward ((N, C, H, W) input). Each is ONE launch as torch's
dispatcher sees it; torch's CUDA build runs the reduced forms as an elementwise kernel and then
a sum, counted here once, as the aten op (the norms are counted the same way).

`reduction` is torch's enum: 0 none, 1 mean, 2 sum. Math runs in float32 for 16-bit inputs
(float64 for float64); the elementwise loss rounds to the output dtype before it is reduced,
as torch materialises it; the reduction accumulates in float64 and rounds once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, dtype, int64, uint8
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import not_implemented
from fake_torch._kernels.pointwise_math import kernel_name
from fake_torch._opdef import REDUCTION, aten_op
from fake_torch._tensor import Tensor
from fake_torch._torch_device import device

NONE, MEAN, SUM = 0, 1, 2

for _name in ("mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy_with_logits",
              "nll_loss_forward", "nll_loss2d_forward"):
    aten_op(_name, REDUCTION)


def _acc(a: np.ndarray) -> type[np.floating[Any]]:
    return np.float64 if a.dtype == np.float64 else np.float32


def _reduce(out: np.ndarray, loss: np.ndarray, reduction: int) -> None:
    """out <- loss (none), or its mean or sum over every element."""
    if reduction == NONE:
        out[...] = loss
        return
    total = loss.astype(np.float64).sum()
    out[...] = total / loss.size if reduction == MEAN else total  # an empty mean: nan


# --- elementwise losses ------------------------------------------------------------------------

def _mse(d: np.ndarray) -> Any:
    return d * d


def _smooth_l1(d: np.ndarray, *, beta: float) -> Any:
    z = np.abs(d)
    b = d.dtype.type(beta)
    return np.where(z < b, 0.5 * z * z / b, z - 0.5 * b)


def _huber(d: np.ndarray, *, delta: float) -> Any:
    z = np.abs(d)
    h = d.dtype.type(delta)
    return np.where(z < h, 0.5 * z * z, h * (z - 0.5 * h))


def elementwise_loss_kernel(out: np.ndarray, x: np.ndarray, t: np.ndarray, *,
                            fn: Callable[..., Any], reduction: int, kw: dict[str, Any]) -> None:
    acc = _acc(out)
    with np.errstate(all="ignore"):
        loss = np.asarray(fn(x.astype(acc) - t.astype(acc), **kw)).astype(out.dtype)
        _reduce(out, loss, reduction)


def _elementwise_loss(op: str, kernel: str, fn: Callable[..., Any], input: Tensor,
                      target: Tensor, reduction: int, **kw: Any) -> Tensor:
    """One launch of `op`: fn(input - target) elementwise, then reduced. input and target
    have one shape (the functional forms broadcast them first); the result takes their
    promoted dtype, which must be floating."""
    dt, dev = elementwise_loss_args(kernel, input, target)
    out = _common.new_tensor(input.shape if reduction == NONE else (), dt, dev)
    _common.launch(op, elementwise_loss_kernel, out, (input, target),
                   {"fn": fn, "reduction": reduction, "kw": kw})
    return out


def elementwise_loss_args(kernel: str, input: Tensor, target: Tensor) -> tuple[dtype, device]:
    """An elementwise loss's checks: its output's dtype (the operands' promoted one, which
    must be floating) and device."""
    dt = _common.result_type(input, target)
    if not dt.is_floating_point:
        raise not_implemented(kernel_name(input, f"{kernel}_cpu", f"{kernel}_cuda"), dt)
    return dt, _common.common_device(input, target)


def check_beta(beta: float) -> None:
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")


def check_delta(delta: float) -> None:
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")


def mse_loss(input: Tensor, target: Tensor, reduction: int = MEAN) -> Tensor:
    """(input - target)**2: one `mse_loss`."""
    return _elementwise_loss("mse_loss", "mse", _mse, input, target, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, reduction: int = MEAN,
                   beta: float = 1.0) -> Tensor:
    """0.5 z**2 / beta below beta, z - beta / 2 above (z = |input - target|)."""
    check_beta(beta)
    return _elementwise_loss("smooth_l1_loss", "smooth_l1", _smooth_l1, input, target,
                             reduction, beta=float(beta))


def huber_loss(input: Tensor, target: Tensor, reduction: int = MEAN,
               delta: float = 1.0) -> Tensor:
    """0.5 z**2 below delta, delta * (z - delta / 2) above (z = |input - target|)."""
    check_delta(delta)
    return _elementwise_loss("huber_loss", "huber", _huber, input, target, reduction,
                             delta=float(delta))


# --- binary cross entropy on logits ------------------------------------------------------------

def bce_logits_kernel(out: np.ndarray, x: np.ndarray, t: np.ndarray, w: np.ndarray | None,
                      pw: np.ndarray | None, *, reduction: int) -> None:
    """out <- (1 - t) * x - log_sigmoid(x) * (1 + (pw - 1) * t), times w, reduced: torch's
    composite's terms in its order (log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)))."""
    acc = _acc(out)
    xa, ta = x.astype(acc), t.astype(acc)
    with np.errstate(all="ignore"):
        log_sig = np.minimum(xa, acc(0)) - np.log1p(np.exp(-np.abs(xa)))
        if pw is not None:
            log_sig = log_sig * ((pw.astype(acc) - acc(1)) * ta + acc(1))
        loss = (acc(1) - ta) * xa - log_sig
        if w is not None:
            loss = loss * w.astype(acc)
        _reduce(out, np.broadcast_to(loss, x.shape).astype(out.dtype), reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None,
                                     pos_weight: Tensor | None, reduction: int) -> Tensor:
    """One `binary_cross_entropy_with_logits`: target and input of one shape; weight and
    pos_weight (the positives' weight, broadcast along the last dim) broadcast into it."""
    dt, dev = bce_logits_args(input, target, weight, pos_weight)
    out = _common.new_tensor(input.shape if reduction == NONE else (), dt, dev)
    _common.launch("binary_cross_entropy_with_logits", bce_logits_kernel, out,
                   (input, target, weight, pos_weight), {"reduction": reduction})
    return out


def bce_logits_args(input: Tensor, target: Tensor, weight: Tensor | None,
                    pos_weight: Tensor | None) -> tuple[dtype, device]:
    """binary_cross_entropy_with_logits' checks; its output's dtype and device."""
    for extra in (pos_weight, weight):  # torch's in-place mul_ into the input-shaped loss
        if extra is not None:
            _check_inplace_broadcast(input.shape, extra.shape)
    dt = _common.result_type(*(t for t in (input, target, weight, pos_weight) if t is not None))
    if not dt.is_floating_point:
        raise not_implemented(kernel_name(input, "log_sigmoid_cpu", "log_sigmoid_forward_cuda"),
                              dt)
    dev = _common.common_device(*(t for t in (input, target, weight, pos_weight)
                                  if t is not None))
    return dt, dev


def _check_inplace_broadcast(shape: tuple[int, ...], other: tuple[int, ...]) -> None:
    """torch's errors for an in-place op whose operand does not broadcast into `shape`."""
    n = max(len(shape), len(other))
    a = (1,) * (n - len(shape)) + tuple(shape)
    b = (1,) * (n - len(other)) + tuple(other)
    for dim in range(n - 1, -1, -1):
        if a[dim] != b[dim] and 1 not in (a[dim], b[dim]):
            raise RuntimeError(f"The size of tensor a ({a[dim]}) must match the size of tensor "
                               f"b ({b[dim]}) at non-singleton dimension {dim}")
    joint = [max(x, y) if 0 not in (x, y) else 0 for x, y in zip(a, b, strict=True)]
    if joint != list(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{joint}")


# --- negative log likelihood -------------------------------------------------------------------

def nll_kernel(out: np.ndarray, total_weight: np.ndarray, x: np.ndarray, t: np.ndarray,
               w: np.ndarray | None, *, reduction: int, ignore_index: int,
               class_axis: int) -> None:
    """out <- -w[t] * x[..., t, ...] per target (0 where t == ignore_index), reduced; the mean
    divides by the summed weights of the targets kept (nan when none is)."""
    rows = np.moveaxis(x, class_axis, -1).reshape(-1, x.shape[class_axis])
    flat = t.reshape(-1).astype(np.int64)
    keep = flat != ignore_index
    bad = keep & ((flat < 0) | (flat >= rows.shape[1]))
    if bad.any():  # torch's CPU check (a GPU raises a device-side assert)
        raise IndexError(f"Target {flat[np.argmax(bad)]} is out of bounds.")
    cls = np.where(keep, flat, 0)
    acc = _acc(out)
    picked = rows[np.arange(rows.shape[0]), cls].astype(acc)
    weights = np.ones(cls.shape, acc) if w is None else w[cls].astype(acc)
    weights = np.where(keep, weights, acc(0))
    losses = np.where(keep, -picked * weights, acc(0))
    tw = weights.astype(np.float64).sum()
    total_weight[...] = tw
    with np.errstate(invalid="ignore"):  # nothing kept: the mean is 0 / 0
        if reduction == NONE:
            out[...] = losses.reshape(out.shape)
        elif reduction == SUM:
            out[...] = losses.astype(np.float64).sum()
        else:
            out[...] = losses.astype(np.float64).sum() / tw


def _check_target(target: Tensor) -> None:
    if target.dtype not in (int64, uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{SCALAR_NAME[target.dtype]}")


def check_nll_types(input: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """nll_loss2d_forward's dtype checks and its weight's size (nll_loss_nd's >4-D path)."""
    _check_target(target)
    if weight is not None and weight.numel() != input.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    _check_dtypes(input, weight, "nll_loss2d_forward")


def _check_dtypes(input: Tensor, weight: Tensor | None, frame: str) -> None:
    if not input.dtype.is_floating_point:
        raise not_implemented(kernel_name(input, f"{frame}_out_frame",
                                          f"{frame}_out_cuda_template"), input.dtype)
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_NAME[input.dtype]} but found "
                           f"{SCALAR_NAME[weight.dtype]}")


def _nll_launch(op: str, input: Tensor, target: Tensor, weight: Tensor | None,
                reduction: int, ignore_index: int, out_shape: tuple[int, ...],
                class_axis: int) -> tuple[Tensor, Tensor]:
    dev = _common.common_device(*(t for t in (input, target, weight) if t is not None))
    out = _common.new_tensor(out_shape if reduction == NONE else (), input.dtype, dev)
    total_weight = _common.new_tensor((), input.dtype, dev)
    _common.launch(op, nll_kernel, (out, total_weight), (input, target, weight),
                   {"reduction": reduction, "ignore_index": int(ignore_index),
                    "class_axis": class_axis})
    return out, total_weight


def nll_loss_forward(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                     ignore_index: int) -> tuple[Tensor, Tensor]:
    """(output, total_weight) for input (N, C) with target (N,), or (C,) with target ()."""
    check_nll(input, target, weight)
    return _nll_launch("nll_loss_forward", input, target, weight, reduction, ignore_index,
                       tuple(target.shape), input.dim() - 1)


def check_nll(input: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """nll_loss_forward's checks (its output: target's shape, or () reduced)."""
    if not 0 < input.dim() <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    no_batch = input.dim() == 1 and target.dim() == 0
    if not no_batch and input.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)}, target: "
                           f"{list(target.shape)})")
    _check_target(target)
    classes = input.shape[-1]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes "
                           f"or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    _check_dtypes(input, weight, "nll_loss")


def nll_loss2d_forward(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                       ignore_index: int) -> tuple[Tensor, Tensor]:
    """(output, total_weight) for input (N, C, H, W) with target (N, H, W)."""
    check_nll2d(input, target, weight)
    return _nll_launch("nll_loss2d_forward", input, target, weight, reduction, ignore_index,
                       tuple(target.shape), 1)


def check_nll2d(input: Any, target: Any, weight: Tensor | None) -> None:
    """nll_loss2d_forward's checks (its output: target's shape, or () reduced)."""
    _check_target(target)
    if target.dim() != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.dim()}")
    if input.dim() != 4:
        raise RuntimeError("only batches of spatial inputs supported (4D tensors), but got "
                           f"input of dimension: {input.dim()}")
    if weight is not None and weight.numel() != input.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    n, _, h, w = input.shape
    if tuple(target.shape) != (n, h, w):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                           f"{list(target.shape)}")
    _check_dtypes(input, weight, "nll_loss2d_forward")

