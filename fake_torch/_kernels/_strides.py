"""Stride arithmetic as torch does it, views built from it, and torch's memory-overlap checks.

Everything here is metadata: nothing launches. A view is a new numpy array over the SAME bytes
(its `.base` chain ends at the storage's root array), so `data_ptr()`, `storage_offset()` and
writes through views behave as in torch.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import CPP_NAME, SCALAR_NAME, bfloat16, bool_, dtype, float16
from fake_torch._kernels._common import new_tensor
from fake_torch._memory_format import contiguous_strides as contiguous_strides  # re-exported
from fake_torch._memory_format import is_contiguous as is_contiguous  # re-exported
from fake_torch._memory_format import memory_format, preserve_format, strides_for
from fake_torch._meta_registrations import TensorMeta
from fake_torch._sym import SymInt
from fake_torch._tensor import Tensor, root_address
from fake_torch._torch_device import device

Shape = tuple[int, ...]
# a view's geometry: its sizes, its strides and its storage offset (in elements). Pure functions
# of geometries are what a view kernel and its output rule share: the kernel lays its numpy view
# out by one, the rule describes it by the same one (sizes may be symbolic there)
Geometry = tuple[Shape, Shape, Any]


def scalar_type_name(dt: dtype) -> str:
    """torch's ScalarType name, as its error messages print it ("view Float as Double")."""
    return SCALAR_NAME[dt]


def type_string(t: Tensor) -> str:
    """What torch prints for a tensor's type in `expand(...)` errors: `torch.FloatTensor`,
    `torch.cuda.HalfTensor`, and `CPUBoolType` for the dtypes without a legacy class name."""
    name = scalar_type_name(t.dtype)
    if t.dtype is bool_ or t.dtype is bfloat16:
        return f"{'CUDA' if t.is_cuda else 'CPU'}{name}Type"
    return f"torch.{'cuda.' if t.is_cuda else ''}{name}Tensor"


def int_sizes(args: Sequence[Any], fn: str, arg: str = "size") -> Shape:
    """`f(2, 3)`, `f((2, 3))`, `f([2, 3])` and `f(torch.Size([2, 3]))` all mean (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    if all(type(s) is int for s in args):  # the common case, fast
        return tuple(args)
    out: list[Any] = []
    for pos, s in enumerate(args):
        if isinstance(s, bool) or isinstance(s, float):
            raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be tuple of ints, but "
                            f"found element of type {type(s).__name__} at pos {pos}")
        out.append(s if isinstance(s, SymInt) else operator.index(s))  # a symbolic size stays
    return tuple(out)


def numel(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def infer_size(shape: Sequence[int], total: int) -> Shape:
    """torch's infer_size: resolve one -1 in `shape` so it holds `total` elements."""
    infer_at = -1
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer_at >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer_at = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{list(shape)}")
        else:
            known *= s
    out = list(shape)
    if infer_at >= 0:
        if known == 0:
            if total == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape "
                                   f"{list(shape)} because the unspecified dimension size -1 "
                                   "can be any value and is ambiguous")
        elif total % known == 0:
            out[infer_at] = total // known
            return tuple(out)
    elif known == total:
        return tuple(out)
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {total}")


def view_strides(oldshape: Shape, oldstride: Shape, newshape: Shape) -> Shape | None:
    """torch's computeStride: the strides under which `newshape` views the same elements,
    or None when a new dim would span two non-contiguous chunks (then view fails)."""
    if not oldshape:
        return (1,) * len(newshape)
    if numel(oldshape) == 0:
        return oldstride if oldshape == newshape else contiguous_strides(newshape)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        # the end of a contiguous chunk of old dims: the new dims inside it must tile it
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    return tuple(newstride) if view_d == -1 else None


def geometry(t: Any) -> Geometry:
    """A tensor's geometry, read from its metadata (a Tensor, or any object with its methods)."""
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


