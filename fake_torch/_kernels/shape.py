"""Views that reshape or reorder dims (view, reshape, flatten, squeeze, transpose, permute,
movedim, ...) and the two copies that make memory dense (contiguous, clone). Cutting views
(narrow, split, ...) live in split.py, stride-0 and raw-stride views (expand, as_strided) in
expand.py; all are re-exported here.

A view launches nothing: it is a new numpy view of the same storage with torch's strides.
`reshape` is a view when torch's stride rule allows it, else ONE "clone" launch, as in torch
(clone + _unsafe_view, and _unsafe_view launches nothing).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import complex32, dtype, dtype_arg
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import written_meta
from fake_torch._kernels._strides import (
    empty_like_format,
    format_strides,
    infer_size,
    int_sizes,
    is_non_overlapping_and_dense,
    numel,
    reshaped,
    restride,
    scalar_type_name,
    view_strides,
    wrap,
)
from fake_torch._kernels.cast import _got as described_args
from fake_torch._kernels.expand import expand as expand  # Tensor methods only (no torch.expand)
from fake_torch._kernels.expand import expand_as as expand_as
from fake_torch._memory_format import (
    contiguous_format,
    is_contiguous_as,
    memory_format,
    memory_format_arg,
    preserve_format,
)
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, VIEW, method, op, tensor_property
from fake_torch._tensor import Tensor, wrap_dim

_VIEW_HINT = ("view size is not compatible with input tensor's size and stride (at least one "
              "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


# --- view / reshape / flatten -------------------------------------------------------------------

@method(VIEW)
def view(self: Tensor, *shape: Any, **kwargs: Any) -> Tensor:
    """Tensor.view(*shape), view(dtype), or one keyword: view(size=...), view(dtype=...):
    same storage, new shape (or element type)."""
    if kwargs:
        if shape or len(kwargs) != 1 or not set(kwargs) <= {"dtype", "size"}:
            raise _bad_view(shape, kwargs)
        if "dtype" in kwargs:
            if type(dtype_arg(kwargs["dtype"])) is not dtype:
                raise _bad_view(shape, kwargs)
            return _view_dtype(self, dtype_arg(kwargs["dtype"]))
        shape = (kwargs["size"],)
    if len(shape) == 1 and type(dtype_arg(shape[0])) is dtype:  # view(torch.int32), view(int)
        return _view_dtype(self, dtype_arg(shape[0]))
    if not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but "
                        "expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")
    try:
        sizes = infer_size(int_sizes(shape, "view"), self.numel())
    except TypeError:
        raise _bad_view(shape, kwargs) from None
    strides = view_strides(self.shape, self.stride(), sizes)
    if strides is None:
        raise RuntimeError(_VIEW_HINT)
    return reshaped(self, sizes, strides)


def _bad_view(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    return TypeError(f"view() received an invalid combination of arguments - got "
                     f"({described_args(args, kwargs)}), but expected one of:\n"
                     " * (torch.dtype dtype)\n * (tuple of ints size)\n")


def _view_dtype(self: Tensor, dt: dtype) -> Tensor:
    """Reinterpret the bytes as `dt`; torch's rules when the element sizes differ."""
    if dt is complex32:
        raise _common.complex32_refused()
    old, new = self.element_size(), dt.itemsize
    shape, strides = list(self.shape), list(self.stride())
    if old == new:
        return restride(self, shape, strides, dt=dt)
    what = f"{scalar_type_name(self.dtype)} as {scalar_type_name(dt)} (different element sizes)"
    if self.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 to view {what}")
    if old > new:  # (..., n) of wide elements -> (..., n * ratio) of narrow ones
        ratio = old // new
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {what}, but got {strides[-1]}")
        shape[-1] *= ratio
        strides = [s * ratio for s in strides[:-1]] + [1]
        return restride(self, shape, strides, dt=dt)
    ratio = new // old
    if shape[-1] % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {what}, but got "
                           f"{shape[-1]}")
    if self.storage_offset() % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view {what}, "
                           f"but got {self.storage_offset()}")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {what}, but got {strides[-1]}")
    for i, s in enumerate(strides[:-1]):
        if s % ratio:
            raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} to view {what}, "
                               f"but got {s}")
    shape[-1] //= ratio
    strides = [s // ratio for s in strides[:-1]] + [1]
    return restride(self, shape, strides, dt=dt)


@method(VIEW)
def view_as(self: Tensor, other: Tensor) -> Tensor:
    return view(self, other.shape)


@op(VIEW)
def reshape(input: Tensor, shape: Sequence[Any]) -> Tensor:
    """A view when torch's stride rule allows it, else one "clone" launch into a fresh
    contiguous buffer (torch: clone + _unsafe_view)."""
    if not isinstance(shape, (tuple, list)):
        raise TypeError("reshape(): argument 'shape' (position 2) must be tuple of ints, not "
                        f"{type(shape).__name__}")
    sizes = infer_size(int_sizes(shape, "reshape", "shape"), input.numel())
    strides = view_strides(input.shape, input.stride(), sizes)
    if strides is not None:
        return reshaped(input, sizes, strides)
    out = _common.new_tensor(sizes, input.dtype, input.device)
    _common.launch("clone", _copy_reshaped_kernel, out, (input,))
    return out


@method(VIEW, name="reshape")
def reshape_method(self: Tensor, *shape: Any) -> Tensor:
    """Tensor.reshape(*shape): the sizes as arguments, or one sequence of them."""
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)) and \
            not hasattr(shape[0], "__index__"):
        raise TypeError("reshape(): argument 'shape' (position 1) must be tuple of ints, not "
                        f"{type(shape[0]).__name__}")
    return reshape(self, shape)


