"""Ops that build a new tensor out of whole tensors: cat / stack (and h/v/dstack), repeat /
tile, repeat_interleave, flip, roll, tril / triu, diag. One launch each under torch's aten name,
except where torch itself dispatches more (repeat_interleave with a tensor of repeats is
"repeat_interleave" + "index_select").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import dtype, int32, int64, promote_types
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import written_meta
from fake_torch._kernels._strides import (
    contiguous_strides,
    dense_strides_like,
    empty_like_preserve,
    int_sizes,
    numel,
    scalar_type_name,
)
from fake_torch._kernels.index_ops import index_select
from fake_torch._kernels.shape import atleast_1d, atleast_2d, atleast_3d, expand, flatten, view
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, EXTERN, POINTWISE, Break, dynamic_shape, method, op
from fake_torch._simulated import _dispatch
from fake_torch._sym import sym_index
from fake_torch._tensor import Tensor, wrap_dim


def _no_out(out: Tensor | None, fn: str) -> None:
    if out is not None:
        raise NotImplementedError(f"torch.{fn}(..., out=...) is not emulated by fake_torch")


def _tensor_list(tensors: Any, fn: str, dim: Any = 0) -> list[Tensor]:
    """The tensors a join takes, and its dim, checked as torch's argument parser checks them."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    return list(tensors)


# --- cat / stack ----------------------------------------------------------------------------

def _cat_kernel(out: np.ndarray, *parts: np.ndarray, axis: int) -> None:
    start = 0
    for p in parts:
        n = p.shape[axis]
        out[(slice(None),) * axis + (slice(start, start + n),)] = p
        start += n


@op(POINTWISE, aliases=("concat",))
def cat(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Join tensors along an existing dim (1-D empty tensors are skipped, as in torch); the
    result has the promoted dtype. One "cat" launch."""
    _no_out(out, "cat")
    ts = _cat_parts(tensors, dim)
    dev = _common.common_device(*ts)
    parts, shape, d, dt = _cat_out(ts, dim)
    result = _common.new_tensor(shape, dt, dev)
    _common.launch("cat", _cat_kernel, result, parts, {"axis": d})
    return result


def _cat_parts(tensors: Any, dim: Any) -> list[Tensor]:
    """cat's tensors, checked: a non-empty list of tensors of at least one dim."""
    ts = _tensor_list(tensors, "cat", dim)
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(ts):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    return ts


def _cat_out(ts: list[Tensor], dim: int) -> tuple[list[Tensor], list[Any], int, dtype]:
    """cat's shape checks, and what it joins: (the parts, the shape, the dim, the promoted
    dtype)."""
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = promote_types(dt, t.dtype)
    parts = [t for t in ts if t.shape != (0,)]  # legacy: a 1-D empty tensor joins anything
    if not parts:  # nothing but legacy empties: dim is not even checked
        return [], [0], 0, dt
    ref = parts[0]
    d = wrap_dim(dim, ref.dim())
    for i, t in enumerate(ts):
        if t.shape == (0,):
            continue
        if t.dim() != ref.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.dim()} "
                               f"and {t.dim()}")
        for k in range(ref.dim()):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[k]} but got size {t.shape[k]} for "
                                   f"tensor number {i} in the list.")
    shape = list(ref.shape)
    shape[d] = sum(t.shape[d] for t in parts)
    return parts, shape, d, dt


