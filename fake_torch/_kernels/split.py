"""Views that cut one dim: narrow, select, split, chunk, unbind, tensor_split (no launches).

Slices follow torch's `slice` rules (negative bounds wrap, out-of-range bounds clamp, positive
steps only); a cut piece keeps its base's strides and starts `start * stride` elements in.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from fake_torch._kernels._strides import (
    Geometry,
    geometry,
    scalar_type_name,
    view_from,
    view_meta,
    wrap,
)
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import VIEW, method, op
from fake_torch._sym import sym_index
from fake_torch._tensor import Tensor, wrap_dim

Bounds = list[tuple[Any, Any]]  # the (start, stop) of each piece a split cuts


def slice_bounds(size: Any, start: Any, stop: Any, step: Any) -> tuple[Any, Any]:
    """torch's aten::slice bounds along a dim of `size`: (the first index, the count).
    Negative bounds wrap once, then both clamp into [0, size]; plain comparisons, so a
    symbolic size works too."""
    if step <= 0:
        raise ValueError("step must be greater than zero")
    lo = 0 if start is None else start
    hi = size if stop is None else stop
    if lo < 0:
        lo = lo + size
    if hi < 0:
        hi = hi + size
    lo = 0 if lo < 0 else size if lo > size else lo
    hi = lo if hi < lo else size if hi > size else hi
    return lo, (hi - lo + step - 1) // step


def slice_geometry(g: Geometry, dim: int, start: Any, stop: Any, step: Any = 1) -> Geometry:
    """g[..., start:stop:step, ...] along `dim` (already wrapped): torch keeps the stride
    times the step and starts `lo * stride` elements in, whatever the count."""
    shape, strides, offset = list(g[0]), list(g[1]), g[2]
    lo, n = slice_bounds(shape[dim], start, stop, step)
    offset = offset + lo * strides[dim]
    shape[dim], strides[dim] = n, strides[dim] * step
    return tuple(shape), tuple(strides), offset


def slice_dim(t: Tensor, dim: int, start: int | None, stop: int | None, step: int = 1) -> Tensor:
    """t[..., start:stop:step, ...] along `dim` (already wrapped), as torch's aten::slice."""
    lo, n = slice_bounds(t._a.shape[dim], start, stop, step)  # (the array's: no Size built)
    if n >= 2:  # numpy's slice has torch's strides and offset
        return wrap(t, t._a[(slice(None),) * dim + (slice(lo, lo + (n - 1) * step + 1, step),)])
    # numpy normalises a slice of 0 or 1 elements (stride, start); torch keeps them
    return view_from(t, slice_geometry(geometry(t), dim, start, stop, step))


def select_geometry(g: Geometry, dim: int, index: Any) -> Geometry:
    """g at `index` (in range, negative counting from the end) along `dim`, that dim gone."""
    shape, strides, offset = g
    if index < 0:
        index = index + shape[dim]
    return (shape[:dim] + shape[dim + 1:], strides[:dim] + strides[dim + 1:],
            offset + index * strides[dim])


@op(VIEW, method=True)
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, with that dim removed."""
    d, index = _select_args(input, dim, index)
    return wrap(input, input._a[(slice(None),) * d + (index, Ellipsis)])


@register_meta("torch.select")
def _select_rule(input: Tensor, dim: int, index: int) -> TensorMeta:
    return view_meta(input, select_geometry(geometry(input), *_select_args(input, dim, index)))


def _select_args(input: Tensor, dim: int, index: int) -> tuple[int, Any]:
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    index = sym_index(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return d, index


@op(VIEW, method=True)
def narrow(input: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    """`length` elements of `dim` from `start` (a view)."""
    d, begin = _narrow_args(input, dim, start, length)
    return slice_dim(input, d, begin, begin + length)


@register_meta("torch.narrow")
def _narrow_rule(input: Tensor, dim: int, start: int | Tensor, length: int) -> TensorMeta:
    d, begin = _narrow_args(input, dim, start, length)
    return view_meta(input, slice_geometry(geometry(input), d, begin, begin + length))


def _narrow_args(input: Tensor, dim: int, start: int | Tensor, length: int) -> tuple[int, Any]:
    """narrow's checks: its dim (wrapped) and first index (made non-negative)."""
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    begin = sym_index(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= begin <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {begin})")
    if begin < 0:
        begin += size
    if begin + length > size:
        raise RuntimeError(f"start ({begin}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return d, begin


def _pieces(t: Tensor, d: int, bounds: Bounds) -> tuple[Tensor, ...]:
    return tuple([slice_dim(t, d, a, b) for a, b in bounds])


def _piece_rules(t: Tensor, d: int, bounds: Bounds) -> tuple[TensorMeta, ...]:
    g = geometry(t)
    return tuple(view_meta(t, slice_geometry(g, d, a, b)) for a, b in bounds)


def _split_sizes(tensor: Tensor, d: int, sizes: Sequence[int]) -> Bounds:
    """The bounds of pieces of the given sizes along dim `d`, checked."""
    size = tensor.shape[d]
    if any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={list(sizes)}")
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                           f"(input tensor's size at dimension {d}), but got "
                           f"split_sizes={list(sizes)}")
    bounds: Bounds = []
    start: Any = 0
    for s in sizes:
        bounds.append((start, start + s))
        start = start + s
    return bounds


