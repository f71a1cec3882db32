"""Tensor: a view (shape, strides, offset, dtype, device) over a numpy storage buffer.

`_a` is a numpy view; slicing, `view`, `transpose` make new numpy views of the same storage, so
aliasing, in-place updates through views and `data_ptr()` behave as in torch. Methods that
launch work are thin delegations to the op modules (imported at the bottom: they import Tensor).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import numpy as np

from fake_torch import _dispatch
from fake_torch._device import device
from fake_torch._dtype import dtype, from_numpy_dtype, get_default_dtype

Scalar = bool | int | float
Number = int | float


class Size(tuple[int, ...]):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`."""

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"


class Tensor:
    """A torch-shaped tensor over numpy storage. Build one with the factories (`torch.tensor`,
    `torch.zeros`, ...); `Tensor(sequence)` is torch's legacy float32 constructor."""

    _a: np.ndarray
    _dtype: dtype
    _device: device
    requires_grad: bool
    grad: Tensor | None

    def __init__(self, *args: Any) -> None:
        from fake_torch._factories import tensor as _tensor_factory  # legacy constructor

        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            made = _tensor_factory(args[0], dtype=get_default_dtype())
        elif all(isinstance(a, int) for a in args):
            from fake_torch._factories import empty

            made = empty(*args)
        else:
            raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")
        self._set(made._a, made._device)

    def _set(self, a: np.ndarray, dev: device) -> None:
        self._a = a
        self._dtype = from_numpy_dtype(a.dtype)
        self._device = dev
        self.requires_grad = False
        self.grad = None

    @classmethod
    def _make(cls, a: np.ndarray, dev: device) -> Tensor:
        """Wrap a numpy view (no copy) as a Tensor on `dev`."""
        t = object.__new__(Tensor)
        t._set(a, dev)
        return t

    # --- metadata: no launches -----------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._a.shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._a.shape)
        return self._a.shape[_wrap_dim(dim, self.dim())]

    def dim(self) -> int:
        return self._a.ndim

    @property
    def ndim(self) -> int:
        return self._a.ndim

    def ndimension(self) -> int:
        return self._a.ndim

    def numel(self) -> int:
        return int(self._a.size)

    def nelement(self) -> int:
        return int(self._a.size)

    @property
    def dtype(self) -> dtype:
        return self._dtype

    @property
    def device(self) -> device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def is_leaf(self) -> bool:
        return True

    @property
    def grad_fn(self) -> None:
        return None

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def stride(self, dim: int | None = None) -> Any:
        strides = tuple(s // self._a.itemsize for s in self._a.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self.dim())]

    def storage_offset(self) -> int:
        return (self.data_ptr() - _base_ptr(self._a)) // self._a.itemsize

    def is_contiguous(self, memory_format: object = None) -> bool:
        expected = 1
        for size, stride in zip(reversed(self._a.shape), reversed(self.stride()), strict=True):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def data_ptr(self) -> int:
        """The address of the first element; views share their base's storage."""
        return int(self._a.__array_interface__["data"][0])

    def untyped_storage(self) -> NoReturn:
        raise NotImplementedError("torch.Tensor.untyped_storage is not emulated by fake_torch")

    def element_size(self) -> int:
        return self._a.itemsize

    @property
    def itemsize(self) -> int:
        return self._a.itemsize

    @property
    def nbytes(self) -> int:
        return int(self._a.nbytes)

    def get_device(self) -> int:
        return 0 if self.is_cuda else -1

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Sequence[Tensor] | None = None) -> NoReturn:
        raise NotImplementedError("torch.Tensor.backward: fake_torch has no autograd")

    def detach(self) -> Tensor:
        return Tensor._make(self._a, self._device)  # a view: same storage, no launch

    def detach_(self) -> Tensor:
        return self

    # --- host reads: a device-to-host copy and a sync when the tensor is on cuda ---------------

    def _host_array(self, what: str) -> np.ndarray:
        if self.is_cuda:
            _dispatch.host_sync(what)
            host = np.empty(self._a.shape, self._a.dtype)
            _dispatch.launch("_to_copy", np.copyto, (host,), (self._a,), on_cuda=True,
                             kind="memcpy_d2h")
            return host
        return self._a

    def item(self) -> Any:
        if self._a.size != 1:
            raise RuntimeError(f"a Tensor with {self._a.size} elements cannot be converted to "
                               "Scalar")
        if self.is_cuda:
            _dispatch.host_sync("item")
            _dispatch.launch("_local_scalar_dense", _noop, (), (), on_cuda=True,
                             kind="memcpy_d2h")
        return self._a.item()

    def tolist(self) -> Any:
        return self._host_array("tolist").tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self.is_cuda and not force:
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        return self._host_array("numpy")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._a.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from fake_torch._repr import tensor_repr

        return tensor_repr(self)

    # --- sections below are filled by the op modules; each delegates, nothing else ------------

    # === shape, views, indexing, join (owner: _ops/shape.py, _ops/indexing.py, _ops/join.py) ===
    # === end shape ===

    # === pointwise, comparisons, casts (owner: _ops/pointwise.py) ===
    # === end pointwise ===

    # === reductions & linalg (owner: _ops/reduction.py, _ops/linalg.py) ===
    # === end reductions ===

    # === random (owner: _ops/random.py) ===
    # === end random ===


def _noop() -> None:
    """The kernel of a launch whose data movement happens on the host side (a D2H read)."""


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim-1] as a non-negative index; torch's IndexError otherwise."""
    lo, hi = (-max(ndim, 1), max(ndim, 1) - 1)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but "
                         f"got {dim})")
    return dim % max(ndim, 1)


def _base_ptr(a: np.ndarray) -> int:
    """The address of the storage a numpy view looks into (its outermost ndarray base)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return int(a.__array_interface__["data"][0])


def wrap_dim(dim: int, ndim: int) -> int:
    """Public to the op modules: normalise a possibly negative dim as torch does."""
    return _wrap_dim(dim, ndim)


# The op modules import Tensor, so they come last; the methods above find them at call time.
from fake_torch._ops import (  # noqa: E402
    indexing as _indexing,
    join as _join,
    linalg as _linalg,
    pointwise as _pointwise,
    random as _random,
    reduction as _reduction,
    shape as _shape,
)
