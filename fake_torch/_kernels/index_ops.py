"""Indexing along one dim with an index tensor: index_select, gather, scatter(_add)(_),
index_copy(_), index_fill(_), take_along_dim, take. Each is one launch under its aten name.

Out-of-range indices raise torch's error from inside the kernel, where a GPU checks them too;
in eager mode that is still the moment of the call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import int32, int64
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import written_rule
from fake_torch._kernels._strides import (
    assert_no_internal_overlap,
    assert_no_overlap,
    checked_convert,
    contiguous_strides,
    dense_strides_like,
    empty_like_preserve,
    numel,
    scalar_type_name,
)
from fake_torch._kernels.shape import clone, expand, view
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, method, op
from fake_torch._tensor import Scalar, Tensor, wrap_dim


def _no_out(out: Tensor | None, fn: str) -> None:
    if out is not None:
        raise NotImplementedError(f"torch.{fn}(..., out=...) is not emulated by fake_torch")


def _nd(a: np.ndarray) -> np.ndarray:
    """A 0-dim array as 1-dim, as torch's kernels treat scalars (ensure_nonempty_dim)."""
    return a.reshape(1) if a.ndim == 0 else a


def _first_bad(a: np.ndarray, lo: int, hi: int) -> int | None:
    """The first element of `a` outside [lo, hi), or None."""
    if a.size == 0 or (a.min() >= lo and a.max() < hi):
        return None
    return int(a[(a < lo) | (a >= hi)].flat[0])


# --- index_select -------------------------------------------------------------------------------

def _index_select_kernel(out: np.ndarray, src: np.ndarray, idx: np.ndarray, *, dim: int) -> None:
    n = _nd(src).shape[dim]
    bad = _first_bad(idx, 0, n)
    if bad is not None:
        if dim == 1 and src.ndim > 1 and src.flags.c_contiguous:  # torch's dim-1 fast path
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
        raise IndexError("index out of range in self")
    out[...] = np.take(_nd(src), _nd(idx), axis=dim).reshape(out.shape)


