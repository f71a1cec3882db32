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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import complex32, dtype, dtype_arg
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import written_meta
from fake_torch._kernels._strides import (
    Geometry,
    Shape,
    dropped,
    empty_like_format,
    format_strides,
    geometry,
    infer_size,
    int_sizes,
    is_non_overlapping_and_dense,
    numel,
    permuted,
    reshaped,
    same_meta,
    scalar_type_name,
    view_from,
    view_meta,
    view_strides,
    wrap,
)
from fake_torch._kernels.cast import _got as described_args
from fake_torch._kernels.expand import expand as expand  # Tensor methods only (no torch.expand)
from fake_torch._kernels.expand import expand_as as expand_as
from fake_torch._memory_format import (
    contiguous_format,
    contiguous_strides,
    is_contiguous_as,
    memory_format,
    memory_format_arg,
    preserve_format,
)
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, VIEW, method, op, tensor_property
from fake_torch._tensor import Tensor, wrap_dim

_VIEW_HINT = ("view size is not compatible with input tensor's size and stride (at least one "
              "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


# --- view / reshape / flatten -------------------------------------------------------------------

@method(VIEW)
def view(self: Tensor, *shape: Any, **kwargs: Any) -> Tensor:
    """Tensor.view(*shape), view(dtype), or one keyword: view(size=...), view(dtype=...):
    same storage, new shape (or element type)."""
    target = _view_target(self, shape, kwargs, self.numel())
    if isinstance(target, dtype):
        return view_from(self, view_dtype_geometry(self, target), target)
    a = self._a  # (the geometry from the array: no Size to build)
    strides = view_strides(a.shape, tuple([s // a.itemsize for s in a.strides]), target)
    if strides is None:
        raise RuntimeError(_VIEW_HINT)
    return reshaped(self, target, strides)


@register_meta("Tensor.view")
def _view_rule(self: Tensor, *shape: Any, **kwargs: Any) -> TensorMeta:
    target = _view_target(self, shape, kwargs, numel(self.shape))
    if isinstance(target, dtype):
        return view_meta(self, view_dtype_geometry(self, target), dt=target)
    return view_meta(self, (target, _checked_view_strides(self, target), self.storage_offset()))


def _checked_view_strides(self: Tensor, sizes: Shape) -> Shape:
    strides = view_strides(tuple(self.shape), tuple(self.stride()), sizes)
    if strides is None:
        raise RuntimeError(_VIEW_HINT)
    return strides


def _view_target(self: Tensor, shape: tuple[Any, ...], kwargs: dict[str, Any],
                 total: Any) -> dtype | Shape:
    """What view's arguments ask for: a dtype to reinterpret the bytes as, or the sizes (one
    -1 resolved for `total` elements: the kernel counts them its fast way, the rule from the
    sizes)."""
    if kwargs:
        if shape or len(kwargs) != 1 or not set(kwargs) <= {"dtype", "size"}:
            raise _bad_view(shape, kwargs)
        if "dtype" in kwargs:
            dt = dtype_arg(kwargs["dtype"])
            if type(dt) is not dtype:
                raise _bad_view(shape, kwargs)
            return dt
        shape = (kwargs["size"],)
    if len(shape) == 1:
        dt = dtype_arg(shape[0])
        if type(dt) is dtype:  # view(torch.int32), view(int)
            return dt
    if not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but "
                        "expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")
    try:
        return infer_size(int_sizes(shape, "view"), total)
    except TypeError:
        raise _bad_view(shape, kwargs) from None


def _bad_view(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    return TypeError(f"view() received an invalid combination of arguments - got "
                     f"({described_args(args, kwargs)}), but expected one of:\n"
                     " * (torch.dtype dtype)\n * (tuple of ints size)\n")


def view_dtype_geometry(self: Tensor, dt: dtype) -> Geometry:
    """The bytes reinterpreted as `dt` (offset in elements of `dt`); torch's rules when the
    element sizes differ."""
    if dt is complex32:
        raise _common.complex32_refused()
    old, new = self.dtype.itemsize, dt.itemsize
    shape, strides, offset = list(self.shape), list(self.stride()), self.storage_offset()
    if old == new:
        return tuple(shape), tuple(strides), offset
    what = f"{scalar_type_name(self.dtype)} as {scalar_type_name(dt)} (different element sizes)"
    if self.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 to view {what}")
    if old > new:  # (..., n) of wide elements -> (..., n * ratio) of narrow ones
        ratio = old // new
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {what}, but got {strides[-1]}")
        shape[-1] *= ratio
        strides = [s * ratio for s in strides[:-1]] + [1]
        return tuple(shape), tuple(strides), offset * ratio
    ratio = new // old
    if shape[-1] % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {what}, but got "
                           f"{shape[-1]}")
    if offset % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view {what}, "
                           f"but got {offset}")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {what}, but got {strides[-1]}")
    for i, s in enumerate(strides[:-1]):
        if s % ratio:
            raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} to view {what}, "
                               f"but got {s}")
    shape[-1] //= ratio
    strides = [s // ratio for s in strides[:-1]] + [1]
    return tuple(shape), tuple(strides), offset // ratio


@method(VIEW)
def view_as(self: Tensor, other: Tensor) -> Tensor:
    return view(self, other.shape)


@register_meta("Tensor.view_as")
def _view_as_rule(self: Tensor, other: Tensor) -> TensorMeta:
    return _view_rule(self, other.shape)


@op(VIEW)
def reshape(input: Tensor, shape: Sequence[Any]) -> Tensor:
    """A view when torch's stride rule allows it, else one "clone" launch into a fresh
    contiguous buffer (torch: clone + _unsafe_view)."""
    a = input._a  # (the geometry from the array: no Size to build)
    sizes = _reshape_sizes(input, shape, a.size)
    strides = view_strides(a.shape, tuple([s // a.itemsize for s in a.strides]), sizes)
    if strides is not None:
        return reshaped(input, sizes, strides)
    out = _common.new_tensor(sizes, input.dtype, input.device)
    _common.launch("clone", _copy_reshaped_kernel, out, (input,))
    return out


@register_meta("torch.reshape")
def _reshape_rule(input: Tensor, shape: Sequence[Any]) -> TensorMeta:
    """A view when the strides allow it, else a fresh contiguous tensor."""
    sizes = _reshape_sizes(input, shape, numel(input.shape))
    strides = view_strides(tuple(input.shape), tuple(input.stride()), sizes)
    if strides is not None:
        return view_meta(input, (sizes, strides, input.storage_offset()))
    return TensorMeta(sizes, input.dtype, contiguous_strides(sizes))


def _reshape_sizes(input: Tensor, shape: Sequence[Any], total: Any) -> Shape:
    """The sizes reshape is asked for (one -1 resolved), for `total` elements."""
    if not isinstance(shape, (tuple, list)):
        raise TypeError("reshape(): argument 'shape' (position 2) must be tuple of ints, not "
                        f"{type(shape).__name__}")
    return infer_size(int_sizes(shape, "reshape", "shape"), total)


@method(VIEW, name="reshape")
def reshape_method(self: Tensor, *shape: Any) -> Tensor:
    """Tensor.reshape(*shape): the sizes as arguments, or one sequence of them."""
    return reshape(self, _method_shape(shape))


@register_meta("Tensor.reshape")
def _reshape_method_rule(self: Tensor, *shape: Any) -> TensorMeta:
    return _reshape_rule(self, _method_shape(shape))


def _method_shape(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)) and \
            not hasattr(shape[0], "__index__"):
        raise TypeError("reshape(): argument 'shape' (position 1) must be tuple of ints, not "
                        f"{type(shape[0]).__name__}")
    return shape


@method(VIEW)
def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return reshape(self, other.shape)


@register_meta("Tensor.reshape_as")
def _reshape_as_rule(self: Tensor, other: Tensor) -> TensorMeta:
    return _reshape_rule(self, other.shape)


def _copy_reshaped_kernel(out: np.ndarray, src: np.ndarray) -> None:
    np.copyto(out.reshape(src.shape), src)  # out is contiguous: its reshape is a view


@op(VIEW, method=True)
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    shape = _flattened(input, start_dim, end_dim)
    return input if shape is None else reshape(input, shape)


@register_meta("torch.flatten")
def _flatten_rule(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> TensorMeta:
    shape = _flattened(input, start_dim, end_dim)
    return same_meta(input) if shape is None else _reshape_rule(input, shape)


def _flattened(input: Tensor, start_dim: int, end_dim: int) -> tuple[Any, ...] | None:
    """The shape flatten reshapes to; None: the input itself."""
    if input.dim() == 0:
        return (1,)
    start, end = wrap_dim(start_dim, input.dim()), wrap_dim(end_dim, input.dim())
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return None
    shape = tuple(input.shape)
    return (*shape[:start], numel(shape[start:end + 1]), *shape[end + 1:])


@op(VIEW, method=True)
def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    return view(input, _unflattened(input, dim, sizes))


@register_meta("torch.unflatten")
def _unflatten_rule(input: Tensor, dim: int, sizes: Sequence[int]) -> TensorMeta:
    return _view_rule(input, _unflattened(input, dim, sizes))


def _unflattened(input: Tensor, dim: int, sizes: Sequence[int]) -> tuple[Any, ...]:
    d = wrap_dim(dim, input.dim())
    parts = int_sizes(tuple(sizes), "unflatten", "sizes")
    if not parts:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        inferred = infer_size(parts, input.shape[d])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(parts)} don't multiply up to the "
                           f"size of dim {d} ({input.shape[d]}) in the input tensor") from None
    shape = tuple(input.shape)
    return (*shape[:d], *inferred, *shape[d + 1:])


# --- adding, removing and reordering dims -------------------------------------------------------

@op(VIEW, method=True)
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    # (the offset stays as it is: reshaped keeps it, so it is not read here)
    a = input._a  # (the geometry from the array: no Size to build)
    shape, strides, _ = unsqueeze_geometry(
        (a.shape, tuple([s // a.itemsize for s in a.strides]), 0), dim)
    return reshaped(input, shape, strides)


@register_meta("torch.unsqueeze")
def _unsqueeze_rule(input: Tensor, dim: int) -> TensorMeta:
    return view_meta(input, unsqueeze_geometry(geometry(input), dim))


def unsqueeze_geometry(g: Geometry, dim: int) -> Geometry:
    """A size-1 dim inserted at `dim`, its stride what torch gives it."""
    shape, strides = list(g[0]), list(g[1])
    ndim = len(shape)
    d = wrap_dim(dim, ndim + 1)
    strides.insert(d, 1 if d >= ndim else shape[d] * strides[d])
    shape.insert(d, 1)
    return tuple(shape), tuple(strides), g[2]


@op(VIEW, method=True)
def squeeze(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Drop size-1 dims (all of them, or those named in `dim`; a named dim of another size
    stays)."""
    axes = squeezed_dims(input, dim)
    return wrap(input, input._a.squeeze(axes) if axes else input._a.view())


@register_meta("torch.squeeze")
def _squeeze_rule(input: Tensor, dim: int | Sequence[int] | None = None) -> TensorMeta:
    return view_meta(input, dropped(geometry(input), squeezed_dims(input, dim)))


def squeezed_dims(input: Tensor, dim: int | Sequence[int] | None) -> tuple[int, ...]:
    """The dims squeeze drops: the size-1 ones among those asked for (all by default)."""
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
    return tuple(d for d in sorted(dims) if d < ndim and input.shape[d] == 1)


@op(VIEW, method=True)
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return wrap(input, input._a.transpose(transpose_order(input.dim(), dim0, dim1)))


@register_meta("torch.transpose", "torch.swapaxes", "torch.swapdims")
def _transpose_rule(input: Tensor, dim0: int, dim1: int) -> TensorMeta:
    return view_meta(input, permuted(geometry(input), transpose_order(input.dim(), dim0, dim1)))


def transpose_order(ndim: int, dim0: int, dim1: int) -> list[int]:
    """The dim order of transpose(dim0, dim1): the two swapped (nothing to swap in a 0-D)."""
    d0, d1 = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
    order = list(range(ndim))
    if ndim:
        order[d0], order[d1] = order[d1], order[d0]
    return order


@op(VIEW, method=True)
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return transpose(input, axis0, axis1)


@op(VIEW, method=True)
def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return transpose(input, dim0, dim1)


@op(VIEW, method=True)
def permute(input: Tensor, *dims: Any) -> Tensor:
    return wrap(input, input._a.transpose(permute_order(input.dim(), dims)))


@register_meta("torch.permute")
def _permute_rule(input: Tensor, *dims: Any) -> TensorMeta:
    return view_meta(input, permuted(geometry(input), permute_order(input.dim(), dims)))


def permute_order(ndim: int, dims: tuple[Any, ...]) -> list[int]:
    """permute's dims (as arguments or one sequence), checked and wrapped."""
    order = int_sizes(dims, "permute", "dims")
    if len(order) != ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {ndim} is not equal to len(dims) = {len(order)}")
    wrapped = [wrap_dim(d, ndim) for d in order]
    if len(set(wrapped)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return wrapped


@op(VIEW, method=True)
def t(input: Tensor) -> Tensor:
    return wrap(input, input._a.transpose(t_order(input)))


@register_meta("torch.t")
def _t_rule(input: Tensor) -> TensorMeta:
    return view_meta(input, permuted(geometry(input), t_order(input)))


def t_order(input: Tensor) -> list[int]:
    """t()'s dim order: a matrix's two dims swapped; fewer dims stay; torch's error beyond."""
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.dim()}D")
    return [1, 0] if input.dim() == 2 else list(range(input.dim()))


@tensor_property(VIEW, "T")
def numpy_T(input: Tensor) -> Tensor:
    """Tensor.T: all dims reversed (torch warns for anything but a matrix)."""
    _warn_T(input)
    return wrap(input, input._a.T)


@register_meta("Tensor.T")
def _T_rule(input: Tensor) -> TensorMeta:
    _warn_T(input)
    return view_meta(input, permuted(geometry(input), range(input.dim() - 1, -1, -1)))


def _warn_T(input: Tensor) -> None:
    if input.dim() > 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                      "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=3)
    elif input.dim() == 0:
        _deprecated_on_0d("Tensor.T", _IDENTITY)


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


@register_meta("Tensor.mT")
def _mT_rule(input: Tensor) -> TensorMeta:
    return _matrix_transposed(input, _batched_matrix(input, "mT", _IDENTITY))


def _matrix_transposed(input: Tensor, found: Tensor | None) -> TensorMeta:
    """The rule of mT and its kin: input itself, or its last two dims swapped."""
    return same_meta(input) if found is not None else _transpose_rule(input, -2, -1)


@tensor_property(VIEW, "mH")
def mH(input: Tensor) -> Tensor:
    """Tensor.mH: the conjugate of the last two dims swapped (real dtypes: mT)."""
    _no_lazy_conj(input, "Tensor.mH")
    found = _batched_matrix(input, "mH", _CONJ)
    return transpose(input, -2, -1) if found is None else found


@register_meta("Tensor.mH")
def _mH_rule(input: Tensor) -> TensorMeta:
    _no_lazy_conj(input, "Tensor.mH")
    return _matrix_transposed(input, _batched_matrix(input, "mH", _CONJ))


@tensor_property(VIEW, "H")
def H(input: Tensor) -> Tensor:
    """Tensor.H: a matrix's conjugate transpose (real dtypes: its transpose)."""
    return input if _H_checked(input) else transpose(input, 0, 1)


@register_meta("Tensor.H")
def _H_rule(input: Tensor) -> TensorMeta:
    return same_meta(input) if _H_checked(input) else _transpose_rule(input, 0, 1)


def _H_checked(input: Tensor) -> bool:
    """H's checks; True: a 0-D input, H is the input itself."""
    if input.dim() == 0:
        _deprecated_on_0d("Tensor.H", _CONJ)
        return True
    if input.dim() != 2:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{input.dim()}-D tensor." + (" For batches of matrices, consider "
                                                         "using tensor.mH" * (input.dim() > 2)))
    _no_lazy_conj(input, "Tensor.H")
    return False


@op(VIEW, method=True)
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (real dtypes only here: a transpose)."""
    _no_lazy_conj(input, "adjoint")
    found = _batched_matrix(input, "adjoint()", _CONJ)
    return transpose(input, -2, -1) if found is None else found


@register_meta("torch.adjoint")
def _adjoint_rule(input: Tensor) -> TensorMeta:
    _no_lazy_conj(input, "adjoint")
    return _matrix_transposed(input, _batched_matrix(input, "adjoint()", _CONJ))


@op(VIEW, method=True)
def movedim(input: Tensor, source: int | Sequence[int],
            destination: int | Sequence[int]) -> Tensor:
    return wrap(input, input._a.transpose(movedim_order(input.dim(), source, destination)))


@register_meta("torch.movedim", "torch.moveaxis")
def _movedim_rule(input: Tensor, source: int | Sequence[int],
                  destination: int | Sequence[int]) -> TensorMeta:
    order = movedim_order(input.dim(), source, destination)
    return view_meta(input, permuted(geometry(input), order))


def movedim_order(ndim: int, source: int | Sequence[int],
                  destination: int | Sequence[int]) -> list[int]:
    """movedim's dim order: the source dims at their destinations, the others in order."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    wsrc, wdst = [wrap_dim(d, ndim) for d in src], [wrap_dim(d, ndim) for d in dst]
    for name, given, wrapped in (("source", src, wsrc), ("destination", dst, wdst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    order = [-1] * ndim
    for s, d in zip(wsrc, wdst, strict=True):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in wsrc)  # the other dims keep their order
    return [next(rest) if o < 0 else o for o in order]


@op(VIEW, method=True)
def moveaxis(input: Tensor, source: int | Sequence[int],
             destination: int | Sequence[int]) -> Tensor:
    return movedim(input, source, destination)


# --- at least n dims ----------------------------------------------------------------------------

@op(VIEW)
def atleast_1d(*tensors: Any) -> Any:
    return _atleast(tensors, 1, _lift)


@op(VIEW)
def atleast_2d(*tensors: Any) -> Any:
    return _atleast(tensors, 2, _lift)


@op(VIEW)
def atleast_3d(*tensors: Any) -> Any:
    return _atleast(tensors, 3, _lift)


@register_meta("torch.atleast_1d")
def _atleast_1d_rule(*tensors: Any) -> Output:
    return _atleast(tensors, 1, _lift_rule)


@register_meta("torch.atleast_2d")
def _atleast_2d_rule(*tensors: Any) -> Output:
    return _atleast(tensors, 2, _lift_rule)


@register_meta("torch.atleast_3d")
def _atleast_3d_rule(*tensors: Any) -> Output:
    return _atleast(tensors, 3, _lift_rule)


def _atleast(tensors: tuple[Any, ...], n: int, lift: Callable[[Tensor, int, int], Any]) -> Any:
    """One tensor in, one out; several (or a sequence) in, a tuple out. All views.
    `lift(t, n, i)`: tensor number i lifted to n dims (a view, or its rule's description)."""
    seq = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(lift(t, n, i) for i, t in enumerate(seq))
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def _lift_geometry(g: Geometry, n: int) -> Geometry:
    """The geometry atleast_nd gives a tensor of fewer than n dims."""
    ndim = len(g[0])
    if ndim == 0:
        return (1,) * n, (1,) * n, g[2]  # a reshape: every stride 1
    if n == 3 and ndim == 2:
        return unsqueeze_geometry(g, -1)
    g = unsqueeze_geometry(g, 0)
    return unsqueeze_geometry(g, -1) if n == 3 else g


def _lift(t: Tensor, n: int, i: int) -> Tensor:
    if t.dim() >= n:
        return t
    shape, strides, _ = _lift_geometry((t.shape, t.stride(), 0), n)  # (reshaped keeps the offset)
    return reshaped(t, shape, strides)


def _lift_rule(t: Tensor, n: int, i: int) -> TensorMeta:
    g = geometry(t)
    return view_meta(t, g if t.dim() >= n else _lift_geometry(g, n), alias=i)


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
