"""What every op module needs: operand checks, broadcasting, dtype promotion, output buffers,
and `launch`, the op modules' only way to the dispatcher."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch import _meta, _opdef
from fake_torch import _tensor as _tensor_module
from fake_torch._dtype import bool_, dtype, get_default_dtype, int64, result_type_of
from fake_torch._simulated import _dispatch, _machine
from fake_torch._simulated._native_core import NATIVE
from fake_torch._sym import SymBool, SymFloat, SymInt
from fake_torch._tensor import Scalar, Tensor
from fake_torch._torch_device import CPU, device

# a cuda output's Tensor object: Tensor._make, or with the native core the same object made
# without a Python frame (_native_tensor.c; _make itself whenever a watcher is set)
_make_output: Any = (Tensor._make if NATIVE is None
                     else NATIVE.TensorMaker(Tensor, vars(_tensor_module), Tensor._make))


def new_tensor(shape: Sequence[int], dt: dtype, dev: device) -> Tensor:
    """An uninitialised output buffer, from the current mode's allocator (no launch)."""
    return new_tensor_exact(tuple(map(int, shape)), dt, dev)


def new_tensor_exact(shape: tuple[int, ...], dt: dtype, dev: device) -> Tensor:
    """`new_tensor` for a shape that is already a tuple of Python ints (an array's `.shape`),
    as the hot paths have it: converting each size again costs a third of a tiny op's call.
    On meta: a buffer of zero pages that costs no memory (fake_torch/_meta.py)."""
    try:
        on_cuda = dev.type == "cuda"
        if not on_cuda:
            if dev.type == "meta":
                return Tensor._make(_meta.meta_array(shape, dt.np), dev, None, dt)
            if _dispatch.in_eager():  # eager cpu: Mode.allocate's cpu branch, without its
                # two calls
                a = np.empty(shape, dt.np)
                if not a.size:  # numpy 2 gives an empty array zero strides; torch, row-major
                    a = np.ndarray(shape, dt.np, buffer=a)
                return Tensor._make(a, dev, None, dt)
        # (one GPU: the current device is cuda:0, set_device allows no other; the thread-local
        # read costs more than the rest of the test, and a cuda op pays it twice)
        if (on_cuda and len(_machine.MACHINE.devices) > 1
                and dev.index != _machine.MACHINE.thread.index):
            with _machine.device_guard(dev.index or 0):  # (c10's DeviceGuard: its allocator)
                a, storage = _dispatch.allocate(shape, dt.np, on_cuda)
        else:
            a, storage = _dispatch.allocate(shape, dt.np, on_cuda)
    except AttributeError:  # complex32 has no numpy dtype (`np` unset): no check to pay
        if dt.is_complex:
            raise complex32_refused() from None
        raise
    return _make_output(a, dev, storage, dt)  # type: ignore[no-any-return]


def complex32_refused() -> NotImplementedError:
    """The refusal of a complex32 (chalf) tensor, wherever one would be made."""
    return NotImplementedError("torch.complex32 (chalf) tensors are not emulated by fake_torch "
                               "(numpy has no complex of halves; torch's own support is "
                               "experimental)")


def launch(op: str, kernel: _dispatch.Kernel, outs: Tensor | Sequence[Tensor],
           inputs: Sequence[Any] = (), params: dict[str, Any] | None = None, *,
           kind: str = "kernel", dev: device | None = None) -> None:
    """Send one kernel through the door. Tensor inputs pass as their numpy views, so a
    recorded launch replays against the very same buffers."""
    if isinstance(outs, Tensor):  # the common case, one output: no list to build
        out_arrays: tuple[Any, ...] = (outs._a,)
        if dev is None:
            dev = outs._device
    else:
        out_arrays = tuple([t._a for t in outs])
        if dev is None:
            dev = outs[0]._device if outs else CPU
    on_cuda = dev.type == "cuda"
    if not on_cuda:
        if dev.type == "meta":
            meta_launch(op)
            return
        if kind == "kernel" and _dispatch.runs_cpu_kernels_now():
            # an eager cpu kernel, nobody checking its buffers: what the door's general path
            # does for it (counts nothing, runs it now), without its calls
            if out_arrays and all(a.size == 0 for a in out_arrays):
                return  # (CUDA torch's empty-output rule, as the door keeps it on cpu too)
            arrays = tuple([x._a if isinstance(x, Tensor) else x for x in inputs])
            if params:
                kernel(*out_arrays, *arrays, **params)
            else:
                kernel(*out_arrays, *arrays)
            return
    # list comprehensions, not generators: this runs once per launch
    if on_cuda and kind == "kernel":
        # a cpu tensor operand of a cuda kernel (a 0-dim one: `x * s`) is read on the host at
        # launch and passed by value (TensorIterator's cpu scalar): the kernel, which runs when
        # the device gets to it, sees the value of now, not of then
        arrays = tuple([(x._a if x._device is not CPU else x._a.copy())
                        if isinstance(x, Tensor) else x for x in inputs])
    else:
        arrays = tuple([x._a if isinstance(x, Tensor) else x for x in inputs])
    if (on_cuda and len(_machine.MACHINE.devices) > 1  # (see new_tensor_exact)
            and dev.index != _machine.MACHINE.thread.index):
        with _machine.device_guard(dev.index or 0):  # (c10's DeviceGuard: its stream)
            _dispatch.launch(op, kernel, out_arrays, arrays, params, on_cuda=on_cuda, kind=kind)
        return
    _dispatch.launch(op, kernel, out_arrays, arrays, params, on_cuda=on_cuda, kind=kind)