@op(POINTWISE, method=True)
def index_select(input: Tensor, dim: int, index: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The slices of `input` at `index` (a vector) along `dim`: one "index_select" launch."""
    _no_out(out, "index_select")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (int32, int64):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    d = wrap_dim(dim, input.dim())
    dev = _common.common_device(input, index)
    shape = list(input.shape)
    if shape:
        shape[d] = index.numel()
    result = _common.new_tensor(shape, input.dtype, dev)
    _common.launch("index_select", _index_select_kernel, result, (input, index), {"dim": d})
    return result


# --- gather -------------------------------------------------------------------------------------

def _check_index_dtype(index: Tensor, fn: str) -> None:
    if index.dtype not in (int32, int64):
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index")


def _gather_kernel(out: np.ndarray, src: np.ndarray, idx: np.ndarray, *, dim: int) -> None:
    if out.size == 0:
        return
    src, idx = _nd(src), _nd(idx)
    bad = _first_bad(idx, 0, src.shape[dim])
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size "
                           f"{src.shape[dim]}")
    region = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(idx.shape))
    out[...] = np.take_along_axis(src[region], idx, axis=dim).reshape(out.shape)


@op(POINTWISE, method=True)
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out: Tensor | None = None) -> Tensor:
    """out[i][j][k] = input[i][index[i][j][k]][k] (for dim=1): one "gather" launch."""
    _no_out(out, "gather")
    d = _gather_checks(input, dim, index)
    result = _common.new_tensor(index.shape, input.dtype, _common.common_device(input, index))
    _common.launch("gather", _gather_kernel, result, (input, index), {"dim": d})
    return result


# --- scatter family -----------------------------------------------------------------------------

def _scatter_kernel(out: np.ndarray, idx: np.ndarray, *src: np.ndarray, dim: int,
                    value: Scalar | None, reduce: str | None, init: np.ndarray | None = None
                    ) -> None:
    """Write src (or value) into out at index along dim. `init` (out-of-place) is copied in
    first."""
    if init is not None:
        out[...] = init
    if idx.size == 0:
        return
    o, idx = _nd(out), _nd(idx)
    bad = _first_bad(idx, 0, o.shape[dim])
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size "
                           f"{o.shape[dim]}")
    key: list[Any] = list(np.indices(idx.shape, sparse=True))
    key[dim] = idx
    if src:
        vals: Any = _nd(src[0])[tuple(slice(0, n) for n in idx.shape)]
    else:
        vals = np.asarray(value).astype(out.dtype)
    if reduce is None:
        o[tuple(key)] = vals
    else:
        accumulate_at(o, tuple(key), vals, np.add if reduce == "add" else np.multiply)


def accumulate_at(out: np.ndarray, key: tuple[Any, ...], vals: Any, ufunc: np.ufunc) -> None:
    """out[key] op= vals with repeats accumulating; float16/bfloat16 accumulate in float32 and
    round once, as torch's kernels do."""
    if out.dtype.kind in "biu" or (out.dtype.kind == "f" and out.dtype.itemsize >= 4):
        ufunc.at(out, key, vals)
        return
    wide = out.astype(np.float32)
    ufunc.at(wide, key, np.asarray(vals).astype(np.float32))
    out[...] = wide


def _scatter_checks(self: Tensor, dim: int, index: Tensor, src: Tensor | None,
                    reduce: str | None) -> int:
    _check_index_dtype(index, "scatter")
    d = wrap_dim(dim, self.dim())
    if src is not None and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if max(index.dim(), 1) != max(self.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src is not None and max(index.dim(), 1) != max(src.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    checked = range(index.dim() if index.numel() else 0)  # an empty index is never checked
    too_big_self = any(k != d and index.shape[k] > self.shape[k] for k in checked)
    too_big_src = src is not None and src.dim() > 0 and any(
        index.shape[k] > src.shape[k] for k in checked)
    if too_big_self or too_big_src:
        tail = f" and to be no larger size than src {list(src.shape)}" if src is not None else ""
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(self.shape)} apart from dimension {d}{tail}")
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    return d


def _scatter(self: Tensor, dim: int, index: Tensor, src: Any, reduce: str | None, op: str,
             inplace: bool) -> Tensor:
    tensor_src = src if isinstance(src, Tensor) else None
    d = _scatter_checks(self, dim, index, tensor_src, reduce)
    value = None
    if tensor_src is None:
        if not isinstance(src, (bool, int, float)):
            raise TypeError(f"{op}(): argument 'src' must be Tensor or Number, not "
                            f"{type(src).__name__}")
        value = checked_convert(src, self.dtype)
    params: dict[str, Any] = {"dim": d, "value": value, "reduce": reduce}
    srcs = () if tensor_src is None else (tensor_src,)
    if inplace:
        assert_no_internal_overlap(self)
        assert_no_overlap(self, index)
        if tensor_src is not None:
            assert_no_overlap(self, tensor_src)
        _common.launch(op, _scatter_kernel, self, (index, *srcs), params)
        return self
    out = _common.new_tensor(self.shape, self.dtype, self.device)
    _common.launch(op, _scatter_copy_kernel, out, (self, index, *srcs), params)
    return out


def _scatter_copy_kernel(out: np.ndarray, init: np.ndarray, idx: np.ndarray, *src: np.ndarray,
                         dim: int, value: Scalar | None, reduce: str | None) -> None:
    _scatter_kernel(out, idx, *src, dim=dim, value=value, reduce=reduce, init=init)


@op(POINTWISE, method=True)
def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """A copy of input with src (a tensor) or value written at index along dim."""
    return _scatter(input, dim, index, value if src is None else src, reduce, "scatter", False)


@method(POINTWISE)
def scatter_(self: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
             reduce: str | None = None) -> Tensor:
    """In place: self[...index[i][j][k]...] = src[i][j][k] (or value); reduce "add" or
    "multiply" combines with what is there instead."""
    return _scatter(self, dim, index, value if src is None else src, reduce, "scatter_", True)


def _need_tensor(src: Any, fn: str) -> None:
    if not isinstance(src, Tensor):
        raise TypeError(f"{fn}(): argument 'src' (position 3) must be Tensor, not "
                        f"{type(src).__name__}")


@op(POINTWISE, method=True)
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    _need_tensor(src, "scatter_add")
    return _scatter(input, dim, index, src, "add", "scatter_add", False)


@method(POINTWISE)
def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    _need_tensor(src, "scatter_add_")
    return _scatter(self, dim, index, src, "add", "scatter_add_", True)


# --- index_copy / index_fill --------------------------------------------------------------------

def _index_copy_kernel(out: np.ndarray, idx: np.ndarray, src: np.ndarray, *, dim: int,
                       init: np.ndarray | None = None) -> None:
    if init is not None:
        out[...] = init
    o = _nd(out)
    bad = _first_bad(idx, 0, o.shape[dim])
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {dim} with "
                         f"size {o.shape[dim]}")
    i = _nd(idx)
    key = (slice(None),) * dim + (i,)
    # the shape o[key] would have, without gathering it: o's with dim's size replaced by idx's
    o[key] = src.reshape(o.shape[:dim] + i.shape + o.shape[dim + 1:])


def _index_copy_checks(self: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    d = wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index.dim()})")
    if index.dtype is not int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {scalar_type_name(self.dtype)} and (source) "
                           f"{scalar_type_name(source.dtype)}")
    if self.dim() and source.dim() and self.dim() != source.dim():
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.dim()}), "
                         f"destination dimensionality ({self.dim()})")
    n_src = source.shape[d] if source.dim() else 1
    if index.numel() != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to "
                         f"source.size(dim) ({n_src})")
    dst_slice = [s for k, s in enumerate(self.shape) if k != d]
    src_slice = [s for k, s in enumerate(source.shape) if k != d]
    if source.dim() and dst_slice != src_slice:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, dst_slice))} at "
                           f"dimension {d} and source slice shape: "
                           f"{' '.join(map(str, src_slice))} at dimension 0.")
    return d


