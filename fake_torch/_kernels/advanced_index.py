"""aten::index and aten::index_put_: advanced indexing with tensor indices, one launch each.

`Plan` lays the indices out for a numpy kernel (numpy's advanced indexing has torch's result
layout: adjacent indexed dims stay in place, separated ones move to the front). Integer indices
are bounds-checked inside the kernel, where a GPU checks them; a bool mask's size is read from
the data, which on cuda is a host sync.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch import _meta
from fake_torch._dtype import bool_, int32, int64, uint8
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import written_rule
from fake_torch._kernels._strides import (
    assert_no_overlap,
    dense_strides_like,
    empty_like_preserve,
    scalar_type_name,
)
from fake_torch._kernels.index_ops import accumulate_at
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, aten_op, op
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Tensor


class Plan:
    """Tensor indices laid out for a numpy kernel: `spec[p]` is -1 (dim p not indexed) or the
    position of its array in `arrays`; `checks` are (array, dim, ordinal) bounds checks."""

    def __init__(self, t: Tensor, indices: Sequence[Tensor | None]) -> None:
        indices = list(indices)
        while indices and indices[-1] is None:
            indices.pop()
        ndim, shape = t.dim(), t.shape
        self.arrays: list[Tensor] = []
        spec: list[int] = []
        u8: list[int] = []
        checks: list[tuple[int, int, int]] = []
        self.entries: list[tuple[int, Tensor] | None] = []  # (first dim, index) per position
        self.into_empty_dim = False  # an integer index into a dim of size 0
        dim = ordinal = 0
        for idx in indices:
            if idx is None:
                spec.append(-1)
                self.entries.append(None)
                dim += 1
                continue
            if idx.dtype not in (int64, int32, uint8, bool_):
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            if idx.device.type != "cpu" and idx.device != t.device:  # (cpu indices: moved)
                raise RuntimeError("indices should be either on cpu or on the same device as the "
                                   f"indexed tensor ({t.device})")
            is_mask = idx.dtype in (bool_, uint8)
            width = idx.dim() if is_mask else 1
            if dim + width > ndim:
                raise IndexError(f"too many indices for tensor of dimension {ndim}")
            if is_mask:
                if idx.dtype is uint8:
                    warnings.warn("indexing with dtype torch.uint8 is now deprecated, please "
                                  "use a dtype torch.bool instead.", UserWarning, stacklevel=4)
                    u8.append(len(self.arrays))
                for j in range(width):
                    if idx.shape[j] != shape[dim + j]:
                        raise IndexError(f"The shape of the mask {list(idx.shape)} at index {j} "
                                         "does not match the shape of the indexed tensor "
                                         f"{list(shape)} at index {dim + j}")
            else:
                self.into_empty_dim |= shape[dim] == 0
                checks.append((len(self.arrays), dim, ordinal))
            spec.append(len(self.arrays))
            self.entries.append((dim, idx))
            self.arrays.append(idx)
            dim += width
            ordinal += width
        self.params: dict[str, Any] = {"spec": tuple(spec), "u8": tuple(u8),
                                       "checks": tuple(checks)}
        self.has_mask = any(e is not None and e[1].dtype in (bool_, uint8) for e in self.entries)

    def result_shape(self, t: Tensor) -> tuple[int, ...]:
        """numpy's (= torch's) advanced-indexing shape. Mask sizes are read from the data: on
        cuda that is a host sync."""
        if self.has_mask and t.is_cuda:
            _dispatch.host_sync("index", reads=tuple(
                e[1]._a for e in self.entries if e is not None and e[1].dtype in (bool_, uint8)))
        if self.has_mask and t._device.type == "meta":  # a mask's size is its count of Trues
            raise NotImplementedError(_meta.NONZERO)
        index_shapes: list[tuple[int, ...]] = []
        positions: list[int] = []
        for p, entry in enumerate(self.entries):
            if entry is None:
                continue
            positions.append(p)
            idx = entry[1]
            if idx.dtype in (bool_, uint8):
                count = int(np.count_nonzero(idx._a))
                index_shapes.extend([(count,)] * idx.dim())
            else:
                index_shapes.append(idx.shape)
        try:  # (pure Python: symbolic index sizes broadcast without specialising)
            bshape = _common.broadcast_shapes(*index_shapes)
        except RuntimeError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join(str(list(s)) for s in index_shapes)
                             ) from None
        if self.into_empty_dim and 0 not in bshape:
            raise IndexError("index is out of bounds for dimension with size 0")
        shape = list(t.shape)
        dims = [(e[0], e[1].dim() if e[1].dtype in (bool_, uint8) else 1)
                for e in self.entries if e is not None]
        first, (last, width) = dims[0][0], dims[-1]
        before, after = shape[:first], shape[last + width:]
        if positions == list(range(positions[0], positions[-1] + 1)):  # adjacent: in place
            return (*before, *bshape, *after)
        indexed = {d + j for d, w in dims for j in range(w)}
        return (*bshape, *(s for d, s in enumerate(shape) if d not in indexed))


def _check_bounds(shape: tuple[int, ...], arrays: tuple[np.ndarray, ...],
                  checks: tuple[tuple[int, int, int], ...]) -> None:
    """torch's IndexError for an out-of-range integer index (checked when the kernel runs, as
    a GPU checks it in the kernel): the first offending element in broadcast order, and at
    that element the first offending dim."""
    sizes = [shape[dim] for _, dim, _ in checks]
    ints = [arrays[k] for k, _, _ in checks]
    if all(a.size == 0 or (a.min() >= -n and a.max() < n) for a, n in zip(ints, sizes,
                                                                          strict=True)):
        return
    wide = np.broadcast_arrays(*ints)
    bad = [((a < -n) | (a >= n)).ravel() for a, n in zip(wide, sizes, strict=True)]
    first = int(np.argmax(np.logical_or.reduce(bad)))
    for a, b, n, (_, _, ordinal) in zip(wide, bad, sizes, checks, strict=True):
        if b[first]:
            raise IndexError(f"index {a.ravel()[first]} is out of bounds for dimension {ordinal} "
                             f"with size {n}")


def _key(arrays: tuple[np.ndarray, ...], spec: tuple[int, ...], u8: tuple[int, ...]) -> tuple[
        Any, ...]:
    return tuple(slice(None) if s < 0 else (arrays[s] != 0 if s in u8 else arrays[s])
                 for s in spec)


def _index_kernel(out: np.ndarray, src: np.ndarray, *arrays: np.ndarray, spec: tuple[int, ...],
                  u8: tuple[int, ...], checks: tuple[tuple[int, int, int], ...]) -> None:
    if out.size == 0:  # nothing to gather: torch checks no index either
        return
    _check_bounds(src.shape, arrays, checks)
    if len(arrays) == 1 and not u8 and arrays[0].dtype.kind != "b":
        # one integer index (x[idx], x[:, idx]): a gather along its dim straight into out,
        # without numpy's fancy-indexing temporary (half the time at a [512, 32, 2, 16] gather);
        # every index is in bounds by now, so "wrap" only maps the negative ones, as x[idx] does
        np.take(src, arrays[0], axis=spec.index(0), out=out, mode="wrap")
        return
    out[...] = src[_key(arrays, spec, u8)]


def index_tensor(self: Tensor, indices: Sequence[Tensor | None]) -> Tensor:
    """aten::index: advanced indexing into a fresh tensor, one "index" launch."""
    plan = Plan(self, indices)
    out = _common.new_tensor(plan.result_shape(self), self.dtype, self.device)
    _common.launch("index", _index_kernel, out, (self, *plan.arrays), plan.params)
    return out


def _empty_region(out: np.ndarray, arrays: tuple[np.ndarray, ...], u8: tuple[int, ...]) -> bool:
    """Whether out[indices] selects no element (an empty index, or a mask with no True)."""
    if out.size == 0:
        return True
    for k, a in enumerate(arrays):
        if a.size == 0 or ((a.dtype == np.bool_ or k in u8) and not a.any()):
            return True
    return False


def _index_put_kernel(out: np.ndarray, values: np.ndarray, *arrays: np.ndarray,
                      spec: tuple[int, ...], u8: tuple[int, ...],
                      checks: tuple[tuple[int, int, int], ...], accumulate: bool) -> None:
    if _empty_region(out, arrays, u8):
        return  # nothing is written, so nothing is checked
    _check_bounds(out.shape, arrays, checks)
    key = _key(arrays, spec, u8)
    if values.size == 1:
        values = values.reshape(())
    if accumulate:
        accumulate_at(out, key, values, np.add)
    else:
        out[key] = values


def _check_put(self: Tensor, plan: Plan, values: Tensor, accumulate: bool) -> None:
    if not isinstance(values, Tensor):
        raise TypeError("index_put_(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    if (not accumulate and values.numel() == 1 and values.device.type == "cpu" and
            plan.has_mask and len(plan.arrays) == 1 and plan.arrays[0].device == self.device):
        return  # torch: masked_fill_ with the (cast) value; the mask is never counted
    shape = plan.result_shape(self)
    vshape = values.shape
    fits = len(vshape) <= len(shape) and all(
        v in (1, s) for v, s in zip(reversed(vshape), reversed(shape), strict=False))
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot "
                           f"be broadcast to indexing result of shape {list(shape)}")
    if values.dtype is not self.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{scalar_type_name(self.dtype)} for the destination and "
                           f"{scalar_type_name(values.dtype)} for the source.")


def _as_index_list(indices: Any) -> list[Tensor | None]:
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put_(): argument 'indices' (position 1) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    return list(indices)


aten_op("index", POINTWISE)  # x[idx]: a gather, fused like any pointwise read


@op(POINTWISE, method=True)
def index_put_(input: Tensor, indices: Sequence[Tensor | None], values: Tensor,
               accumulate: bool = False) -> Tensor:
    """input[indices] = values (or += with accumulate), in place: one "index_put_" launch."""
    plan = Plan(input, _as_index_list(indices))
    _check_put(input, plan, values, accumulate)
    if any(s > 1 and st == 0 for s, st in zip(input.shape, input.stride(), strict=True)):
        warnings.warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the "
                      "tensor before performing this operation. This also applies to advanced "
                      "indexing e.g. tensor[indices] = tensor", UserWarning, stacklevel=3)
    assert_no_overlap(input, values)
    for idx in plan.arrays:
        assert_no_overlap(input, idx)
    _common.launch("index_put_", _index_put_kernel, input, (values, *plan.arrays),
                   {**plan.params, "accumulate": bool(accumulate)})
    return input


def _index_put_copy_kernel(out: np.ndarray, src: np.ndarray, values: np.ndarray,
                           *arrays: np.ndarray, spec: tuple[int, ...], u8: tuple[int, ...],
                           checks: tuple[tuple[int, int, int], ...], accumulate: bool) -> None:
    out[...] = src
    _index_put_kernel(out, values, *arrays, spec=spec, u8=u8, checks=checks,
                      accumulate=accumulate)


@op(POINTWISE, method=True)
def index_put(input: Tensor, indices: Sequence[Tensor | None], values: Tensor,
              accumulate: bool = False) -> Tensor:
    """Out-of-place index_put_: a copy of input with the values put (one "index_put" launch)."""
    plan = Plan(input, _as_index_list(indices))
    _check_put(input, plan, values, accumulate)
    out = empty_like_preserve(input)
    _common.launch("index_put", _index_put_copy_kernel, out, (input, values, *plan.arrays),
                   {**plan.params, "accumulate": bool(accumulate)})
    return out


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

@register_meta("torch.index_put")
def _index_put_rule(input: Tensor, indices: Sequence[Tensor | None], values: Tensor,
                    accumulate: bool = False) -> TensorMeta:
    """A copy of input laid out as input (empty_like)."""
    return TensorMeta(tuple(input.shape), input.dtype,
                      dense_strides_like(tuple(input.shape), tuple(input.stride())))


register_meta("torch.index_put_")(written_rule)
