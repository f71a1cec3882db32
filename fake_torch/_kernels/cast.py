"""Casts and moves: Tensor.to and its shorthands (float(), cuda(), type(), ...), copy_, fill_,
zero_, scalar_tensor; and the dtype queries torch keeps at top level (result_type, is_tensor).

A `to` that changes nothing returns self and launches nothing. A dtype change is one
"_to_copy" kernel; a cpu<->cuda move is one "_to_copy" launch of kind memcpy_h2d / memcpy_d2h.
Outputs keep the input's dim order (torch.preserve_format).

Host<->device copies follow ATen's copy_kernel_cuda. The DMA reads (or writes) the host tensor
itself only when no temporary is needed: same shape and contiguous, and (blocking) the same
dtype; otherwise it goes through a fresh host temporary, which is never pinned. A blocking copy
then waits for the stream (a host sync, illegal while capturing); `non_blocking=True` does not.
A capture accepts the copy only when its host side is pinned (fake_torch/_simulated/_pinned.py),
and the graph then reads (or writes) those host bytes at every replay. `Tensor.pin_memory()`,
`is_pinned()` and `.to("cpu", non_blocking=True)` (whose output torch pins) live here too.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from fake_torch import _meta
from fake_torch._dtype import (
    SCALAR_NAME,
    bfloat16,
    bool_,
    dtype,
    dtype_arg,
    dtype_param,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import can_cast as _can_cast
from fake_torch._kernels._elementwise import (
    cast_array,
    device_error,
    is_number,
    operand,
    quiet_call,
    tensor_arg,
    warn_complex_cast,
    written_meta,
    written_rule,
)
from fake_torch._kernels._strides import (
    assert_no_internal_overlap,
    assert_no_partial_overlap,
    checked_convert,
    empty_like_format,
    format_strides,
    is_non_overlapping_and_dense,
)
from fake_torch._memory_format import (
    memory_format,
    memory_format_arg,
    preserve_format,
    suggest_memory_format,
)
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, POINTWISE, method, op
from fake_torch._simulated import _dispatch, _pinned
from fake_torch._tensor import Number, Scalar, Tensor
from fake_torch._torch_device import CPU, DeviceLike, canonical, device

_LEGACY = {d: f"{name}Tensor" for d, name in SCALAR_NAME.items()}  # legacy types: "FloatTensor"
_C_INT_NAMES = {uint8: "uint8_t", int8: "int8_t", int16: "int16_t", int32: "int",
                int64: "int64_t"}


# --- the copy kernels --------------------------------------------------------------------------

def copy_kernel(out: np.ndarray, src: np.ndarray) -> None:
    """out <- src, broadcast and converted as torch converts (no numpy warnings)."""
    quiet_call(lambda: np.copyto(out, cast_array(np.asarray(src), out.dtype)))


def fill_kernel(out: np.ndarray, value: Any) -> None:
    """out <- value (a Python number, or a 0-dim array read at run time)."""
    quiet_call(lambda: np.copyto(out, cast_array(np.asarray(value), out.dtype)))


def _copy_kind(src: Tensor, dst: Tensor) -> str:
    """What the copy is on a GPU: a DMA between host and device, a device memcpy when nothing
    needs converting, else a kernel. Onto meta: a kernel that `launch` drops (nothing to
    copy); out of meta: torch's error (there is no data)."""
    if src.device != dst.device:
        if dst._device.type == "meta":
            return "kernel"
        if src._device.type == "meta":
            raise NotImplementedError(_meta.NO_DATA)
        return "memcpy_h2d" if dst.is_cuda else "memcpy_d2h"
    if src.dtype is dst.dtype and src.shape == dst.shape and src.stride() == dst.stride():
        return "memcpy_d2d"
    return "kernel"


def _to_copy(x: Tensor, dt: dtype, dev: device, non_blocking: bool,
             fmt: memory_format = preserve_format) -> Tensor:
    if x._dtype.is_complex and not dt.is_complex:
        warn_complex_cast(x._dtype, dt)
    out = empty_like_format(x, fmt, dt, dev)  # (ATen's _to_copy: empty_like's layout)
    kind = _copy_kind(x, out)
    if kind == "memcpy_d2h" and non_blocking and _dispatch.current_mode().counts_launches:
        # torch pins the output of a non-blocking device-to-host copy
        out = Tensor._make(_pinned.pinned_empty_like(out._a), CPU, None, dt)
    if kind in ("memcpy_h2d", "memcpy_d2h"):
        _host_copy("_to_copy", x, out, kind, non_blocking)
        return out
    _common.launch("_to_copy", copy_kernel, out, (x,), kind=kind, dev=dev)
    return out