@op(VIEW)
def split(tensor: Tensor, split_size_or_sections: int | Sequence[int],
          dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of `split_size` along `dim` (the last may be smaller), or pieces of the listed
    sizes. All views."""
    return _pieces(tensor, *_split(tensor, split_size_or_sections, dim))


@register_meta("torch.split")
def _split_rule(tensor: Tensor, split_size_or_sections: int | Sequence[int],
                dim: int = 0) -> tuple[TensorMeta, ...]:
    return _piece_rules(tensor, *_split(tensor, split_size_or_sections, dim))


def _split(tensor: Tensor, split_size_or_sections: int | Sequence[int],
           dim: int) -> tuple[int, Bounds]:
    """split's dim (wrapped) and the bounds of its pieces."""
    if tensor.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor.dim())
    if isinstance(split_size_or_sections, (list, tuple)):  # (a size may be symbolic)
        return d, _split_sizes(tensor, d, [sym_index(s) for s in split_size_or_sections])
    step: Any = split_size_or_sections  # an int, or a symbolic size
    size = tensor.shape[d]
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    n = max(-(-size // step), 1) if step else 1
    return d, [(i * step, min((i + 1) * step, size)) for i in range(n)]


@method(VIEW, name="split")
def split_method(self: Tensor, split_size: int | Sequence[int], dim: int = 0
                 ) -> tuple[Tensor, ...]:
    """Tensor.split: torch's Python method names its first argument `split_size` (torch.split
    names it split_size_or_sections; mamba-minimal passes split_size=[...])."""
    return split(self, split_size, dim)


@register_meta("Tensor.split")
def _split_method_rule(self: Tensor, split_size: int | Sequence[int],
                       dim: int = 0) -> tuple[TensorMeta, ...]:
    return _split_rule(self, split_size, dim)


@op(VIEW, method=True)
def split_with_sizes(input: Tensor, split_sizes: Sequence[int],
                     dim: int = 0) -> tuple[Tensor, ...]:
    return _pieces(input, *_split_with_sizes(input, split_sizes, dim))


@register_meta("torch.split_with_sizes")
def _split_with_sizes_rule(input: Tensor, split_sizes: Sequence[int],
                           dim: int = 0) -> tuple[TensorMeta, ...]:
    return _piece_rules(input, *_split_with_sizes(input, split_sizes, dim))


def _split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int) -> tuple[int, Bounds]:
    if input.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, input.dim())
    return d, _split_sizes(input, d, list(split_sizes))


@op(VIEW, method=True)
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most `chunks` equal pieces (ceil-sized) along `dim`."""
    return _pieces(input, *_chunk(input, chunks, dim))


@register_meta("torch.chunk")
def _chunk_rule(input: Tensor, chunks: int, dim: int = 0) -> tuple[TensorMeta, ...]:
    return _piece_rules(input, *_chunk(input, chunks, dim))


def _chunk(input: Tensor, chunks: int, dim: int) -> tuple[int, Bounds]:
    if input.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    step = -(-size // chunks)
    if step == 0:  # an empty dim still gives `chunks` (empty) pieces
        return d, _split_sizes(input, d, [0] * chunks)
    return _split(input, step, d)


@op(VIEW, method=True)
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    d = _unbind_dim(input, dim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


@register_meta("torch.unbind")
def _unbind_rule(input: Tensor, dim: int = 0) -> tuple[TensorMeta, ...]:
    d = _unbind_dim(input, dim)
    g = geometry(input)
    return tuple(view_meta(input, select_geometry(g, d, i)) for i in range(input.shape[d]))


def _unbind_dim(input: Tensor, dim: int) -> int:
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return wrap_dim(dim, input.dim())


@op(VIEW, method=True)
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """numpy.array_split along `dim`: `n` near-equal sections, or cuts at the given indices."""
    return _pieces(input, *_tensor_split(input, indices_or_sections, dim))


@register_meta("torch.tensor_split")
def _tensor_split_rule(input: Tensor, indices_or_sections: Any,
                       dim: int = 0) -> tuple[TensorMeta, ...]:
    if isinstance(indices_or_sections, Tensor):  # the cuts are values in a tensor
        raise NotImplementedError("torch.tensor_split: cuts given as a tensor are values; no "
                                  "output rule describes the pieces without reading them")
    return _piece_rules(input, *_tensor_split(input, indices_or_sections, dim))


def _tensor_split(input: Tensor, indices_or_sections: Any, dim: int) -> tuple[int, Bounds]:
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype.is_floating_point or spec.dtype.itemsize != 8:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {scalar_type_name(spec.dtype)}")
        if spec.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {spec.dim()} dims")
        spec = spec.tolist()
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        base, extra = size // spec, size % spec
        return d, _split_sizes(input, d, [base + (1 if i < extra else 0) for i in range(spec)])
    cuts = [sym_index(i) for i in spec]
    return d, list(itertools.pairwise([0, *cuts, size]))
