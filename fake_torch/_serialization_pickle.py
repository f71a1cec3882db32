"""The pickling half of torch.save's format: a pickler that writes torch's names, the
persistent ids of storages, and the full (weights_only=False) unpickler's name lookup.

Storages are never pickled: each is replaced by a persistent id `('storage', storage_type,
key, location, numel)` and its bytes go to their own record. Tensors over one storage get the
same key, so they load sharing memory.
"""

from __future__ import annotations

import importlib
import pickle
from collections.abc import Callable
from typing import IO, Any

from fake_torch import _serialization_names as names
from fake_torch._dtype import dtype as DType
from fake_torch._dtype import uint8
from fake_torch._storage import UntypedStorage
from fake_torch.storage import TypedStorage

PersistentId = Callable[[Any], Any]


def _fake_module(module: str) -> bool:
    return module == names.FAKE or module.startswith(names.FAKE + ".")


class TorchPickler(pickle._Pickler):
    """A pickler whose globals are torch's: a fake_torch object with a torch counterpart is
    written under torch's path (`fake_torch._dtype float16` as `torch float16`), and any other
    fake_torch global under `torch.<its submodule>`, so real torch can load the file."""

    def __init__(self, file: IO[bytes], protocol: int, persistent_id: PersistentId) -> None:
        super().__init__(file, protocol)
        self._persistent_id = persistent_id

    def persistent_id(self, obj: Any) -> Any:
        return self._persistent_id(obj)

    def reducer_override(self, obj: Any) -> Any:
        found = names.torch_name(obj)
        return NotImplemented if found is None else found[1]  # -> save_global(obj, name)

    def save_global(self, obj: Any, name: str | None = None) -> None:
        found = names.torch_name(obj)
        if found is None:
            module = getattr(obj, "__module__", None) or ""
            if not _fake_module(module):
                super().save_global(obj, name)  # type: ignore[misc]
                return
            found = ("torch" + module[len(names.FAKE):], _checked_qualname(obj, module, name))
        module, name = found
        if self.proto >= 4:  # type: ignore[attr-defined]
            self.save(module)  # type: ignore[attr-defined]
            self.save(name)  # type: ignore[attr-defined]
            self.write(pickle.STACK_GLOBAL)  # type: ignore[attr-defined]
        else:
            self.write(pickle.GLOBAL + module.encode() + b"\n" +  # type: ignore[attr-defined]
                       name.encode() + b"\n")
        self.memoize(obj)  # type: ignore[attr-defined]


def _checked_qualname(obj: Any, module: str, name: str | None) -> str:
    """obj's name in its fake_torch module, checked as pickle checks a global (a class made
    inside a function cannot be found again by name)."""
    name = name or obj.__qualname__
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part, None)
    if found is not obj:
        raise pickle.PicklingError(f"Can't pickle {obj!r}: it's not found as {module}.{name}")
    return name


class StorageIds:
    """Hands out a persistent id per storage met while pickling, one key per storage (by
    device, address and size), and keeps the storages to write."""

    def __init__(self, location_tag: Callable[[UntypedStorage], str]) -> None:
        self._location_tag = location_tag
        self._keys: dict[tuple[str, int, int], str] = {}
        self._dtypes: dict[int, DType] = {}
        self.storages: dict[str, tuple[UntypedStorage, DType]] = {}

    def __call__(self, obj: Any) -> tuple[Any, ...] | None:
        if isinstance(obj, TypedStorage):
            raw, dt = obj._untyped_storage, obj.dtype
            storage_type: Any = names.STORAGE_TYPES[dt]
        elif isinstance(obj, UntypedStorage):
            raw, dt, storage_type = obj, uint8, UntypedStorage
        else:
            return None
        ptr, nbytes = raw.data_ptr(), raw.nbytes()
        if nbytes:  # torch refuses one memory seen as two dtypes (it could not load it)
            if self._dtypes.setdefault(ptr, dt) is not dt:
                raise RuntimeError("Cannot save multiple tensors or storages that view the "
                                   "same data as different types")
        key = self._keys.setdefault((str(raw.device), ptr, nbytes), str(len(self._keys)))
        self.storages.setdefault(key, (raw, dt))
        return ("storage", storage_type, key, self._location_tag(raw), nbytes // dt.itemsize)


def find_torch_class(module: str, name: str, default: Callable[[str, str], Any]) -> Any:
    """The object a full (weights_only=False) load finds for a pickle's global: torch's
    storage classes as their StorageType, torch names through the allowlist's table, any
    other `torch.X` from `fake_torch.X`, the rest as pickle finds them (`default`)."""
    if "Storage" in name:
        try:
            return names.StorageType(name)
        except KeyError:
            pass
    if module == "torch.tensor":  # an old path of torch._tensor
        module = "torch._tensor"
    path = f"{module}.{name}"
    found = names.torch_globals().get(path)
    if found is not None:
        return found
    if path in names.NOT_EMULATED:
        raise names.not_emulated(path)
    if module == "torch" or module.startswith("torch."):
        module = names.FAKE + module[len("torch"):]
    return default(module, name)
