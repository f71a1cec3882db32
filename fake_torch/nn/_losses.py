"""torch.nn.functional's losses, forward only (fake_torch has no autograd: `.backward()` on a
loss raises NotImplementedError). Launches, as torch's CUDA build dispatches them:

  mse_loss, smooth_l1_loss, huber_loss   one `mse_loss` / `smooth_l1_loss` / `huber_loss`
                      (smooth_l1_loss with beta=0 is l1_loss; a `weight` composes sub, pow,
                      mul and the reduction as torch's Python does)
  l1_loss             sub, abs, mean (or sum): torch composes it
  binary_cross_entropy_with_logits   one `binary_cross_entropy_with_logits` (weight and
                      pos_weight included: torch's dispatcher sees its composite as one op)
  nll_loss            one `nll_loss_forward` ((N, C) or (C,) input) or `nll_loss2d_forward`
                      (more dims; 3-D and 5-D+ inputs are viewed as 4-D, after a `clone` of
                      a non-contiguous input or target)
  cross_entropy       `_log_softmax` then nll_loss's launch; label_smoothing adds the smoothing
                      term's ops (sum, neg, eq, masked_fill_, its reduction, mul, mul, add);
                      class-probability targets: _log_softmax, mul, [mul weight], sum, neg,
                      [div]
The weighted, label-smoothed mean gathers the kept targets' weights with `masked_select`, a
host sync, as torch's eager kernel does (torch takes another path, masked_fill and gather,
when a TorchDispatchMode is active: its recorded ops differ from eager's there).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

from fake_torch._dtype import SCALAR_NAME
from fake_torch._kernels import loss as _loss
from fake_torch._kernels._common import broadcast_shapes, result_type
from fake_torch._kernels.expand import broadcast_tensors
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Tensor
from fake_torch.amp._policy import inner as autocast_inner

_F = "torch.nn.functional"


def _reduction_enum(reduction: str) -> int:
    """torch's _Reduction.get_enum: "none" 0, "mean" 1, "sum" 2."""
    if reduction == "none":
        return _loss.NONE
    if reduction == "mean":
        return _loss.MEAN
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=4)
        return _loss.MEAN
    if reduction == "sum":
        return _loss.SUM
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """torch's _Reduction.legacy_get_string, with its deprecation warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _broadcast(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """Warn as torch does when the shapes differ, then broadcast (views: no launch)."""
    _warn_sizes(input, target)
    x, t = broadcast_tensors(input, target)
    return x, t


def _warn_sizes(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=5)


# --- output rules: every loss kernel writes a fresh tensor, () reduced -----------------------

def _loss_meta(shape: tuple[Any, ...], dt: Any, reduction: int) -> TensorMeta:
    out = shape if reduction == _loss.NONE else ()
    return TensorMeta(out, dt, contiguous_strides(out))


def _elementwise_loss_rule(kernel: str, input: Tensor, target: Tensor, reduction: str,
                           weight: Tensor | None,
                           check: Callable[[], None] | None = None) -> TensorMeta:
    """mse_loss, smooth_l1_loss and huber_loss: one kernel over the broadcast operands (its
    own argument `check` made after the broadcast, as the kernel makes it)."""
    if weight is not None:
        raise NotImplementedError(f"torch.nn.functional.{kernel}_loss(weight=...): no output "
                                  "rule (the weighted loss is reduced by later ops)")
    _warn_sizes(input, target)
    shape = tuple(broadcast_shapes(input.shape, target.shape))
    if check is not None:
        check()
    dt, _ = _loss.elementwise_loss_args(kernel, input, target)
    return _loss_meta(shape, dt, _reduction_enum(reduction))


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str,
              mean_over_weights: bool = True) -> Tensor:
    """torch's Python path for a per-element `weight`: loss * weight, then the reduction
    (mean: divided by the weights' sum, or huber_loss's plain mean)."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted: Tensor = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        mean: Tensor = weighted.sum() / weight.sum() if mean_over_weights else weighted.mean()
        return mean
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


@op(COMPOSITE, namespace=_F)
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """mean((input - target)**2): one `mse_loss` launch."""
    x, t = input, target
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    x, t = _broadcast(x, t)
    if weight is not None:
        return _weighted((x - t).pow(2), weight, input, reduction)
    return _loss.mse_loss(x, t, _reduction_enum(reduction))


@register_meta("torch.nn.functional.mse_loss")
def _mse_loss_rule(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   weight: Tensor | None = None) -> TensorMeta:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    return _elementwise_loss_rule("mse", input, target, reduction, weight)


@op(COMPOSITE, namespace=_F)
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """mean(|input - target|): sub, abs, mean (torch composes it)."""
    x, t = input, target
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    x, t = _broadcast(x, t)
    if weight is not None:
        return _weighted((x - t).abs(), weight, input, reduction)
    return _l1(x, t, _reduction_enum(reduction))


def _l1(x: Tensor, t: Tensor, reduction: int) -> Tensor:
    err = x.sub(t).abs()
    if reduction == _loss.MEAN:
        return err.mean()
    return err.sum() if reduction == _loss.SUM else err


