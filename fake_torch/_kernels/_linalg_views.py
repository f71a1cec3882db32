"""The views matmul and einsum take on their way to a GEMM, with torch's copy rules.

A view launches nothing. `reshape` is a view exactly when torch's `computeStride` finds strides
for the new shape (`_strides.view_strides`); otherwise torch copies (`clone` to contiguous, one
launch) and so do we. Inputs to these helpers are internal operands: their views may be
read-only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels._strides import type_string, view_strides
from fake_torch._tensor import Tensor


def view_of(t: Tensor, a: np.ndarray) -> Tensor:
    """Wrap a numpy view of `t`'s storage as a tensor on `t`'s device. It shares `t`'s Storage
    (so the allocator keeps the block while the view lives) and, as in torch (grad mode or not),
    its `requires_grad`, which steers matmul's choice of kernels."""
    out = Tensor._make(a, t.device, t._storage)
    out.requires_grad = t.requires_grad
    return out


def reshape(t: Tensor, shape: Sequence[int]) -> Tensor:
    """torch.reshape: a view when strides allow, else a contiguous `clone` (one launch)."""
    shape = tuple(shape)
    if t.shape == shape:
        return t
    strides = view_strides(t.shape, t.stride(), shape)
    if strides is None:
        return _reshape_copy(t, shape)
    return _restride(t, shape, strides)


def _restride(t: Tensor, shape: tuple[int, ...], strides: tuple[int, ...]) -> Tensor:
    a = t._a
    try:
        return view_of(t, a.reshape(shape, copy=False))  # numpy agrees: same storage
    except ValueError:
        byte_strides = tuple(s * a.itemsize for s in strides)
        return view_of(t, np.lib.stride_tricks.as_strided(a, shape, byte_strides))


def _reshape_copy(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    copy = contiguous_clone(t)
    return view_of(copy, copy._a.reshape(shape))  # `_unsafe_view`: no launch


def contiguous_clone(t: Tensor) -> Tensor:
    """A contiguous copy of `t`: one `clone` launch."""
    out = new_tensor(t.shape, t.dtype, t.device)
    launch("clone", _clone_kernel, out, (t,))
    return out


def contiguous(t: Tensor) -> Tensor:
    """`t.contiguous()`: `t` itself when already contiguous, else a `clone`."""
    return t if t.is_contiguous() else contiguous_clone(t)


def _clone_kernel(out: np.ndarray, x: np.ndarray) -> None:
    out[...] = x


def expand(t: Tensor, shape: Sequence[int]) -> Tensor:
    """`t.expand(shape)` as a stride-0 view, with torch's error texts."""
    shape = tuple(shape)
    if len(shape) < t.dim():
        raise RuntimeError(f"expand({type_string(t)}{{{list(t.shape)}}}, "
                           f"size={list(shape)}): the number of sizes provided ({len(shape)}) "
                           "must be greater or equal to the number of dimensions in the tensor "
                           f"({t.dim()})")
    lead = len(shape) - t.dim()
    for i, size in reversed(list(enumerate(t.shape))):  # innermost first, as torch checks
        if size != 1 and size != shape[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[lead + i]}) must match "
                               f"the existing size ({size}) at non-singleton dimension "
                               f"{lead + i}.  Target sizes: {list(shape)}.  Tensor sizes: "
                               f"{list(t.shape)}")
    if t.shape == shape:
        return t
    return view_of(t, np.broadcast_to(t._a, shape))


def mT(t: Tensor) -> Tensor:
    """The last two dims swapped (a view)."""
    return view_of(t, np.swapaxes(t._a, -1, -2))


def unsqueeze(t: Tensor, dim: int) -> Tensor:
    return view_of(t, np.expand_dims(t._a, dim))


def permute(t: Tensor, dims: Sequence[int]) -> Tensor:
    return view_of(t, np.transpose(t._a, tuple(dims)))


def view(t: Tensor, shape: Sequence[int]) -> Tensor:
    """`t.view(shape)` where torch's algorithm guarantees the strides allow it."""
    shape = tuple(shape)
    strides = view_strides(t.shape, t.stride(), shape)
    assert strides is not None, f"view of {tuple(t.shape)} as {shape} needs a copy"
    return _restride(t, shape, strides)


def diagonal_last(t: Tensor, dim1: int, dim2: int) -> Tensor:
    """`t.diagonal(0, dim1, dim2)`: both dims dropped, their diagonal appended last. A
    writable view (numpy's own diagonal is read-only)."""
    a = t._a
    keep = [d for d in range(a.ndim) if d not in (dim1, dim2)]
    shape = (*(a.shape[d] for d in keep), min(a.shape[dim1], a.shape[dim2]))
    strides = (*(a.strides[d] for d in keep), a.strides[dim1] + a.strides[dim2])
    return view_of(t, np.lib.stride_tricks.as_strided(a, shape, strides))


def movedim(t: Tensor, source: int, destination: int) -> Tensor:
    return view_of(t, np.moveaxis(t._a, source, destination))
