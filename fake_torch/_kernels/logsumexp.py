"""logsumexp: log(sum(exp(x))) over dims, computed stably as ATen's composite computes it
(aten/src/ATen/native/ReduceOps.cpp, logsumexp_out_impl), so a GPU's kernels are launched one
by one: amax (keepdim), abs and eq of the maxes, masked_fill_ of the infinite ones to 0, sub,
exp_, sum, log_, add_ (an empty input: exp, sum, log_). Integer and bool inputs are first
cast to the default float dtype (one `_to_copy`). The values follow from those ops'.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from fake_torch._dtype import get_default_dtype
from fake_torch._kernels._reduce_util import cast, check_out, reduce_dims
from fake_torch._kernels.arith import add_, sub
from fake_torch._kernels.compare import eq
from fake_torch._kernels.masked import masked_fill_
from fake_torch._kernels.pointwise_math import abs, exp, exp_, log_
from fake_torch._kernels.reduction import amax, sum
from fake_torch._kernels.shape import squeeze
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Tensor


@op(COMPOSITE, method=True, aten=())
def logsumexp(input: Tensor, dim: int | Sequence[int], keepdim: bool = False, *,
              out: None = None) -> Tensor:
    """log(sum(exp(input))) over `dim`, shifted by the max so that nothing overflows; rows of
    +inf give inf, rows of -inf give -inf."""
    check_out(out, "logsumexp")
    x = input if input.dtype.is_floating_point else cast(input, get_default_dtype())
    dims = [dim] if isinstance(dim, int) else list(dim)
    if x.numel() == 0:
        return log_(sum(exp(x), dims, keepdim))
    maxes = amax(x, dims, True)
    axes = reduce_dims(x.dim(), dims)
    shift = maxes if keepdim else squeeze(maxes, list(axes))  # a view: the fill shows in maxes
    masked_fill_(shift, eq(abs(shift), math.inf), 0)
    return add_(log_(sum(exp_(sub(x, maxes)), dims, keepdim)), shift)


@register_meta("torch.logsumexp")
def _logsumexp_rule(input: Tensor, dim: int | Sequence[int], keepdim: bool = False, *,
                    out: None = None) -> Output:
    """The reduction's output (sum's over the empty input, amax's shape otherwise: the sum of
    the shifted exponentials has it), in the floating dtype the input is computed in."""
    check_out(out, "logsumexp")
    dims = [dim] if isinstance(dim, int) else list(dim)
    reduced = call_rule(sum if input.numel() == 0 else amax, input, dims, keepdim)
    assert isinstance(reduced, TensorMeta)
    dt = input.dtype if input.dtype.is_floating_point else get_default_dtype()
    return dataclasses.replace(reduced, dtype=dt)
