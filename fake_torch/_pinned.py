"""Pinned (page-locked) host memory: what `Tensor.pin_memory()` and `pin_memory=True` give.

On a GPU pinned memory is host memory the device can DMA from at any time, which is why CUDA
allows an asynchronous host<->device copy of it inside a graph capture (the graph then reads,
or writes, those host bytes at every replay). Here a pinned buffer is a numpy array recorded in
a registry; a tensor is pinned when its buffer (the outermost array of its numpy view) is one
of them, so every view of a pinned tensor is pinned too, as in torch (which asks the pinned
allocator about the data pointer). A buffer leaves the registry when it dies.
"""

from __future__ import annotations

import weakref

import numpy as np

# id(root) -> the pinned root buffer, weakly (the tensors own their buffer, not this map)
_pinned: dict[int, weakref.ref[np.ndarray]] = {}


def _root(a: np.ndarray) -> np.ndarray:
    """The outermost numpy array of a view's base chain."""
    root, base = a, a.base
    while base is not None:
        if isinstance(base, np.ndarray):
            root = base
        base = getattr(base, "base", None)
    return root


def is_pinned_array(a: object) -> bool:
    """Whether a numpy view looks into pinned host memory."""
    if not isinstance(a, np.ndarray) or not _pinned:
        return False
    root = _root(a)
    ref = _pinned.get(id(root))
    return ref is not None and ref() is root


def pinned_empty_like(a: np.ndarray) -> np.ndarray:
    """A new pinned buffer viewed with `a`'s shape, dtype and strides (torch's _pin_memory
    keeps the strides; the storage is just big enough to hold them). Uninitialised."""
    itemsize = a.dtype.itemsize
    empty = any(n == 0 for n in a.shape)
    nbytes = 0 if empty else itemsize + sum((n - 1) * s for n, s in
                                            zip(a.shape, a.strides, strict=True))
    root = np.empty(nbytes, np.uint8)
    key = id(root)
    _pinned[key] = weakref.ref(root, lambda ref: _forget(key, ref))
    return np.ndarray(a.shape, a.dtype, buffer=root, strides=None if empty else a.strides)


def pinned_copy(a: np.ndarray) -> np.ndarray:
    """A copy of `a` in a new pinned buffer, with `a`'s shape and strides."""
    out = pinned_empty_like(a)
    out[...] = a
    return out


def _forget(key: int, ref: weakref.ref[np.ndarray]) -> None:
    if _pinned.get(key) is ref:  # a newer buffer may have taken the id over
        del _pinned[key]