def view_meta(t: Any, g: Geometry, alias: int = 0, dt: dtype | None = None) -> TensorMeta:
    """The output rule's description of a view of `t` (the call's tensor number `alias`)
    laid out as `g`, of t's dtype unless `dt` says otherwise."""
    return TensorMeta(tuple(g[0]), t.dtype if dt is None else dt, tuple(g[1]), g[2], alias)


def same_meta(t: Any, alias: int = 0) -> TensorMeta:
    """The output rule's description of an op that returns its input `t` itself."""
    return view_meta(t, geometry(t), alias)


def permuted(g: Geometry, order: Sequence[int]) -> Geometry:
    """g's dims in `order` (order[i]: the dim that becomes dim i)."""
    shape, strides, offset = g
    return tuple(shape[d] for d in order), tuple(strides[d] for d in order), offset


def dropped(g: Geometry, dims: Sequence[int]) -> Geometry:
    """g without the (size-1) dims listed."""
    shape, strides, offset = g
    keep = [d for d in range(len(shape)) if d not in dims]
    return tuple(shape[d] for d in keep), tuple(strides[d] for d in keep), offset


def view_from(t: Tensor, g: Geometry, dt: dtype | None = None) -> Tensor:
    """t's storage laid out as `g` (its offset counted in elements of `dt`, default t's)."""
    itemsize = t._a.itemsize if dt is None else dt.itemsize
    return restride(t, g[0], g[1], g[2] * itemsize - t.storage_offset() * t._a.itemsize, dt)


def is_non_overlapping_and_dense(shape: Shape, strides: Shape) -> bool:
    """Every element has its own address and the addresses fill one block (any dim order).
    An empty tensor is (c10 counts it contiguous, whatever its strides)."""
    if 0 in shape:
        return True
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    perm = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    required = 1
    for d in perm:
        if strides[d] != required:
            return False
        required *= shape[d]
    return True


def dense_strides_like(shape: Shape, strides: Shape) -> Shape:
    """The strides of `empty_like(t, memory_format=torch.preserve_format)`: t's own strides when
    t is non-overlapping and dense, else dense strides in t's dim order (infer_dense_strides)."""
    if is_non_overlapping_and_dense(shape, strides):
        return strides
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))  # innermost first

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:  # ambiguous: keep the contiguous order
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, ndim):  # torch's stable insertion sort
        dim1 = i
        for j in range(1, i + 1):
            dim0 = i - j
            cmp = should_swap(perm[dim0], perm[dim1])
            if cmp > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif cmp < 0:
                break
    out = [0] * ndim
    acc = 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


# --- views ----------------------------------------------------------------------------------

def wrap(base: Tensor, a: np.ndarray) -> Tensor:
    """A numpy view of `base`'s memory as a Tensor on `base`'s device and storage."""
    return Tensor._make(a, base._device, base._storage)


def _root(t: Tensor) -> np.ndarray:
    """The array that spans t's whole storage (the end of its numpy base chain)."""
    if t._storage is not None:
        return t._storage.root
    a = t._a
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _root_address(root: np.ndarray) -> int:
    return root_address(root)


def reshaped(t: Tensor, shape: Sequence[int], strides: Sequence[int]) -> Tensor:
    """t viewed as `shape` with torch's `strides` (which exist: view_strides said so). numpy's
    own reshape is the fast way when it lands on the same strides, else restride."""
    a = t._a
    v = a.reshape(shape)
    itemsize = a.itemsize
    owner = a.base if isinstance(a.base, np.ndarray) else a  # numpy collapses view chains
    if v.base is owner and v.strides == tuple([s * itemsize for s in strides]):
        return wrap(t, v)
    return restride(t, shape, strides)


