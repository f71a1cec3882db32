"""Factories: tensor, as_tensor, from_numpy, empty, zeros, ones, full, arange, eye, *_like.

On cuda a fill is one launch (zeros is a memset), `empty` launches nothing, and data coming from
the host (`torch.tensor(list, device="cuda")`) is one host-to-device copy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from fake_torch._dtype import (
    SCALAR_NAME,
    bool_,
    dtype,
    dtype_arg,
    float4_e2m1fn_x2,
    from_numpy_dtype,
    get_default_dtype,
    int64,
    promote_types,
)
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels._elementwise import is_number
from fake_torch._kernels._float8_cast import FLOAT8_NP, PACKED_NP, to_float8
from fake_torch._kernels._strides import (
    checked_convert,
    contiguous_strides,
    dense_strides_like,
    empty_like_format,
    format_strides,
    restride,
)
from fake_torch._kernels._strides import empty_strided as _dense_empty_strided
from fake_torch._kernels.cast import to_meta
from fake_torch._kernels.host import host_array
from fake_torch._memory_format import (
    contiguous_format,
    memory_format,
    memory_format_arg,
    strides_for,
)
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, POINTWISE, Break, data_dependent, exports, op
from fake_torch._simulated import _dispatch, _pinned
from fake_torch._sym import SymInt, sym_max
from fake_torch._tensor import Number, Tensor, hooks
from fake_torch._torch_device import DeviceLike, canonical

SizeArg = int | Sequence[int]
F = TypeVar("F", bound=Callable[..., Any])


def _sizes(size: tuple[Any, ...], fn: str) -> tuple[int, ...]:
    """`empty(2, 3)` and `empty((2, 3))` both mean shape (2, 3); torch's argument parser's
    errors for anything else."""
    head = f"{fn}(): argument 'size'"
    if not size:
        if fn in ("rand", "randn"):
            raise TypeError(f"{fn}() received an invalid combination of arguments - got (), but "
                            "expected one of:")
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
        for i, s in enumerate(size):
            if not _is_int(s):
                raise TypeError(f"{head} (position 1) must be tuple of ints, but found element "
                                f"of type {type(s).__name__} at pos {i}")
    elif len(size) == 1 and not _is_int(size[0]):
        raise TypeError(f"{head} (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    for i, s in enumerate(size):
        if not _is_int(s):
            raise TypeError(f"{head} failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(s).__name__}\"")
    for s in size:
        if s < 0:
            if fn == "zeros":  # (torch.zeros checks its sizes itself first)
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    sizes: list[Any] = [s if isinstance(s, SymInt) else int(s) for s in size]  # a symbol stays
    return tuple(sizes)


def finish(out: Tensor, requires_grad: bool) -> Tensor:
    """A factory's requires_grad, which torch allows on floating (and complex) tensors only."""
    if requires_grad and not (out.dtype.is_floating_point or out.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    out.requires_grad = requires_grad
    return out


def _is_int(s: object) -> bool:
    return isinstance(s, (int, np.integer, SymInt)) and not isinstance(s, bool)


def _size_sequence(size: Any, fn: str) -> None:
    """full and new_full take the size as one sequence, never as an int."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")


def _check_dtype(dt: Any, fn: str) -> dtype | None:
    """`dtype=`: a torch.dtype, or a Python number type (int, float, bool, complex), which
    torch's argument parser reads as int64, float64, bool, complex128 (the entries convert
    them before the implementation runs; a direct caller's pass here)."""
    dt = dtype_arg(dt)
    if dt is not None and not isinstance(dt, dtype):
        raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not "
                        f"{type(dt).__name__}")
    return dt


def _pinned_if(out: Tensor, pin_memory: bool) -> Tensor:
    """pin_memory=True: the new (cpu) tensor in pinned host memory instead, before anything
    writes it; torch's error for any other device."""
    if not pin_memory:
        return out
    if out.device.type != "cpu":
        raise RuntimeError("Only dense CPU tensors can be pinned")
    return Tensor._make(_pinned.pinned_empty_like(out._a), out.device, None, out.dtype)