@method(VIEW)
def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return reshape(self, other.shape)


def _copy_reshaped_kernel(out: np.ndarray, src: np.ndarray) -> None:
    np.copyto(out.reshape(src.shape), src)  # out is contiguous: its reshape is a view


@op(VIEW, method=True)
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if input.dim() == 0:
        return reshape(input, (1,))
    start, end = wrap_dim(start_dim, input.dim()), wrap_dim(end_dim, input.dim())
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input.shape
    return reshape(input, (*shape[:start], numel(shape[start:end + 1]), *shape[end + 1:]))


@op(VIEW, method=True)
def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = wrap_dim(dim, input.dim())
    parts = int_sizes(tuple(sizes), "unflatten", "sizes")
    if not parts:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        inferred = infer_size(parts, input.shape[d])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(parts)} don't multiply up to the "
                           f"size of dim {d} ({input.shape[d]}) in the input tensor") from None
    shape = input.shape
    return view(input, (*shape[:d], *inferred, *shape[d + 1:]))


# --- adding, removing and reordering dims -------------------------------------------------------

@op(VIEW, method=True)
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    ndim = input.dim()
    d = wrap_dim(dim, ndim + 1)
    shape, strides = list(input.shape), list(input.stride())
    strides.insert(d, 1 if d >= ndim else shape[d] * strides[d])
    shape.insert(d, 1)
    return reshaped(input, shape, strides)


