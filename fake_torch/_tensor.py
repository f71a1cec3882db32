"""Tensor: a view (shape, strides, offset, dtype, device) over a numpy storage buffer.

`_a` is a numpy view; slicing, `view`, `transpose` make new numpy views of the same storage, so
aliasing, in-place updates through views and `data_ptr()` behave as in torch. Methods that
launch work are thin delegations to the op modules (imported at the bottom: they import Tensor).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from fake_torch import _dispatch
from fake_torch._allocator import DEVICE, Storage
from fake_torch._device import device
from fake_torch._dtype import dtype, from_numpy_dtype, get_default_dtype
from fake_torch._kernels._tensor_casts import TensorCasts

if TYPE_CHECKING:
    from fake_torch._storage import UntypedStorage

Scalar = bool | int | float
Number = int | float
DType = dtype  # for annotations inside Tensor, whose `dtype` property shadows the name


class Size(tuple[int, ...]):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`."""

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"


class Tensor(TensorCasts):
    """A torch-shaped tensor over numpy storage. Build one with the factories (`torch.tensor`,
    `torch.zeros`, ...); `Tensor(sequence)` is torch's legacy float32 constructor."""

    _a: np.ndarray
    _dtype: dtype
    _device: device
    _storage: Storage | None
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
        self._set(made._a, made._device, made._storage)

    def _set(self, a: np.ndarray, dev: device, storage: Storage | None,
             dt: dtype | None = None) -> None:
        self._a = a
        self._dtype = from_numpy_dtype(a.dtype) if dt is None else dt  # dt: a's, known already
        self._device = dev
        # cuda memory belongs to a block of the caching allocator; holding its Storage keeps the
        # block allocated, and views find their base's Storage through their numpy bases
        if storage is None and dev.type == "cuda":
            storage = DEVICE.storage_of(a)
        self._storage = storage
        self.requires_grad = False
        self.grad = None

    @classmethod
    def _make(cls, a: np.ndarray, dev: device, storage: Storage | None = None,
              dt: dtype | None = None) -> Tensor:
        """Wrap a numpy view (no copy) as a Tensor on `dev` (`dt`: a's dtype, when the caller
        already knows it)."""
        t = object.__new__(Tensor)
        t._set(a, dev, storage, dt)
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
        base = base_array(self._a)
        return (self.data_ptr() - int(base.__array_interface__["data"][0])) // self._a.itemsize

    def is_contiguous(self, memory_format: object = None) -> bool:
        if self._a.size == 0:  # torch: an empty tensor is contiguous whatever its strides
            return True
        expected = 1
        for size, stride in zip(reversed(self._a.shape), reversed(self.stride()), strict=True):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def data_ptr(self) -> int:
        """The address of the first element; views share their base's storage."""
        return int(self._a.__array_interface__["data"][0])

    def untyped_storage(self) -> UntypedStorage:
        """The bytes of the whole storage under this tensor (metadata: no launch)."""
        return _storage_ops.untyped_storage(self)

    def set_(self, source: Tensor | UntypedStorage | None = None, storage_offset: int = 0,
             size: Sequence[int] | None = None, stride: Sequence[int] | None = None) -> Tensor:
        """Make this tensor a view of `source`'s memory: a Tensor's (storage, size, stride) or
        an UntypedStorage's bytes from `storage_offset` (in elements). Metadata: no launch."""
        return _storage_ops.set_(self, source, storage_offset, size, stride)

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

    @property
    def data(self) -> Tensor:
        """The same storage without autograd history (here: a view, no launch)."""
        return self.detach()

    @data.setter
    def data(self, new: Tensor) -> None:
        if not isinstance(new, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(new).__name__}")
        requires_grad, grad = self.requires_grad, self.grad
        self._set(new._a, new._device, new._storage)
        self.requires_grad, self.grad = requires_grad, grad

    def __deepcopy__(self, memo: dict[Any, Any]) -> Tensor:
        """A copy over new memory with the same offset, sizes and strides; tensors sharing a
        storage share the copy's (torch memoizes the storage). One launch per storage: the
        bytes' copy."""
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        from fake_torch._dtype import uint8
        from fake_torch._factories import empty

        storage = self.untyped_storage()
        key = ("fake_torch.storage", str(self._device), storage.data_ptr(), storage.nbytes())
        if key not in memo:
            raw = empty(0, dtype=uint8, device=self._device).set_(storage, 0,
                                                                  (storage.nbytes(),), (1,))
            memo[key] = raw.clone().untyped_storage()
        new = empty(0, dtype=self._dtype, device=self._device).set_(
            memo[key], self.storage_offset(), self.shape, self.stride())
        new.requires_grad = self.requires_grad
        memo[id(self)] = new
        return new

    def detach(self) -> Tensor:
        return Tensor._make(self._a, self._device, self._storage)  # a view: no launch

    def detach_(self) -> Tensor:
        return self

    # --- host reads: a device-to-host copy and a sync when the tensor is on cuda ---------------

    def _host_array(self, what: str) -> np.ndarray:
        if self.is_cuda:  # a device-to-host copy into pageable memory, then the host waits
            host = np.empty(self._a.shape, self._a.dtype)
            _dispatch.launch("_to_copy", np.copyto, (host,), (self._a,), on_cuda=True,
                             kind="memcpy_d2h")
            _dispatch.host_sync(what)
            return host
        return self._a

    def item(self) -> Any:
        if self._a.size != 1:
            raise RuntimeError(f"a Tensor with {self._a.size} elements cannot be converted to "
                               "Scalar")
        if self.is_cuda:
            _dispatch.host_sync("item")
            _dispatch.launch("_local_scalar_dense", _noop, (), (self._a,), on_cuda=True,
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
        return int(self._a.shape[0])

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
    # views: no launches
    def view(self, *shape: Any) -> Tensor:
        return _shape.view(self, *shape)

    def view_as(self, other: Tensor) -> Tensor:
        return _shape.view_as(self, other)

    def reshape(self, *shape: Any) -> Tensor:
        return _shape.reshape(self, shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return _shape.reshape_as(self, other)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return _shape.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        return _shape.unflatten(self, dim, sizes)

    def unsqueeze(self, dim: int) -> Tensor:
        return _shape.unsqueeze(self, dim)

    def squeeze(self, dim: int | Sequence[int] | None = None) -> Tensor:
        return _shape.squeeze(self, dim)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _shape.transpose(self, dim0, dim1)

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return _shape.swapaxes(self, axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        return _shape.swapdims(self, dim0, dim1)

    def permute(self, *dims: Any) -> Tensor:
        return _shape.permute(self, *dims)

    def t(self) -> Tensor:
        return _shape.t(self)

    @property
    def T(self) -> Tensor:
        return _shape.numpy_T(self)

    @property
    def mT(self) -> Tensor:
        return _shape.mT(self)

    def adjoint(self) -> Tensor:
        return _shape.adjoint(self)

    def movedim(self, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
        return _shape.movedim(self, source, destination)

    def moveaxis(self, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
        return _shape.moveaxis(self, source, destination)

    def expand(self, *sizes: Any) -> Tensor:
        return _shape.expand(self, *sizes)

    def expand_as(self, other: Tensor) -> Tensor:
        return _shape.expand_as(self, other)

    def broadcast_to(self, size: Sequence[int]) -> Tensor:
        return _shape.broadcast_to(self, size)

    def as_strided(self, size: Sequence[int], stride: Sequence[int],
                   storage_offset: int | None = None) -> Tensor:
        return _shape.as_strided(self, size, stride, storage_offset)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return _shape.diagonal(self, offset, dim1, dim2)

    def narrow(self, dim: int, start: int | Tensor, length: int) -> Tensor:
        return _shape.narrow(self, dim, start, length)

    def select(self, dim: int, index: int) -> Tensor:
        return _shape.select(self, dim, index)

    def split(self, split_size: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
        return _shape.split(self, split_size, dim)

    def split_with_sizes(self, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
        return _shape.split_with_sizes(self, split_sizes, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return _shape.chunk(self, chunks, dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return _shape.unbind(self, dim)

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        return _shape.tensor_split(self, indices_or_sections, dim)

    # dense copies: "clone" when a copy is needed
    def contiguous(self, memory_format: object = None) -> Tensor:
        return _shape.contiguous(self, memory_format)

    def clone(self, *, memory_format: object = None) -> Tensor:
        return _shape.clone(self, memory_format=memory_format)

    # indexing
    def __getitem__(self, index: Any) -> Tensor:
        return _indexing.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        _indexing.setitem(self, index, value)

    def index_put_(self, indices: Sequence[Tensor | None], values: Tensor,
                   accumulate: bool = False) -> Tensor:
        return _indexing.index_put_(self, indices, values, accumulate)

    def index_put(self, indices: Sequence[Tensor | None], values: Tensor,
                  accumulate: bool = False) -> Tensor:
        return _indexing.index_put(self, indices, values, accumulate)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return _indexing.index_select(self, dim, index)

    def gather(self, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
        return _indexing.gather(self, dim, index, sparse_grad=sparse_grad)

    def scatter(self, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> Tensor:
        return _indexing.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_(self, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
                 reduce: str | None = None) -> Tensor:
        return _indexing.scatter_(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _indexing.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return _indexing.scatter_add_(self, dim, index, src)

    def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return _indexing.index_copy(self, dim, index, source)

    def index_copy_(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return _indexing.index_copy_(self, dim, index, source)

    def index_fill(self, dim: int, index: Tensor, value: Tensor | Number) -> Tensor:
        return _indexing.index_fill(self, dim, index, value)

    def index_fill_(self, dim: int, index: Tensor, value: Tensor | Number) -> Tensor:
        return _indexing.index_fill_(self, dim, index, value)

    def masked_fill(self, mask: Tensor, value: Tensor | Number) -> Tensor:
        return _indexing.masked_fill(self, mask, value)

    def masked_fill_(self, mask: Tensor, value: Tensor | Number) -> Tensor:
        return _indexing.masked_fill_(self, mask, value)

    def masked_select(self, mask: Tensor) -> Tensor:
        return _indexing.masked_select(self, mask)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        return _indexing.nonzero(self, as_tuple=as_tuple)

    def argwhere(self) -> Tensor:
        return _indexing.argwhere(self)

    def take_along_dim(self, indices: Tensor, dim: int | None = None) -> Tensor:
        return _indexing.take_along_dim(self, indices, dim)

    def take(self, index: Tensor) -> Tensor:
        return _indexing.take(self, index)

    # joining, tiling, reordering: one launch each
    def repeat(self, *sizes: Any) -> Tensor:
        return _join.repeat(self, *sizes)

    def tile(self, *dims: Any) -> Tensor:
        return _join.tile(self, dims)

    def repeat_interleave(self, repeats: int | Tensor, dim: int | None = None, *,
                          output_size: int | None = None) -> Tensor:
        return _join.repeat_interleave(self, repeats, dim, output_size=output_size)

    def flip(self, *dims: Any) -> Tensor:
        return _join.flip(self, *dims)

    def fliplr(self) -> Tensor:
        return _join.fliplr(self)

    def flipud(self) -> Tensor:
        return _join.flipud(self)

    def roll(self, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
             ) -> Tensor:
        return _join.roll(self, shifts, dims)

    def tril(self, diagonal: int = 0) -> Tensor:
        return _join.tril(self, diagonal)

    def tril_(self, diagonal: int = 0) -> Tensor:
        return _join.tril_(self, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        return _join.triu(self, diagonal)

    def triu_(self, diagonal: int = 0) -> Tensor:
        return _join.triu_(self, diagonal)

    def diag(self, diagonal: int = 0) -> Tensor:
        return _join.diag(self, diagonal)
    # === end shape ===

    # === pointwise, comparisons, casts (owner: _ops/pointwise.py) ===
    __array_priority__ = 1000  # numpy defers to Tensor's reflected operators (np.float32(2) * x)

    # arithmetic
    def add(self, other: Tensor | Number, *, alpha: Number = 1,
            out: Tensor | None = None) -> Tensor:
        return _pointwise.add(self, other, alpha=alpha, out=out)

    def add_(self, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
        return _pointwise.add_(self, other, alpha=alpha)

    def sub(self, other: Tensor | Number, *, alpha: Number = 1,
            out: Tensor | None = None) -> Tensor:
        return _pointwise.sub(self, other, alpha=alpha, out=out)

    def sub_(self, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
        return _pointwise.sub_(self, other, alpha=alpha)

    subtract, subtract_ = sub, sub_

    def mul(self, other: Tensor | Number, *, out: Tensor | None = None) -> Tensor:
        return _pointwise.mul(self, other, out=out)

    def mul_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.mul_(self, other)

    multiply, multiply_ = mul, mul_

    def div(self, other: Tensor | Number, *, rounding_mode: str | None = None,
            out: Tensor | None = None) -> Tensor:
        return _pointwise.div(self, other, rounding_mode=rounding_mode, out=out)

    def div_(self, other: Tensor | Number, *, rounding_mode: str | None = None) -> Tensor:
        return _pointwise.div_(self, other, rounding_mode=rounding_mode)

    divide, divide_ = div, div_

    def true_divide(self, other: Tensor | Number) -> Tensor:
        return _pointwise.true_divide(self, other)

    def true_divide_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.true_divide_(self, other)

    def floor_divide(self, other: Tensor | Number) -> Tensor:
        return _pointwise.floor_divide(self, other)

    def floor_divide_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.floor_divide_(self, other)

    def remainder(self, other: Tensor | Number) -> Tensor:
        return _pointwise.remainder(self, other)

    def remainder_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.remainder_(self, other)

    def pow(self, exponent: Tensor | Number) -> Tensor:
        return _pointwise.pow(self, exponent)

    def pow_(self, exponent: Tensor | Number) -> Tensor:
        return _pointwise.pow_(self, exponent)

    def square(self) -> Tensor:
        return _pointwise.square(self)

    def square_(self) -> Tensor:
        return _pointwise.square_(self)

    def lerp(self, end: Tensor, weight: Tensor | Number) -> Tensor:
        return _pointwise.lerp(self, end, weight)

    def lerp_(self, end: Tensor, weight: Tensor | Number) -> Tensor:
        return _pointwise.lerp_(self, end, weight)

    def neg(self) -> Tensor:
        return _pointwise.neg(self)

    def neg_(self) -> Tensor:
        return _pointwise.neg_(self)

    negative, negative_ = neg, neg_

    def abs(self) -> Tensor:
        return _pointwise.abs(self)

    def abs_(self) -> Tensor:
        return _pointwise.abs_(self)

    absolute, absolute_ = abs, abs_

    def sign(self) -> Tensor:
        return _pointwise.sign(self)

    def sign_(self) -> Tensor:
        return _pointwise.sign_(self)

    def positive(self) -> Tensor:
        return _pointwise.positive(self)

    # unary math and activations
    def exp(self) -> Tensor:
        return _pointwise.exp(self)

    def exp_(self) -> Tensor:
        return _pointwise.exp_(self)

    def log(self) -> Tensor:
        return _pointwise.log(self)

    def log_(self) -> Tensor:
        return _pointwise.log_(self)

    def log1p(self) -> Tensor:
        return _pointwise.log1p(self)

    def log1p_(self) -> Tensor:
        return _pointwise.log1p_(self)

    def sqrt(self) -> Tensor:
        return _pointwise.sqrt(self)

    def sqrt_(self) -> Tensor:
        return _pointwise.sqrt_(self)

    def rsqrt(self) -> Tensor:
        return _pointwise.rsqrt(self)

    def rsqrt_(self) -> Tensor:
        return _pointwise.rsqrt_(self)

    def reciprocal(self) -> Tensor:
        return _pointwise.reciprocal(self)

    def reciprocal_(self) -> Tensor:
        return _pointwise.reciprocal_(self)

    def sin(self) -> Tensor:
        return _pointwise.sin(self)

    def sin_(self) -> Tensor:
        return _pointwise.sin_(self)

    def cos(self) -> Tensor:
        return _pointwise.cos(self)

    def cos_(self) -> Tensor:
        return _pointwise.cos_(self)

    def tanh(self) -> Tensor:
        return _pointwise.tanh(self)

    def tanh_(self) -> Tensor:
        return _pointwise.tanh_(self)

    def sigmoid(self) -> Tensor:
        return _pointwise.sigmoid(self)

    def sigmoid_(self) -> Tensor:
        return _pointwise.sigmoid_(self)

    def erf(self) -> Tensor:
        return _pointwise.erf(self)

    def erf_(self) -> Tensor:
        return _pointwise.erf_(self)

    def relu(self) -> Tensor:
        return _pointwise.relu(self)

    def relu_(self) -> Tensor:
        return _pointwise.relu_(self)

    # rounding, clamping
    def floor(self) -> Tensor:
        return _pointwise.floor(self)

    def floor_(self) -> Tensor:
        return _pointwise.floor_(self)

    def ceil(self) -> Tensor:
        return _pointwise.ceil(self)

    def ceil_(self) -> Tensor:
        return _pointwise.ceil_(self)

    def trunc(self) -> Tensor:
        return _pointwise.trunc(self)

    def trunc_(self) -> Tensor:
        return _pointwise.trunc_(self)

    fix, fix_ = trunc, trunc_

    def round(self, decimals: int = 0) -> Tensor:
        return _pointwise.round(self, decimals=decimals)

    def round_(self, decimals: int = 0) -> Tensor:
        return _pointwise.round_(self, decimals=decimals)

    def clamp(self, min: Tensor | Number | None = None,
              max: Tensor | Number | None = None) -> Tensor:
        return _pointwise.clamp(self, min, max)

    def clamp_(self, min: Tensor | Number | None = None,
               max: Tensor | Number | None = None) -> Tensor:
        return _pointwise.clamp_(self, min, max)

    clip, clip_ = clamp, clamp_

    def clamp_min(self, min: Tensor | Number) -> Tensor:
        return _pointwise.clamp_min(self, min)

    def clamp_min_(self, min: Tensor | Number) -> Tensor:
        return _pointwise.clamp_min_(self, min)

    def clamp_max(self, max: Tensor | Number) -> Tensor:
        return _pointwise.clamp_max(self, max)

    def clamp_max_(self, max: Tensor | Number) -> Tensor:
        return _pointwise.clamp_max_(self, max)

    def minimum(self, other: Tensor) -> Tensor:
        return _pointwise.minimum(self, other)

    def maximum(self, other: Tensor) -> Tensor:
        return _pointwise.maximum(self, other)

    # comparisons, logical, bitwise
    def eq(self, other: Tensor | Number) -> Tensor:
        return _pointwise.eq(self, other)

    def eq_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.eq_(self, other)

    def ne(self, other: Tensor | Number) -> Tensor:
        return _pointwise.ne(self, other)

    def ne_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.ne_(self, other)

    def lt(self, other: Tensor | Number) -> Tensor:
        return _pointwise.lt(self, other)

    def lt_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.lt_(self, other)

    def le(self, other: Tensor | Number) -> Tensor:
        return _pointwise.le(self, other)

    def le_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.le_(self, other)

    def gt(self, other: Tensor | Number) -> Tensor:
        return _pointwise.gt(self, other)

    def gt_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.gt_(self, other)

    def ge(self, other: Tensor | Number) -> Tensor:
        return _pointwise.ge(self, other)

    def ge_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.ge_(self, other)

    not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge

    def logical_and(self, other: Tensor) -> Tensor:
        return _pointwise.logical_and(self, other)

    def logical_and_(self, other: Tensor) -> Tensor:
        return _pointwise.logical_and_(self, other)

    def logical_or(self, other: Tensor) -> Tensor:
        return _pointwise.logical_or(self, other)

    def logical_or_(self, other: Tensor) -> Tensor:
        return _pointwise.logical_or_(self, other)

    def logical_xor(self, other: Tensor) -> Tensor:
        return _pointwise.logical_xor(self, other)

    def logical_xor_(self, other: Tensor) -> Tensor:
        return _pointwise.logical_xor_(self, other)

    def logical_not(self) -> Tensor:
        return _pointwise.logical_not(self)

    def logical_not_(self) -> Tensor:
        return _pointwise.logical_not_(self)

    def bitwise_and(self, other: Tensor | Number) -> Tensor:
        return _pointwise.bitwise_and(self, other)

    def bitwise_and_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.bitwise_and_(self, other)

    def bitwise_or(self, other: Tensor | Number) -> Tensor:
        return _pointwise.bitwise_or(self, other)

    def bitwise_or_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.bitwise_or_(self, other)

    def bitwise_xor(self, other: Tensor | Number) -> Tensor:
        return _pointwise.bitwise_xor(self, other)

    def bitwise_xor_(self, other: Tensor | Number) -> Tensor:
        return _pointwise.bitwise_xor_(self, other)

    def bitwise_not(self) -> Tensor:
        return _pointwise.bitwise_not(self)

    def bitwise_not_(self) -> Tensor:
        return _pointwise.bitwise_not_(self)

    def bitwise_left_shift(self, other: Tensor | Number) -> Tensor:
        return _pointwise.bitwise_left_shift(self, other)

    def bitwise_right_shift(self, other: Tensor | Number) -> Tensor:
        return _pointwise.bitwise_right_shift(self, other)

    def isnan(self) -> Tensor:
        return _pointwise.isnan(self)

    def isinf(self) -> Tensor:
        return _pointwise.isinf(self)

    def isfinite(self) -> Tensor:
        return _pointwise.isfinite(self)

    def where(self, condition: Tensor, other: Tensor | Number) -> Tensor:
        return _pointwise.where(condition, self, other)  # type: ignore[no-any-return]

    def isclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> Tensor:
        return _pointwise.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        return _pointwise.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: Tensor) -> bool:
        return _pointwise.equal(self, other)

    # casts and moves (float(), int(), bool(), type() are in the base class TensorCasts)
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        return _pointwise.tensor_to(self, *args, **kwargs)

    def cuda(self, device: Any = None, non_blocking: bool = False,
             memory_format: object = None) -> Tensor:
        return _pointwise.cuda(self, device, non_blocking, memory_format)

    def cpu(self, memory_format: object = None) -> Tensor:
        return _pointwise.cpu(self, memory_format)

    def double(self, memory_format: object = None) -> Tensor:
        return _pointwise.double(self, memory_format)

    def half(self, memory_format: object = None) -> Tensor:
        return _pointwise.half(self, memory_format)

    def bfloat16(self, memory_format: object = None) -> Tensor:
        return _pointwise.bfloat16_(self, memory_format)

    def long(self, memory_format: object = None) -> Tensor:
        return _pointwise.long(self, memory_format)

    def short(self, memory_format: object = None) -> Tensor:
        return _pointwise.short(self, memory_format)

    def char(self, memory_format: object = None) -> Tensor:
        return _pointwise.char(self, memory_format)

    def byte(self, memory_format: object = None) -> Tensor:
        return _pointwise.byte(self, memory_format)

    def type_as(self, other: Tensor) -> Tensor:
        return _pointwise.type_as(self, other)

    def copy_(self, src: Tensor | Number, non_blocking: bool = False) -> Tensor:
        return _pointwise.copy_(self, src, non_blocking)

    def fill_(self, value: Tensor | Number) -> Tensor:
        return _pointwise.fill_(self, value)

    def zero_(self) -> Tensor:
        return _pointwise.zero_(self)

    # Python operators (NotImplemented for operands torch does not take)
    def __add__(self, other: Any) -> Any:
        return _pointwise.operators.add(self, other)

    __radd__ = __add__

    def __iadd__(self, other: Any) -> Any:
        return _pointwise.operators.iadd(self, other)

    def __sub__(self, other: Any) -> Any:
        return _pointwise.operators.sub(self, other)

    def __rsub__(self, other: Any) -> Any:
        return _pointwise.operators.rsub(self, other)

    def __isub__(self, other: Any) -> Any:
        return _pointwise.operators.isub(self, other)

    def __mul__(self, other: Any) -> Any:
        return _pointwise.operators.mul(self, other)

    __rmul__ = __mul__

    def __imul__(self, other: Any) -> Any:
        return _pointwise.operators.imul(self, other)

    def __truediv__(self, other: Any) -> Any:
        return _pointwise.operators.truediv(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return _pointwise.operators.rtruediv(self, other)

    def __itruediv__(self, other: Any) -> Any:
        return _pointwise.operators.itruediv(self, other)

    def __floordiv__(self, other: Any) -> Any:
        return _pointwise.operators.floordiv(self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _pointwise.operators.rfloordiv(self, other)

    def __ifloordiv__(self, other: Any) -> Any:
        return _pointwise.operators.ifloordiv(self, other)

    def __mod__(self, other: Any) -> Any:
        return _pointwise.operators.mod(self, other)

    def __rmod__(self, other: Any) -> Any:
        return _pointwise.operators.rmod(self, other)

    def __imod__(self, other: Any) -> Any:
        return _pointwise.operators.imod(self, other)

    def __pow__(self, other: Any) -> Any:
        return _pointwise.operators.pow(self, other)

    def __rpow__(self, other: Any) -> Any:
        return _pointwise.operators.rpow(self, other)

    def __ipow__(self, other: Any) -> Any:
        return _pointwise.operators.ipow(self, other)

    def __and__(self, other: Any) -> Any:
        return _pointwise.operators.and_(self, other)

    __rand__ = __and__

    def __iand__(self, other: Any) -> Any:
        return _pointwise.operators.iand(self, other)

    def __or__(self, other: Any) -> Any:
        return _pointwise.operators.or_(self, other)

    __ror__ = __or__

    def __ior__(self, other: Any) -> Any:
        return _pointwise.operators.ior(self, other)

    def __xor__(self, other: Any) -> Any:
        return _pointwise.operators.xor(self, other)

    __rxor__ = __xor__

    def __ixor__(self, other: Any) -> Any:
        return _pointwise.operators.ixor(self, other)

    def __lshift__(self, other: Any) -> Any:
        return _pointwise.operators.lshift(self, other)

    def __rlshift__(self, other: Any) -> Any:
        return _pointwise.operators.rlshift(self, other)

    def __ilshift__(self, other: Any) -> Any:
        return _pointwise.operators.ilshift(self, other)

    def __rshift__(self, other: Any) -> Any:
        return _pointwise.operators.rshift(self, other)

    def __rrshift__(self, other: Any) -> Any:
        return _pointwise.operators.rrshift(self, other)

    def __irshift__(self, other: Any) -> Any:
        return _pointwise.operators.irshift(self, other)

    def __neg__(self) -> Tensor:
        return _pointwise.neg(self)

    def __pos__(self) -> Tensor:
        return _pointwise.positive(self)

    def __abs__(self) -> Tensor:
        return _pointwise.abs(self)

    def __invert__(self) -> Tensor:
        return _pointwise.operators.invert(self)

    def __eq__(self, other: object) -> Any:
        return _pointwise.operators.eq(self, other)

    def __ne__(self, other: object) -> Any:
        return _pointwise.operators.ne(self, other)

    def __lt__(self, other: Any) -> Any:
        return _pointwise.operators.lt(self, other)

    def __le__(self, other: Any) -> Any:
        return _pointwise.operators.le(self, other)

    def __gt__(self, other: Any) -> Any:
        return _pointwise.operators.gt(self, other)

    def __ge__(self, other: Any) -> Any:
        return _pointwise.operators.ge(self, other)

    # === end pointwise ===

    # === reductions & linalg (owner: _ops/reduction.py, _ops/linalg.py) ===
    def sum(self, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
            dtype: DType | None = None) -> Tensor:
        return _reduction.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
             dtype: DType | None = None) -> Tensor:
        return _reduction.mean(self, dim, keepdim, dtype=dtype)

    def prod(self, dim: int | None = None, keepdim: bool = False, *,
             dtype: DType | None = None) -> Tensor:
        return _reduction.prod(self, dim, keepdim, dtype=dtype)

    def max(self, dim: int | Tensor | None = None, keepdim: bool = False) -> Any:
        return _reduction.max(self, dim, keepdim)  # type: ignore[arg-type]

    def min(self, dim: int | Tensor | None = None, keepdim: bool = False) -> Any:
        return _reduction.min(self, dim, keepdim)  # type: ignore[arg-type]

    def amax(self, dim: int | Sequence[int] = (), keepdim: bool = False) -> Tensor:
        return _reduction.amax(self, dim, keepdim)

    def amin(self, dim: int | Sequence[int] = (), keepdim: bool = False) -> Tensor:
        return _reduction.amin(self, dim, keepdim)

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return _reduction.argmax(self, dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return _reduction.argmin(self, dim, keepdim)

    def all(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        return _reduction.all(self, dim, keepdim)

    def any(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        return _reduction.any(self, dim, keepdim)

    def var(self, dim: int | Sequence[int] | bool | None = None, unbiased: bool | None = None,
            keepdim: bool = False, *, correction: Number | None = None) -> Tensor:
        return _reduction.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim: int | Sequence[int] | bool | None = None, unbiased: bool | None = None,
            keepdim: bool = False, *, correction: Number | None = None) -> Tensor:
        return _reduction.std(self, dim, unbiased, keepdim, correction=correction)

    def norm(self, p: float | str | None = "fro", dim: int | Sequence[int] | None = None,
             keepdim: bool = False, dtype: DType | None = None) -> Tensor:
        return _reduction.norm(self, p, dim, keepdim, dtype=dtype)

    def softmax(self, dim: int, dtype: DType | None = None) -> Tensor:
        return _reduction.softmax(self, dim, dtype)

    def log_softmax(self, dim: int, dtype: DType | None = None) -> Tensor:
        return _reduction.log_softmax(self, dim, dtype)

    def cumsum(self, dim: int, *, dtype: DType | None = None) -> Tensor:
        return _reduction.cumsum(self, dim, dtype=dtype)

    def cumsum_(self, dim: int, *, dtype: DType | None = None) -> Tensor:
        return _reduction.cumsum_(self, dim, dtype=dtype)

    def topk(self, k: int, dim: int = -1, largest: bool = True,
             sorted: bool = True) -> tuple[Tensor, Tensor]:
        return _reduction.topk(self, k, dim, largest, sorted)

    def sort(self, dim: int = -1, descending: bool = False, *,
             stable: bool = False) -> tuple[Tensor, Tensor]:
        return _reduction.sort(self, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
        return _reduction.argsort(self, dim, descending, stable=stable)

    def matmul(self, other: Tensor) -> Tensor:
        return _linalg.matmul(self, other)

    def __matmul__(self, other: Tensor) -> Tensor:
        return _linalg.matmul(self, other) if isinstance(other, Tensor) else NotImplemented

    def __rmatmul__(self, other: object) -> Any:
        return _linalg.rmatmul(self, other)

    def mm(self, mat2: Tensor) -> Tensor:
        return _linalg.mm(self, mat2)

    def bmm(self, mat2: Tensor) -> Tensor:
        return _linalg.bmm(self, mat2)

    def dot(self, tensor: Tensor) -> Tensor:
        return _linalg.dot(self, tensor)

    def mv(self, vec: Tensor) -> Tensor:
        return _linalg.mv(self, vec)

    def outer(self, vec2: Tensor) -> Tensor:
        return _linalg.outer(self, vec2)

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: Number = 1,
              alpha: Number = 1) -> Tensor:
        return _linalg.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmm_(self, mat1: Tensor, mat2: Tensor, *, beta: Number = 1,
               alpha: Number = 1) -> Tensor:
        return _linalg.addmm_(self, mat1, mat2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
                alpha: Number = 1) -> Tensor:
        return _linalg.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def baddbmm_(self, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
                 alpha: Number = 1) -> Tensor:
        return _linalg.baddbmm_(self, batch1, batch2, beta=beta, alpha=alpha)

    # === end reductions ===

    # === random (owner: _ops/random.py) ===
    # (Number/Scalar, not int/float/bool: Tensor's .int()/.float()/.bool() shadow those here)
    def uniform_(self, *args: Number, generator: Any = None, **kwargs: Number) -> Tensor:
        return _random.uniform_(self, *args, generator=generator, **kwargs)

    def normal_(self, mean: Number = 0, std: Number = 1, *, generator: Any = None) -> Tensor:
        return _random.normal_(self, mean, std, generator=generator)

    def exponential_(self, lambd: Number = 1, *, generator: Any = None) -> Tensor:
        return _random.exponential_(self, lambd, generator=generator)

    def bernoulli_(self, p: Tensor | Number = 0.5, *, generator: Any = None) -> Tensor:
        return _random.bernoulli_(self, p, generator=generator)

    def bernoulli(self, p: Number | None = None, *, generator: Any = None) -> Tensor:
        return _random.bernoulli(self, p, generator=generator)

    def random_(self, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:  # ints
        return _random.random_(self, *args, generator=generator, **kwargs)

    def multinomial(self, num_samples: Any, replacement: Any = False, *,  # int, bool
                    generator: Any = None) -> Tensor:
        return _random.multinomial(self, num_samples, replacement, generator=generator)

    # === end random ===


def _noop(*arrays: np.ndarray) -> None:
    """The kernel of a launch whose data movement happens on the host side (a D2H read)."""


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim-1] as a non-negative index; torch's IndexError otherwise."""
    lo, hi = (-max(ndim, 1), max(ndim, 1) - 1)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but "
                         f"got {dim})")
    return dim % max(ndim, 1)


def base_array(a: np.ndarray) -> np.ndarray:
    """The storage a numpy view looks into: the outermost ndarray of its base chain, followed
    through the non-array links numpy's stride tricks insert (as_strided's DummyArray)."""
    root, base = a, a.base
    while base is not None:
        if isinstance(base, np.ndarray):
            root = base
        base = getattr(base, "base", None)
    return root


def wrap_dim(dim: int, ndim: int) -> int:
    """Public to the op modules: normalise a possibly negative dim as torch does."""
    return _wrap_dim(dim, ndim)


# The op modules import Tensor, so they come last; the methods above find them at call time.
from fake_torch import _storage as _storage_ops  # noqa: E402
from fake_torch._kernels import indexing as _indexing  # noqa: E402
from fake_torch._kernels import join as _join  # noqa: E402
from fake_torch._kernels import linalg as _linalg  # noqa: E402
from fake_torch._kernels import pointwise as _pointwise  # noqa: E402
from fake_torch._kernels import random as _random  # noqa: E402
from fake_torch._kernels import reduction as _reduction  # noqa: E402
from fake_torch._kernels import shape as _shape  # noqa: E402