def meta_launch(op: str) -> None:
    """A launch on meta: nothing runs and nothing is counted (the op's outputs are already
    laid out). An op whose output shape or values the host must read refuses, as torch."""
    try:
        kind = _opdef.aten_kind(op)
    except KeyError:  # a launch name of no op (a test's kernel): nothing to refuse
        return
    if kind in (_opdef.DATA_DEPENDENT, _opdef.HOST):
        raise _meta.no_kernel(op)


def common_device(*tensors: Tensor) -> device:
    """The device an op over `tensors` runs on. As in torch, a 0-dim cpu tensor may join a
    cuda op (it is read as a scalar); any other mix raises torch's error."""
    if not tensors:
        return CPU
    first = tensors[0]._device
    for t in tensors:
        if t._device is not first:
            break
    else:
        return first  # the common case, kept fast: every tensor on the same device
    devices = {t.device for t in tensors if not (t.device.type == "cpu" and t.dim() == 0)}
    if len(devices) > 1 and any(d.type == "meta" for d in devices):
        expected = next(t.device for t in tensors if t.device in devices)
        seen = next(t.device for t in tensors if t.device in devices and t.device != expected)
        raise RuntimeError(f"Tensor on device {seen} is not on the expected device {expected}!")
    if len(devices) > 1:
        raise mixed_devices_error([t._device for t in tensors if not (
            t._device.type == "cpu" and t.dim() == 0)])
    return devices.pop() if devices else tensors[0].device


def mixed_devices_error(devices: Sequence[device]) -> RuntimeError:
    """TensorIterator's error (compute_types): the first non-cpu device of the operands
    (outputs first) is the common device; the first operand on another device is named."""
    common = next((d for d in devices if d.type != "cpu"), CPU)
    other = next((d for d in devices if d != common), CPU)
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                        f"devices, {common} and {other}!")


def scalar_dtype(value: Scalar) -> dtype:
    """The dtype a Python scalar carries into type promotion."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return get_default_dtype()
    if isinstance(value, complex):  # complex64 under float32, torch's default complex dtype
        return get_default_dtype().to_complex()
    if isinstance(value, (SymInt, SymFloat, SymBool)):  # a symbolic scalar: its Python type's
        return {SymInt: int64, SymFloat: get_default_dtype(), SymBool: bool_}[type(value)]
    raise TypeError(f"expected a Tensor, bool, int, float or complex, got {type(value).__name__}")


def result_type(*operands: Tensor | Scalar) -> dtype:
    """torch.result_type over tensors and Python scalars."""
    if operands and isinstance(operands[0], Tensor):  # fast path: tensors of one dtype
        first = operands[0]._dtype
        for x in operands:
            if not isinstance(x, Tensor) or x._dtype is not first:
                break
        else:
            return first
    tiers: list[tuple[dtype, int]] = []
    for x in operands:
        if isinstance(x, Tensor):
            tiers.append((x.dtype, 2 if x.dim() > 0 else 1))
        else:
            tiers.append((scalar_dtype(x), 0))
    return result_type_of(tiers)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Broadcast shapes right-aligned; torch's RuntimeError text on a mismatch."""
    if (len(shapes) == 2 and type(shapes[0]) is tuple and type(shapes[1]) is tuple
            and shapes[0] == shapes[1]):  # fast path: equal shapes (a kernel's numpy shapes;
        # a rule's torch.Size may hold SymInts, whose == would record a guard)
        return tuple(shapes[0])
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i in range(len(s) - 1, -1, -1):  # torch's infer_size reports the last bad dim
            size = s[i]
            if isinstance(size, SymInt):
                return _broadcast_symbolic(shapes, ndim)
            j = ndim - len(s) + i
            if size != 1 and out[j] != 1 and size != out[j]:
                raise RuntimeError(f"The size of tensor a ({out[j]}) must match the size of "
                                   f"tensor b ({size}) at non-singleton dimension {j}")
            if size != 1:
                out[j] = size
    return tuple(out)


def _broadcast_symbolic(shapes: Sequence[Sequence[Any]], ndim: int) -> tuple[Any, ...]:
    """Broadcasting with SymInts, as torch's _refs._broadcast_shapes: equal or 1 only where
    that is known (guard_or_false, so an unbacked size needs no value); otherwise the sizes
    are taken equal, checked by torch._check (a runtime assert for unbacked ones)."""
    from fake_torch._checks import _check

    def known(cond: Any) -> bool:
        return cond.node.guard_or_false("", 0) if isinstance(cond, SymBool) else bool(cond)

    out: list[Any] = [1] * ndim
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            size = shape[idx]
            if known(size == out[idx]):
                continue
            if known(out[idx] == 1):
                if size < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                out[idx] = size
            if known(size == 1):
                continue
            message = (f"Attempting to broadcast a dimension of length {size} at {idx}! "
                       f"Mismatching argument at index {arg_idx} had {tuple(shape)}; but "
                       f"expected shape should be broadcastable to {out}")
            _check(out[idx] == size, functools.partial(str, message))
    return tuple(out)

