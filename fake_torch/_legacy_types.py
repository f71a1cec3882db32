"""torch's legacy tensor types: torch.FloatTensor, torch.LongTensor, ... and their torch.cuda
twins. Each is a class object of the metaclass `tensortype` (not a Tensor subclass): calling
one builds a tensor of its dtype and device, and `isinstance(t, torch.LongTensor)` holds for
any tensor of that dtype and device (a Parameter too), as in torch.

    torch.LongTensor([1, 2])     a copy of the data as int64 (one host-to-device copy on cuda)
    torch.FloatTensor(2, 3)      uninitialised memory of that size (no launch)
    torch.FloatTensor()          an empty tensor, of size (0,)
    torch.FloatTensor(t)         t's memory, when t has the type's dtype and device
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fake_torch import _factories
from fake_torch._dtype import (
    CPP_NAME,
    SCALAR_NAME,
    bfloat16,
    bool_,
    dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from fake_torch._tensor import Size, Tensor
from fake_torch._torch_device import CPU, CUDA0, DeviceLike, canonical, device


class tensortype(type):
    """The type of torch's legacy tensor types (`type(torch.FloatTensor)`)."""

    dtype: dtype
    is_cuda: bool
    is_sparse: bool

    def __instancecheck__(cls, obj: object) -> bool:
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.is_cuda == cls.is_cuda)

    def __call__(cls, *args: Any, device: DeviceLike | None = None) -> Tensor:
        dev = CUDA0 if cls.is_cuda else CPU
        if device is not None and canonical(device).type != dev.type:
            raise RuntimeError(f"legacy constructor expects device type: {dev.type} but device "
                               f"type: {canonical(device).type} was passed")
        if len(args) == 1 and isinstance(args[0], Tensor):
            return _alias(cls, args[0], dev)
        if len(args) == 1 and isinstance(args[0], (Sequence, np.ndarray)) and not isinstance(
                args[0], (Size, str, bytes)):  # any sequence: a list, a range (fairscale)
            return _factories.tensor(args[0], dtype=cls.dtype, device=dev)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or (
                len(args) == 1 and isinstance(args[0], Size)):
            sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
            return _factories.empty(*(sizes or (0,)), dtype=cls.dtype, device=dev)
        if len(args) == 1 and isinstance(args[0], (float, bool, dict)):
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")


def _options(dt: dtype, dev: device) -> str:
    """How torch's legacy-constructor error prints a dtype and device."""
    return (f"TensorOptions(dtype={CPP_NAME[dt]}, device={dev}, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _alias(cls: tensortype, t: Tensor, dev: device) -> Tensor:
    """A new Tensor over t's memory (no copy); torch's TypeError when the type differs."""
    if t.dtype is not cls.dtype or t.device.type != dev.type:
        raise TypeError(f"expected {_options(cls.dtype, dev)} (got "
                        f"{_options(t.dtype, t.device)})")
    return Tensor._make(t._a, t._device, t._storage, t._dtype)


def _make(name: str, dt: dtype, cuda: bool) -> tensortype:
    return tensortype(name, (), {"__module__": "torch.cuda" if cuda else "torch",
                                 "__doc__": None, "dtype": dt, "is_cuda": cuda,
                                 "is_sparse": False})


_DTYPES = (float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, bool_)
CPU_TYPES = {f"{SCALAR_NAME[d]}Tensor": _make(f"{SCALAR_NAME[d]}Tensor", d, False)
             for d in _DTYPES}
CUDA_TYPES = {f"{SCALAR_NAME[d]}Tensor": _make(f"{SCALAR_NAME[d]}Tensor", d, True)
              for d in _DTYPES}

DoubleTensor = CPU_TYPES["DoubleTensor"]
FloatTensor = CPU_TYPES["FloatTensor"]
HalfTensor = CPU_TYPES["HalfTensor"]
BFloat16Tensor = CPU_TYPES["BFloat16Tensor"]
LongTensor = CPU_TYPES["LongTensor"]
IntTensor = CPU_TYPES["IntTensor"]
ShortTensor = CPU_TYPES["ShortTensor"]
CharTensor = CPU_TYPES["CharTensor"]
ByteTensor = CPU_TYPES["ByteTensor"]
BoolTensor = CPU_TYPES["BoolTensor"]

# torch.cuda's (fake_torch/cuda/__init__.py re-exports them under their torch names)
cuda_DoubleTensor = CUDA_TYPES["DoubleTensor"]
cuda_FloatTensor = CUDA_TYPES["FloatTensor"]
cuda_HalfTensor = CUDA_TYPES["HalfTensor"]
cuda_BFloat16Tensor = CUDA_TYPES["BFloat16Tensor"]
cuda_LongTensor = CUDA_TYPES["LongTensor"]
cuda_IntTensor = CUDA_TYPES["IntTensor"]
cuda_ShortTensor = CUDA_TYPES["ShortTensor"]
cuda_CharTensor = CUDA_TYPES["CharTensor"]
cuda_ByteTensor = CUDA_TYPES["ByteTensor"]
cuda_BoolTensor = CUDA_TYPES["BoolTensor"]
