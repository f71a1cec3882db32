"""torch.UntypedStorage, and what Tensor.untyped_storage() and Tensor.set_() do with one.

A storage is the raw bytes under tensors: a 1-D uint8 numpy view of the whole buffer (a cuda
block's root, or a cpu tensor's outermost numpy array). One made by `Tensor.untyped_storage()`
owns its memory (it holds the allocator's `Storage`, so the block stays allocated while it
lives); one made by `torch._C._construct_storage_from_data_pointer` does not: the caching
allocator may free the block and hand it to the next allocation under it, as on a GPU.
`UntypedStorage.from_file` maps a file (safetensors' loader reads checkpoints so): shared, the
mapping writes through to the file; private, writes stay in this process. Everything here is
metadata: nothing launches.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from fake_torch._dtype import CPP_NAME, uint8
from fake_torch._kernels._common import new_tensor
from fake_torch._opdef import VIEW, method
from fake_torch._simulated import _dispatch
from fake_torch._simulated._allocator import Storage
from fake_torch._tensor import Tensor, base_array, hooks
from fake_torch._torch_device import DeviceLike, canonical, device
from fake_torch._torch_device import device as _device_cls


class UntypedStorage:
    """torch.UntypedStorage: the bytes under one or more tensors. Get one from
    `Tensor.untyped_storage()` (or `torch._C._construct_storage_from_data_pointer`)."""

    _bytes: np.ndarray  # (nbytes,) uint8 over the memory itself
    _owner: Storage | None  # the cuda block's owner, kept alive while this storage lives
    _resizable: bool  # owns its memory (torch grows such a storage on demand)
    _device: device
    _shared: bool = False  # a file mapping (torch reports those as shared)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("torch.UntypedStorage(...) construction is not emulated by "
                                  "fake_torch: take a tensor's with Tensor.untyped_storage()")

    @classmethod
    def _wrap(cls, data: np.ndarray, dev: device, owner: Storage | None,
              resizable: bool) -> UntypedStorage:
        s = object.__new__(cls)
        s._bytes, s._device, s._owner, s._resizable = data, dev, owner, resizable
        return s

    @property
    def device(self) -> device:
        return self._device

    def data_ptr(self) -> int:
        """The address of the first byte."""
        return int(self._bytes.__array_interface__["data"][0])

    def nbytes(self) -> int:
        return int(self._bytes.shape[0])

    def size(self) -> int:
        """The size in bytes (an untyped storage's elements are bytes)."""
        return int(self._bytes.shape[0])

    def __len__(self) -> int:
        return int(self._bytes.shape[0])

    def untyped(self) -> UntypedStorage:
        """Itself (a typed storage's `untyped()` gives its bytes; this one is bytes)."""
        return self

    def resizable(self) -> bool:
        """Whether torch could grow it: True when it owns its memory."""
        return self._resizable

    def is_shared(self) -> bool:
        """Whether the memory is shared with other processes (a file mapping is)."""
        return self._shared

    @classmethod
    def from_file(cls, filename: str, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """A cpu storage of `nbytes` bytes mapped from `filename`. shared=True maps it
        MAP_SHARED (creating or growing the file as needed: writes reach the file);
        shared=False maps it privately (the file must hold `nbytes`; writes stay here)."""
        if not isinstance(filename, str):
            raise TypeError(f"argument 1 must be str, not {type(filename).__name__}")
        if nbytes < 0:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot "
                               "allocate memory (12)")
        mode = "read-write" if shared else "read-only"
        try:
            fd = os.open(filename, (os.O_RDWR | os.O_CREAT) if shared else os.O_RDONLY, 0o600)
        except OSError as e:
            raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: {e.strerror} "
                               f"({e.errno})") from None
        try:
            size = os.fstat(fd).st_size
            if shared and size < nbytes:
                os.ftruncate(fd, nbytes)
            elif size < nbytes:
                raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required "
                                   f"mapping size <{nbytes}>")
            if nbytes == 0:  # mmap of length 0 would map the whole file
                data = np.empty(0, np.uint8)
            else:
                access = mmap.ACCESS_WRITE if shared else mmap.ACCESS_COPY
                data = np.frombuffer(mmap.mmap(fd, nbytes, access=access), np.uint8)
        finally:
            os.close(fd)
        storage = cls._wrap(data, device("cpu"), None, resizable=False)
        storage._shared = True
        return storage

    # --- moves between devices: one host<->device copy each, as torch's storage.copy_ ---------

    def cpu(self) -> UntypedStorage:
        """A cpu copy of a device storage (one device-to-host copy); a cpu storage itself."""
        return self._to(_device_cls("cpu"), False)

    def cuda(self, device: int | _device_cls | str | None = None,
             non_blocking: bool = False) -> UntypedStorage:
        """A copy on the cuda device (one host-to-device copy); a cuda storage itself."""
        target = canonical("cuda" if device is None else
                           device if not isinstance(device, int) else _device_cls("cuda", device))
        if target.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {target}")
        return self._to(target, non_blocking)

    def to(self, *, device: DeviceLike, non_blocking: bool = False) -> UntypedStorage:
        """A copy on `device` (itself when already there)."""
        return self._to(canonical(device), non_blocking)

    def _to(self, target: _device_cls, non_blocking: bool) -> UntypedStorage:
        if target == self._device:
            return self
        n = self.nbytes()
        src = new_tensor((0,), uint8, self._device).set_(self, 0, (n,), (1,))
        dst = new_tensor((n,), uint8, target)
        dst.copy_(src, non_blocking=non_blocking)
        return untyped_storage(dst)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """A plain pickle carries the bytes (a device storage's copied to the host first)."""
        return (_from_bytes, (self.cpu()._bytes.tobytes(), str(self._device)))

    # --- the bytes, from Python ---------------------------------------------------------------

    def __getitem__(self, idx: int | slice) -> Any:
        """One byte as an int, or a slice of the storage (the same memory, step 1 only)."""
        n = len(self)
        if isinstance(idx, slice):
            start, stop, step = idx.indices(n)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 "
                                   "is supported")
            part = UntypedStorage._wrap(self._bytes[start:max(start, stop)], self._device,
                                        self._owner, resizable=False)
            part._shared = self._shared
            return part
        index = self._index(idx, n)
        self._host_reads("__getitem__")
        return int(self._bytes[index])

    def __setitem__(self, idx: int | slice, value: int) -> None:
        """Store a byte (or fill a slice); values wrap modulo 256, as torch stores them."""
        if isinstance(idx, slice):
            self[idx]._bytes[...] = int(value) % 256
            return
        self._bytes[self._index(idx, len(self))] = int(value) % 256

    @staticmethod
    def _index(idx: int, n: int) -> int:
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n

    def __iter__(self) -> Iterator[int]:
        return iter(self.tolist())

    def tolist(self) -> list[int]:
        self._host_reads("tolist")
        return [int(b) for b in self._bytes]

    def _host_reads(self, what: str) -> None:
        """Python reads the bytes: from a device storage that is a copy to the host, and the
        host waits for it."""
        if self._device.type == "cuda":
            _dispatch.host_sync(what, reads=(self._bytes,))

    def __repr__(self) -> str:
        info = f"[torch.storage.UntypedStorage(device={self._device}) of size {len(self)}]"
        if self._device.type != "cpu":  # printing cuda bytes would be a D2H copy
            return info
        return " " + "\n ".join(str(int(b)) for b in self._bytes) + "\n" + info


