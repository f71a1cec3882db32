"""Complex tensors: the views between complex and real (view_as_real, view_as_complex, `.real`,
`.imag`), the ops that build or take apart complex numbers (complex, polar, angle, sgn,
conj_physical), the conjugate queries and the complex casts (cfloat, cdouble).

A complex64 tensor is a numpy complex64 array. Its real view is the float32 array over the same
bytes with every stride doubled (view_as_real adds a last dim of 2; `.imag` starts 4 bytes
later), so writes through one show in the other, as in torch. Views launch nothing.

torch's conj() is lazy: a view with a conjugate bit that the next op resolves (a `clone` before
it). numpy has no such view, so conj() of a complex tensor is refused, naming conj_physical();
of a real tensor it is the tensor itself, as in torch. No tensor here is ever conjugated or
negated lazily, so is_conj() and is_neg() are False and resolve_conj()/resolve_neg() return
their input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, complex32, dtype, float16, float32, float64
from fake_torch._dtype import get_default_dtype as _default_dtype
from fake_torch._kernels._common import complex32_refused
from fake_torch._kernels._elementwise import (
    elementwise_meta,
    inplace,
    is_number,
    pointwise,
    pointwise_rule,
    tensor_arg,
    written_meta,
)
from fake_torch._kernels._strides import (
    Geometry,
    geometry,
    same_meta,
    view_from,
    view_meta,
)
from fake_torch._kernels.cast import as_rule, copy_, to
from fake_torch._kernels.pointwise_math import complex_to_real, sign_values
from fake_torch._memory_format import memory_format, memory_format_arg
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, POINTWISE, VIEW, method, op, tensor_property
from fake_torch._tensor import Tensor
from fake_torch._torch_device import CPU

_COMPLEX_PARTS = (float16, float32, float64)  # the real dtypes a complex dtype is made of


def _no_chalf(dt: dtype) -> None:
    """complex32 has no numpy type: refuse before a view or an output is made of it."""
    if dt is complex32:
        raise complex32_refused()


# --- views: no launch ---------------------------------------------------------------------------

@op(VIEW)
def view_as_real(input: Tensor) -> Tensor:
    """A complex (..., n) tensor as a real (..., n, 2) view of the same memory."""
    x = tensor_arg(input, "view_as_real")
    return view_from(x, _as_real_geometry(x), x._dtype.to_real())


@register_meta("torch.view_as_real")
def _view_as_real_rule(input: Tensor) -> TensorMeta:
    x = tensor_arg(input, "view_as_real")
    return view_meta(x, _as_real_geometry(x), dt=x.dtype.to_real())


def _as_real_geometry(x: Tensor) -> Geometry:
    """Each complex element as two reals: strides and offset doubled, a last dim of 2."""
    if not x.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    shape, strides, offset = geometry(x)
    return (*shape, 2), (*(2 * s for s in strides), 1), 2 * offset


@op(VIEW)
def view_as_complex(input: Tensor) -> Tensor:
    """A real (..., n, 2) tensor as a complex (..., n) view: torch's checks, in its order."""
    x = tensor_arg(input, "view_as_complex")
    dt = x._dtype.to_complex() if x._dtype in _COMPLEX_PARTS else x._dtype
    return view_from(x, _as_complex_geometry(x), dt)


@register_meta("torch.view_as_complex")
def _view_as_complex_rule(input: Tensor) -> TensorMeta:
    x = tensor_arg(input, "view_as_complex")
    g = _as_complex_geometry(x)
    return view_meta(x, g, dt=x.dtype.to_complex())


