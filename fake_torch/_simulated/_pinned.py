"""Pinned (page-locked) host memory: what `Tensor.pin_memory()` and `pin_memory=True` give.

On a GPU pinned memory is host memory the device can DMA from at any time, which is why CUDA
allows an asynchronous host<->device copy of it inside a graph capture (the graph then reads,
or writes, those host bytes at every replay). Its blocks come from torch's caching host
allocator (fake_torch/_simulated/_host_allocator.py): a freed block is handed to a later request of
its size, at the same address, as on a GPU.

Here each allocation is a numpy root array over its block's bytes, recorded in a registry; a
tensor is pinned when its buffer (the outermost array of its numpy view) is one of them, so
every view of a pinned tensor is pinned too, as in torch (which asks the driver about the data
pointer). When the root dies (its last tensor and view are gone) its block is freed.
"""

from __future__ import annotations

import weakref

import numpy as np

from fake_torch._simulated import _allocator
from fake_torch._simulated._host_allocator import HOST, HostBlock

# id(root) -> the pinned root buffer, weakly (the tensors own their buffer, not this map), and
# its host allocator block (None for an empty buffer: torch's null pointer)
_pinned: dict[int, tuple[weakref.ref[np.ndarray], HostBlock | None]] = {}


def _root(a: np.ndarray) -> np.ndarray:
    """The outermost numpy array of a view's base chain."""
    root, base = a, a.base
    while base is not None:
        if isinstance(base, np.ndarray):
            root = base
        base = getattr(base, "base", None)
    return root


def _entry(a: object) -> tuple[weakref.ref[np.ndarray], HostBlock | None] | None:
    if not isinstance(a, np.ndarray) or not _pinned:
        return None
    root = _root(a)
    entry = _pinned.get(id(root))
    return entry if entry is not None and entry[0]() is root else None


def is_pinned_array(a: object) -> bool:
    """Whether a numpy view looks into pinned host memory."""
    return _entry(a) is not None


def pinned_empty_like(a: np.ndarray) -> np.ndarray:
    """A new pinned buffer viewed with `a`'s shape, dtype and strides (torch's _pin_memory
    keeps the strides; the storage is just big enough to hold them). Uninitialised."""
    itemsize = a.dtype.itemsize
    empty = any(n == 0 for n in a.shape)
    nbytes = 0 if empty else itemsize + sum((n - 1) * s for n, s in
                                            zip(a.shape, a.strides, strict=True))
    block = HOST.allocate(nbytes)
    # a root whose base is a memoryview: numpy keeps views' `.base` pointing at this root
    root = (np.empty(0, np.uint8) if block is None
            else np.frombuffer(block.mem, np.uint8, nbytes))
    key = id(root)
    _pinned[key] = (weakref.ref(root, lambda ref: _forget(key, ref)), block)
    return np.ndarray(a.shape, a.dtype, buffer=root, strides=None if empty else a.strides)


def pinned_copy(a: np.ndarray) -> np.ndarray:
    """A copy of `a` in a new pinned buffer, with `a`'s shape and strides."""
    out = pinned_empty_like(a)
    out[...] = a
    return out


def record_event(a: np.ndarray) -> bool:
    """A non-blocking copy on the current stream read or wrote the host view `a` (ATen's
    copy_kernel_cuda: CachingHostAllocator_recordEvent): its block is not reused before that
    stream's work is done. False when `a` is not pinned memory."""
    entry = _entry(a)
    if entry is None or entry[1] is None:
        return False
    return HOST.record_event(entry[1], _allocator._current_stream())


def _forget(key: int, ref: weakref.ref[np.ndarray]) -> None:
    entry = _pinned.get(key)
    if entry is not None and entry[0] is ref:  # a newer buffer may have taken the id over
        del _pinned[key]
        if entry[1] is not None:
            HOST.free(entry[1])