def _host_copy(op: str, src: Tensor, dst: Tensor, kind: str, non_blocking: bool) -> None:
    """One host<->device copy launch, through a host temporary when torch uses one; then,
    unless non_blocking, the host waits for the copy (a stream synchronize)."""
    h2d = kind == "memcpy_h2d"
    host, other = (src, dst) if h2d else (dst, src)
    counts = _dispatch.current_mode().counts_launches
    if _dma_on_host_tensor(host, src, dst, non_blocking) or not counts:
        _common.launch(op, copy_kernel, dst, (src,), kind=kind, dev=other.device)
        if non_blocking and counts:  # the host block waits for this stream (pinned memory)
            _pinned.record_event(host._a)
    elif h2d:  # the DMA reads a contiguous host copy of src, made on the host first
        staged = np.array(np.broadcast_to(src._a, dst.shape), copy=True)  # a new buffer
        _common.launch(op, copy_kernel, dst, (staged,), kind=kind, dev=other.device)
    else:  # the DMA writes a host temporary, copied into dst on the host afterwards
        temp = Tensor._make(np.empty(dst.shape, src._a.dtype), CPU, None, src.dtype)
        _common.launch(op, copy_kernel, temp, (src,), kind=kind, dev=other.device)
        _common.launch(op, copy_kernel, dst, (temp,), dev=CPU)
    if not non_blocking:
        _dispatch.host_sync("to" if op == "_to_copy" else "copy_")


# --- Tensor.to and its shorthands --------------------------------------------------------------

