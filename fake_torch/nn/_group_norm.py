"""torch.nn.functional.group_norm: torch.group_norm's checks (aten/src/ATen/native/group_norm.cpp),
then one `native_group_norm` launch over a contiguous input.

Launches: a strided input is copied first (`clone`), on the cpu as on cuda (torch's composite
calls input.contiguous(); the cpu keeps a channels_last input as it is, cuda copies it too);
then one `native_group_norm`, whose outputs are the result and per-(sample, group) mean and
rstd. On cuda that op runs as several kernels (row moments, fused params with an affine, the
elementwise pass: 3 and 2 kernels on an H200, tests/gpu/); fake_torch counts the op once, as it
counts native_layer_norm. The H200 also showed the channels_last and strided inputs' `clone`.
An empty input launches nothing (the kernel returns before launching).
"""

from __future__ import annotations

import numpy as np

from fake_torch._dtype import SCALAR_NAME, bfloat16, dtype, float16, float32
from fake_torch._kernels._common import common_device, launch, new_tensor
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import REDUCTION, op
from fake_torch._tensor import Tensor
from fake_torch.nn._fused_kernels import acc_dtype


@op(REDUCTION, namespace="torch.nn.functional", aten=("native_group_norm",))
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise x (N, C, *) over each group of C / num_groups channels (and every position),
    then scale and shift per channel: (x - mean) * rstd * weight[c] + bias[c]."""
    _check_group_norm(input, num_groups, weight, bias)
    n = input.shape[0]
    stat_dtype = _stat_dtype(input, weight, bias)
    dev = common_device(*(t for t in (input, weight, bias) if t is not None))
    x = input.contiguous()
    out = new_tensor(x.shape, x.dtype, dev)
    mean = new_tensor((n, num_groups), stat_dtype, dev)
    rstd = new_tensor((n, num_groups), stat_dtype, dev)
    launch("native_group_norm", native_group_norm_kernel, (out, mean, rstd), (x, weight, bias),
           {"eps": float(eps)})
    return out


def _check_group_norm(input: Tensor, num_groups: int, weight: Tensor | None,
                      bias: Tensor | None) -> None:
    """group_norm's checks."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    # torch's _verify_batch_size over [N * C / G, G, *]: its Python divides before the op
    # checks num_groups (ZeroDivisionError for 0), and skips the G entry in the product
    per_channel = n * c // num_groups
    for s in input.shape[2:]:
        per_channel *= s
    if per_channel == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {[n * c // num_groups, num_groups, *input.shape[2:]]}")
    _check_inputs(input, weight, bias, num_groups)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"GroupNormKernelImpl\" not implemented for "
                                  f"'{SCALAR_NAME[input.dtype]}'")


def _check_inputs(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  num_groups: int) -> None:
    """torch's check_group_norm_inputs (whose bias message prints the weight's shape)."""
    c = input.shape[1]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    shown = [0] if weight is None else list(weight.shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number "
                               f"of channels in input, but got {name} of shape "
                               f"{list(t.shape) if name == 'weight' else shown} and input "
                               f"of shape {list(input.shape)}")


def _stat_dtype(input: Tensor, weight: Tensor | None, bias: Tensor | None) -> dtype:
    """The dtype of mean and rstd: the input's, or float32 for a 16-bit input with float32
    parameters (the one mix torch's cpu kernel takes)."""
    params = {t.dtype for t in (weight, bias) if t is not None}
    if not params or params == {input.dtype}:
        return input.dtype
    if input.dtype in (bfloat16, float16) and params == {float32}:
        return float32
    raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")


def native_group_norm_kernel(out: np.ndarray, mean: np.ndarray, rstd: np.ndarray,
                             x: np.ndarray, weight: np.ndarray | None,
                             bias: np.ndarray | None, *, eps: float) -> None:
    """out (N, C, *) from x viewed (N, G, C/G * prod(*)): biased moments per row in the
    opmath dtype, then (x - mean) * rstd * weight + bias per channel."""
    acc = acc_dtype(x)
    n, c = x.shape[:2]
    groups = mean.shape[1]
    rows = x.astype(acc).reshape(n, groups, -1)
    mu = rows.mean(axis=-1, keepdims=True)
    centered = rows - mu
    r = 1.0 / np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + acc(eps))
    y = (centered * r).reshape(n, c, -1)
    if weight is not None:
        y = y * weight.astype(acc).reshape(1, c, 1)
    if bias is not None:
        y = y + bias.astype(acc).reshape(1, c, 1)
    out[...] = y.reshape(x.shape)
    mean[...] = mu[..., 0]
    rstd[...] = r[..., 0]


# --- output rule (fake_torch/_meta_registrations.py) ------------------------------------------

@register_meta("torch.nn.functional.group_norm")
def _group_norm_rule(input: Tensor, num_groups: int, weight: Tensor | None = None,
                     bias: Tensor | None = None, eps: float = 1e-5) -> TensorMeta:
    """A new row-major tensor of input's shape and dtype."""
    _check_group_norm(input, num_groups, weight, bias)
    return TensorMeta(tuple(input.shape), input.dtype, contiguous_strides(input.shape))