def _fill(out: Tensor, value: Number | complex, op: str) -> Tensor:
    """Fill a new tensor with `value`, refused as torch's argument parser and c10's
    checked_convert refuse it (a non-number; a value the dtype cannot hold)."""
    if not is_number(value):
        raise TypeError(f"{op}(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(value).__name__}")
    value = checked_convert(value.item() if isinstance(value, np.generic) else value, out.dtype)
    kind = "memset" if value == 0 else "kernel"
    if out.dtype is float4_e2m1fn_x2 and value != 0:  # packed bytes: only a memset fills them
        raise NotImplementedError("\"fill_cpu\" not implemented for 'Float4_e2m1fn_x2'")
    launch(op, _fill_kernel, out, (), {"value": value}, kind=kind)
    return out


def _fill_kernel(out: np.ndarray, *, value: Number) -> None:
    if out.dtype == PACKED_NP:  # float4_e2m1fn_x2: zeros only (`_fill` refuses the rest)
        out.view(np.uint8)[...] = 0
    elif out.dtype in FLOAT8_NP:  # rounded as c10 rounds (ml_dtypes' own cast differs)
        out[...] = to_float8(np.asarray(value), out.dtype)
    else:
        out[...] = value


def _as_np(host: np.ndarray, dt: dtype) -> np.ndarray:
    """torch.tensor's values as a new array of `dt` (a float8 rounded as c10 rounds it); a
    Python complex refused by a real dtype (bool takes it), as torch's argument parser does."""
    try:
        if dt.np in FLOAT8_NP:
            return to_float8(np.asarray(host, dtype=np.float64), dt.np)
        return np.array(host, dtype=dt.np)
    except TypeError:
        if any(isinstance(v, complex) for v in np.asarray(host).ravel().tolist()):
            raise TypeError("'complex' object cannot be interpreted as an integer"
                            if dt.np.kind in "iu" else "must be real number, not complex"
                            ) from None
        raise


def _infer_dtype(data: Any) -> dtype:
    """torch.tensor's inference: any complex -> the default complex dtype, else any float ->
    default dtype, else any int -> int64, else bool."""
    flat: list[Any] = (np.asarray(data, dtype=object).ravel().tolist() if not np.isscalar(data)
                       else [data])
    kinds = {type(v) for v in flat}
    if any(issubclass(k, Tensor) for k in kinds):
        dts: list[dtype] = [v.dtype for v in flat]  # torch promotes the elements' dtypes
        return functools.reduce(promote_types, dts)
    if any(issubclass(k, (complex, np.complexfloating)) for k in kinds):
        return get_default_dtype().to_complex()
    if any(issubclass(k, float) for k in kinds):
        return get_default_dtype()
    if any(issubclass(k, (int, np.integer)) and not issubclass(k, bool) for k in kinds):
        return int64
    if not flat or all(issubclass(k, (bool, np.bool_)) for k in kinds):
        return bool_ if flat else get_default_dtype()
    bad = next(k for k in kinds if not issubclass(k, (int, float, bool, np.generic)))
    raise RuntimeError(f"Could not infer dtype of {bad.__name__}")


def _nested_array(data: Any) -> np.ndarray:
    """Check the nesting is rectangular (torch's ValueError) and return an object array."""
    def shape_of(x: Any, dim: int) -> list[int]:
        if isinstance(x, (list, tuple)):
            inner = [shape_of(v, dim + 1) for v in x]
            for v, s in zip(x[1:], inner[1:], strict=True):
                if bool(s) != bool(inner[0]):  # a number and a sequence side by side
                    raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an "
                                    "integer" if s else "not a sequence")
                if s != inner[0]:
                    raise ValueError(f"expected sequence of length {inner[0][0]} at dim "
                                     f"{dim + 1} (got {s[0]})")
            return [len(x), *(inner[0] if inner else [])]
        if isinstance(x, str):
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        if isinstance(x, Tensor) and x.numel() != 1:  # only a one-element tensor is a number
            raise ValueError("only one element tensors can be converted to Python scalars")
        if isinstance(x, int) and not -2**63 <= x < 2**63:
            raise ValueError("Overflow when unpacking long long")
        return []

    shape_of(data, 0)
    return np.array(data if not isinstance(data, Tensor) else data.tolist(), dtype=object)


def _number_of(t: Tensor) -> float | complex:
    """A one-element tensor inside torch.tensor's data, as the number it holds."""
    return complex(t) if t.dtype.is_complex else float(t)


