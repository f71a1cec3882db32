"""Views that cut one dim: narrow, select, split, chunk, unbind, tensor_split (no launches).

Slices follow torch's `slice` rules (negative bounds wrap, out-of-range bounds clamp, positive
steps only); a cut piece keeps its base's strides and starts `start * stride` elements in.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

from fake_torch._kernels._strides import restride, scalar_type_name, wrap
from fake_torch._opdef import VIEW, method, op
from fake_torch._tensor import Tensor, wrap_dim


def slice_dim(t: Tensor, dim: int, start: int | None, stop: int | None, step: int = 1) -> Tensor:
    """t[..., start:stop:step, ...] along `dim` (already wrapped), as torch's aten::slice."""
    if step <= 0:
        raise ValueError("step must be greater than zero")
    lo, hi, _ = slice(start, stop, step).indices(t.shape[dim])
    hi = max(hi, lo)
    n = -(-(hi - lo) // step)
    if n >= 2:  # numpy's slice has torch's strides and offset
        return wrap(t, t._a[(slice(None),) * dim + (slice(lo, hi, step),)])
    # numpy normalises a slice of 0 or 1 elements (stride, start); torch keeps them
    shape, strides = list(t.shape), list(t.stride())
    shape[dim] = n
    strides[dim] *= step
    return restride(t, shape, strides, lo * t.stride()[dim] * t.element_size())


@op(VIEW, method=True)
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, with that dim removed."""
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    index = operator.index(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return wrap(input, input._a[(slice(None),) * d + (index, Ellipsis)])


@op(VIEW, method=True)
def narrow(input: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    """`length` elements of `dim` from `start` (a view)."""
    if input.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    begin = operator.index(start)
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
    return slice_dim(input, d, begin, begin + length)


def _split_sizes(tensor: Tensor, d: int, sizes: Sequence[int]) -> tuple[Tensor, ...]:
    size = tensor.shape[d]
    if any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={list(sizes)}")
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                           f"(input tensor's size at dimension {d}), but got "
                           f"split_sizes={list(sizes)}")
    pieces, start = [], 0
    for s in sizes:
        pieces.append(slice_dim(tensor, d, start, start + s))
        start += s
    return tuple(pieces)


@op(VIEW)
def split(tensor: Tensor, split_size_or_sections: int | Sequence[int],
          dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of `split_size` along `dim` (the last may be smaller), or pieces of the listed
    sizes. All views."""
    if tensor.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor.dim())
    if not isinstance(split_size_or_sections, int):
        return _split_sizes(tensor, d, [operator.index(s) for s in split_size_or_sections])
    step = split_size_or_sections
    size = tensor.shape[d]
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    n = max(-(-size // step), 1) if step else 1
    return tuple(slice_dim(tensor, d, i * step, min((i + 1) * step, size)) for i in range(n))


@method(VIEW, name="split")
def split_method(self: Tensor, split_size: int | Sequence[int], dim: int = 0
                 ) -> tuple[Tensor, ...]:
    """Tensor.split: torch's Python method names its first argument `split_size` (torch.split
    names it split_size_or_sections; mamba-minimal passes split_size=[...])."""
    return split(self, split_size, dim)


@op(VIEW, method=True)
def split_with_sizes(input: Tensor, split_sizes: Sequence[int],
                     dim: int = 0) -> tuple[Tensor, ...]:
    if input.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    return _split_sizes(input, wrap_dim(dim, input.dim()), list(split_sizes))


@op(VIEW, method=True)
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most `chunks` equal pieces (ceil-sized) along `dim`."""
    if input.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    step = -(-size // chunks)
    if step == 0:  # an empty dim still gives `chunks` (empty) pieces
        return _split_sizes(input, d, [0] * chunks)
    return split(input, step, d)


@op(VIEW, method=True)
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input.dim())
    return tuple(select(input, d, i) for i in range(input.shape[d]))


@op(VIEW, method=True)
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """numpy.array_split along `dim`: `n` near-equal sections, or cuts at the given indices."""
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
        base, extra = divmod(size, spec)
        pieces, start = [], 0
        for i in range(spec):
            n = base + (1 if i < extra else 0)
            pieces.append(slice_dim(input, d, start, start + n))
            start += n
        return tuple(pieces)
    cuts = [operator.index(i) for i in spec]
    bounds = [0, *cuts, size]
    return tuple(slice_dim(input, d, a, b) for a, b in itertools.pairwise(bounds))
