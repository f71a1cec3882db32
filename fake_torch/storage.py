"""torch.storage: UntypedStorage (the bytes under tensors) and TypedStorage, the deprecated
(bytes, dtype) pair that torch still pickles tensors of the classic dtypes with.

fake_torch builds a TypedStorage only where torch's serialization does: `Tensor.__reduce_ex__`
hands one to `torch._utils._rebuild_tensor_v2`, and `torch.load` wraps each storage it reads in
one. Constructing one by hand (`torch.TypedStorage(3)`, `torch.FloatStorage(...)`) is not
emulated: torch deprecates it for `Tensor.untyped_storage()`.
"""

from __future__ import annotations

from typing import Any

from fake_torch._dtype import dtype as DType
from fake_torch._storage import UntypedStorage
from fake_torch._torch_device import device

__all__ = ["TypedStorage", "UntypedStorage"]


class TypedStorage:
    """A storage's bytes seen as elements of one dtype (torch.storage.TypedStorage)."""

    is_sparse = False
    dtype: DType
    _untyped_storage: UntypedStorage

    def __init__(self, *args: Any, wrap_storage: UntypedStorage | None = None,
                 dtype: DType | None = None, device: object = None,
                 _internal: bool = False) -> None:
        if args or wrap_storage is None or dtype is None or device is not None:
            raise NotImplementedError(
                "torch.TypedStorage(...) other than TypedStorage(wrap_storage=..., dtype=...) is "
                "not emulated by fake_torch (torch deprecates typed storages: use "
                "Tensor.untyped_storage())")
        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError("TypedStorage.__init__ received an invalid combination of arguments."
                            " Argument 'wrap_storage' must be UntypedStorage, but got "
                            f"{type(wrap_storage)}")
        if not isinstance(dtype, DType):
            raise TypeError("TypedStorage.__init__ received an invalid combination of arguments."
                            f" Argument 'dtype' must be torch.dtype, not {type(dtype)}")
        self.dtype = dtype
        self._untyped_storage = wrap_storage

    @property
    def device(self) -> device:
        return self._untyped_storage.device

    def untyped(self) -> UntypedStorage:
        """The bytes underneath."""
        return self._untyped_storage

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def _size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def size(self) -> int:
        """The number of elements of `dtype`."""
        return self._size()

    def __len__(self) -> int:
        return self._size()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def _data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_typed_storage, (self._untyped_storage, self.dtype))

    def __repr__(self) -> str:
        return (f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size "
                f"{self._size()}]")


def _typed_storage(untyped: UntypedStorage, dt: DType) -> TypedStorage:
    """A plain pickle's way back to a TypedStorage."""
    return TypedStorage(wrap_storage=untyped, dtype=dt, _internal=True)