def _from_bytes(data: bytes, dev: str) -> UntypedStorage:
    """A storage holding a copy of `data` on device `dev` (a plain pickle's way back)."""
    host = UntypedStorage._wrap(np.frombuffer(bytearray(data), np.uint8), device("cpu"), None,
                                resizable=True)
    return host.to(device=dev)


def as_bytes(root: np.ndarray) -> np.ndarray:
    """A contiguous buffer's bytes as a 1-D uint8 view (no copy)."""
    if root.flags.c_contiguous:
        return root.reshape(-1).view(np.uint8)
    if root.flags.f_contiguous:
        return root.T.reshape(-1).view(np.uint8)
    raise NotImplementedError("torch.Tensor.untyped_storage of a tensor over a strided numpy "
                              "buffer (from_numpy of a non-contiguous array) is not emulated")


def untyped_storage(t: Tensor) -> UntypedStorage:
    """Tensor.untyped_storage(): the whole buffer under t (cuda: its block's requested bytes),
    owning unless t itself is a non-owning alias (set_ onto a data-pointer storage)."""
    root = t._storage.root if t._storage is not None else base_array(t._a)
    owning = t._storage is not None or t._device.type == "cpu"
    return UntypedStorage._wrap(as_bytes(root), t._device, t._storage, owning)

