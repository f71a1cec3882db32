"""torch.nn.init: in-place initialisers. Most are a single launch on the tensor they fill
(uniform_, normal_, fill_, zero_ or eye), as in torch; dirac_ is a zero_ and one copy_ per
unit it writes, and trunc_normal_ samples by rejection as torch does: a normal_ and a check
(lt, gt, bitwise_or, any and a host read of the answer) per round, until every value lies in
[a, b] (or, for a narrow window, uniform proposals accepted against the normal density)."""

from __future__ import annotations

import math
import warnings

from fake_torch._factories import empty_like
from fake_torch._generator import Generator
from fake_torch._kernels._common import launch
from fake_torch._kernels.compare import where
from fake_torch._kernels.sampling import randperm
from fake_torch._opdef import EXTERN, POINTWISE, aten_op
from fake_torch._tensor import Tensor
from fake_torch.nn import _fused_kernels

aten_op("linalg_qr", EXTERN)  # cuSOLVER's geqrf/orgqr, one aten op
aten_op("diagonal_copy", POINTWISE)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (torch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return tensor.zero_()


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight laid out (out, in, *receptive_field)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return tensor.uniform_(-bound, bound, generator=generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return tensor.normal_(0.0, std, generator=generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return tensor.uniform_(-bound, bound, generator=generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return tensor.normal_(0.0, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> Tensor:
    """N(mean, std**2) truncated to [a, b], by rejection sampling: whole redraws while the
    window holds most of the mass (p > 0.3), else uniform proposals on [a, b] accepted with
    the normal density's ratio to its peak. Each round reads one bool on the host."""

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
    if p > 0.3:
        # the bounds as the tensor's dtype holds them, so the check matches what is stored
        lo = tensor.new_tensor(a, device="cpu").item()
        hi = tensor.new_tensor(b, device="cpu").item()
        result = tensor.normal_(mean, std, generator=generator)
        while True:
            mask = (result < lo) | (result > hi)
            if not mask.any():
                break
            redraw = empty_like(result).normal_(mean, std, generator=generator)
            result = where(mask, redraw, result)
        if tensor is not result:
            tensor.copy_(result)
        return tensor
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    candidates = empty_like(tensor)
    accept_buf = empty_like(tensor)
    tensor.uniform_(a, b, generator=generator)  # the first round samples into tensor itself
    candidates.copy_(tensor)
    candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)  # log density - peak
    pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
    if pending.any():
        result = tensor
        while True:
            candidates.uniform_(a, b, generator=generator)
            result = where(pending, candidates, result)
            candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            pending = where(pending, accept_buf.uniform_(generator=generator).log_()
                            .gt(candidates), pending)
            if not pending.any():
                break
        tensor.copy_(result)
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix, in place (2-D tensors): one `eye` launch."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    launch("eye", _fused_kernels.eye_kernel, tensor)
    return tensor


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix, in place, scaled by `gain` (Saxe et al. 2013), as torch
    makes it: normal_ draws a (rows, cols) matrix (transposed when wider than tall), linalg_qr
    factors it, Q's columns take the signs of R's diagonal (diagonal_copy, sign, mul_), then
    copy_ into the tensor and mul_ by the gain. Dimensions past the first are flattened."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor  # no-op
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    if rows < cols:
        flattened.t_()
    q = flattened.new_empty(flattened.shape[0], min(flattened.shape))
    r = flattened.new_empty(min(flattened.shape), flattened.shape[1])
    launch("linalg_qr", _fused_kernels.qr_kernel, (q, r), (flattened,))
    d = r.new_empty(min(r.shape))
    launch("diagonal_copy", _fused_kernels.diagonal_copy_kernel, d, (r,))
    q.mul_(d.sign())
    if rows < cols:
        q.t_()
    tensor.view_as(q).copy_(q)
    tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> Tensor:
    """A sparse 2-D matrix, in place (Martens 2010), as torch makes it: normal_(0, std), then
    in each column the rows of a fresh randperm's first ceil(sparsity * rows) entries are set
    to zero (a randperm and an index_put_ per column)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    tensor.normal_(0, std, generator=generator)
    for col_idx in range(cols):
        zero_indices = randperm(rows)[:num_zeros]
        tensor[zero_indices, col_idx] = 0
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta of a convolution weight (out, in, *kernel), in place: a 1 at the
    centre of each (out, in) pair of a group's diagonal. zero_, then one copy_ per 1."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    tensor.zero_()
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            tensor[(g * out_per_group + d, d, *centre)] = 1
    return tensor


__all__ = [
    "calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_",
    "normal_", "ones_", "orthogonal_", "sparse_", "trunc_normal_", "uniform_",
    "xavier_normal_", "xavier_uniform_",
    "zeros_",
]