@op(VIEW, method=True)
def squeeze(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Drop size-1 dims (all of them, or those named in `dim`; a named dim of another size
    stays)."""
    ndim = input.dim()
    if dim is None:
        dims = set(range(ndim))
    elif isinstance(dim, int):
        dims = {wrap_dim(dim, ndim)}
    else:
        dims = set()
        for d in dim:
            w = wrap_dim(d, ndim)
            if w in dims:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            dims.add(w)
    axes = tuple(d for d in sorted(dims) if d < ndim and input.shape[d] == 1)
    return wrap(input, input._a.squeeze(axes) if axes else input._a.view())


@op(VIEW, method=True)
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    ndim = input.dim()
    d0, d1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    return wrap(input, np.swapaxes(input._a, d0, d1) if ndim else input._a.view())


@op(VIEW, method=True)
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return transpose(input, axis0, axis1)


@op(VIEW, method=True)
def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return transpose(input, dim0, dim1)


@op(VIEW, method=True)
def permute(input: Tensor, *dims: Any) -> Tensor:
    order = int_sizes(dims, "permute", "dims")
    ndim = input.dim()
    if len(order) != ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {ndim} is not equal to len(dims) = {len(order)}")
    wrapped = [wrap_dim(d, ndim) for d in order]
    if len(set(wrapped)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return wrap(input, input._a.transpose(wrapped))


@op(VIEW, method=True)
def t(input: Tensor) -> Tensor:
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.dim()}D")
    return transpose(input, 0, -1) if input.dim() == 2 else wrap(input, input._a.view())


@tensor_property(VIEW, "T")
def numpy_T(input: Tensor) -> Tensor:
    """Tensor.T: all dims reversed (torch warns for anything but a matrix)."""
    if input.dim() > 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                      "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=3)
    elif input.dim() == 0:
        _deprecated_on_0d("Tensor.T", _IDENTITY)
    return wrap(input, input._a.T)


_IDENTITY = "This function is the identity in these cases."
_CONJ = "Consider using x.conj()."


_WARNED: set[str] = set()  # torch warns once per process (TORCH_WARN_ONCE)


def _deprecated_on_0d(name: str, hint: str) -> None:
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"{name} is deprecated on 0-D tensors. {hint}", UserWarning, stacklevel=4)


def _no_lazy_conj(input: Tensor, name: str) -> None:
    """adjoint / mH / H of a complex tensor: torch's lazy conjugate view, not emulated."""
    if input.dtype.is_complex:
        raise NotImplementedError(f"torch.{name} of a complex tensor (a lazy conjugate view) is "
                                  "not emulated by fake_torch; use "
                                  "x.conj_physical().transpose(-2, -1)")


def _batched_matrix(input: Tensor, name: str, hint: str) -> Tensor | None:
    """mT, mH, adjoint(): input itself (with torch's warning) when 0-D, torch's error when 1-D,
    else None: swap the last two dims."""
    if input.dim() == 0:
        _deprecated_on_0d(f"Tensor.{name}" if name[0] == "m" else name, hint)
        return input
    if input.dim() == 1:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           "Got 1-D tensor.")
    return None


@tensor_property(VIEW, "mT")
def mT(input: Tensor) -> Tensor:
    """Tensor.mT: the last two dims swapped."""
    found = _batched_matrix(input, "mT", _IDENTITY)
    return transpose(input, -2, -1) if found is None else found


@tensor_property(VIEW, "mH")
def mH(input: Tensor) -> Tensor:
    """Tensor.mH: the conjugate of the last two dims swapped (real dtypes: mT)."""
    _no_lazy_conj(input, "Tensor.mH")
    found = _batched_matrix(input, "mH", _CONJ)
    return transpose(input, -2, -1) if found is None else found


@tensor_property(VIEW, "H")
def H(input: Tensor) -> Tensor:
    """Tensor.H: a matrix's conjugate transpose (real dtypes: its transpose)."""
    if input.dim() == 0:
        _deprecated_on_0d("Tensor.H", _CONJ)
        return input
    if input.dim() != 2:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{input.dim()}-D tensor." + (" For batches of matrices, consider "
                                                         "using tensor.mH" * (input.dim() > 2)))
    _no_lazy_conj(input, "Tensor.H")
    return transpose(input, 0, 1)