def _as_complex_geometry(x: Tensor) -> Geometry:
    """Pairs of reals as complex elements: the last dim of 2 gone, strides and offset halved."""
    if x.dtype not in _COMPLEX_PARTS:
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {SCALAR_NAME[x._dtype]}")
    if x.dim() == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = x.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if x.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    _no_chalf(x.dtype.to_complex())
    return tuple(x.shape[:-1]), tuple(s // 2 for s in strides[:-1]), x.storage_offset() // 2


def _part(x: Tensor, imaginary: bool) -> Tensor:
    """The real or imaginary parts of complex `x`: a real view, strides doubled."""
    return view_from(x, _part_geometry(x, imaginary), x._dtype.to_real())


def _part_geometry(x: Tensor, imaginary: bool) -> Geometry:
    """The reals of one part of each complex element: strides doubled, the imaginary part one
    real further."""
    shape, strides, offset = geometry(x)
    return shape, tuple(2 * s for s in strides), 2 * offset + (1 if imaginary else 0)


@op(VIEW, name="real")
def real_(input: Tensor) -> Tensor:
    """The real parts of a complex tensor, as a view; a real tensor itself."""
    x = tensor_arg(input, "real")
    return _part(x, False) if x._dtype.is_complex else x


@register_meta("torch.real", "Tensor.real")
def _real_rule(input: Tensor) -> TensorMeta:
    x = tensor_arg(input, "real")
    if not x.dtype.is_complex:
        return same_meta(x)
    return view_meta(x, _part_geometry(x, False), dt=x.dtype.to_real())


@op(VIEW, name="imag")
def imag_(input: Tensor) -> Tensor:
    """The imaginary parts of a complex tensor, as a view; refused for a real one."""
    x = tensor_arg(input, "imag")
    if not x._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part(x, True)


@register_meta("torch.imag", "Tensor.imag")
def _imag_rule(input: Tensor) -> TensorMeta:
    x = tensor_arg(input, "imag")
    if not x.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_meta(x, _part_geometry(x, True), dt=x.dtype.to_real())


def _setter(part: Callable[[Tensor], Tensor]) -> Callable[[Tensor, Tensor | complex], None]:
    def set_part(self: Tensor, value: Tensor | complex) -> None:
        """`x.real = v`: v (a tensor, or a number as a cpu scalar tensor) copied into the view
        (one copy_, as torch)."""
        view = part(self)
        if not isinstance(value, Tensor):
            if not is_number(value):
                raise TypeError(f"expected a Tensor or a number, got {type(value).__name__}")
            value = Tensor._make(np.array(value, dtype=view._a.dtype), CPU)
        copy_(view, value)

    return set_part


@tensor_property(VIEW, "real", setter=_setter(real_))
def real_property(self: Tensor) -> Tensor:
    """Tensor.real: the real parts, as a view (a real tensor itself)."""
    return real_(self)


@tensor_property(VIEW, "imag", setter=_setter(imag_))
def imag_property(self: Tensor) -> Tensor:
    """Tensor.imag: the imaginary parts, as a view."""
    return imag_(self)


# --- the conjugate: never lazy here ---------------------------------------------------------------

@op(VIEW, method=True)
def conj(input: Tensor) -> Tensor:
    """A real tensor itself; torch's lazy conjugate view of a complex one is not emulated."""
    return _conj_checked(input)


@register_meta("torch.conj")
def _conj_rule(input: Tensor) -> TensorMeta:
    return same_meta(_conj_checked(input))


def _conj_checked(input: Tensor) -> Tensor:
    x = tensor_arg(input, "conj")
    if x.dtype.is_complex:
        raise NotImplementedError("torch.conj of a complex tensor (a lazy conjugate view) is not "
                                  "emulated by fake_torch; torch.conj_physical(x) computes it "
                                  "(one kernel)")
    return x


@op(POINTWISE, method=True, aten=("_conj_physical",))
def conj_physical(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The conjugate computed into a new tensor (one launch); a real tensor itself."""
    x = tensor_arg(input, "conj_physical")
    if not x._dtype.is_complex and out is None:
        return x
    return pointwise("_conj_physical", np.conjugate, [x], promo=x._dtype, result=x._dtype,
                     out=out)


@op(VIEW, method=True)
def resolve_conj(input: Tensor) -> Tensor:
    """The tensor itself: no tensor here carries torch's lazy conjugate bit."""
    return tensor_arg(input, "resolve_conj")


@op(VIEW, method=True)
def resolve_neg(input: Tensor) -> Tensor:
    """The tensor itself: no tensor here carries torch's lazy negative bit."""
    return tensor_arg(input, "resolve_neg")


@register_meta("torch.resolve_conj")
def _resolve_conj_rule(input: Tensor) -> TensorMeta:
    return same_meta(tensor_arg(input, "resolve_conj"))


@register_meta("torch.resolve_neg")
def _resolve_neg_rule(input: Tensor) -> TensorMeta:
    return same_meta(tensor_arg(input, "resolve_neg"))


@op(COMPOSITE, method=True, aten=())
def is_conj(input: Tensor) -> bool:
    """False: no tensor here is lazily conjugated."""
    tensor_arg(input, "is_conj")
    return False


@op(COMPOSITE, method=True, aten=())
def is_neg(input: Tensor) -> bool:
    """False: no tensor here is lazily negated."""
    tensor_arg(input, "is_neg")
    return False


@op(COMPOSITE, method=True, aten=())
def is_complex(input: Tensor) -> bool:
    return tensor_arg(input, "is_complex")._dtype.is_complex


# the queries' answers are metadata: the rule is the query itself
register_meta("torch.is_conj")(is_conj)
register_meta("torch.is_neg")(is_neg)
register_meta("torch.is_complex")(is_complex)


# --- building and taking apart: one launch each --------------------------------------------------

def _from_parts(fn: str, kernel: Callable[[np.ndarray, np.ndarray], np.ndarray], a: Any, b: Any,
                names: tuple[str, str], out: Tensor | None) -> Tensor:
    """complex() and polar(): torch's checks on the two real tensors (one floating dtype) and
    on `out` (their complex dtype), then one pointwise launch of `kernel`."""
    x = tensor_arg(a, fn, names[0], 1)
    y = tensor_arg(b, fn, names[1], 2)
    if x._dtype not in _COMPLEX_PARTS or y._dtype not in _COMPLEX_PARTS:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{SCALAR_NAME[x._dtype]} and {SCALAR_NAME[y._dtype]}")
    if x._dtype is not y._dtype:
        raise RuntimeError(f"Expected object of scalar type {SCALAR_NAME[x._dtype]} but got "
                           f"scalar type {SCALAR_NAME[y._dtype]} for second argument")
    dt = x._dtype.to_complex()
    _no_chalf(dt)
    if out is not None and out._dtype is not dt:
        raise RuntimeError(f"Expected object of scalar type {SCALAR_NAME[dt]} but got scalar "
                           f"type {SCALAR_NAME[out._dtype]} for argument 'out'")
    return pointwise(fn, kernel, [x, y], promo=x._dtype, result=dt, out=out)


def _complex_of(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(re.shape, im.shape),
                   np.result_type(re.dtype, np.complex64))
    out.real = re
    out.imag = im
    return out


def _polar_of(r: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """(r cos theta, r sin theta). torch's kernel calls the C library's cosf/sinf, correctly
    rounded in practice; numpy's float32 SIMD versions are not, so float32 angles go through
    float64 and round once (rotary tables then match torch's bit for bit)."""
    wide = theta.astype(np.float64) if theta.dtype == np.float32 else theta
    cos, sin = np.cos(wide).astype(theta.dtype), np.sin(wide).astype(theta.dtype)
    return _complex_of(r * cos, r * sin)


@op(POINTWISE, name="complex")
def complex_(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    """real + imag * 1j, from two real tensors of one floating dtype (broadcast)."""
    return _from_parts("complex", _complex_of, real, imag, ("real", "imag"), out)


@op(POINTWISE)
def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    """abs * (cos(angle) + sin(angle) * 1j), from two real tensors of one floating dtype."""
    return _from_parts("polar", _polar_of, abs, angle, ("abs", "angle"), out)


def _real_angle(x: np.ndarray) -> Any:
    """torch's angle of a real number: pi below zero, else 0 (-0.0 too), nan kept."""
    return np.where(np.isnan(x), x, np.where(x < 0, x.dtype.type(np.pi), x.dtype.type(0)))


@op(POINTWISE, method=True)
def angle(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The argument of each element: atan2(imag, real) for complex (a real result), 0 or pi
    for real numbers (integers compute in the default dtype)."""
    x = tensor_arg(input, "angle")
    if x._dtype.is_complex:
        return complex_to_real("angle", np.angle, x, out)
    promo = x._dtype if x._dtype.is_floating_point else _default_dtype()
    return pointwise("angle", _real_angle, [x], promo=promo, result=promo, out=out)


def _complex_sgn(z: np.ndarray) -> Any:
    """z / |z|, and 0 where z is 0 (torch's sgn)."""
    magnitude = np.abs(z)
    return np.where(magnitude == 0, z.dtype.type(0), z / np.where(magnitude == 0, 1, magnitude))


@op(POINTWISE, method=True)
def sgn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """z / |z| for complex numbers (0 at 0); sign() for real ones."""
    x = tensor_arg(input, "sgn")
    fn = _complex_sgn if x._dtype.is_complex else sign_values
    return pointwise("sgn", fn, [x], promo=x._dtype, result=x._dtype, out=out)


@method(POINTWISE)
def sgn_(self: Tensor) -> Tensor:
    fn = _complex_sgn if self._dtype.is_complex else sign_values
    return pointwise("sgn_", fn, [self], promo=self._dtype, result=self._dtype, out=self)


# --- casts -------------------------------------------------------------------------------------

@method(POINTWISE, aten=())
def cfloat(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    """self as complex64 (self when it is already)."""
    return to(self, float32.to_complex(),
              memory_format=memory_format_arg(memory_format, "cfloat"))


@method(POINTWISE, aten=())
def cdouble(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    """self as complex128 (self when it is already)."""
    return to(self, float64.to_complex(),
              memory_format=memory_format_arg(memory_format, "cdouble"))


@method(POINTWISE, aten=())
def chalf(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    """self as complex32: refused (no numpy type holds it)."""
    _no_chalf(complex32)
    return self


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------
# sgn: the pointwise kind's rule (input's dtype)

@register_meta("torch.conj_physical")
def _conj_physical_rule(input: Tensor, *, out: Tensor | None = None) -> TensorMeta:
    """A real tensor is its own conjugate (no copy) unless written into `out`."""
    if not input.dtype.is_complex and out is None:
        return written_meta(input, [input])
    return elementwise_meta([input], input.dtype, out)


@register_meta("torch.complex", "torch.polar")
def _from_parts_rule(a: Tensor, b: Tensor, *, out: Tensor | None = None) -> TensorMeta:
    """Two real tensors of one dtype make its complex dtype."""
    return elementwise_meta([a, b], a.dtype.to_complex(), out)


@register_meta("torch.angle")
def _angle_rule(input: Tensor, *, out: Tensor | None = None) -> TensorMeta:
    """Real: complex inputs give their real dtype, integral ones the default dtype."""
    dt = input.dtype
    real = dt.to_real() if dt.is_complex else dt if dt.is_floating_point else _default_dtype()
    return elementwise_meta([input], real, out)


@register_meta("Tensor.chalf")
def _chalf_rule(self: Tensor, memory_format: memory_format | None = None) -> TensorMeta:
    raise complex32_refused()


register_meta("Tensor.sgn_")(inplace(pointwise_rule))
register_meta("Tensor.cfloat")(as_rule(float32.to_complex(), "cfloat"))
register_meta("Tensor.cdouble")(as_rule(float64.to_complex(), "cdouble"))
