"""Tensor: a view (shape, strides, offset, dtype, device) over a numpy storage buffer.

`_a` is a numpy view; slicing, `view`, `transpose` make new numpy views of the same storage, so
aliasing, in-place updates through views and `data_ptr()` behave as in torch.

The methods that are ops (`add`, `view`, `__add__`, `item`, ...) come from their definitions,
installed on the base class TensorBase (fake_torch._opdef). What is written here is the
metadata (shape, dtype, stride, data_ptr, ...), which launches nothing; like every Tensor
attribute torch dispatches, each goes through `__torch_function__` when a mode or subclass asks
for it (`_TF.enabled`), else answers at once. `__torch_function__` itself is torch's default:
a subclass's ops return that subclass.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import numpy as np

from fake_torch import _torch_function as _tf
from fake_torch._dtype import dtype, from_numpy_dtype, get_default_dtype
from fake_torch._layout import layout as _Layout
from fake_torch._layout import strided
from fake_torch._memory_format import (
    contiguous_format,
    is_contiguous_as,
    memory_format,
    memory_format_arg,
)
from fake_torch._simulated import _machine
from fake_torch._simulated._allocator import Storage
from fake_torch._tensor_base import TensorBase
from fake_torch._torch_device import device

if TYPE_CHECKING:
    from fake_torch._storage import UntypedStorage

Scalar = bool | int | float | complex
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

    def __reduce__(self) -> tuple[type[Size], tuple[tuple[int, ...]]]:
        return (Size, (tuple(self),))  # as torch pickles it: Size((2, 3))


_TF = _tf.state  # `_TF.enabled`: a mode or a subclass wants to see metadata calls
# who sees each new tensor over device memory: the CUDA sanitizer while it is on, else None
_watch: Callable[[Tensor], None] | None = None
TensorT = TypeVar("TensorT", bound="Tensor")


class _Hooks:
    """What Tensor's own methods need of modules that import this one, registered by them when
    they are imported (imports point down, and no circle: fake_torch/_tools/_layers.py):
    torch.tensor and torch.empty (fake_torch/_factories.py) for the legacy constructor and
    deepcopy, the default tensor type's device (fake_torch/_default_tensor_type.py), torch._utils'
    reduce (fake_torch/_utils.py) for pickle, the storage of a tensor (fake_torch/_storage.py)."""

    tensor: Callable[..., Tensor]
    empty: Callable[..., Tensor]
    legacy_device: Callable[[], str]
    reduce_tensor: Callable[[Tensor], tuple[Callable[..., Tensor], tuple[Any, ...]]]
    untyped_storage: Callable[[Tensor], UntypedStorage]


hooks: _Hooks = _Hooks()


def _meta(func: Any, impl: Any, *args: Any) -> Any:
    """A metadata call while some mode or subclass may want it (torch dispatches it too)."""
    return _tf.handle(func, impl, args, {})


class Tensor(TensorBase):
    """A torch-shaped tensor over numpy storage. Build one with the factories (`torch.tensor`,
    `torch.zeros`, ...); `Tensor(sequence)` is torch's legacy float32 constructor."""

    _a: np.ndarray
    _dtype: dtype
    _device: device
    _storage: Storage | None
    _requires_grad: bool
    grad: Tensor | None
    __array_priority__ = 1000  # numpy defers to Tensor's reflected operators (np.float32(2) * x)

    def __init__(self, *args: Any) -> None:
        # the default tensor type's legacy constructor
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            made = hooks.tensor(args[0], dtype=get_default_dtype(),
                                     device=hooks.legacy_device())
        elif all(isinstance(a, int) for a in args):
            made = hooks.empty(*args, device=hooks.legacy_device())
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
            storage = _machine.MACHINE.storage_of(a)
        self._storage = storage
        self._requires_grad = False
        self.grad = None
        if _watch is not None and storage is not None:
            _watch(self)

    @classmethod
    def _make(cls, a: np.ndarray, dev: device, storage: Storage | None = None,
              dt: dtype | None = None) -> Tensor:
        """Wrap a numpy view (no copy) as a Tensor on `dev` (`dt`: a's dtype, when the caller
        already knows it)."""
        t = object.__new__(Tensor)
        t._set(a, dev, storage, dt)
        return t

    # --- subclasses: torch's __torch_function__ protocol -------------------------------------

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if getattr(cls, "_torch_function_on_first_instance", False):
            return  # library classes rarely instantiated: they enable it when they are
        if getattr(cls, "__torch_function__", None) is not _tf._disabled_torch_function_impl:
            _tf.enable_subclasses()  # its instances take part in dispatch from now on

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        """torch's default: run `func` with subclass dispatch off, and hand back a Tensor
        result as an instance of `cls` (so a subclass's ops keep the subclass)."""
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with _tf.DisableTorchFunctionSubclass():
            return _convert(func(*args, **(kwargs or {})), cls)

    def as_subclass(self, cls: type[TensorT]) -> TensorT:
        """The same memory and metadata as an instance of `cls` (a Tensor subclass); nothing
        is copied and cls.__init__ does not run."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                            "Tensor is not possible. Make sure your class inherits from Tensor.")
        t = object.__new__(cls)
        t._set(self._a, self._device, self._storage, self._dtype)
        t.requires_grad = self.requires_grad
        return t

    @staticmethod
    def _make_subclass(cls: type[TensorT], data: Tensor, require_grad: bool = False) -> TensorT:
        """torch.Tensor._make_subclass: `data`'s memory as an instance of `cls` (how
        nn.Parameter-like subclasses wrap a tensor)."""
        t = data.as_subclass(cls)
        t.requires_grad = require_grad
        return t

    # --- metadata: no launches -----------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        """Whether autograd would record ops on this tensor (stored only: no autograd here)."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, requires_grad: bool) -> None:
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self._requires_grad = requires_grad

    @property
    def shape(self) -> Size:
        if _TF.enabled:
            return _meta(_GETTERS["shape"], _shape, self)  # type: ignore[no-any-return]
        return Size(self._a.shape)

    def size(self, dim: int | None = None) -> Any:
        if _TF.enabled:
            return _meta(Tensor.size, _size, self, *(() if dim is None else (dim,)))
        return _size(self, dim)

    def dim(self) -> int:
        if _TF.enabled:
            return _meta(Tensor.dim, _ndim, self)  # type: ignore[no-any-return]
        return self._a.ndim

    @property
    def ndim(self) -> int:
        if _TF.enabled:
            return _meta(_GETTERS["ndim"], _ndim, self)  # type: ignore[no-any-return]
        return self._a.ndim

    def ndimension(self) -> int:
        return self.dim()

    def numel(self) -> int:
        if _TF.enabled:
            return _meta(Tensor.numel, _numel, self)  # type: ignore[no-any-return]
        return int(self._a.size)

    def nelement(self) -> int:
        return self.numel()

    @property
    def dtype(self) -> dtype:
        if _TF.enabled:
            return _meta(_GETTERS["dtype"], _dtype, self)  # type: ignore[no-any-return]
        return self._dtype

    @property
    def device(self) -> device:
        if _TF.enabled:
            return _meta(_GETTERS["device"], _device, self)  # type: ignore[no-any-return]
        return self._device

    @property
    def is_cuda(self) -> bool:
        if _TF.enabled:
            return _meta(_GETTERS["is_cuda"], _is_cuda, self)  # type: ignore[no-any-return]
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        if _TF.enabled:
            return _meta(_GETTERS["is_cpu"], _is_cpu, self)  # type: ignore[no-any-return]
        return self._device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        """A tensor of the meta device: shape, dtype and strides, no data (fake_torch/_meta.py)."""
        if _TF.enabled:
            return _meta(_GETTERS["is_meta"], _is_meta, self)  # type: ignore[no-any-return]
        return self._device.type == "meta"

    @property
    def layout(self) -> _Layout:
        """torch.strided: every fake_torch tensor is dense."""
        return strided

    @property
    def is_leaf(self) -> bool:
        return True

    @property
    def grad_fn(self) -> None:
        return None

    def is_floating_point(self) -> bool:
        if _TF.enabled:
            return _meta(Tensor.is_floating_point, _is_floating_point, self)  # type: ignore[no-any-return]
        return self._dtype.is_floating_point

    def stride(self, dim: int | None = None) -> Any:
        if _TF.enabled:
            return _meta(Tensor.stride, _stride, self, *(() if dim is None else (dim,)))
        itemsize = self._a.itemsize
        strides = tuple([s // itemsize for s in self._a.strides])
        return strides if dim is None else strides[_wrap_dim(dim, self._a.ndim)]

    def storage_offset(self) -> int:
        if _TF.enabled:
            return _meta(Tensor.storage_offset, _storage_offset, self)  # type: ignore[no-any-return]
        return _storage_offset(self)

    def is_contiguous(self, *, memory_format: memory_format = contiguous_format) -> bool:
        """Dense in the format's dim order (row-major by default; torch.channels_last: NHWC)."""
        if _TF.enabled:
            kwargs = {} if memory_format is contiguous_format else {"memory_format": memory_format}
            return _tf.handle(Tensor.is_contiguous, _is_contiguous,  # type: ignore[no-any-return]
                              (self,), kwargs)
        return _is_contiguous(self, memory_format)

    def data_ptr(self) -> int:
        """The address of the first element; views share their base's storage."""
        if _TF.enabled:
            return _meta(Tensor.data_ptr, _data_ptr, self)  # type: ignore[no-any-return]
        return _data_ptr(self)

    def untyped_storage(self) -> UntypedStorage:
        """The bytes of the whole storage under this tensor (metadata: no launch)."""
        if _TF.enabled:
            return _meta(Tensor.untyped_storage, _untyped_storage, self)  # type: ignore[no-any-return]
        return _untyped_storage(self)

    def element_size(self) -> int:
        if _TF.enabled:
            return _meta(Tensor.element_size, _itemsize, self)  # type: ignore[no-any-return]
        return self._a.itemsize

    @property
    def itemsize(self) -> int:
        if _TF.enabled:
            return _meta(_GETTERS["itemsize"], _itemsize, self)  # type: ignore[no-any-return]
        return self._a.itemsize

    @property
    def nbytes(self) -> int:
        if _TF.enabled:
            return _meta(_GETTERS["nbytes"], _nbytes, self)  # type: ignore[no-any-return]
        return int(self._a.nbytes)

    def get_device(self) -> int:
        """The cuda device index (-1 for a cpu tensor)."""
        return (self._device.index or 0) if self.is_cuda else -1

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if _TF.enabled:
            return _meta(Tensor.requires_grad_, _requires_grad_, self,  # type: ignore[no-any-return]
                         requires_grad)
        return _requires_grad_(self, requires_grad)

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

    def detach(self) -> Tensor:
        if _TF.enabled:
            return _meta(Tensor.detach, _detach, self)  # type: ignore[no-any-return]
        return Tensor._make(self._a, self._device, self._storage)  # a view: no launch

    def detach_(self) -> Tensor:
        return self

    def __deepcopy__(self, memo: dict[Any, Any]) -> Tensor:
        """A copy over new memory with the same offset, sizes and strides; tensors sharing a
        storage share the copy's (torch memoizes the storage). One launch per storage: the
        bytes' copy."""
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        from fake_torch._dtype import uint8

        empty = hooks.empty
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

    def __reduce_ex__(self, proto: Any) -> tuple[Any, tuple[Any, ...]]:
        """How pickle, copy and torch.save take a tensor apart: torch's rebuild functions over
        its storage (`torch._utils._rebuild_tensor_v2`/`_v3`), so views keep their offsets
        and strides and tensors over one storage share it when rebuilt (metadata: no launch)."""
        return hooks.reduce_tensor(self)

    def __len__(self) -> int:
        if _TF.enabled:
            return _meta(Tensor.__len__, _len, self)  # type: ignore[no-any-return]
        return _len(self)

    def __iter__(self) -> Iterator[Tensor]:
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)


# the metadata's bodies, for the calls that go through __torch_function__
def _shape(t: Tensor) -> Size:
    return Size(t._a.shape)


def _size(t: Tensor, dim: int | None = None) -> Any:
    """Tensor.size, checked as torch's argument parser checks it (with or without a mode)."""
    if dim is None:
        return Size(t._a.shape)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"size(): argument 'dim' (position 1) must be int, not "
                        f"{type(dim).__name__}")
    return t._a.shape[_wrap_dim(dim, t._a.ndim)]


