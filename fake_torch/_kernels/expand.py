"""Views that repeat or re-stride memory: expand / broadcast_to / broadcast_tensors (stride-0
dims), as_strided (explicit strides over the storage) and diagonal. No launches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_torch._kernels import _common
from fake_torch._kernels._strides import (
    Geometry,
    geometry,
    int_sizes,
    numel,
    restride,
    same_meta,
    storage_nbytes,
    type_string,
    view_from,
    view_meta,
)
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import VIEW, method, op
from fake_torch._tensor import Tensor, wrap_dim

# --- expand and broadcasting --------------------------------------------------------------------

@method(VIEW)
def expand(self: Tensor, *sizes: Any) -> Tensor:
    """A stride-0 view that repeats size-1 dims (and new leading dims); -1 keeps a size."""
    a = self._a  # (the geometry from the array: the storage offset, unused here, unread)
    g = (a.shape, tuple([s // a.itemsize for s in a.strides]), 0)
    shape, strides, _ = expand_geometry(self, sizes, g)
    return restride(self, shape, strides)


@register_meta("Tensor.expand")
def _expand_rule(self: Tensor, *sizes: Any) -> TensorMeta:
    return view_meta(self, expand_geometry(self, sizes))


def expand_geometry(self: Tensor, sizes: tuple[Any, ...], g: Geometry | None = None) -> Geometry:
    """torch's inferExpandGeometry: expanded dims get stride 0, new leading ones too. `g`: the
    geometry to expand, when not self's own (a view of self described, not made)."""
    if not sizes:
        raise TypeError('expand() missing 1 required positional arguments: "size"')
    target = int_sizes(sizes, "expand")
    shape, strides, offset = geometry(self) if g is None else g
    ndim, tdim = len(target), len(shape)
    if ndim < tdim:
        raise RuntimeError(f"expand({type_string(self)}{{{list(shape)}}}, size={list(target)}): "
                           f"the number of sizes provided ({ndim}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({tdim})")
    out_shape: list[Any] = [0] * ndim
    out_strides: list[Any] = [0] * ndim
    for i in range(ndim - 1, -1, -1):  # torch's inferExpandGeometry, innermost first
        d = tdim - ndim + i
        size = shape[d] if d >= 0 else 1
        stride = strides[d] if d >= 0 else (
            out_shape[i + 1] * out_strides[i + 1] if i + 1 < ndim else 0)
        want = target[i]
        if want == -1:
            if d < 0:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            want = size
        if size != want:
            if size != 1:
                raise RuntimeError(f"The expanded size of the tensor ({want}) must match the "
                                   f"existing size ({size}) at non-singleton dimension {i}.  "
                                   f"Target sizes: {list(target)}.  Tensor sizes: {list(shape)}")
            size, stride = want, 0
        out_shape[i], out_strides[i] = size, stride
    if any(s < 0 for s in out_shape):
        raise RuntimeError("numel: integer multiplication overflow")
    return tuple(out_shape), tuple(out_strides), offset


@method(VIEW)
def expand_as(self: Tensor, other: Tensor) -> Tensor:
    if not isinstance(other, Tensor):
        raise TypeError(f"expand_as(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return expand(self, other.shape)


@register_meta("Tensor.expand_as")
def _expand_as_rule(self: Tensor, other: Tensor) -> TensorMeta:
    return _expand_rule(self, tuple(other.shape))


@op(VIEW, method=True)
def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    return expand(input, tuple(size))


@register_meta("torch.broadcast_to")
def _broadcast_to_rule(input: Tensor, size: Sequence[int]) -> TensorMeta:
    return _expand_rule(input, tuple(size))


@op(VIEW)
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Expand every tensor (as a view) to their common broadcast shape."""
    tensors, shape = _broadcast(tensors)
    return tuple(t if t.shape == shape else expand(t, shape) for t in tensors)


@register_meta("torch.broadcast_tensors")
def _broadcast_tensors_rule(*tensors: Tensor) -> tuple[TensorMeta, ...]:
    tensors, shape = _broadcast(tensors)
    return tuple(same_meta(t, i) if tuple(t.shape) == shape else
                 view_meta(t, expand_geometry(t, (shape,)), i) for i, t in enumerate(tensors))


def _broadcast(tensors: tuple[Any, ...]) -> tuple[tuple[Tensor, ...], tuple[Any, ...]]:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return tensors, tuple(_common.broadcast_shapes(*(t.shape for t in tensors)))


def broadcast_shapes(*shapes: int | Sequence[int]) -> tuple[int, ...]:
    """torch.broadcast_shapes: the shape the given shapes broadcast to."""
    from fake_torch._tensor import Size

    as_tuples = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    result = [1] * max((len(s) for s in as_tuples), default=0)
    for k, s in enumerate(as_tuples):
        for i in range(-1, -1 - len(s), -1):
            if s[i] < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension ({s[i]}): "
                                   f"({s[i]})")
            if s[i] == 1 or s[i] == result[i]:
                continue
            if result[i] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[i]} at "
                                   f"{i}! Mismatching argument at index {k} had {s}; but "
                                   f"expected shape should be broadcastable to {result}")
            result[i] = s[i]
    return Size(result)


# --- raw strides ----------------------------------------------------------------------------

@op(VIEW, method=True)
def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view with explicit sizes, strides and (storage-absolute) offset."""
    return view_from(input, as_strided_geometry(input, size, stride, storage_offset,
                                                storage_nbytes(input)))


@register_meta("torch.as_strided")
def _as_strided_rule(input: Tensor, size: Sequence[int], stride: Sequence[int],
                     storage_offset: int | None = None) -> TensorMeta:
    nbytes = input.untyped_storage().nbytes()
    return view_meta(input, as_strided_geometry(input, size, stride, storage_offset, nbytes))


def as_strided_geometry(input: Tensor, size: Sequence[int], stride: Sequence[int],
                        storage_offset: int | None, have: Any) -> Geometry:
    """as_strided's geometry, checked against the storage's `have` bytes."""
    size, stride = tuple(size), tuple(stride)
    offset = input.storage_offset() if storage_offset is None else storage_offset
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    itemsize = input.dtype.itemsize
    needed = 0 if numel(size) == 0 else itemsize * (
        offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True)))
    if needed > have:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {needed} are out of bounds for storage of size {have}")
    return size, stride, offset


@op(VIEW, method=True)
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal of the (dim1, dim2) planes, appended as the last dim."""
    return view_from(input, diagonal_geometry(input, offset, dim1, dim2))


@register_meta("torch.diagonal")
def _diagonal_rule(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> TensorMeta:
    return view_meta(input, diagonal_geometry(input, offset, dim1, dim2))


def diagonal_geometry(input: Tensor, offset: int, dim1: int, dim2: int) -> Geometry:
    ndim = input.dim()
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, strides, base = geometry(input)
    if offset >= 0:
        n = max(min(shape[d1], shape[d2] - offset), 0)
        start = offset * strides[d2] if n else 0
    else:
        n = max(min(shape[d1] + offset, shape[d2]), 0)
        start = -offset * strides[d1] if n else 0
    keep = [d for d in range(ndim) if d not in (d1, d2)]
    return ((*(shape[d] for d in keep), n),
            (*(strides[d] for d in keep), strides[d1] + strides[d2]), base + start)