def concat(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    return cat(tensors, dim, out=out)


@op(COMPOSITE)
def concatenate(tensors: Sequence[Tensor], axis: int = 0, out: Tensor | None = None) -> Tensor:
    return cat(tensors, axis, out=out)


@register_meta("torch.concatenate")
def _concatenate_rule(tensors: Sequence[Tensor], axis: int = 0,
                      out: Tensor | None = None) -> Output:
    return call_rule("torch.cat", tensors, axis, out=out)


def _stack_kernel(out: np.ndarray, *parts: np.ndarray, axis: int) -> None:
    for i, p in enumerate(parts):
        out[(slice(None),) * axis + (i,)] = p


@op(POINTWISE)
def stack(tensors: Sequence[Tensor], dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Join equal-shaped tensors along a new dim: one "stack" launch."""
    _no_out(out, "stack")
    ts = _tensor_list(tensors, "stack", dim)
    shape, d, dt = _stack_out(ts, dim)
    result = _common.new_tensor(shape, dt, _common.common_device(*ts))
    _common.launch("stack", _stack_kernel, result, ts, {"axis": d})
    return result


def _stack_out(ts: list[Tensor], dim: int) -> tuple[list[Any], int, dtype]:
    """stack's checks, and its (shape, new dim, promoted dtype)."""
    if not ts:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = wrap_dim(dim, ts[0].dim() + 1)
    for i, t in enumerate(ts[1:], 1):
        if t.shape != ts[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(ts[0].shape)} at entry 0 and {list(t.shape)} at entry {i}")
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = promote_types(dt, t.dtype)
    shape = list(ts[0].shape)
    shape.insert(d, len(ts))
    return shape, d, dt


@op(COMPOSITE)
def hstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    ts = _tensor_list(tensors, "hstack")
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    ts = list(atleast_1d(ts))
    return cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


@register_meta("torch.hstack")
def _hstack_rule(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Output:
    ts = _stacked(tensors, "hstack", 1)
    return call_rule("torch.cat", ts, 0 if ts[0].dim() == 1 else 1, out=out)


def _stacked(tensors: Sequence[Tensor], fn: str, n: int) -> list[Tensor]:
    """The inputs of h/v/dstack, for their rules: cat's own when each has n dims already
    (atleast_nd returns it); a lifted one is a view the rules cannot be handed."""
    ts = _tensor_list(tensors, fn)
    if not ts:
        raise RuntimeError(f"{fn} expects a non-empty TensorList")
    if any(t.dim() < n for t in ts):
        raise NotImplementedError(f"torch.{fn} of a tensor of fewer than {n} dims: no output "
                                  f"rule (cat would join atleast_{n}d's view of it)")
    return ts


@op(COMPOSITE)
def vstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    ts = _tensor_list(tensors, "vstack")
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(list(atleast_2d(ts)), 0, out=out)


@register_meta("torch.vstack")
def _vstack_rule(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Output:
    return call_rule("torch.cat", _stacked(tensors, "vstack", 2), 0, out=out)


@op(COMPOSITE)
def dstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    ts = _tensor_list(tensors, "dstack")
    if not ts:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat(list(atleast_3d(ts)), 2, out=out)


@register_meta("torch.dstack")
def _dstack_rule(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Output:
    return call_rule("torch.cat", _stacked(tensors, "dstack", 3), 2, out=out)


# --- repeat / tile / repeat_interleave ----------------------------------------------------------

def _repeat_kernel(out: np.ndarray, src: np.ndarray, *, reps: tuple[int, ...]) -> None:
    lead = (1,) * (len(reps) - src.ndim)
    out[...] = np.tile(src.reshape(lead + src.shape), reps)


@method(POINTWISE)
def repeat(self: Tensor, *sizes: Any) -> Tensor:
    """Tensor.repeat: tile the whole tensor `sizes` times per dim: one "repeat" launch."""
    reps = int_sizes(sizes, "repeat", "repeats")
    result = _common.new_tensor(_repeat_shape(self, reps), self.dtype, self.device)
    _common.launch("repeat", _repeat_kernel, result, (self,), {"reps": reps})
    return result


def _repeat_shape(self: Tensor, reps: tuple[int, ...]) -> list[Any]:
    if len(reps) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(reps) - self.dim()) + tuple(self.shape)
    shape = [s * r for s, r in zip(padded, reps, strict=True)]
    if any(s < 0 for s in shape):
        bad = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    return shape


@method(COMPOSITE, name="tile")
def tile_method(self: Tensor, *dims: Any) -> Tensor:
    """Tensor.tile(*dims): the repeats as arguments, or one sequence of them."""
    return tile(self, dims)


@register_meta("Tensor.tile")
def _tile_method_rule(self: Tensor, *dims: Any) -> Output:
    return _tile_rule(self, dims)


@op(COMPOSITE)
def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Tensor.repeat with `dims` padded by leading 1s to input's rank."""
    return repeat(input, _tile_reps(input, dims))


@register_meta("torch.tile")
def _tile_rule(input: Tensor, dims: Sequence[int]) -> Output:
    return call_rule("Tensor.repeat", input, _tile_reps(input, dims))


def _tile_reps(input: Tensor, dims: Sequence[int]) -> tuple[int, ...]:
    """tile's dims as repeat's: padded with leading 1s to input's rank."""
    reps = int_sizes(tuple(dims), "tile", "dims")
    return (1,) * (input.dim() - len(reps)) + reps


def _repeat_int_kernel(out: np.ndarray, src: np.ndarray, *, repeats: int, axis: int) -> None:
    # out seen as (..., src's size at axis, repeats, ...): one broadcast store of src, without
    # np.repeat's temporary (2x faster at a decode step's [N, KVH, S, D] -> [N, H, S, D])
    split = out.view()
    try:
        split.shape = (*src.shape[:axis], src.shape[axis], repeats, *src.shape[axis + 1:])
    except AttributeError:  # an output numpy cannot split without a copy: the plain way
        out[...] = np.repeat(src, repeats, axis=axis)
        return
    copy_rows(split, src[(slice(None),) * (axis + 1) + (None,)])  # (np.expand_dims: ~5 us)


def copy_rows(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src (src broadcast to dst's shape, same dtype: a byte copy), each row of the
    last axis moved as one item when both hold it contiguous. numpy's strided copy otherwise
    loops over that axis per row: 5x slower when it is short and the rest strided (a decode
    step's [N, KVH, S, D] transposed key -> [N, H, S, D], D = 16)."""
    n, item = (dst.shape[-1], dst.itemsize) if dst.ndim else (0, 0)
    if (n > 1 and src.ndim == dst.ndim and src.dtype == dst.dtype and not dst.dtype.hasobject
            and src.shape[-1] == n and dst.strides[-1] == item == src.strides[-1]):
        row = np.dtype((np.void, n * item))
        dst.view(row)[..., 0] = src.view(row)[..., 0]
        return
    dst[...] = src


def _repeat_index_kernel(out: np.ndarray, repeats: np.ndarray) -> None:
    out[...] = np.repeat(np.arange(repeats.shape[0]), repeats)


def _repeats_index(repeats: Tensor, output_size: int | None) -> Tensor:
    """aten::repeat_interleave(repeats): [0]*r0 + [1]*r1 + ... ; its length is the sum of the
    repeats, which on cuda the host must wait for unless output_size is given."""
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (int32, int64):
        raise NotImplementedError(f"\"repeat_interleave_{'cuda' if repeats.is_cuda else 'cpu'}\" "
                                  f"not implemented for '{scalar_type_name(repeats.dtype)}'")
    if output_size is None and repeats.is_cuda:
        _dispatch.host_sync("repeat_interleave", reads=(repeats._a,))
    if repeats._device.type == "meta":  # no values to sum: output_size is the length
        if output_size is None:
            raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
        total = output_size
    else:
        total = int(repeats._a.sum())
    if repeats.numel():  # (an empty repeats gives an empty index, whatever output_size says)
        if output_size is not None and output_size < 0:  # torch allocates output_size first
            raise RuntimeError(f"Trying to create tensor with negative dimension {output_size}: "
                               f"[{output_size}]")
        if output_size is not None and output_size != total:
            raise RuntimeError("allocated size does not match required size")
        if repeats._a.min() < 0:
            raise RuntimeError("repeats can not be negative")
    result = _common.new_tensor((total,), repeats.dtype, repeats.device)
    _common.launch("repeat_interleave", _repeat_index_kernel, result, (repeats,))
    return result


def _repeats_break(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Break | None:
    """Tensor repeats without `output_size`: the output's size depends on their values."""
    repeats = kwargs.get("repeats", args[1] if len(args) > 1 else None)
    if isinstance(repeats, Tensor) and kwargs.get("output_size") is None:
        return dynamic_shape("aten.repeat_interleave.Tensor")
    return None


@op(EXTERN, method=True, graph_break=_repeats_break)
def repeat_interleave(input: Tensor, repeats: int | Tensor | None = None,
                      dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Repeat each element (or slice along dim) `repeats` times. An int repeat is views plus
    one "clone"; a tensor of repeats is "repeat_interleave" (the index) + "index_select"."""
    if repeats is None:  # torch.repeat_interleave(repeats): the index itself
        return _repeats_index(input, output_size)
    if isinstance(repeats, Tensor):
        if dim is None:
            input, dim = flatten(input), 0
        if input.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = wrap_dim(dim, input.dim())
        if repeats.dim() > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        size = input.shape[d]
        if repeats.numel() == 1:
            repeats = expand(view(repeats, 1), size)
        elif repeats.shape[0] != size:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = "
                               f"{size}")
        return index_select(input, d, _repeats_index(repeats, output_size))
    d, n, shape = _repeat_int(input, repeats, dim)
    if dim is None:
        input = flatten(input)
    result = _common.new_tensor(shape, input.dtype, input.device)
    _common.launch("clone", _repeat_int_kernel, result, (input,), {"repeats": n, "axis": d})
    return result


@register_meta("torch.repeat_interleave")
def _repeat_interleave_rule(input: Tensor, repeats: int | Tensor | None = None,
                            dim: int | None = None, *,
                            output_size: int | None = None) -> Output:
    """An int repeat: a fresh contiguous tensor. Repeats in a tensor are values (the output's
    size is their sum): no rule."""
    if repeats is None or isinstance(repeats, Tensor):
        raise NotImplementedError("torch.repeat_interleave with repeats in a tensor: the "
                                  "output's size is their sum (values), no output rule")
    _, _, shape = _repeat_int(input, repeats, dim)
    return TensorMeta(shape, input.dtype, contiguous_strides(shape))


def _repeat_int(input: Tensor, repeats: int, dim: int | None
                ) -> tuple[int, int, tuple[Any, ...]]:
    """An int repeat's checks: the dim repeated along (of the flattened input when dim is
    None), the repeat count, and the output's shape."""
    d = wrap_dim(0 if dim is None else dim, input.dim())
    n = sym_index(repeats)
    if n < 0:
        raise RuntimeError("Repeats must be non-negative")
    if dim is None:
        shape = [numel(input.shape)]
    else:
        if input.dim() == 0:  # torch unsqueezes dim + 1 next: a 0-dim tensor has no such dim
            wrap_dim(d + 1, 1)
        shape = list(input.shape)
    shape[d] = shape[d] * n
    return d, n, tuple(shape)


# --- flip / roll ----------------------------------------------------------------------------

def _dims_list(dims: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    given = (dims,) if isinstance(dims, int) else tuple(dims)
    out = tuple(wrap_dim(d, ndim) for d in given)
    for d in out:
        if out.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def _flip_kernel(out: np.ndarray, src: np.ndarray, *, axes: tuple[int, ...]) -> None:
    out[...] = np.flip(src, axes) if axes and src.ndim else src


@op(POINTWISE, method=True)
def flip(input: Tensor, *args: Any, dims: int | Sequence[int] | None = None) -> Tensor:
    """Reverse the order along `dims` (`flip(x, (0, 1))`, `x.flip(0, 1)`, `dims=` as a
    keyword): one "flip" launch (the result keeps input's layout)."""
    if args and dims is not None:
        raise TypeError("flip() got multiple values for argument 'dims'")
    if dims is None:
        if not args:
            raise TypeError('flip() missing 1 required positional arguments: "dims"')
        dims = args[0] if len(args) == 1 else args
    axes = _dims_list(dims, input.dim())
    result = empty_like_preserve(input)
    _common.launch("flip", _flip_kernel, result, (input,), {"axes": axes})
    return result


@op(COMPOSITE, method=True)
def fliplr(input: Tensor) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@register_meta("torch.fliplr")
def _fliplr_rule(input: Tensor) -> Output:
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return call_rule("torch.flip", input, 1)


@op(COMPOSITE, method=True)
def flipud(input: Tensor) -> Tensor:
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@register_meta("torch.flipud")
def _flipud_rule(input: Tensor) -> Output:
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return call_rule("torch.flip", input, 0)


def _roll_kernel(out: np.ndarray, src: np.ndarray, *, shifts: tuple[int, ...],
                 axes: tuple[int, ...] | None) -> None:
    out[...] = np.roll(src, shifts if axes is not None else shifts[0], axes)


@op(POINTWISE, method=True)
def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
         ) -> Tensor:
    """Rotate along dims (or over the flattened tensor): one "roll" launch."""
    sh = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if not sh:
        raise RuntimeError("`shifts` required")
    axes: tuple[int, ...] | None
    given = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if not given:  # no dims: roll the flattened tensor
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        axes = None
    else:
        if len(given) != len(sh):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, "
                               f"dims:{len(given)}")
        if input.dim() == 0:
            raise IndexError(f"Dimension specified as {given[0]} but tensor has no dimensions")
        axes = tuple(wrap_dim(d, input.dim()) for d in given)
    result = _common.new_tensor(input.shape, input.dtype, input.device)
    _common.launch("roll", _roll_kernel, result, (input,), {"shifts": sh, "axes": axes})
    return result


# --- triangles and diagonals --------------------------------------------------------------------

def _tri_kernel(out: np.ndarray, src: np.ndarray, *, k: int, lower: bool) -> None:
    out[...] = np.tril(src, k) if lower else np.triu(src, k)


def _tri(input: Tensor, k: int, lower: bool, inplace: bool) -> Tensor:
    name = "tril" if lower else "triu"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    if inplace:
        _common.launch(name + "_", _tri_kernel, input, (input,), {"k": k, "lower": lower})
        return input
    result = _common.new_tensor(input.shape, input.dtype, input.device)
    _common.launch(name, _tri_kernel, result, (input,), {"k": k, "lower": lower})
    return result


@op(POINTWISE, method=True)
def tril(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The lower triangle (on and below `diagonal`) of the last two dims; the rest zeroed."""
    _no_out(out, "tril")
    return _tri(input, diagonal, True, False)


@op(POINTWISE, method=True)
def triu(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """The upper triangle (on and above `diagonal`) of the last two dims; the rest zeroed."""
    _no_out(out, "triu")
    return _tri(input, diagonal, False, False)


@method(POINTWISE)
def tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    return _tri(self, diagonal, True, True)


@method(POINTWISE)
def triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    return _tri(self, diagonal, False, True)


def _diag_kernel(out: np.ndarray, src: np.ndarray, *, k: int) -> None:
    out[...] = np.diag(src, k)


@op(POINTWISE, method=True, aten=("diag_embed", "diagonal_copy"))
def diag(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:
    """1-D in: a square matrix with it on the `diagonal`-th diagonal ("diag_embed").
    2-D in: a copy of that diagonal ("diagonal_copy")."""
    _no_out(out, "diag")
    shape = _diag_shape(input, diagonal)
    result = _common.new_tensor(shape, input.dtype, input.device)
    _common.launch("diag_embed" if len(shape) == 2 else "diagonal_copy", _diag_kernel, result,
                   (input,), {"k": diagonal})
    return result


def _diag_shape(input: Tensor, k: int) -> tuple[Any, ...]:
    """1-D in: the (n, n) matrix it is a diagonal of; 2-D in: the diagonal's (n,)."""
    if input.dim() == 1:
        n = input.shape[0] + abs(k)
        return (n, n)
    if input.dim() != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    rows, cols = input.shape
    return (max(min(rows, cols - k), 0) if k >= 0 else max(min(rows + k, cols), 0),)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

def _fresh(shape: Any, dt: dtype) -> TensorMeta:
    """A new row-major tensor."""
    return TensorMeta(tuple(shape), dt, contiguous_strides(shape))


@register_meta("torch.cat")
def _cat_rule(tensors: Sequence[Tensor], dim: int = 0, *,
              out: Tensor | None = None) -> TensorMeta:
    _no_out(out, "cat")
    _, shape, _, dt = _cat_out(_cat_parts(tensors, dim), dim)
    return _fresh(shape, dt)


@register_meta("torch.stack")
def _stack_rule(tensors: Sequence[Tensor], dim: int = 0, *,
                out: Tensor | None = None) -> TensorMeta:
    _no_out(out, "stack")
    shape, _, dt = _stack_out(_tensor_list(tensors, "stack", dim), dim)
    return _fresh(shape, dt)


@register_meta("Tensor.repeat")
def _repeat_rule(self: Tensor, *sizes: Any) -> TensorMeta:
    return _fresh(_repeat_shape(self, int_sizes(sizes, "repeat", "repeats")), self.dtype)


@register_meta("torch.flip")
def _flip_rule(input: Tensor, *args: Any, dims: int | Sequence[int] | None = None
               ) -> TensorMeta:
    """Laid out as input (empty_like)."""
    return TensorMeta(tuple(input.shape), input.dtype,
                      dense_strides_like(tuple(input.shape), tuple(input.stride())))


@register_meta("torch.roll")
def _roll_rule(input: Tensor, shifts: int | Sequence[int],
               dims: int | Sequence[int] | None = None) -> TensorMeta:
    return _fresh(input.shape, input.dtype)


def _tri_rule(lower: bool, inplace: bool) -> Callable[..., TensorMeta]:
    def rule(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> TensorMeta:
        if input.dim() < 2:
            raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at "
                               "least 2 dimensions")
        return written_meta(input, [input]) if inplace else _fresh(input.shape, input.dtype)
    return rule


for _lower in (True, False):
    _name = "tril" if _lower else "triu"
    register_meta(f"torch.{_name}")(_tri_rule(_lower, False))
    register_meta(f"Tensor.{_name}_")(_tri_rule(_lower, True))


@register_meta("torch.diag")
def _diag_rule(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> TensorMeta:
    _no_out(out, "diag")
    return _fresh(_diag_shape(input, diagonal), input.dtype)