def _ndim(t: Tensor) -> int:
    return t._a.ndim


def _numel(t: Tensor) -> int:
    return int(t._a.size)


def _dtype(t: Tensor) -> dtype:
    return t._dtype


def _device(t: Tensor) -> device:
    return t._device


def _is_cuda(t: Tensor) -> bool:
    return t._device.type == "cuda"


def _is_cpu(t: Tensor) -> bool:
    return t._device.type == "cpu"


def _is_meta(t: Tensor) -> bool:
    return t._device.type == "meta"


def _is_floating_point(t: Tensor) -> bool:
    return t._dtype.is_floating_point


def _stride(t: Tensor, dim: int | None = None) -> Any:
    strides = tuple(s // t._a.itemsize for s in t._a.strides)
    return strides if dim is None else strides[_wrap_dim(dim, t._a.ndim)]


def _storage_offset(t: Tensor) -> int:
    a = t._a
    if a.base is None:  # an array that owns its memory starts its storage
        return 0
    # (one address read: the view's; its storage root's is read once per root)
    return (int(a.__array_interface__["data"][0]) - root_address(base_array(a))) // a.itemsize


def _is_contiguous(t: Tensor, memory_format: memory_format = contiguous_format) -> bool:
    a = t._a
    if memory_format is not contiguous_format:
        fmt = memory_format_arg(memory_format, "is_contiguous", optional=False)
        return is_contiguous_as(a.shape, _stride(t), fmt)
    if a.size == 0:  # torch: an empty tensor is contiguous whatever its strides
        return True
    expected = a.itemsize
    for size, stride in zip(reversed(a.shape), reversed(a.strides), strict=True):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _data_ptr(t: Tensor) -> int:
    if t._device.type == "meta":  # no memory: torch's storage pointer is null
        return _storage_offset(t) * t._a.itemsize
    return int(t._a.__array_interface__["data"][0])


def _untyped_storage(t: Tensor) -> UntypedStorage:
    return hooks.untyped_storage(t)


def _itemsize(t: Tensor) -> int:
    return t._a.itemsize


def _nbytes(t: Tensor) -> int:
    return int(t._a.nbytes)


def _requires_grad_(t: Tensor, requires_grad: bool = True) -> Tensor:
    if requires_grad and not (t._dtype.is_floating_point or t._dtype.is_complex):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    t.requires_grad = requires_grad
    return t


def _detach(t: Tensor) -> Tensor:
    return Tensor._make(t._a, t._device, t._storage)


def _len(t: Tensor) -> int:
    if t._a.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return int(t._a.shape[0])


# what modes are shown for a property: its getter, as torch shows `Tensor.shape.__get__`
_GETTERS = {name: vars(Tensor)[name].__get__
            for name in ("shape", "ndim", "dtype", "device", "is_cuda", "is_cpu", "is_meta",
                         "itemsize", "nbytes")}


def _convert(ret: Any, cls: type) -> Any:
    """A result of a subclass's op: its Tensors as `cls` (torch's _convert)."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


_tf.register_plain_type(Tensor)


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dim in [-ndim, ndim-1] as a non-negative index; torch's IndexError otherwise."""
    lo, hi = (-max(ndim, 1), max(ndim, 1) - 1)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but "
                         f"got {dim})")
    return dim % max(ndim, 1)