@method(POINTWISE)
def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In place: the slices of self at `index` along dim become source's slices."""
    assert_no_internal_overlap(self)
    assert_no_overlap(self, index)
    assert_no_overlap(self, source)
    d = _index_copy_checks(self, dim, index, source)
    _common.launch("index_copy_", _index_copy_kernel, self, (index, source), {"dim": d})
    return self


def _index_copy_copy_kernel(out: np.ndarray, init: np.ndarray, idx: np.ndarray,
                            src: np.ndarray, *, dim: int) -> None:
    _index_copy_kernel(out, idx, src, dim=dim, init=init)


@op(POINTWISE, method=True)
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               out: Tensor | None = None) -> Tensor:
    _no_out(out, "index_copy")
    d = _index_copy_checks(input, dim, index, source)
    result = _common.new_tensor(input.shape, input.dtype, input.device)
    _common.launch("index_copy", _index_copy_copy_kernel, result, (input, index, source),
                   {"dim": d})
    return result


def _index_fill_kernel(out: np.ndarray, idx: np.ndarray, *value_t: np.ndarray, dim: int,
                       value: Scalar | None, init: np.ndarray | None = None) -> None:
    if init is not None:
        out[...] = init
    o = _nd(out)
    n = o.shape[dim]
    bad = _first_bad(idx, -n, n)
    if bad is not None:
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
    o[(slice(None),) * dim + (_nd(idx),)] = value_t[0] if value_t else value