def restride(t: Tensor, shape: Sequence[int], strides: Sequence[int], byte_offset: int = 0,
             dt: dtype | None = None) -> Tensor:
    """A view of t's storage: `shape` and element `strides` (of `dt`, default t's dtype),
    starting `byte_offset` bytes after t's first element. No copy, no launch."""
    a = t._a
    if byte_offset == 0 and dt is None and a.flags.c_contiguous:
        # the common case, a view from t's first element of a row-major t: numpy lays it over
        # t's own buffer (its base, as any view's, the storage's root), no address read; it
        # refuses a view that would reach past t's end, which the general path lays out
        try:
            return wrap(t, np.ndarray(tuple(shape), a.dtype, buffer=a,
                                      strides=tuple([s * a.itemsize for s in strides])))
        except ValueError:
            pass
    np_dtype = a.dtype if dt is None else dt.np
    itemsize = np_dtype.itemsize
    root = _root(t)
    start = _address(t._a) - _root_address(root) + byte_offset
    byte_strides = tuple(s * itemsize for s in strides)
    shape = tuple(shape)
    if root.flags.c_contiguous or root.flags.f_contiguous:
        buf = root if root.flags.c_contiguous else root.T
        if start > root.nbytes and numel(shape) == 0:
            start = root.nbytes  # an empty view past the end: numpy cannot point there
        a = np.ndarray(shape, np_dtype, buffer=buf, offset=start, strides=byte_strides)
    else:  # a from_numpy of an already-strided array: no single buffer to hang the view on
        a = np.lib.stride_tricks.as_strided(t._a.view(np_dtype), shape, byte_strides)
    return wrap(t, a)


def storage_nbytes(t: Tensor) -> int:
    return int(_root(t).nbytes)


def empty_strided(shape: Sequence[int], strides: Sequence[int], dt: dtype,
                  dev: device) -> Tensor:
    """torch.empty_strided for dense strides: one fresh buffer viewed with `strides`."""
    shape = tuple(shape)
    strides = tuple(strides)
    if strides == contiguous_strides(shape):
        return new_tensor(shape, dt, dev)
    flat = new_tensor((numel(shape),), dt, dev)
    return restride(flat, shape, strides)


def empty_like_preserve(t: Tensor, dt: dtype | None = None) -> Tensor:
    """empty_like(t) with torch.preserve_format: same dim order as t, dense."""
    return empty_strided(t.shape, dense_strides_like(t.shape, t.stride()), dt or t.dtype,
                         t.device)


def empty_like_format(t: Tensor, fmt: memory_format, dt: dtype | None = None,
                      dev: device | None = None) -> Tensor:
    """torch's empty_like(t, memory_format=fmt): preserve_format keeps t's layout (its own
    strides when dense), another format lays t's shape out its way (a channels-last format
    of the wrong rank is c10's RuntimeError). No launch."""
    return empty_strided(t.shape, format_strides(t.shape, t.stride(), fmt), dt or t.dtype,
                         dev or t.device)


def format_strides(shape: Shape, strides: Shape, fmt: memory_format) -> Shape:
    """The strides of empty_like(t, memory_format=fmt) for t of `shape` and `strides`."""
    return (dense_strides_like(shape, strides) if fmt is preserve_format
            else strides_for(shape, fmt))


# --- memory overlap (torch's MemOverlap checks) -----------------------------------------------

_PARTIAL = ("unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing "
            "the operation.")
_INTERNAL = ("unsupported operation: more than one element of the written-to tensor refers to a "
             "single memory location. Please clone() the tensor before performing the "
             "operation.")


def assert_no_internal_overlap(t: Tensor) -> None:
    """Writing into a tensor whose elements share addresses (an expanded view) is refused."""
    shape, strides = t.shape, t.stride()
    if numel(shape) == 0 or is_non_overlapping_and_dense(shape, strides):
        return
    if any(size > 1 and stride == 0 for size, stride in zip(shape, strides, strict=True)):
        raise RuntimeError(_INTERNAL)