def watch_new_tensors(watch: Callable[[Tensor], None] | None) -> None:
    """Have `watch(t)` called for each tensor made over device memory from now on (None: stop).
    The CUDA sanitizer's: it tells references to a graph's output apart by when they were taken."""
    global _watch
    _watch = watch


def base_array(a: np.ndarray) -> np.ndarray:
    """The storage a numpy view looks into: the outermost ndarray of its base chain, followed
    through the non-array links numpy's stride tricks insert (as_strided's DummyArray)."""
    root, base = a, a.base
    while base is not None:
        if isinstance(base, np.ndarray):
            root = base
        base = getattr(base, "base", None)
    return root


_root_addresses: dict[int, tuple[weakref.ref[np.ndarray], int]] = {}


def root_address(root: np.ndarray) -> int:
    """A storage root's data address, cached: roots live long, and numpy's
    `__array_interface__` builds a whole dict for it (the weakref guards id reuse)."""
    hit = _root_addresses.get(id(root))
    if hit is not None and hit[0]() is root:
        return hit[1]
    if len(_root_addresses) > 4096:
        _root_addresses.clear()
    addr = int(root.__array_interface__["data"][0])
    _root_addresses[id(root)] = (weakref.ref(root), addr)
    return addr


def wrap_dim(dim: int, ndim: int) -> int:
    """Public to the op modules: normalise a possibly negative dim as torch does."""
    return _wrap_dim(dim, ndim)