def _from_tensor_break(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Break | None:
    """torch.tensor(t) of a tensor reads its values on the host."""
    if args and isinstance(args[0], Tensor):
        return data_dependent("aten._local_scalar_dense.default")
    return None


@op(POINTWISE, aten=(), graph_break=_from_tensor_break)
def tensor(data: Any, *, dtype: dtype | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor copied from `data` (nested lists, scalars, numpy arrays or tensors);
    pin_memory=True builds it in pinned host memory (then copies it to `device`)."""
    _check_dtype(dtype, "tensor")
    if pin_memory and isinstance(data, (Tensor, np.ndarray)):
        raise RuntimeError("Can't pin tensor constructed from "
                           f"{'a variable' if isinstance(data, Tensor) else 'numpy'}")
    if isinstance(data, Tensor):
        host = host_array(data, "tensor")
        dt = dtype or data.dtype
    elif isinstance(data, (np.ndarray, np.generic)):  # numpy keeps its dtype, as in torch
        data = np.asarray(data)
        host = data
        dt = dtype or from_numpy_dtype(data.dtype)
    else:
        objs = _nested_array(data)
        dt = dtype or _infer_dtype(data)
        host = np.array([_number_of(v) if isinstance(v, Tensor) else v for v in objs.ravel()],
                        dtype=object).reshape(objs.shape) if objs.size else objs
    dev = canonical(device)
    out = new_tensor(host.shape, dt, dev)
    if dev.type == "cuda":  # the data lives on the host: one blocking host-to-device copy
        src = _as_np(host, dt)
        if pin_memory:
            src = _pinned.pinned_copy(src)
        launch("copy_", np.copyto, out, (src,), kind="memcpy_h2d")
        _dispatch.host_sync("to")
    else:
        out = _pinned_if(out, pin_memory)
        if dev.type != "meta":  # (onto meta the values are dropped, as torch's copy drops them)
            out._a[...] = _as_np(host, dt) if host.dtype == object else host
    return finish(out, requires_grad)


@op(POINTWISE, aten=(), graph_break=_from_tensor_break)
def as_tensor(data: Any, dtype: dtype | None = None, device: DeviceLike | None = None) -> Tensor:
    """`data` itself when it is already a tensor of that dtype and device, else a copy; a
    cpu tensor made from a numpy array shares its memory."""
    _check_dtype(dtype, "as_tensor")
    dev = None if device is None else canonical(device)
    if isinstance(data, Tensor):
        if (dtype is None or dtype is data.dtype) and (dev is None or dev == data.device):
            return data
        return data.to(device=dev or data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (dev is None or dev.type == "cpu"):
        t = from_numpy(data)
        return t if dtype is None or dtype is t.dtype else t.to(dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


@op(COMPOSITE)
def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A cpu tensor sharing `ndarray`'s memory (no copy)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    return Tensor._make(ndarray, canonical("cpu"))


def _new(size: tuple[Any, ...], dt: dtype | None, dev: DeviceLike | None, fn: str) -> Tensor:
    return new_tensor(_sizes(size, fn), _check_dtype(dt, fn) or get_default_dtype(),
                      canonical(dev))


@op(COMPOSITE)
def empty(*size: Any, dtype: dtype | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False, pin_memory: bool = False,
          memory_format: memory_format | None = None) -> Tensor:
    """Uninitialised memory: no launch. memory_format=torch.channels_last lays a 4-D shape
    out NHWC (torch.channels_last_3d a 5-D one NDHWC)."""
    if memory_format is None or memory_format is contiguous_format:
        out = _new(size, dtype, device, "empty")
    else:
        fmt = memory_format_arg(memory_format, "empty")
        shape = _sizes(size, "empty")
        out = _dense_empty_strided(shape, strides_for(shape, fmt),
                            _check_dtype(dtype, "empty") or get_default_dtype(), canonical(device))
    return finish(_pinned_if(out, pin_memory), requires_grad)


@op(COMPOSITE)
def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: dtype | None = None,
                  layout: Any = None, device: DeviceLike | None = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Uninitialised memory laid out with `stride`: a fresh buffer just large enough for the
    furthest element (gaps included), viewed with those strides. No launch."""
    shape, strides = _strided_args(size, stride)
    dt = _check_dtype(dtype, "empty_strided") or get_default_dtype()
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides,
                                                                        strict=True))
    flat = new_tensor((extent,), dt, canonical(device))
    return finish(_pinned_if(restride(flat, shape, strides), pin_memory), requires_grad)