def _index_fill(self: Tensor, dim: int, index: Tensor, value: Any, op: str,
                inplace: bool) -> Tensor:
    if index.dtype is not int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    d = wrap_dim(dim, self.dim())
    value_t: tuple[Tensor, ...] = ()
    if isinstance(value, Tensor):
        if value.dim():
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.dim()} dimension(s).")
        value_t, value = (value,), None
    else:
        if isinstance(value, complex) and not self.dtype.is_complex:
            raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is "
                               "not supported")
        value = checked_convert(value, self.dtype)
    params = {"dim": d, "value": value}
    if inplace:
        _common.launch(op, _index_fill_kernel, self, (index, *value_t), params)
        return self
    out = empty_like_preserve(self)
    _common.launch(op, _index_fill_copy_kernel, out, (self, index, *value_t), params)
    return out


def _index_fill_copy_kernel(out: np.ndarray, init: np.ndarray, idx: np.ndarray,
                            *value_t: np.ndarray, dim: int, value: Scalar | None) -> None:
    _index_fill_kernel(out, idx, *value_t, dim=dim, value=value, init=init)


@method(POINTWISE)
def index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """In place: the slices of self at `index` along dim are set to value."""
    return _index_fill(self, dim, index, value, "index_fill_", True)


@op(POINTWISE, method=True)
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    return _index_fill(input, dim, index, value, "index_fill", False)


# --- take_along_dim / take ----------------------------------------------------------------------

def _remainder_kernel(out: np.ndarray, idx: np.ndarray, *, n: int) -> None:
    np.remainder(idx, n, out=out)


@op(POINTWISE, method=True, aten=())
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out: Tensor | None = None) -> Tensor:
    """Pick values along dim at `indices` (broadcast against input), as numpy's
    take_along_axis. With a dim, negative indices wrap (a "remainder" launch, then "gather");
    without one, both are flattened views and it is one "gather"."""
    _no_out(out, "take_along_dim")
    if dim is None:
        return gather(view(input, -1), 0, view(indices, -1))
    if indices.dtype is not int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{scalar_type_name(indices.dtype)}")
    if input.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    d = wrap_dim(dim, input.dim())
    want = list(input.shape)
    want[d] = indices.shape[d]
    idx = expand(indices, _common.broadcast_shapes(want, indices.shape))
    want = list(indices.shape)
    want[d] = input.shape[d]
    src = expand(input, _common.broadcast_shapes(want, input.shape))
    wrapped = _common.new_tensor(idx.shape, idx.dtype, idx.device)
    _common.launch("remainder", _remainder_kernel, wrapped, (idx,), {"n": max(input.shape[d], 1)})
    return gather(src, d, wrapped)


def _take_kernel(out: np.ndarray, src: np.ndarray, idx: np.ndarray) -> None:
    n = src.size
    bad = _first_bad(idx, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    out[...] = src.reshape(-1)[idx]


@op(POINTWISE, method=True)
def take(input: Tensor, index: Tensor) -> Tensor:
    """input as if flattened, at `index` (negative wraps): one "take" launch."""
    if index.dtype is not int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(index.dtype)}")
    result = _common.new_tensor(index.shape, input.dtype, _common.common_device(input, index))
    _common.launch("take", _take_kernel, result, (input, index))
    return result


# --- put ----------------------------------------------------------------------------------------

