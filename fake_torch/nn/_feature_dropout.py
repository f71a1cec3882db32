"""Channel-wise dropout: torch.feature_dropout / feature_dropout_ (aten's _dropout_impl with
feature_dropout) and F.dropout1d / dropout2d / dropout3d over them.

Launches (training, 0 < p < 1): one (N, C, 1, ...) noise tensor, `bernoulli_(1 - p)`, `div_(1 -
p)`, then `mul` (`mul_` in place) of the input by it, so whole channels are zeroed; p == 1: a
0-dim `zeros` and one `mul` / `mul_`; eval, p == 0 or an empty input: the input itself, nothing
launched.
"""

from __future__ import annotations

import warnings

from fake_torch._factories import torch_empty, zeros
from fake_torch._kernels._strides import same_meta
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, register_meta
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Tensor


def _feature_dropout(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input.mul(zero)
    noise = torch_empty((*input.shape[:2], *([1] * (input.dim() - 2))), dtype=input.dtype,
                        device=input.device)
    noise.bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input.mul(noise)


def _feature_dropout_rule(input: Tensor, p: float, train: bool, inplace: bool) -> Output:
    """The input itself (eval, p == 0, empty; or written in place), else a product of the
    input and a broadcast mask: laid out as the input's own pointwise output."""
    if p == 0 or not train or _empty(input) or inplace:
        return same_meta(input)
    return call_rule("torch.mul", input, input)


def _empty(input: Tensor) -> bool:
    return any(s == 0 for s in input.shape)


@op(COMPOSITE, random=True)
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Zero whole channels (dim 1) with probability p, scale the rest by 1/(1-p)."""
    return _feature_dropout(input, p, train, inplace=False)


@op(COMPOSITE, random=True)
def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """feature_dropout in place."""
    return _feature_dropout(input, p, train, inplace=True)


@register_meta("torch.feature_dropout")
def _feature_dropout_out_rule(input: Tensor, p: float, train: bool) -> Output:
    return _feature_dropout_rule(input, p, train, False)


@register_meta("torch.feature_dropout_")
def _feature_dropout__rule(input: Tensor, p: float, train: bool) -> Output:
    return _feature_dropout_rule(input, p, train, True)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_nd(input: Tensor, p: float, training: bool, inplace: bool,
                batched: bool) -> Tensor:
    """feature dropout over a batch, an unbatched input as a batch of one."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


@op(COMPOSITE, namespace="torch.nn.functional", random=True)
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (N, C, L) or (C, L)."""
    _check_1d(input, p)
    return _dropout_nd(input, p, training, inplace, input.dim() == 3)


@register_meta("torch.nn.functional.dropout1d")
def _dropout1d_rule(input: Tensor, p: float = 0.5, training: bool = True,
                    inplace: bool = False) -> Output:
    _check_1d(input, p)
    return _feature_dropout_rule(input, p, training, inplace)


def _check_1d(input: Tensor, p: float) -> None:
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")


def _warn_dims(name: str, dims: int, spatial: int) -> None:
    warnings.warn(f"{name}: Received a {dims}-D input to {name}, which is deprecated and will "
                  "result in an error in a future release. To retain the behavior and silence "
                  "this warning, please use dropout instead. Note that "
                  f"{name} exists to provide channel-wise dropout on inputs with {spatial} "
                  "spatial dimensions, a channel dimension, and an optional batch dimension "
                  f"(i.e. {spatial + 1}D or {spatial + 2}D inputs).", stacklevel=4)


@op(COMPOSITE, namespace="torch.nn.functional", random=True)
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (N, C, H, W); a 3-D input is taken as (N, C, L), as torch
    does (with its warning)."""
    _check_2d(input, p)
    return _feature_dropout(input, p, training, inplace)


@register_meta("torch.nn.functional.dropout2d")
def _dropout2d_rule(input: Tensor, p: float = 0.5, training: bool = True,
                    inplace: bool = False) -> Output:
    _check_2d(input, p)
    return _feature_dropout_rule(input, p, training, inplace)


def _check_2d(input: Tensor, p: float) -> None:
    _check_p(p)
    if input.dim() not in (3, 4):
        _warn_dims("dropout2d", input.dim(), 2)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=3)


@op(COMPOSITE, namespace="torch.nn.functional", random=True)
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W)."""
    _check_3d(input, p)
    return _dropout_nd(input, p, training, inplace, input.dim() == 5)


@register_meta("torch.nn.functional.dropout3d")
def _dropout3d_rule(input: Tensor, p: float = 0.5, training: bool = True,
                    inplace: bool = False) -> Output:
    _check_3d(input, p)
    return _feature_dropout_rule(input, p, training, inplace)


def _check_3d(input: Tensor, p: float) -> None:
    _check_p(p)
    if input.dim() not in (4, 5):
        _warn_dims("dropout3d", input.dim(), 3)