def _got(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    def name(v: Any) -> str:
        if isinstance(v, dtype):
            return "torch.dtype"
        if isinstance(v, device):
            return "torch.device"
        return "Tensor" if isinstance(v, Tensor) else type(v).__name__
    keywords = [f"{k}={name(v)}" for k, v in reversed(kwargs.items())]  # torch lists them so
    if not args:
        return "".join(f"{k}, " for k in keywords)
    return ", ".join([name(a) for a in args] + keywords)


def _bad_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    return TypeError(
        f"to() received an invalid combination of arguments - got ({_got(args, kwargs)}), but "
        "expected one of:\n"
        " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
        "bool copy = False, *, torch.memory_format memory_format = None)\n"
        " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
        "torch.memory_format memory_format = None)\n"
        " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
        "torch.memory_format memory_format = None)")


@method(POINTWISE, name="to", aten=("_to_copy",))
def tensor_to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to(dtype) / to(device, dtype) / to(other), with non_blocking, copy, memory_format."""
    dt, dev, non_blocking, copy, fmt = _to_args(args, kwargs)
    return to(self, dt, dev, non_blocking=non_blocking, copy=copy, memory_format=fmt)


ToArgs = tuple[dtype | None, DeviceLike | None, bool, bool, memory_format]


def _to_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToArgs:
    """Tensor.to's arguments: (dtype, device, non_blocking, copy, memory_format)."""
    if set(kwargs) - {"device", "dtype", "non_blocking", "copy", "memory_format"}:
        raise _bad_to(args, kwargs)
    rest = [dtype_arg(a) for a in args[:2]] + list(args[2:])  # `to(int)`, `to("cuda", float)`
    dev: Any = None
    dt: Any = None
    if rest and isinstance(rest[0], dtype):
        dt = rest.pop(0)
        if "dtype" in kwargs or "device" in kwargs:
            raise _bad_to(args, kwargs)
    elif rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        dt, dev = other.dtype, other.device
        if "dtype" in kwargs or "device" in kwargs:
            raise _bad_to(args, kwargs)
    else:
        if rest:
            dev = rest.pop(0)
        if rest and (rest[0] is None or isinstance(rest[0], dtype)):
            dt = rest.pop(0)
        if ("device" in kwargs and args) or ("dtype" in kwargs and dt is not None):
            raise _bad_to(args, kwargs)
        dev = kwargs.get("device", dev)
        dt = dtype_arg(kwargs.get("dtype", dt))
    if len(rest) > 2 or not all(isinstance(v, bool) for v in rest):
        raise _bad_to(args, kwargs)
    flags = dict(zip(("non_blocking", "copy"), rest, strict=False))
    if set(flags) & set(kwargs):
        raise _bad_to(args, kwargs)
    flags.update({k: kwargs[k] for k in ("non_blocking", "copy") if k in kwargs})
    if (dt is not None and not isinstance(dt, dtype)) or not (
            dev is None or isinstance(dev, (str, device, int))) or isinstance(dev, bool):
        raise _bad_to(args, kwargs)
    fmt = kwargs.get("memory_format")
    if fmt is not None and not isinstance(fmt, memory_format):
        raise _bad_to(args, kwargs)
    return (dt, dev, bool(flags.get("non_blocking", False)), bool(flags.get("copy", False)),
            fmt or preserve_format)


def to(x: Tensor, dt: dtype | None = None, dev: DeviceLike | None = None, *,
       non_blocking: bool = False, copy: bool = False,
       memory_format: memory_format = preserve_format) -> Tensor:
    """The one place a tensor changes dtype or device: self when nothing changes. Like
    ATen's _to_will_alias, a memory format other than preserve_format changes nothing when
    it is the one x's strides suggest (so a transposed x.to(memory_format=
    torch.contiguous_format) is x itself, as in torch)."""
    target_dt = x.dtype if dt is None else dt
    target_dev = x.device if dev is None else canonical(dev)
    if _to_aliases(x, target_dt, target_dev, copy, memory_format):
        return x
    return _to_copy(x, target_dt, target_dev, non_blocking, memory_format)


def _to_aliases(x: Tensor, dt: dtype, dev: device, copy: bool, fmt: memory_format) -> bool:
    """Does `to` return x itself (nothing to change: ATen's _to_will_alias)?"""
    return (not copy and dt is x.dtype and dev == x.device
            and (fmt is preserve_format or suggest_memory_format(x.shape, x.stride()) is fmt))


def _as(self: Tensor, dt: dtype, fmt: memory_format | None, fn: str) -> Tensor:
    return to(self, dt, memory_format=memory_format_arg(fmt, fn))


@method(POINTWISE, name="float", aten=())
def float_(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, float32, memory_format, "float")


@method(POINTWISE, name="double", aten=())
def double(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, float64, memory_format, "double")


@method(POINTWISE, name="half", aten=())
def half(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, float16, memory_format, "half")


@method(POINTWISE, name="bfloat16", aten=())
def bfloat16_(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, bfloat16, memory_format, "bfloat16")


@method(POINTWISE, name="long", aten=())
def long(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, int64, memory_format, "long")


@method(POINTWISE, name="int", aten=())
def int_(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, int32, memory_format, "int")


@method(POINTWISE, name="short", aten=())
def short(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, int16, memory_format, "short")


@method(POINTWISE, name="char", aten=())
def char(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, int8, memory_format, "char")


@method(POINTWISE, name="byte", aten=())
def byte(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, uint8, memory_format, "byte")


@method(POINTWISE, name="bool", aten=())
def bool_cast(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return _as(self, bool_, memory_format, "bool")


@method(POINTWISE, name="cuda", aten=())
def cuda(self: Tensor, device: DeviceLike | None = None, non_blocking: bool = False,
         memory_format: memory_format | None = None) -> Tensor:
    return to(self, None, _cuda_device(device), non_blocking=non_blocking,
              memory_format=memory_format_arg(memory_format, "cuda"))


def _cuda_device(device: DeviceLike | None) -> DeviceLike:
    """Tensor.cuda's device argument, checked: None is the current cuda device."""
    dev = "cuda" if device is None else device
    if isinstance(dev, int) and not isinstance(dev, bool):
        dev = f"cuda:{dev}"
    if canonical(dev).type != "cuda":
        raise RuntimeError(f"Invalid device, must be cuda device, got {dev}")
    return dev


@method(POINTWISE, name="cpu", aten=())
def cpu(self: Tensor, memory_format: memory_format | None = None) -> Tensor:
    return to(self, None, "cpu", memory_format=memory_format_arg(memory_format, "cpu"))


@method(COMPOSITE, aten=())
def to_sparse(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to_sparse(sparse_dim) / to_sparse(*, layout=None, blocksize=None,
    dense_dim=None): refused (NotImplementedError)."""
    raise NotImplementedError("torch.Tensor.to_sparse: sparse tensors (torch.sparse_coo, "
                              "torch.sparse_csr, ...) are not emulated by fake_torch")


@method(POINTWISE, name="type_as", aten=())
def type_as(self: Tensor, other: Tensor) -> Tensor:
    return to(self, tensor_arg(other, "type_as", "other", 1).dtype)


@method(POINTWISE, name="type", aten=())
def tensor_type(self: Tensor, dtype: dtype | str | type | None = None, non_blocking: bool = False,
                **kwargs: Any) -> Any:
    """Tensor.type(): the legacy type name ('torch.cuda.FloatTensor') without an argument,
    else a cast to a dtype or a legacy type name."""
    if dtype is None:
        return f"torch.{'cuda.' if self.is_cuda else ''}{_LEGACY[self.dtype]}"
    target, dev = _type_target(self, dtype)
    return to(self, target, dev, non_blocking=non_blocking)


def _type_target(self: Tensor, dtype: dtype | str | type) -> tuple[dtype, device]:
    """Tensor.type(t)'s dtype and device: from a dtype, a legacy type or its name."""
    dev = self.device
    target: Any = dtype
    if isinstance(dtype, type) and dtype is not Tensor:  # a legacy type: torch.LongTensor
        if not isinstance(getattr(dtype, "dtype", None), type(float32)):  # (Python's int too)
            name = dtype.__qualname__
            raise ValueError("invalid type: '" + (name if dtype.__module__ == "builtins" else
                                                  f"{dtype.__module__}.{name}") + "'")
        dtype = f"torch.{'cuda.' if getattr(dtype, 'is_cuda', False) else ''}{dtype.__name__}"
    if dtype is Tensor or dtype == "torch.Tensor":  # torch's default tensor type
        target, dev = get_default_dtype(), CPU
    elif isinstance(dtype, str):
        by_name = {f"torch.{n}": d for d, n in _LEGACY.items()}
        by_name.update({f"torch.cuda.{n}": d for d, n in _LEGACY.items()})
        if dtype not in by_name:
            raise ValueError(f"invalid type: '{dtype}'")
        target = by_name[dtype]
        dev = canonical("cuda" if dtype.startswith("torch.cuda.") else "cpu")
    elif not isinstance(dtype, type(float32)):
        raise TypeError("dtype must be a type, str, or dtype object")
    return target, dev


# --- copy_, fill_, zero_, scalar_tensor --------------------------------------------------------

@method(POINTWISE)
def copy_(self: Tensor, src: Tensor | Number, non_blocking: bool = False) -> Tensor:
    """self <- src: src broadcasts to self's shape, converts to self's dtype, may come from
    the other device (one H2D / D2H launch)."""
    s = operand(src, "copy_", "other", 1)  # (the name torch's argument parser prints)
    if not isinstance(non_blocking, bool):
        raise TypeError("copy_(): argument 'non_blocking' must be bool, not "
                        f"{type(non_blocking).__name__}")
    if not isinstance(s, Tensor):
        return fill_(self, s)
    shape = _common.broadcast_shapes(self._a.shape, s._a.shape)
    if shape != tuple(self._a.shape):
        raise RuntimeError(f"output with shape {list(self._a.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    assert_no_internal_overlap(self)
    assert_no_partial_overlap(self, s)
    if s._dtype.is_complex and not self._dtype.is_complex:
        warn_complex_cast(s._dtype, self._dtype)
    kind = _copy_kind(s, self)
    if kind in ("memcpy_h2d", "memcpy_d2h"):
        _host_copy("copy_", s, self, kind, non_blocking)
        return self
    _common.launch("copy_", copy_kernel, self, (s,), kind=kind, dev=self.device)
    return self


def _dma_on_host_tensor(host: Tensor, src: Tensor, dst: Tensor, non_blocking: bool) -> bool:
    """Whether the DMA reads (or writes) the host tensor itself (ATen's copy_kernel_cuda):
    with one dtype and one dense layout no temporary is needed; otherwise both sides become
    row-major contiguous, converted on the host when blocking, on the device when not."""
    if src.shape != dst.shape:
        return False  # a broadcast source is expanded into a temporary first
    if (src.dtype is dst.dtype and src.stride() == dst.stride()
            and is_non_overlapping_and_dense(host.shape, host.stride())):
        return True
    return host.is_contiguous() and (non_blocking or src.dtype is dst.dtype)


# --- pinned host memory ------------------------------------------------------------------------

@method(COMPOSITE, aten=())
def pin_memory(self: Tensor, device: DeviceLike | None = None) -> Tensor:
    """A copy of this cpu tensor in pinned host memory (self when already pinned); the copy is
    a host memcpy, no device launch."""
    if device is not None:
        warnings.warn("The argument 'device' of Tensor.pin_memory() is deprecated. Please do "
                      "not pass this argument.", DeprecationWarning, stacklevel=2)
    if is_pinned(self, device):
        return self
    if self._device.type != "cpu":
        raise RuntimeError(f"cannot pin '{_type_string(self)}' only dense CPU tensors can be "
                           "pinned")
    out = Tensor._make(_pinned.pinned_copy(self._a), CPU, None, self._dtype)
    out.requires_grad = self.requires_grad
    return out


@method(COMPOSITE, aten=())
def is_pinned(self: Tensor, device: DeviceLike | None = None) -> bool:
    """Whether this tensor's memory is pinned host memory (a cuda tensor's never is)."""
    if device is not None:
        warnings.warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do "
                      "not pass this argument.", DeprecationWarning, stacklevel=2)
    return self._device.type == "cpu" and _pinned.is_pinned_array(self._a)


def _type_string(t: Tensor) -> str:
    """ATen's Tensor::toString(): the dispatch key and scalar type, "CUDAFloatType"."""
    kind = {"cuda": "CUDA", "meta": "Meta"}.get(t._device.type, "CPU")
    return f"{kind}{SCALAR_NAME[t.dtype]}Type"


def check_fits(value: Scalar, dt: dtype) -> None:
    """torch refuses to store a scalar an integral dtype cannot hold (fill_, where, full), and
    a complex one with an imaginary part in a real dtype."""
    if isinstance(value, complex):
        checked_convert(value, dt)
        return
    if dt is bool_ or dt.is_floating_point or dt.is_complex:
        return
    info = np.iinfo(dt.np)
    v = float(value) if isinstance(value, float) else int(value)
    fits = np.isfinite(v) and (info.min <= v <= info.max or (info.min == 0 and -info.max <= v < 0))
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_INT_NAMES[dt]} without "
                           "overflow")


@op(POINTWISE, method=True)
def fill_(self: Tensor, value: Tensor | Number | complex) -> Tensor:
    """Every element <- value: one "fill_" launch (a memset when value is 0)."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.dim()} dimensions.")
        if value.device != self.device and not value.is_cpu:
            raise device_error()
        _common.launch("fill_", fill_kernel, self, (value,))
        return self
    if not is_number(value):
        raise TypeError(f"fill_() received an invalid combination of arguments - got "
                        f"({type(value).__name__}), but expected one of:\n * (Tensor value)\n"
                        " * (Number value)")
    v = value.item() if isinstance(value, np.generic) else value
    v = checked_convert(v, self.dtype)
    _common.launch("fill_", fill_kernel, self, (v,), kind="memset" if v == 0 else "kernel")
    return self


@op(POINTWISE, method=True)
def zero_(self: Tensor) -> Tensor:
    """Every element <- 0: one "zero_" memset."""
    _common.launch("zero_", fill_kernel, self, (0,), kind="memset")
    return self


@op(POINTWISE)
def scalar_tensor(s: Number | complex, *, dtype: dtype | None = None,
                  device: DeviceLike | None = None) -> Tensor:
    """A 0-dim tensor holding `s` (default dtype unless given): one fill launch."""
    if not is_number(s):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    dt = get_default_dtype() if dtype is None else dtype
    v = s.item() if isinstance(s, np.generic) else s
    check_fits(v, dt)
    out = _common.new_tensor((), dt, canonical(device))
    _common.launch("scalar_tensor", fill_kernel, out, (v,))
    return out


# --- dtype queries -----------------------------------------------------------------------------

def result_type(tensor1: Tensor | Number, tensor2: Tensor | Number) -> dtype:
    """The dtype torch's type promotion gives an op over these two operands."""
    for i, x in enumerate((tensor1, tensor2)):
        if not (isinstance(x, Tensor) or is_number(x)):
            raise TypeError("result_type() received an invalid combination of arguments - got "
                            f"({', '.join(type(v).__name__ for v in (tensor1, tensor2))}), but "
                            f"expected one of:\n * (Tensor tensor, Tensor other)\n argument {i}")
    a = tensor1 if isinstance(tensor1, Tensor) else operand(tensor1, "result_type", "", 1)
    b = tensor2 if isinstance(tensor2, Tensor) else operand(tensor2, "result_type", "", 2)
    return _common.result_type(a, b)


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether torch's in-place / out= ops may store a `from_` result into a `to` tensor."""
    return _can_cast(dtype_param(from_, "can_cast", "from_", 1),
                     dtype_param(to, "can_cast", "to", 2))


def is_tensor(obj: object) -> bool:
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return tensor_arg(input, "is_floating_point").dtype.is_floating_point


def numel(input: Tensor) -> int:
    return tensor_arg(input, "numel").numel()


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

def to_meta(x: Tensor, dt: dtype | None = None, dev: DeviceLike | None = None, *,
            non_blocking: bool = False, copy: bool = False,
            memory_format: memory_format = preserve_format) -> TensorMeta:
    """What `to` returns: x itself when nothing changes, else a copy laid out as
    empty_like(x, memory_format)."""
    target_dt = x.dtype if dt is None else dt
    target_dev = x.device if dev is None else canonical(dev)
    if _to_aliases(x, target_dt, target_dev, copy, memory_format):
        return written_meta(x, [x])
    return TensorMeta(tuple(x.shape), target_dt,
                      format_strides(x.shape, x.stride(), memory_format))


@register_meta("Tensor.to")
def _tensor_to_rule(self: Tensor, *args: Any, **kwargs: Any) -> TensorMeta:
    dt, dev, non_blocking, copy, fmt = _to_args(args, kwargs)
    return to_meta(self, dt, dev, non_blocking=non_blocking, copy=copy, memory_format=fmt)


def as_rule(dt: dtype, fn: str) -> Callable[..., TensorMeta]:
    """The rule of Tensor.`fn`(memory_format=None), a cast to `dt`."""
    def rule(self: Tensor, memory_format: memory_format | None = None) -> TensorMeta:
        return to_meta(self, dt, memory_format=memory_format_arg(memory_format, fn))
    return rule


for _name, _dt in (("float", float32), ("double", float64), ("half", float16),
                   ("bfloat16", bfloat16), ("long", int64), ("int", int32), ("short", int16),
                   ("char", int8), ("byte", uint8), ("bool", bool_)):
    register_meta(f"Tensor.{_name}")(as_rule(_dt, _name))


@register_meta("Tensor.cuda")
def _cuda_rule(self: Tensor, device: DeviceLike | None = None, non_blocking: bool = False,
               memory_format: memory_format | None = None) -> TensorMeta:
    return to_meta(self, None, _cuda_device(device), non_blocking=non_blocking,
                   memory_format=memory_format_arg(memory_format, "cuda"))


@register_meta("Tensor.cpu")
def _cpu_rule(self: Tensor, memory_format: memory_format | None = None) -> TensorMeta:
    return to_meta(self, None, "cpu", memory_format=memory_format_arg(memory_format, "cpu"))


@register_meta("Tensor.type_as")
def _type_as_rule(self: Tensor, other: Tensor) -> TensorMeta:
    return to_meta(self, tensor_arg(other, "type_as", "other", 1).dtype)


@register_meta("Tensor.type")
def _type_rule(self: Tensor, dtype: dtype | str | type | None = None,
               non_blocking: bool = False, **kwargs: Any) -> TensorMeta | str:
    if dtype is None:
        return f"torch.{'cuda.' if self.is_cuda else ''}{_LEGACY[self.dtype]}"
    target, dev = _type_target(self, dtype)
    return to_meta(self, target, dev, non_blocking=non_blocking)


register_meta("Tensor.copy_", "torch.fill_", "torch.zero_")(written_rule)


@register_meta("torch.scalar_tensor")
def _scalar_tensor_rule(s: Number | complex, *, dtype: dtype | None = None,
                        device: DeviceLike | None = None) -> TensorMeta:
    return TensorMeta((), get_default_dtype() if dtype is None else dtype, ())
