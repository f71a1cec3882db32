"""torch._utils: the functions a pickled tensor is rebuilt with, and the reduction that names them.

A tensor pickles (through `torch.save`, `pickle`, `copy`) as torch's: `_rebuild_tensor_v2(
storage, storage_offset, size, stride, requires_grad, backward_hooks)` over a TypedStorage for
the classic dtypes, `_rebuild_tensor_v3(..., dtype)` over the UntypedStorage for the newer ones
(float8s, uint16/32/64, ...), wrapped in `torch._tensor._rebuild_from_type_v2` when the tensor
is a subclass or carries Python attributes. Rebuilding views a storage: no copy, no launch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from fake_torch._dtype import (
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from fake_torch._dtype import dtype as DType
from fake_torch._factories import torch_empty
from fake_torch._storage import UntypedStorage, untyped_storage
from fake_torch._tensor import Tensor, hooks
from fake_torch.storage import TypedStorage

# the dtypes torch pickles over a TypedStorage (a legacy storage class name each); every other
# dtype goes over an UntypedStorage with the dtype beside it (torch.storage._new_dtypes)
STORAGE_TYPE_NAMES: dict[DType, str] = {
    float64: "DoubleStorage", float32: "FloatStorage", float16: "HalfStorage",
    int64: "LongStorage", int32: "IntStorage", int16: "ShortStorage", int8: "CharStorage",
    uint8: "ByteStorage", bool_: "BoolStorage", bfloat16: "BFloat16Storage",
    complex128: "ComplexDoubleStorage", complex64: "ComplexFloatStorage",
}


def _element_size(dtype: DType) -> int:
    """Bytes per element of `dtype`."""
    return dtype.itemsize


def _rebuild_tensor(storage: TypedStorage, storage_offset: int, size: Sequence[int],
                    stride: Sequence[int]) -> Tensor:
    """A tensor of the storage's dtype viewing it (metadata: no launch)."""
    t = torch_empty((0,), dtype=storage.dtype, device=storage._untyped_storage.device)
    return t.set_(storage._untyped_storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage: TypedStorage, storage_offset: int, size: Sequence[int],
                       stride: Sequence[int], requires_grad: bool, backward_hooks: Any,
                       metadata: dict[str, bool] | None = None) -> Tensor:
    """torch's rebuild of a tensor of a classic dtype (hooks are never restored, as in torch)."""
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    _set_metadata(t, metadata)
    t.requires_grad = requires_grad
    return t


def _rebuild_tensor_v3(storage: UntypedStorage | TypedStorage, storage_offset: int,
                       size: Sequence[int], stride: Sequence[int], requires_grad: bool,
                       backward_hooks: Any, dtype: DType,
                       metadata: dict[str, bool] | None = None) -> Tensor:
    """torch's rebuild of a tensor of a newer dtype, over bytes with the dtype given."""
    raw = storage._untyped_storage if isinstance(storage, TypedStorage) else storage
    t = torch_empty((0,), dtype=dtype, device=raw.device).set_(raw, storage_offset, size, stride)
    _set_metadata(t, metadata)
    t.requires_grad = requires_grad
    return t


def _set_metadata(t: Tensor, metadata: dict[str, bool] | None) -> None:
    """torch's conj/neg bits: fake_torch has no lazily conjugated or negated tensors."""
    if metadata and any(metadata.values()):
        raise NotImplementedError(f"torch._utils.set_tensor_metadata({metadata}): the conj and "
                                  "neg bits of complex tensors are not emulated by fake_torch")


def _rebuild_device_tensor_from_cpu_tensor(data: Tensor, dtype: DType, device: Any,
                                           requires_grad: bool) -> Tensor:
    """A tensor pickled through a cpu copy (torch's path for storage-less devices)."""
    t = data.to(dtype=dtype, device=device)
    t.requires_grad = requires_grad
    return t


def _rebuild_meta_tensor_no_storage(dtype: DType, size: Sequence[int], stride: Sequence[int],
                                    requires_grad: bool) -> Tensor:
    """A meta tensor of `size` and `stride` over a storage of its own (torch pickles meta
    tensors without their storage, so views of one come back apart, as in torch)."""
    size, stride = tuple(size), tuple(stride)
    numel = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    t = torch_empty((numel,), dtype=dtype, device="meta").as_strided(size, stride)
    t.requires_grad = requires_grad
    return t


def _set_obj_state(obj: Any, state: Any) -> Any:
    """Restore a pickled object's Python state: a dict, or a (dict, slots dict) pair."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for k, v in (dict_state or {}).items():
        setattr(obj, k, v)
    for k, v in (slots_state or {}).items():
        setattr(obj, k, v)
    return obj


def _rebuild_from_type_v2(func: Callable[..., Tensor], new_type: type, args: tuple[Any, ...],
                          state: Any) -> Tensor:
    """torch._tensor._rebuild_from_type_v2: `func(*args)` as `new_type`, its state restored."""
    ret = func(*args)
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
        setstate(ret, state)
    else:
        ret = _set_obj_state(ret, state)
    return ret


# attributes every fake_torch Tensor keeps in its __dict__: the tensor itself, not Python state
_TENSOR_SLOTS = frozenset({"_a", "_dtype", "_device", "_storage", "_requires_grad", "grad"})


def tensor_state(t: Tensor) -> dict[str, Any]:
    """The Python attributes a user put on `t` (what torch's `_get_obj_state` finds)."""
    return {k: v for k, v in vars(t).items() if k not in _TENSOR_SLOTS}


def reduce_tensor_data(t: Tensor) -> tuple[Callable[..., Tensor], tuple[Any, ...]]:
    """(rebuild function, args) of a plain tensor, as torch's `_reduce_ex_internal`."""
    if t.device.type == "meta":  # no data: torch pickles the layout alone
        return (_rebuild_meta_tensor_no_storage,
                (t.dtype, tuple(t.size()), t.stride(), t.requires_grad))
    raw = untyped_storage(t)
    args: tuple[Any, ...]
    if t.dtype in STORAGE_TYPE_NAMES:
        storage = TypedStorage(wrap_storage=raw, dtype=t.dtype, _internal=True)
        args = (storage, t.storage_offset(), tuple(t.size()), t.stride(), t.requires_grad,
                OrderedDict())
        return (_rebuild_tensor_v2, args)
    args = (raw, t.storage_offset(), tuple(t.size()), t.stride(), t.requires_grad,
            OrderedDict(), t.dtype)
    return (_rebuild_tensor_v3, args)


def reduce_tensor(t: Tensor) -> tuple[Callable[..., Tensor], tuple[Any, ...]]:
    """Tensor.__reduce_ex__: the plain reduction, wrapped in `_rebuild_from_type_v2` for a
    subclass or a tensor with Python attributes (as torch's)."""
    state = tensor_state(t)
    func, args = reduce_tensor_data(t)
    if type(t) is Tensor and not state:
        return (func, args)
    return (_rebuild_from_type_v2, (func, type(t), args, state))


hooks.reduce_tensor = reduce_tensor  # Tensor.__reduce_ex__ (fake_torch/_tensor.py)
