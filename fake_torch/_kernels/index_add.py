"""index_add(_): add `alpha * source`'s slices into the slices of `input` at `index` along a
dim, repeated indices accumulating (MoE expert outputs summed back into their tokens). One
launch, `index_add` (`index_add_` in place).

The checks are torch's meta function's, in its order and with its texts (they name
`index_add_()` for both forms). float16/bfloat16 add in float32 and round after each add, as
torch's kernels do (the CPU kernel adds slice by slice; the CUDA one atomically).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import bool_, int32, int64
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import written_rule
from fake_torch._kernels._strides import (
    assert_no_internal_overlap,
    assert_no_overlap,
    contiguous_strides,
    scalar_type_name,
)
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, method, op
from fake_torch._tensor import Tensor, wrap_dim


def _checks(self: Tensor, dim: int, index: Tensor, source: Any, alpha: Any,
            fname: str) -> tuple[int, bool | int | float]:
    """torch's index_add meta checks; returns the wrapped dim and alpha in self's kind."""
    if not isinstance(source, Tensor):
        raise TypeError(f"{fname}(): argument 'source' (position 3) must be Tensor, not "
                        f"{type(source).__name__}")
    if not isinstance(alpha, (bool, int, float, np.number)):
        raise TypeError(f"{fname}(): argument 'alpha' must be Number, not "
                        f"{type(alpha).__name__}")
    d = wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {scalar_type_name(index.dtype)} and size: "
                         f"{list(index.shape)}")
    if index.dtype not in (int32, int64):
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_add_(): self ({scalar_type_name(self.dtype)}) and source "
                           f"({scalar_type_name(source.dtype)}) must have the same scalar type")
    if d != 0 and d >= source.dim():
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {source.dim()}")
    n_source = source.shape[d] if source.dim() else 1
    if index.numel() != n_source:
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal "
                           f"to source.size(dim): ({n_source}), for dim: {d}")
    self_rest, source_rest = list(self.shape), list(source.shape)
    if self.dim() and source.dim():
        del self_rest[d], source_rest[d]
    if self_rest != source_rest:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(self.shape)} "
                           f"source.shape = {list(source.shape)}")
    # alpha in self's kind: integral dtypes truncate it, bool keeps its truth
    kind: bool | int | float = bool(alpha) if self.dtype is bool_ else \
        float(alpha) if self.dtype.is_floating_point else int(alpha)
    return d, kind


def _kernel(out: np.ndarray, idx: np.ndarray, src: np.ndarray, *, dim: int,
            alpha: bool | int | float, init: np.ndarray | None = None) -> None:
    if init is not None:
        out[...] = init
    o = out.reshape(1) if out.ndim == 0 else out
    n = o.shape[dim]
    i = idx.reshape(-1).astype(np.int64)
    if i.size and (i.min() < 0 or i.max() >= n):
        bad = int(i[(i < 0) | (i >= n)][0])
        if out.ndim > 1:  # torch's CPU kernel adds slice by slice; a 1-D self element-wise
            raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
        raise IndexError("index out of range in self")
    s = src.reshape(o.shape[:dim] + i.shape + o.shape[dim + 1:])
    lead: tuple[Any, ...] = (slice(None),) * dim
    if o.dtype == np.bool_:
        np.logical_or.at(o, (*lead, i), np.logical_and(s, alpha))
    elif o.dtype.kind in "iu" or (o.dtype.kind == "f" and o.dtype.itemsize >= 4):
        a = np.array(alpha).astype(o.dtype)  # a negative alpha wraps into an unsigned dtype
        with np.errstate(over="ignore"):
            np.add.at(o, (*lead, i), s * a)  # integers wrap, as C++ integers do
    else:  # float16, bfloat16: each add in float32, rounded into the tensor, index by index
        scaled = s.astype(np.float32) * np.float32(alpha)
        for k, at in enumerate(i):
            key: tuple[Any, ...] = (*lead, at)
            o[key] = (o[key].astype(np.float32) + scaled[(*lead, k)]).astype(o.dtype)


def _copy_kernel(out: np.ndarray, init: np.ndarray, idx: np.ndarray, src: np.ndarray, *,
                 dim: int, alpha: bool | int | float) -> None:
    _kernel(out, idx, src, dim=dim, alpha=alpha, init=init)


@op(POINTWISE, method=True)
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1,
              out: Tensor | None = None) -> Tensor:
    """A copy of input with `alpha * source[.., k, ..]` added at `index[k]` along dim: one
    `index_add` launch into a fresh contiguous tensor."""
    if out is not None:
        raise NotImplementedError("torch.index_add(..., out=...) is not emulated by fake_torch")
    d, a = _checks(input, dim, index, source, alpha, "index_add")
    result = _common.new_tensor(input.shape, input.dtype,
                                _common.common_device(input, index, source))
    _common.launch("index_add", _copy_kernel, result, (input, index, source),
                   {"dim": d, "alpha": a})
    return result


@method(POINTWISE)
def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: float = 1) -> Tensor:
    """In place: self[.., index[k], ..] += alpha * source[.., k, ..], repeats accumulating."""
    d, a = _checks(self, dim, index, source, alpha, "index_add_")
    _common.common_device(self, index, source)
    assert_no_internal_overlap(self)
    assert_no_overlap(self, index)
    assert_no_overlap(self, source)
    _common.launch("index_add_", _kernel, self, (index, source), {"dim": d, "alpha": a})
    return self



# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

@register_meta("torch.index_add")
def _index_add_rule(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
                    alpha: float = 1, out: Tensor | None = None) -> TensorMeta:
    """A fresh row-major copy of input."""
    if out is not None:
        raise NotImplementedError("torch.index_add(..., out=...) is not emulated by fake_torch")
    return TensorMeta(tuple(input.shape), input.dtype, contiguous_strides(input.shape))


register_meta("Tensor.index_add_")(written_rule)
