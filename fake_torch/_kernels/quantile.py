"""torch.quantile: the q-th quantiles over a dim (or the flattened input), as torch's composite
computes them, one op at a time (so the launches are torch's, CUDA build included):

  sort the values (NaN last) -> ranks = q * (n - 1), set to n - 1 on rows holding a NaN (so the
  quantile of such a row is NaN) -> round the ranks for lower / higher / nearest -> gather the
  value below; for linear and midpoint also the value above, and lerp between them (weight
  rank - floor(rank), or 0.5).

A Python-number q is first made a tensor of the input's dtype (one `scalar_tensor` launch).
As in torch, a q tensor's values are not range-checked (a device would have to sync): one out
of [0, 1] makes the gather fail.
"""

from __future__ import annotations

from fake_torch._dtype import float32, float64, int64
from fake_torch._kernels._reduce_util import check_out
from fake_torch._kernels.arith import lerp_, mul, sub
from fake_torch._kernels.cast import scalar_tensor, to
from fake_torch._kernels.compare import isnan
from fake_torch._kernels.expand import broadcast_tensors
from fake_torch._kernels.index_ops import gather
from fake_torch._kernels.masked import masked_fill
from fake_torch._kernels.pointwise_math import ceil_, floor_, round_
from fake_torch._kernels.reduction import any as any_
from fake_torch._kernels.reduction_sort import sort
from fake_torch._kernels.shape import flatten, reshape, squeeze, transpose, unsqueeze
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Tensor, wrap_dim
from fake_torch._torch_device import canonical

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


@op(COMPOSITE, method=True)
def quantile(input: Tensor, q: Tensor | float, dim: int | None = None, keepdim: bool = False,
             *, interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """The q-th quantiles of `input` along `dim` (all of it when None); a 1-D q puts one
    quantile per q first in the result's shape."""
    check_out(out, "quantile")
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:  # False for NaN too
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not isinstance(q, Tensor):
        q = scalar_tensor(q, dtype=input.dtype, device=input.device)
    _check(input, q)
    reduced = None if dim is None else wrap_dim(dim, max(input.dim(), 1))
    return _quantile(input, q, reduced, keepdim, interpolation)


def _check(x: Tensor, q: Tensor) -> None:
    if x.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if x.dtype not in (float32, float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype is not x.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if canonical(q.device) != canonical(x.device):
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
    # on the cpu only, torch checks q's values (elsewhere it would synchronise the device)
    if x.device.type == "cpu" and not bool(((q._a >= 0) & (q._a <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _quantile(x: Tensor, q: Tensor, dim: int | None, keepdim: bool, mode: str) -> Tensor:
    # the result's shape with the quantiles first: (Q, *kept dims), Q = 1 for a scalar q
    if dim is None:
        kept = [1] * x.dim() if keepdim else []
        values = sort(flatten(x))[0]  # (n,)
    else:
        kept = list(x.shape)
        if x.dim() > 0:
            kept[dim] = 1
            if not keepdim:
                del kept[dim]
        last = x.dim() - 1 if x.dim() > 0 else 0
        values = sort(x if dim == last else transpose(unsqueeze(x, -1), dim, -1))[0]
    n = values.shape[-1] if values.dim() > 0 else 1
    # (*kept dims, n): one row of sorted values per quantile position
    values = reshape(values, [*kept, n])
    last_index = n - 1
    ranks_, has_nan = broadcast_tensors(mul(q, last_index), any_(isnan(values), -1, True))
    ranks = masked_fill(ranks_, has_nan, last_index)  # (*kept dims, Q)
    if mode == "lower":
        floor_(ranks)
    elif mode == "higher":
        ceil_(ranks)
    elif mode == "nearest":
        round_(ranks)
    below = to(ranks, int64)
    result = gather(values, -1, below)
    if mode in ("linear", "midpoint"):
        if mode == "midpoint":
            from fake_torch._factories import full_like  # the factories import the op modules

            weights = full_like(ranks, 0.5)
        else:
            weights = sub(ranks, below)
        above = gather(values, -1, to(ceil_(ranks), int64))
        lerp_(result, above, weights)
    if q.dim() == 0:
        return squeeze(result, -1)
    return squeeze(transpose(unsqueeze(result, 0), 0, -1), -1)  # (Q, *kept dims)

