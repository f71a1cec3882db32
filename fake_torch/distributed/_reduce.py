"""The reductions of torch.distributed's ReduceOps over the ranks' arrays, in one fixed order.

Order: rank order, left to right, ((x0 op x1) op x2) op ..., each step rounded to the
tensor's dtype (NCCL's ring and gloo's algorithms round each step too, but reach the ranks in
their own orders; with values whose every partial result is exact, as the tests use, they all
agree bit for bit). AVG on a gpu (NCCL) is a sum of pre-multiplied values, sum(x_r * (1/n)),
for floats (ncclAvg is PreMulSum) and a sum divided afterwards, truncating, for integers
(SumPostDiv); on a cpu (gloo, ProcessGroupGloo) the sum divided by n.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch.distributed._groups import ReduceOp

__all__ = ["GLOO_DTYPES", "reduce_arrays"]

# the dtypes ProcessGroupGloo reduces (others raise "Invalid scalar type")
GLOO_DTYPES = frozenset({"float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32",
                         "int64", "bool"})

_STEP: dict[Any, Any] = {
    ReduceOp.SUM: np.add, ReduceOp.PRODUCT: np.multiply, ReduceOp.MIN: np.minimum,
    ReduceOp.MAX: np.maximum, ReduceOp.BAND: np.bitwise_and, ReduceOp.BOR: np.bitwise_or,
    ReduceOp.BXOR: np.bitwise_xor,
}


def reduce_arrays(op: ReduceOp.RedOpType, arrays: list[np.ndarray], *, on_gpu: bool,
                  floating: bool) -> np.ndarray:
    """`op` over `arrays` (one per rank, rank order), in their dtype (`floating`: a floating
    torch dtype). Overflow gives inf, as on a GPU, without numpy's warning."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _reduce(op, arrays, on_gpu, floating)


def _reduce(op: ReduceOp.RedOpType, arrays: list[np.ndarray], on_gpu: bool,
            floating: bool) -> np.ndarray:
    n = len(arrays)
    dt = arrays[0].dtype
    if op is ReduceOp.AVG:
        if on_gpu and floating:
            scale = np.asarray(1.0 / n, dtype=dt)
            acc: np.ndarray = (arrays[0] * scale).astype(dt)
            for a in arrays[1:]:
                acc = (acc + (a * scale).astype(dt)).astype(dt)
            return acc
        total = _reduce(ReduceOp.SUM, arrays, on_gpu, floating)
        if floating:
            mean: np.ndarray = (total / np.asarray(n, dtype=dt)).astype(dt)
            return mean
        wide = total.astype(np.int64)
        truncated: np.ndarray = (np.sign(wide) * (np.abs(wide) // n)).astype(dt)
        return truncated
    step = _STEP[op]
    out: np.ndarray = np.array(arrays[0], copy=True)
    for a in arrays[1:]:
        out = step(out, a).astype(dt, copy=False)
    return out
