"""torch.multiprocessing.reductions: how a tensor is sent to another process, as a
(rebuild function, args) pair (`reduce_tensor`) that the receiver calls to get the tensor back.

A cuda tensor travels as torch's CUDA IPC record: a handle naming the cudaMalloc allocation
(here: the caching allocator's segment, and the process that owns it), the storage's byte
offset and size in it, and the tensor's size/stride/offset; `rebuild_cuda_tensor(*args)` maps
that allocation and views it. fake_torch's device memory lives in one process, so a rebuild in
the SAME process aliases the same simulated memory (writes through either tensor are seen by
the other, and the block stays allocated while the rebuilt tensor lives, as torch's producer
keeps a shared block alive for its consumers); a handle from another process raises
NotImplementedError. A cpu tensor is reduced to its storage and metadata (the same storage in
this process; pickled to another process it arrives as a copy, not shared memory).
Nothing here launches: sharing is metadata.
"""

from __future__ import annotations

import os
import weakref
from multiprocessing import reduction
from typing import Any

import numpy as np

from fake_torch._dtype import dtype as DType
from fake_torch._factories import torch_empty
from fake_torch._simulated._allocator import DEVICE
from fake_torch._simulated._allocator_blocks import Segment, Storage
from fake_torch._storage import UntypedStorage, untyped_storage
from fake_torch._tensor import Tensor
from fake_torch._torch_device import device

__all__ = ["init_reductions", "rebuild_cuda_tensor", "rebuild_tensor", "reduce_tensor"]

_HANDLE_PREFIX = b"fake_torch-cuda-ipc:"

# (handle, storage byte offset) -> the block's owner. A reduced storage's block stays
# allocated until its first rebuild takes it over (torch keeps a shared block in its "limbo"
# until the consumer's reference count drops); later rebuilds find it while any tensor holds it.
_sent: dict[tuple[bytes, int], Storage] = {}
_shared: weakref.WeakValueDictionary[tuple[bytes, int], Storage] = (
    weakref.WeakValueDictionary())
_owned: set[tuple[bytes, int]] = set()  # keys whose storage had an owner (a block) when reduced


def _segment_at(ptr: int, nbytes: int) -> Segment | None:
    """The caching allocator's segment (the cudaMalloc allocation) holding [ptr, ptr+nbytes)."""
    for pool in DEVICE.pools.values():
        for seg in pool.segments:
            if seg.base <= ptr and ptr + nbytes <= seg.base + seg.size:
                return seg
    return None


def _handle(pid: int, base: int) -> bytes:
    return _HANDLE_PREFIX + f"{pid}:{base:x}".encode()


def _parse_handle(handle: bytes) -> tuple[int, int]:
    """(pid, segment base) of a handle `reduce_tensor` made."""
    if not isinstance(handle, bytes) or not handle.startswith(_HANDLE_PREFIX):
        raise RuntimeError(f"rebuild_cuda_tensor: {handle!r} is not a CUDA IPC handle that "
                           "fake_torch's reduce_tensor made")
    pid, base = handle[len(_HANDLE_PREFIX):].decode().split(":")
    return int(pid), int(base, 16)


def _finish(t: Tensor, tensor_cls: type, requires_grad: bool) -> Tensor:
    from fake_torch.nn.parameter import Parameter

    if tensor_cls is Parameter:  # torch passes requires_grad to the constructor (int params)
        return Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def rebuild_tensor(cls: type, storage: UntypedStorage,
                   metadata: tuple[int, tuple[int, ...], tuple[int, ...], bool, DType]) -> Tensor:
    """A tensor of class `cls` viewing `storage` as `metadata` says: (storage_offset, size,
    stride, requires_grad, dtype). torch's storage is typed; fake_torch's is bytes, so the
    dtype rides in the metadata (fifth)."""
    storage_offset, size, stride, requires_grad, dt = metadata
    t = torch_empty(0, dtype=dt, device=storage.device).set_(storage, storage_offset, size, stride)
    return _finish(t, cls, requires_grad)


def rebuild_cuda_tensor(tensor_cls: type, tensor_size: tuple[int, ...],
                        tensor_stride: tuple[int, ...], tensor_offset: int, storage_cls: type,
                        dtype: DType, storage_device: int, storage_handle: bytes | None,
                        storage_size_bytes: int, storage_offset_bytes: int, requires_grad: bool,
                        ref_counter_handle: bytes, ref_counter_offset: int, event_handle: bytes,
                        event_sync_required: bool) -> Tensor:
    """The cuda tensor `reduce_tensor` described (its args, in order): a view of the same
    simulated device memory when the handle comes from this process."""
    dev = device("cuda", storage_device)
    if storage_handle is None or storage_size_bytes == 0:  # torch's null-pointer storage
        storage = UntypedStorage._wrap(np.empty(0, np.uint8), dev, None, resizable=False)
    else:
        pid, base = _parse_handle(storage_handle)
        if pid != os.getpid():
            raise NotImplementedError(
                "torch.multiprocessing.reductions.rebuild_cuda_tensor of a handle from another "
                f"process (pid {pid}) is not emulated by fake_torch: CUDA IPC needs device "
                "memory shared between processes, and the simulated device lives in one")
        key = (storage_handle, storage_offset_bytes)
        owner = _sent.pop(key, None) or _shared.get(key)
        seg = _segment_at(base + storage_offset_bytes, storage_size_bytes)
        if seg is None or seg.base != base or (owner is None and key in _owned):
            raise RuntimeError("rebuild_cuda_tensor: the CUDA allocation behind this handle "
                               "was freed (no tensor holds the shared storage any more)")
        if owner is not None:
            _shared[key] = owner
        data = np.frombuffer(seg.mem, np.uint8, storage_size_bytes, storage_offset_bytes)
        storage = UntypedStorage._wrap(data, dev, owner, resizable=False)
    t = torch_empty(0, dtype=dtype, device=dev).set_(storage, tensor_offset, tensor_size,
                                                     tensor_stride)
    return _finish(t, tensor_cls, requires_grad)


def reduce_tensor(tensor: Tensor) -> tuple[Any, tuple[Any, ...]]:
    """(rebuild function, args) that rebuild `tensor`: `rebuild_cuda_tensor` with torch's 15
    IPC args for a cuda tensor (args[6] is the device index), `rebuild_tensor` for a cpu one."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")
    storage = untyped_storage(tensor)
    if tensor.device.type == "cuda":
        nbytes, ptr = storage.nbytes(), storage.data_ptr()
        seg = _segment_at(ptr, nbytes) if nbytes else None
        handle = offset = None
        if seg is not None:
            handle, offset = _handle(os.getpid(), seg.base), ptr - seg.base
            if storage._owner is not None:
                _sent[(handle, offset)] = storage._owner
                _owned.add((handle, offset))
        return (rebuild_cuda_tensor,
                (type(tensor), tensor.size(), tensor.stride(), tensor.storage_offset(),
                 type(storage), tensor.dtype, tensor.device.index or 0, handle,
                 nbytes, offset or 0, tensor.requires_grad,
                 handle or b"", 0, b"", False))
    metadata = (tensor.storage_offset(), tensor.size(), tensor.stride(), tensor.requires_grad,
                tensor.dtype)
    return (rebuild_tensor, (type(tensor), storage, metadata))


def init_reductions() -> None:
    """Register `reduce_tensor` for Tensor and Parameter with multiprocessing's ForkingPickler
    (what torch.multiprocessing queues and pipes pickle with)."""
    from fake_torch.nn.parameter import Parameter

    reduction.register(Tensor, reduce_tensor)
    reduction.register(Parameter, reduce_tensor)
