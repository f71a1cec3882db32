"""Where a storage lives and how to put one there: torch.serialization's location tags
("cpu", "cuda:0") recorded at save time, and the restore functions torch.load applies to each
storage it reads (`map_location` as None, a device, a string, a dict or a callable). Moving a
storage to the cuda device is one host-to-device copy ("copy_", memcpy_h2d), as in torch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeAlias

from fake_torch._dtype import uint8
from fake_torch._kernels._common import new_tensor
from fake_torch._storage import UntypedStorage, untyped_storage
from fake_torch._torch_device import device
from fake_torch.storage import TypedStorage

MAP_LOCATION: TypeAlias = (Callable[[UntypedStorage, str], UntypedStorage | None] | device | str
                           | dict[str, str] | None)
Restore = Callable[[UntypedStorage, str], UntypedStorage]

Tagger = Callable[[UntypedStorage], str | None]
Deserializer = Callable[[UntypedStorage, str], UntypedStorage | None]
_package_registry: list[tuple[int, Tagger, Deserializer]] = []


def register_package(priority: int, tagger: Tagger, deserializer: Deserializer) -> None:
    """Register how to tag a storage's location at save time and restore a storage to a
    location at load time; lower priorities are asked first."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda entry: entry[0])


def _cpu_tag(obj: UntypedStorage) -> str | None:
    return "cpu" if obj.device.type == "cpu" else None


def _cuda_tag(obj: UntypedStorage) -> str | None:
    if obj.device.type != "cuda":
        return None
    return "cuda" if obj.device.index is None else f"cuda:{obj.device.index}"


def _cpu_deserialize(obj: UntypedStorage, location: str) -> UntypedStorage | None:
    return obj if location == "cpu" else None


def validate_cuda_device(location: str) -> int:
    """The index of the cuda device `location` names, checked as torch checks it."""
    from fake_torch import cuda

    dev = device(location)
    index = dev.index or 0
    if not cuda.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
            "False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")
    if index >= cuda.device_count():
        raise RuntimeError(
            f"Attempting to deserialize object on CUDA device {index} but "
            f"torch.cuda.device_count() is {cuda.device_count()}. Please use torch.load with "
            "map_location to map your storages to an existing device.")
    return index


def _cuda_deserialize(obj: UntypedStorage, location: str) -> UntypedStorage | None:
    if location == "cuda" or re.match("cuda(:|[0-9]+)", location):
        return obj.to(device=device("cuda", validate_cuda_device(location)))
    return None


def _meta_tag(obj: UntypedStorage) -> str | None:
    return "meta" if obj.device.type == "meta" else None


def meta_storage(nbytes: int) -> UntypedStorage:
    """A meta storage of `nbytes` bytes: no data, nothing read, nothing launched."""
    return untyped_storage(new_tensor((nbytes,), uint8, device("meta")))


def _meta_deserialize(obj: UntypedStorage, location: str) -> UntypedStorage | None:
    return meta_storage(obj.nbytes()) if location == "meta" else None


def is_meta_location(map_location: MAP_LOCATION) -> bool:
    """Whether map_location sends everything to meta (then torch.load reads no storage)."""
    if isinstance(map_location, str):
        return map_location == "meta"
    return isinstance(map_location, device) and map_location.type == "meta"


register_package(10, _cpu_tag, _cpu_deserialize)
register_package(20, _cuda_tag, _cuda_deserialize)
register_package(22, _meta_tag, _meta_deserialize)


def location_tag(storage: UntypedStorage | TypedStorage) -> str:
    """Where a storage lives, as a checkpoint records it: "cpu", "cuda:0"."""
    raw = storage._untyped_storage if isinstance(storage, TypedStorage) else storage
    for _, tagger, _ in _package_registry:
        found = tagger(raw)
        if found:
            return found
    raise RuntimeError(f"don't know how to determine data location of {type(storage)}")


def default_restore_location(storage: UntypedStorage, location: str) -> UntypedStorage:
    """`storage` moved to `location` by the first registered deserializer that takes it."""
    for _, _, deserializer in _package_registry:
        found = deserializer(storage, location)
        if found is not None:
            return found
    raise RuntimeError(f"don't know how to restore data location of "
                       f"torch.storage.UntypedStorage (tagged with {location})")


def restore_location(map_location: MAP_LOCATION) -> Restore:
    """torch.load's map_location as a function (cpu storage, saved location) -> storage."""
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        remap = map_location
        return lambda s, loc: default_restore_location(s, remap.get(loc, loc))
    if isinstance(map_location, (str, bytes)):
        target = map_location.decode() if isinstance(map_location, bytes) else map_location
        return lambda s, loc: default_restore_location(s, target)
    if isinstance(map_location, device):
        target = str(map_location)
        return lambda s, loc: default_restore_location(s, target)
    user = map_location

    def restore(s: UntypedStorage, loc: str) -> UntypedStorage:
        found = user(s, loc)
        return default_restore_location(s, loc) if found is None else found
    return restore