def _overlap(a: Tensor, b: Tensor) -> str:
    """torch's get_overlap_status: "full", "partial", "no" or "too_hard"."""
    if a is b or a._a is b._a:
        return "full"
    if a.numel() == 0 or b.numel() == 0:
        return "no"
    sa, sb = a.stride(), b.stride()
    if not (is_non_overlapping_and_dense(a.shape, sa) and
            is_non_overlapping_and_dense(b.shape, sb)):
        return "too_hard"
    a0, b0 = _address(a._a), _address(b._a)
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if a0 == b0 and a1 == b1:
        return "full" if sa == sb else "partial"
    return "partial" if a0 < b1 and b0 < a1 else "no"


def assert_no_partial_overlap(out: Tensor, inp: Tensor) -> None:
    if _overlap(out, inp) == "partial":
        raise RuntimeError(_PARTIAL)


def assert_no_overlap(out: Tensor, inp: Tensor) -> None:
    if _overlap(out, inp) in ("partial", "full"):
        raise RuntimeError(_PARTIAL)


# --- Python scalars stored into a tensor (torch's checked_convert) ----------------------------

_C_TYPES = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "uint8": "uint8_t", "float32": "float", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16"}


def check_scalar_fits(value: bool | int | float | complex, dt: dtype) -> None:
    """An assigned Python scalar (`t[i] = v`): an int outside int64 is refused as Python's
    unpacking refuses it; one an integral dtype cannot hold too (uint8 takes -255..255,
    wrapping); a float overflows a floating dtype to inf silently, as in torch."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not -2**63 <= value < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if dt not in (float16, bfloat16) or isinstance(value, complex):
        checked_convert(value, dt)


def checked_convert(value: bool | int | float | complex,
                    dt: dtype) -> bool | int | float | complex:
    """c10's checked_convert of a Scalar argument into `dt` (fill_, full, new_full, masked_fill,
    index_fill, scatter, clamp): a Python int must fit 64 bits (the argument parser's
    OverflowError); then a value outside the dtype's range overflows (c10::overflows): NaN and
    infinity fit a floating dtype, not an integral one; a negative int wraps into an unsigned
    dtype down to -max; bool and float64 take anything. Returns the value to store (a
    negative int wrapped into an unsigned dtype, as c10's conversion wraps it)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, complex):
        return _checked_complex(value, dt)
    if isinstance(value, int):
        if value >= 2**64:
            raise OverflowError("int too big to convert")
        if value < -2**63:
            raise OverflowError("can't convert negative int to unsigned")
    name = repr(dt).removeprefix("torch.")
    if name not in _C_TYPES:  # bool, float64, complex, and what c10 does not check (float8)
        return _checked_complex(complex(value), dt) if dt.is_complex else value
    if dt.np.kind in "iu":
        info = np.iinfo(dt.np)
        if isinstance(value, float):
            ok = bool(np.isfinite(value)) and float(info.min) <= value <= float(info.max)
        else:
            lo = -int(info.max) if info.min == 0 else int(info.min)
            ok = lo <= int(value) <= int(info.max)
    else:
        top = float(np.finfo(dt.np).max)
        v = float(value)
        ok = not np.isfinite(v) or -top <= v <= top
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[name]} without overflow")
    if isinstance(value, int) and value < 0 and dt.np.kind == "u":
        return int(value) % (int(np.iinfo(dt.np).max) + 1)
    return value


def _checked_complex(value: complex, dt: dtype) -> bool | int | float | complex:
    """checked_convert of a Python complex: a complex dtype takes it (within its range), bool
    any; a real dtype only one whose imaginary part is 0, as its real part."""
    if dt is bool_:
        return value != 0
    if dt.is_complex:
        top = float(np.finfo(dt.np).max)
        if all(not math.isfinite(v) or -top <= v <= top for v in (value.real, value.imag)):
            return value
    elif value.imag == 0:
        return checked_convert(value.real, dt)
    name = repr(dt).removeprefix("torch.")
    ctype = _C_TYPES.get(name) or CPP_NAME[dt]
    raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