hooks.untyped_storage = untyped_storage  # Tensor.untyped_storage (fake_torch/_tensor.py)


# --- Tensor.set_ -------------------------------------------------------------------------------

_OVERLOADS = ("set_() received an invalid combination of arguments - expected one of: (), "
              "(source), (source, storage_offset, size, stride=None), with source a Tensor or "
              "an UntypedStorage")


@method(VIEW)
def set_(self: Tensor, source: Tensor | UntypedStorage | None = None, storage_offset: int = 0,
         size: Sequence[int] | None = None, stride: Sequence[int] | None = None) -> Tensor:
    """Make this tensor a view of `source`'s memory: a Tensor's (storage, size, stride) or
    an UntypedStorage's bytes from `storage_offset` (in elements); its own dtype kept.
    Metadata: no launch."""
    if source is None:
        if (storage_offset, size, stride) != (0, None, None):
            raise TypeError(_OVERLOADS)
        empty = new_tensor((0,), self._dtype, self._device)
        return _rebind(self, empty._a, empty._storage)
    if size is None and (storage_offset != 0 or stride is not None):
        raise TypeError(_OVERLOADS)  # torch's overloads take an offset only with a size
    if isinstance(source, Tensor):
        if source._dtype is not self._dtype:
            raise RuntimeError(f"Could not set tensor of type {CPP_NAME[source._dtype]} to a "
                               f"tensor of type {CPP_NAME[self._dtype]}")
        storage = untyped_storage(source)
        if size is None:
            storage_offset, size, stride = (source.storage_offset(), source.shape,
                                            source.stride())
        else:  # torch counts this offset from the source's own
            storage_offset += source.storage_offset()
    elif isinstance(source, UntypedStorage):
        storage = source
        if size is None:
            size = (storage.nbytes() // self._a.itemsize,)
    else:
        raise TypeError(f"{_OVERLOADS}; got {type(source).__name__}")
    if storage.device != self._device:
        raise RuntimeError(f'Attempted to set the storage of a tensor on device "{self._device}"'
                           f' to a storage on different device "{storage.device}".  This is no '
                           "longer allowed; the devices must match.")
    return _rebind(self, _view(self, storage, storage_offset, tuple(size), stride),
                   storage._owner)


def _view(self: Tensor, storage: UntypedStorage, offset: int, size: tuple[int, ...],
          stride: Sequence[int] | None) -> np.ndarray:
    """`size`/`stride` elements of self's dtype from element `offset` of the storage's bytes,
    checked as torch checks them."""
    if stride is None:
        strides, acc = [], 1
        for n in reversed(size):
            strides.append(acc)
            acc *= max(n, 1)
        stride = strides[::-1]
    stride = tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length "
                           f"({len(stride)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    itemsize = self._a.itemsize
    empty = any(n == 0 for n in size)
    needed = 0 if empty else itemsize * (
        offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True)))
    data = storage._bytes
    if needed > data.shape[0]:
        if storage.resizable():
            raise NotImplementedError(
                f"torch.Tensor.set_ past the end of a resizable storage ({needed} bytes needed, "
                f"{data.shape[0]} held): torch would grow the storage; fake_torch cannot")
        raise RuntimeError(f"Trying to resize storage that is not resizable\n({needed} bytes "
                           f"needed, the storage holds {data.shape[0]}: it does not own its "
                           "memory, so it cannot grow)")
    start = min(offset * itemsize, data.shape[0]) if empty else offset * itemsize
    return np.ndarray(size, self._a.dtype, buffer=data, offset=start,
                      strides=tuple(s * itemsize for s in stride))


def _rebind(self: Tensor, a: np.ndarray, owner: Storage | None) -> Tensor:
    requires_grad, grad = self.requires_grad, self.grad
    # owner None on cuda: a non-owning alias; `_set` finds no Storage for it either, since
    # its bytes are a view of a segment, never a registered block root
    self._set(a, self._device, owner, self._dtype)
    self.requires_grad, self.grad = requires_grad, grad
    return self