@op(VIEW, method=True)
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (real dtypes only here: a transpose)."""
    _no_lazy_conj(input, "adjoint")
    found = _batched_matrix(input, "adjoint()", _CONJ)
    return transpose(input, -2, -1) if found is None else found


@op(VIEW, method=True)
def movedim(input: Tensor, source: int | Sequence[int],
            destination: int | Sequence[int]) -> Tensor:
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    ndim = input.dim()
    wsrc, wdst = [wrap_dim(d, ndim) for d in src], [wrap_dim(d, ndim) for d in dst]
    for name, given, wrapped in (("source", src, wsrc), ("destination", dst, wdst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    order = [-1] * ndim
    for s, d in zip(wsrc, wdst, strict=True):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in wsrc)  # the other dims keep their order
    order = [next(rest) if o < 0 else o for o in order]
    return wrap(input, input._a.transpose(order))


@op(VIEW, method=True)
def moveaxis(input: Tensor, source: int | Sequence[int],
             destination: int | Sequence[int]) -> Tensor:
    return movedim(input, source, destination)


# --- at least n dims ----------------------------------------------------------------------------

@op(VIEW)
def atleast_1d(*tensors: Any) -> Any:
    return _atleast(tensors, 1)


@op(VIEW)
def atleast_2d(*tensors: Any) -> Any:
    return _atleast(tensors, 2)


@op(VIEW)
def atleast_3d(*tensors: Any) -> Any:
    return _atleast(tensors, 3)


def _atleast(tensors: tuple[Any, ...], n: int) -> Any:
    """One tensor in, one out; several (or a sequence) in, a tuple out. All views."""
    seq = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(_lift(t, n) for t in seq)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def _lift(t: Tensor, n: int) -> Tensor:
    if t.dim() >= n:
        return t
    if t.dim() == 0:
        return reshape(t, (1,) * n)
    if n == 3 and t.dim() == 2:
        return unsqueeze(t, -1)
    t = unsqueeze(t, 0)
    return unsqueeze(t, -1) if n == 3 else t


# --- dense copies -------------------------------------------------------------------------------

@method(POINTWISE, aten=())
def contiguous(self: Tensor, *,
               memory_format: memory_format = contiguous_format) -> Tensor:
    """`self` when already dense in `memory_format`'s dim order (no launch), else one "clone"
    laid out that way (torch.channels_last: NHWC memory for an NCHW tensor)."""
    fmt = memory_format_arg(memory_format, "contiguous", optional=False)
    if is_contiguous_as(self._a.shape, _element_strides(self), fmt):
        return self
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    out = empty_like_format(self, fmt)
    _common.launch("clone", copy_kernel, out, (self,))
    return out


@op(POINTWISE, method=True)
def clone(input: Tensor, *, memory_format: memory_format | None = None) -> Tensor:
    """One "clone" launch. torch.preserve_format (the default) keeps the dim order: a dense
    input's strides are kept exactly; another format lays the copy out its way."""
    out = empty_like_format(input, memory_format_arg(memory_format, "clone"))
    dense = is_non_overlapping_and_dense(input.shape, input.stride())
    _common.launch("clone", copy_kernel, out, (input,),
                   kind="memcpy_d2d" if dense and out.stride() == input.stride() else "kernel")
    return out


@register_meta("Tensor.contiguous")
def _contiguous_rule(self: Tensor, *,
                     memory_format: memory_format = contiguous_format) -> TensorMeta:
    """self when already dense in the format's order, else a copy laid out that way."""
    fmt = memory_format_arg(memory_format, "contiguous", optional=False)
    if is_contiguous_as(self.shape, self.stride(), fmt):
        return written_meta(self, [self])
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return TensorMeta(tuple(self.shape), self.dtype, format_strides(self.shape, self.stride(), fmt))


@register_meta("torch.clone")
def _clone_rule(input: Tensor, *, memory_format: memory_format | None = None) -> TensorMeta:
    fmt = memory_format_arg(memory_format, "clone")
    return TensorMeta(tuple(input.shape), input.dtype,
                      format_strides(input.shape, input.stride(), fmt))


def _element_strides(t: Tensor) -> tuple[int, ...]:
    itemsize = t._a.itemsize
    return tuple([s // itemsize for s in t._a.strides])


def copy_kernel(out: np.ndarray, src: np.ndarray) -> None:
    np.copyto(out, src, casting="unsafe")