def _put_kernel(out: np.ndarray, src: np.ndarray, idx: np.ndarray, *, accumulate: bool) -> None:
    n = out.size
    bad = _first_bad(idx, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    where = np.unravel_index(np.where(idx < 0, idx + n, idx).reshape(-1), out.shape)
    if accumulate:  # duplicates add up
        np.add.at(out, where, src.reshape(-1))
    else:
        out[where] = src.reshape(-1)


@method(POINTWISE)
def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """self, read as if flattened (its logical row-major order, whatever its strides), gets
    `source` at `index` (negative wraps; `accumulate` adds, duplicates too): one "put_"."""
    for name, t, pos in (("index", index, 1), ("source", source, 2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"put_(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(t).__name__}")
    if index.dtype is not int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{scalar_type_name(index.dtype)}")
    if self.dtype is not source.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(self.dtype)} and source.dtype = "
                           f"{scalar_type_name(source.dtype)}")
    if not self.device == source.device == index.device:
        raise RuntimeError("put_(): self, index and source expected to be in the same device, "
                           f"but got self.device = {self.device}, index.device = "
                           f"{index.device}, and source.device = {source.device}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    assert_no_internal_overlap(self)
    assert_no_overlap(self, index)
    assert_no_overlap(self, source)
    if index.numel():
        _common.launch("put_", _put_kernel, self, (source, index), {"accumulate": accumulate})
    return self


@op(POINTWISE, method=True)
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of input (torch.preserve_format: one "clone") with put_ applied (one "put_")."""
    for name, t, pos in (("index", index, 1), ("source", source, 2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"put(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(t).__name__}")
    return put_(clone(input), index, source, accumulate)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

def _fresh(shape: Any, dt: Any) -> TensorMeta:
    """A new row-major tensor."""
    return TensorMeta(tuple(shape), dt, contiguous_strides(shape))


@register_meta("torch.index_select")
def _index_select_rule(input: Tensor, dim: int, index: Tensor, *,
                       out: Tensor | None = None) -> TensorMeta:
    _no_out(out, "index_select")
    shape = list(input.shape)
    if shape:
        shape[wrap_dim(dim, input.dim())] = numel(index.shape)
    return _fresh(shape, input.dtype)


def _gather_checks(input: Tensor, dim: int, index: Tensor) -> int:
    """gather's argument checks (the kernel's and the rule's): the wrapped dim."""
    _check_index_dtype(index, "gather")
    d = wrap_dim(dim, input.dim())
    if max(index.dim(), 1) != max(input.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(index.dim() if index.numel() else 0):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(index.shape)} to be no larger than self "
                               f"{list(input.shape)} apart from dimension {d}")
    return d


@register_meta("torch.gather")
def _gather_rule(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
                 out: Tensor | None = None) -> TensorMeta:
    _no_out(out, "gather")
    _gather_checks(input, dim, index)
    return _fresh(index.shape, input.dtype)


@register_meta("torch.take")
def _take_rule(input: Tensor, index: Tensor) -> TensorMeta:
    return _fresh(index.shape, input.dtype)


@register_meta("torch.scatter", "torch.scatter_add", "torch.index_copy")
def _copied_rule(input: Tensor, *args: Any, **kwargs: Any) -> TensorMeta:
    """input's values with some replaced: a new row-major tensor of input's shape."""
    return _fresh(input.shape, input.dtype)


@register_meta("torch.index_fill", "torch.put")
def _copied_like_rule(input: Tensor, *args: Any, **kwargs: Any) -> TensorMeta:
    """input's values with some replaced, laid out as input (empty_like, clone)."""
    return TensorMeta(tuple(input.shape), input.dtype,
                      dense_strides_like(tuple(input.shape), tuple(input.stride())))


register_meta("Tensor.scatter_", "Tensor.scatter_add_", "Tensor.index_copy_",
              "Tensor.index_fill_", "Tensor.put_")(written_rule)


@register_meta("torch.take_along_dim")
def _take_along_dim_rule(input: Tensor, indices: Tensor, dim: int | None = None, *,
                         out: Tensor | None = None) -> TensorMeta:
    """gather over input and indices broadcast against each other but along dim."""
    _no_out(out, "take_along_dim")
    if dim is None:
        return _fresh((numel(indices.shape),), input.dtype)
    d = wrap_dim(dim, input.dim())
    want = list(input.shape)
    want[d] = indices.shape[d]
    return _fresh(_common.broadcast_shapes(want, indices.shape), input.dtype)