def _strided_args(size: Sequence[int], stride: Sequence[int]) -> tuple[tuple[int, ...],
                                                                        tuple[int, ...]]:
    shape, strides = _sizes((tuple(size),), "empty_strided"), tuple(stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    return shape, strides


@register_meta("torch.empty_strided")
def _empty_strided_rule(size: Sequence[int], stride: Sequence[int], *,
                        dtype: dtype | None = None, layout: Any = None,
                        device: DeviceLike | None = None, requires_grad: bool = False,
                        pin_memory: bool = False) -> TensorMeta:
    """A fresh tensor with exactly the given strides."""
    shape, strides = _strided_args(size, stride)
    return _fresh(shape, _check_dtype(dtype, "empty_strided") or get_default_dtype(), strides,
                  device, pin_memory, requires_grad)


@register_meta("torch.empty")
def _empty_rule(*size: Any, dtype: dtype | None = None, device: DeviceLike | None = None,
                requires_grad: bool = False, pin_memory: bool = False,
                memory_format: memory_format | None = None) -> TensorMeta:
    """A fresh tensor laid out in memory_format (contiguous by default)."""
    fmt = contiguous_format if memory_format is None else memory_format_arg(memory_format,
                                                                           "empty")
    shape = _sizes(size, "empty")
    strides = strides_for(shape, fmt)
    return _fresh(shape, _check_dtype(dtype, "empty") or get_default_dtype(), strides, device,
                  pin_memory, requires_grad)


def _fresh(shape: tuple[Any, ...], dt: dtype, strides: tuple[Any, ...], device: Any,
           pin_memory: bool, requires_grad: bool) -> TensorMeta:
    """A factory's fresh output, described, with its pin_memory and requires_grad checks."""
    if pin_memory and canonical(device).type != "cpu":
        raise RuntimeError("Only dense CPU tensors can be pinned")
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return TensorMeta(shape, dt, strides)


@op(POINTWISE)
def zeros(*size: Any, dtype: dtype | None = None, device: DeviceLike | None = None,
          pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    out = _pinned_if(_new(size, dtype, device, "zeros"), pin_memory)
    return finish(_fill(out, 0, "zeros"), requires_grad)


@op(POINTWISE)
def ones(*size: Any, dtype: dtype | None = None, device: DeviceLike | None = None,
         pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    out = _pinned_if(_new(size, dtype, device, "ones"), pin_memory)
    return finish(_fill(out, 1, "ones"), requires_grad)


@op(POINTWISE)
def full(size: Sequence[int], fill_value: Number, *, dtype: dtype | None = None,
         device: DeviceLike | None = None, pin_memory: bool = False,
         requires_grad: bool = False) -> Tensor:
    _size_sequence(size, "full")
    dt = _check_dtype(dtype, "full") or _scalar_default(fill_value)
    out = _pinned_if(new_tensor(_sizes((size,), "full"), dt, canonical(device)), pin_memory)
    return finish(_fill(out, fill_value, "full"), requires_grad)


def _scalar_default(value: Number) -> dtype:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, complex):
        return get_default_dtype().to_complex()
    return int64 if isinstance(value, int) else get_default_dtype()


def like(input: Tensor, dt: dtype | None, dev: DeviceLike | None, fmt: memory_format | None,
         fn: str) -> Tensor:
    """The output of a `*_like` factory: input's shape, laid out as empty_like lays it out
    (preserve_format, the default: input's own strides when it is dense). No launch."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return empty_like_format(input, memory_format_arg(fmt, fn), _check_dtype(dt, fn),
                             None if dev is None else canonical(dev))


@op(COMPOSITE)
def empty_like(input: Tensor, *, dtype: dtype | None = None, device: DeviceLike | None = None,
               pin_memory: bool = False, requires_grad: bool = False,
               memory_format: memory_format | None = None) -> Tensor:
    out = _pinned_if(like(input, dtype, device, memory_format, "empty_like"), pin_memory)
    return finish(out, requires_grad)


@register_meta("torch.empty_like")
def _empty_like_rule(input: Tensor, *, dtype: dtype | None = None,
                     device: DeviceLike | None = None, pin_memory: bool = False,
                     requires_grad: bool = False,
                     memory_format: memory_format | None = None) -> TensorMeta:
    """input's shape, laid out as `like` lays it out (preserve_format: input's own strides
    when it is dense)."""
    out = like_meta(input, dtype, memory_format, "empty_like")
    return _fresh(out.shape, out.dtype, out.stride,
                  device if device is not None else input.device, pin_memory, requires_grad)


@op(POINTWISE)
def zeros_like(input: Tensor, *, dtype: dtype | None = None, device: DeviceLike | None = None,
               pin_memory: bool = False, requires_grad: bool = False,
               memory_format: memory_format | None = None) -> Tensor:
    out = _pinned_if(like(input, dtype, device, memory_format, "zeros_like"), pin_memory)
    return finish(_fill(out, 0, "zeros_like"), requires_grad)


@op(POINTWISE)
def ones_like(input: Tensor, *, dtype: dtype | None = None, device: DeviceLike | None = None,
              pin_memory: bool = False, requires_grad: bool = False,
              memory_format: memory_format | None = None) -> Tensor:
    out = _pinned_if(like(input, dtype, device, memory_format, "ones_like"), pin_memory)
    return finish(_fill(out, 1, "ones_like"), requires_grad)


@op(POINTWISE)
def full_like(input: Tensor, fill_value: Number, *, dtype: dtype | None = None,
              device: DeviceLike | None = None, pin_memory: bool = False,
              requires_grad: bool = False, memory_format: memory_format | None = None) -> Tensor:
    out = _pinned_if(like(input, dtype, device, memory_format, "full_like"), pin_memory)
    return finish(_fill(out, fill_value, "full_like"), requires_grad)


@op(POINTWISE)
def arange(start: Number, end: Number | None = None, step: Number = 1, *,
           dtype: dtype | None = None, device: DeviceLike | None = None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """[start, end) by step; int64 unless any bound is a float (then the default dtype)."""
    start, n, dt = _arange_plan(start, end, step, dtype)
    out = _pinned_if(new_tensor((n,), dt, canonical(device)), pin_memory)
    launch("arange", _arange_kernel, out, (), {"start": start, "step": step})
    return finish(out, requires_grad)


def _arange_plan(start: Number, end: Number | None, step: Number,
                 dtype: dtype | None) -> tuple[Number, int, dtype]:
    """arange's checks; its (start, length, dtype)."""
    if end is None:
        start, end = 0, start
    if not all(isinstance(v, SymInt) or np.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    ints = all(isinstance(v, (int, SymInt)) for v in (start, end, step))
    dt = _check_dtype(dtype, "arange") or (int64 if ints else get_default_dtype())
    if dt.is_complex:  # (its CPU build's kernel name)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{SCALAR_NAME[dt]}'")
    if ints and any(isinstance(v, SymInt) for v in (start, end, step)):  # a symbolic length
        return start, sym_max(0, -((start - end) // step)), dt  # ceil((end - start) / step)
    n = max(0, int(np.ceil((end - start) / step)))
    return start, n, dt


def _arange_kernel(out: np.ndarray, *, start: Number, step: Number) -> None:
    out[...] = start + np.arange(out.shape[0], dtype=np.float64) * step


@op(POINTWISE)
def linspace(start: Number, end: Number, steps: int, *, dtype: dtype | None = None,
             device: DeviceLike | None = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    if not _is_int(steps):
        got = ", ".join(type(v).__name__ for v in (start, end, steps))
        raise TypeError(f"linspace() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n * (Tensor start, Tensor end, int steps, *, "
                        "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
                        "torch.device device = None, bool pin_memory = False, bool requires_grad "
                        "= False)")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    out = _pinned_if(new_tensor((steps,), _check_dtype(dtype, "linspace") or
                                get_default_dtype(), canonical(device)), pin_memory)
    launch("linspace", _linspace_kernel, out, (), {"start": start, "end": end})
    return finish(out, requires_grad)


def _linspace_kernel(out: np.ndarray, *, start: Number, end: Number) -> None:
    out[...] = np.linspace(start, end, out.shape[0])


@op(POINTWISE)
def eye(n: int, m: int | None = None, *, dtype: dtype | None = None,
        device: DeviceLike | None = None, pin_memory: bool = False,
        requires_grad: bool = False) -> Tensor:
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    out = _pinned_if(new_tensor((n, n if m is None else m), _check_dtype(dtype, "eye") or
                                get_default_dtype(), canonical(device)), pin_memory)
    launch("eye", _eye_kernel, out)
    return finish(out, requires_grad)


def _eye_kernel(out: np.ndarray) -> None:
    out[...] = np.eye(*out.shape)


def public_entry(impl: F) -> F:
    """`torch.<name>` for the op `impl` defines: its public entry, which goes through
    __torch_function__ (modes, the default device's among them, see the call)."""
    return cast(F, exports("torch")[impl.__name__])


# torch.empty as Python code calls it: nn.Module constructors and Parameter() create their
# tensors with it, as torch's call torch.empty, so they follow the default device
torch_empty = public_entry(empty)


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

def new_meta(size: tuple[Any, ...], dt: dtype | None, fn: str) -> TensorMeta:
    """A factory's fresh row-major output: `f(2, 3)` and `f((2, 3))` alike."""
    shape = _sizes(size, fn)
    return TensorMeta(shape, _check_dtype(dt, fn) or get_default_dtype(),
                      contiguous_strides(shape))


def like_meta(input: Tensor, dt: dtype | None, fmt: memory_format | None,
              fn: str) -> TensorMeta:
    """A `*_like` factory's output: laid out as `like` lays it out."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return TensorMeta(tuple(input.shape), _check_dtype(dt, fn) or input.dtype,
                      format_strides(input.shape, input.stride(), memory_format_arg(fmt, fn)))


def _sized_rule(fn: str) -> Callable[..., TensorMeta]:
    def rule(*size: Any, dtype: dtype | None = None, **kwargs: Any) -> TensorMeta:
        return new_meta(size, dtype, fn)
    return rule


def _like_rule(fn: str) -> Callable[..., TensorMeta]:
    def rule(input: Tensor, *args: Any, dtype: dtype | None = None,
             memory_format: memory_format | None = None, **kwargs: Any) -> TensorMeta:
        return like_meta(input, dtype, memory_format, fn)
    return rule


for _fn in ("zeros", "ones"):
    register_meta(f"torch.{_fn}")(_sized_rule(_fn))
for _fn in ("zeros_like", "ones_like", "full_like"):
    register_meta(f"torch.{_fn}")(_like_rule(_fn))


@register_meta("torch.full")
def _full_rule(size: Sequence[int], fill_value: Number, *, dtype: dtype | None = None,
               **kwargs: Any) -> TensorMeta:
    _size_sequence(size, "full")
    dt = _check_dtype(dtype, "full") or _scalar_default(fill_value)
    return new_meta((size,), dt, "full")


@register_meta("torch.arange")
def _arange_rule(start: Number, end: Number | None = None, step: Number = 1, *,
                 dtype: dtype | None = None, **kwargs: Any) -> TensorMeta:
    _, n, dt = _arange_plan(start, end, step, dtype)
    return TensorMeta((n,), dt, (1,))


@register_meta("torch.linspace")
def _linspace_rule(start: Number, end: Number, steps: int, *, dtype: dtype | None = None,
                   **kwargs: Any) -> TensorMeta:
    return new_meta((steps,), dtype, "linspace")


@register_meta("torch.eye")
def _eye_rule(n: int, m: int | None = None, *, dtype: dtype | None = None,
              **kwargs: Any) -> TensorMeta:
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    return new_meta((n, n if m is None else m), dtype, "eye")


@register_meta("torch.tensor")
def _tensor_rule(data: Any, *, dtype: dtype | None = None, **kwargs: Any) -> TensorMeta:
    """The shape and dtype of the data (nested sequences, numpy, a tensor), row-major."""
    _check_dtype(dtype, "tensor")
    if isinstance(data, Tensor):
        shape, dt = tuple(data.shape), dtype or data.dtype
    elif isinstance(data, (np.ndarray, np.generic)):
        shape, dt = np.shape(data), dtype or from_numpy_dtype(np.asarray(data).dtype)
    else:
        shape, dt = _nested_array(data).shape, dtype or _infer_dtype(data)
    return TensorMeta(tuple(shape), dt, contiguous_strides(shape))


@register_meta("torch.as_tensor")
def _as_tensor_rule(data: Any, dtype: dtype | None = None,
                    device: DeviceLike | None = None) -> TensorMeta:
    """A tensor: itself, or its `to`; a cpu numpy array: its memory, its strides."""
    _check_dtype(dtype, "as_tensor")
    dev = None if device is None else canonical(device)
    if isinstance(data, Tensor):
        return to_meta(data, dtype or data.dtype, dev or data.device)
    if isinstance(data, np.ndarray) and (dev is None or dev.type == "cpu"):
        dt = from_numpy_dtype(data.dtype)
        strides = tuple(st // data.itemsize for st in data.strides)
        if dtype is None or dtype is dt:
            return TensorMeta(data.shape, dt, strides)
        return TensorMeta(data.shape, dtype, dense_strides_like(data.shape, strides))
    return _tensor_rule(data, dtype=dtype)


hooks.tensor = tensor  # Tensor's legacy constructor (fake_torch/_tensor.py)
hooks.empty = empty  # and its deepcopy