@op(COMPOSITE, namespace=_F)
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """One `smooth_l1_loss` launch (beta=0: l1_loss's sub, abs, mean)."""
    x, t = input, target
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    x, t = _broadcast(x, t)
    if beta == 0.0:
        return _l1(x, t, _reduction_enum(reduction))
    return _loss.smooth_l1_loss(x, t, _reduction_enum(reduction), beta)


@register_meta("torch.nn.functional.smooth_l1_loss")
def _smooth_l1_loss_rule(input: Tensor, target: Tensor, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean",
                         beta: float = 1.0) -> TensorMeta:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if beta == 0.0:
        raise NotImplementedError("torch.nn.functional.smooth_l1_loss(beta=0): no output rule "
                                  "(l1_loss's composite)")
    return _elementwise_loss_rule("smooth_l1", input, target, reduction, None,
                                  lambda: _loss.check_beta(beta))


@op(COMPOSITE, namespace=_F)
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """One `huber_loss` launch (with `weight`: huber_loss none, mul, the reduction)."""
    x, t = _broadcast(input, target)
    if weight is None:
        return _loss.huber_loss(x, t, _reduction_enum(reduction), delta)
    return _weighted(_loss.huber_loss(x, t, _loss.NONE, delta), weight, input, reduction,
                     mean_over_weights=False)


@register_meta("torch.nn.functional.huber_loss")
def _huber_loss_rule(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
                     weight: Tensor | None = None) -> TensorMeta:
    return _elementwise_loss_rule("huber", input, target, reduction, weight,
                                  lambda: _loss.check_delta(delta))


@op(COMPOSITE, namespace=_F)
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """-[pos_weight * t * log sigmoid(x) + (1 - t) * log(1 - sigmoid(x))] (times weight),
    reduced: one `binary_cross_entropy_with_logits` launch."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    red = _reduction_enum(reduction)
    _check_bce_sizes(input, target)
    return _loss.binary_cross_entropy_with_logits(input, target, weight, pos_weight, red)


@register_meta("torch.nn.functional.binary_cross_entropy_with_logits")
def _bce_logits_rule(input: Tensor, target: Tensor, weight: Tensor | None = None,
                     size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean", pos_weight: Tensor | None = None) -> TensorMeta:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    red = _reduction_enum(reduction)
    _check_bce_sizes(input, target)
    dt, _ = _loss.bce_logits_args(input, target, weight, pos_weight)
    return _loss_meta(tuple(input.shape), dt, red)


def _check_bce_sizes(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")


# --- nll_loss and cross_entropy ----------------------------------------------------------------

def nll_loss_nd(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                ignore_index: int) -> Tensor:
    """torch's nll_loss_nd: (C,) / (N, C) input -> nll_loss_forward; (N, C, H, W) ->
    nll_loss2d_forward; (N, C, d1) and (N, C, d1, ..., dK>2) viewed as (N, C, 1, -1)."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    if input.dim() <= 2:
        return _loss.nll_loss_forward(input, target, weight, reduction, ignore_index)[0]
    if input.dim() == 4:
        return _loss.nll_loss2d_forward(input, target, weight, reduction, ignore_index)[0]
    n, c = input.shape[:2]
    out_size = [n, *input.shape[2:]]
    if list(target.shape[1:]) != out_size[1:]:
        raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
    x, t = input.contiguous(), target.contiguous()
    x = x.view(n, c, 1, -1) if x.numel() > 0 else x.view(n, c, 0, 0)
    t = t.view(n, 1, -1) if t.numel() > 0 else t.view(n, 0, 0)
    out = _loss.nll_loss2d_forward(x, t, weight, reduction, ignore_index)[0]
    return out if reduction != _loss.NONE else out.view(out_size)


def nll_loss_nd_meta(input: Tensor, target: Tensor, weight: Tensor | None,
                     reduction: int) -> TensorMeta:
    """nll_loss_nd's output: a fresh tensor of target's shape (the per-sample losses), ()
    reduced. Its checks as the kernel path makes them (the 2-D forward's over the viewed
    operands for 3-D and 5-D+ inputs: their sizes are checked above, their dtypes here)."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    if input.dim() <= 2:
        _loss.check_nll(input, target, weight)
        return _loss_meta(tuple(target.shape), input.dtype, reduction)
    if input.dim() == 4:
        _loss.check_nll2d(input, target, weight)
        return _loss_meta(tuple(target.shape), input.dtype, reduction)
    n = input.shape[0]
    out_size = (n, *input.shape[2:])
    if tuple(target.shape[1:]) != out_size[1:]:
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    _loss.check_nll_types(input, target, weight)
    return _loss_meta(out_size, input.dtype, reduction)


@op(COMPOSITE, namespace=_F)
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """-input[i, target[i]] (times weight[target[i]]) per sample, reduced: one
    `nll_loss_forward` (or `nll_loss2d_forward`)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    return nll_loss_nd(input, target, weight, _reduction_enum(reduction), ignore_index)


