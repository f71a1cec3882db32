"""torch.asarray and torch.frombuffer: tensors over memory that already exists (another tensor,
a numpy array, a storage, a Python buffer), sharing it whenever the dtype and device allow.

safetensors' "pt" loader reads a checkpoint this way: `torch.asarray(storage[a:b],
dtype=torch.uint8)` aliases a slice of a file-mapped storage, then views it as the weight's
dtype. Aliasing launches nothing; a copy to another dtype or device is what `Tensor.to` is.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from fake_torch._dtype import SCALAR_NAME, dtype, get_default_dtype, int64
from fake_torch._factories import as_tensor, tensor
from fake_torch._opdef import COMPOSITE, op
from fake_torch._storage import UntypedStorage
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike, canonical

_NOT_WRITABLE = ("The given buffer is not writable, and PyTorch does not support non-writable "
                 "tensors. This means you can write to the underlying (supposedly non-writable) "
                 "buffer using the tensor. You may want to copy the buffer to protect its data "
                 "or make it writable before converting it to a tensor. This type of warning "
                 "will be suppressed for the rest of this program.")
_warned: list[bool] = []


@op(COMPOSITE)
def asarray(obj: Any, *, dtype: dtype | None = None, device: DeviceLike | None = None,
            copy: bool | None = None, requires_grad: bool = False) -> Tensor:
    """`obj` as a tensor: a tensor, numpy array or buffer is shared unless `dtype`, `device`
    or copy=True ask for a copy (copy=False refuses one); a storage or buffer is read as bytes
    of `dtype`; scalars and sequences are copied, as torch.tensor."""
    dev = None if device is None else canonical(device)
    if isinstance(obj, Tensor):
        out = _from_tensor(obj, dtype, dev, copy)
    elif isinstance(obj, np.ndarray) and obj.dtype != object:
        out = _from_tensor(as_tensor(obj), dtype, dev, copy)
    elif isinstance(obj, UntypedStorage):  # without a dtype torch reads int64 words
        out = _from_storage(obj, dtype or (int64 if obj.nbytes() else get_default_dtype()),
                            dev, copy)
    elif isinstance(obj, (bytes, bytearray, memoryview)):
        out = _from_tensor(_from_buffer(obj, dtype or get_default_dtype(), -1, 0), None, dev,
                           copy)
    else:  # scalars and sequences
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        out = tensor(obj, dtype=dtype, device=dev)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _from_tensor(t: Tensor, dt: dtype | None, dev: Any, copy: bool | None) -> Tensor:
    target_dt = t.dtype if dt is None else dt
    target_dev = t.device if dev is None else dev
    if copy is False:
        if target_dt is not t.dtype:
            raise ValueError(f"can't alias tensor with dtype '{SCALAR_NAME[t.dtype]}' into "
                             f"dtype '{SCALAR_NAME[target_dt]}'.")
        if target_dev != t.device:
            raise ValueError(f"can't alias tensor from device '{t.device}' to '{target_dev}'.")
    if target_dt is t.dtype and target_dev == t.device and not copy:
        return t
    return t.to(device=target_dev, dtype=target_dt, copy=bool(copy))


def _from_storage(s: UntypedStorage, dt: dtype, dev: Any, copy: bool | None) -> Tensor:
    """The storage's bytes read as `dt` (the whole elements that fit, as torch)."""
    aliased = tensor([], dtype=dt, device=s.device).set_(s)
    return _from_tensor(aliased, None, dev, copy)


@op(COMPOSITE)
def frombuffer(buffer: Any, *, dtype: dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D cpu tensor over a Python buffer's bytes, from `offset`, `count` elements of
    `dtype` (-1: all that fit); it shares the buffer's memory."""
    out = _from_buffer(buffer, dtype, count, offset)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _from_buffer(buffer: Any, dt: dtype, count: int, offset: int) -> Tensor:
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    raw = np.frombuffer(view, np.uint8)
    length = raw.shape[0]
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    size = dt.itemsize
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and not _warned:
        _warned.append(True)  # torch warns once per process
        warnings.warn(_NOT_WRITABLE, UserWarning, stacklevel=4)
    data = raw[offset:offset + count * size]
    if view.readonly:
        data = data.copy()  # numpy cannot alias read-only memory writably: the values match
    return as_tensor(data.view(dt.np))