@register_meta("torch.nn.functional.nll_loss")
def _nll_loss_rule(input: Tensor, target: Tensor, weight: Tensor | None = None,
                   size_average: bool | None = None, ignore_index: int = -100,
                   reduce: bool | None = None, reduction: str = "mean") -> TensorMeta:
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    return nll_loss_nd_meta(input, target, weight, _reduction_enum(reduction))


@register_meta("torch.nn.functional.cross_entropy")
def _cross_entropy_rule(input: Tensor, target: Tensor, weight: Tensor | None = None,
                        size_average: bool | None = None, ignore_index: int = -100,
                        reduce: bool | None = None, reduction: str = "mean",
                        label_smoothing: float = 0.0) -> TensorMeta:
    """Class-index targets: nll_loss over log_softmax's output (input's shape and dtype, so
    nll_loss's over input itself). Probability targets: the class-dim sum of the terms
    (laid out as input's sum, in their promoted dtype), () reduced. Label smoothing adds a
    smoothing term through several ops: no rule."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    red = _reduction_enum(reduction)
    class_dim = 0 if input.dim() == 1 else 1
    if label_smoothing > 0.0:
        raise NotImplementedError("torch.nn.functional.cross_entropy with label smoothing: no "
                                  "output rule (a smoothing term of several ops is added)")
    if input.shape != target.shape:
        return nll_loss_nd_meta(input, target, weight, red)
    _check_probs(input, target, weight, ignore_index, class_dim)
    dt = result_type(input, target)
    if red != _loss.NONE:
        return TensorMeta((), dt, ())
    summed = call_rule("torch.sum", input, class_dim)
    assert isinstance(summed, TensorMeta)
    return dataclasses.replace(summed, dtype=dt)


def _check_probs(input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int,
                 class_dim: int) -> None:
    """cross_entropy's checks of probability targets."""
    if not target.dtype.is_floating_point:
        raise RuntimeError("Expected floating point type for target with class "
                           f"probabilities, got {SCALAR_NAME[target.dtype]}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")


@op(COMPOSITE, namespace=_F)
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim (dim 1, or 0 for a 1-D input), then nll_loss; targets
    of input's shape are class probabilities."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    red = _reduction_enum(reduction)
    class_dim = 0 if input.dim() == 1 else 1
    if input.shape == target.shape:  # soft targets: class probabilities
        _check_probs(input, target, weight, ignore_index, class_dim)
        return _cross_entropy_probs(input, target, weight, red, label_smoothing, class_dim)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        return _cross_entropy_smoothed(input, target, weight, red, ignore_index,
                                       label_smoothing, class_dim)
    # torch's composite asks log_softmax for input's own dtype and then calls nll_loss: under
    # autocast the log_softmax stays in input's dtype and the nll_loss casts it to float32
    logp = input.log_softmax(class_dim, dtype=input.dtype)
    return autocast_inner("nll_loss", nll_loss_nd, logp, target, weight, red, ignore_index)


def _check_smoothing(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")


def _class_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """weight (C,) viewed to broadcast along the class dim of an ndim-D input."""
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probs(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int,
                         label_smoothing: float, class_dim: int) -> Tensor:
    classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = input.log_softmax(class_dim)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms: Tensor = logp * target
    if weight is not None:
        terms = terms * (_class_view(weight, logp.dim(), 1) if logp.dim() > 1 else weight)
    out: Tensor
    if reduction == _loss.NONE:
        out = -terms.sum(class_dim)
    elif reduction == _loss.SUM:
        out = -terms.sum()
    elif logp.numel() == 0:
        out = -terms.sum().fill_(float("nan"))
    else:
        out = -terms.sum() / (logp.numel() // classes)
    return out


def _cross_entropy_smoothed(input: Tensor, target: Tensor, weight: Tensor | None,
                            reduction: int, ignore_index: int, label_smoothing: float,
                            class_dim: int) -> Tensor:
    """(1 - eps) * nll + eps / C * (the smoothing term: -sum of log-probabilities over the
    classes, weighted, 0 at ignored targets, reduced as the nll is)."""
    classes = input.shape[class_dim]
    logp = input.log_softmax(class_dim)
    nll = nll_loss_nd(logp, target, weight, reduction, ignore_index)
    if weight is not None:
        smooth = -(logp * _class_view(weight, logp.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignored = target == ignore_index
    smooth.masked_fill_(ignored, 0.0)
    ret: Tensor
    if reduction == _loss.MEAN:  # the denominator first: torch's op order
        if weight is not None:
            kept = target.masked_select(~ignored).flatten()
            denominator = weight.gather(0, kept).sum()
        else:
            denominator = (~ignored).sum()
        ret = smooth.sum() / denominator
    elif reduction == _loss.SUM:
        ret = smooth.sum()
    else:
        ret = smooth
    out: Tensor = (1 - label_smoothing) * nll + ret * (label_smoothing / classes)
    return out
