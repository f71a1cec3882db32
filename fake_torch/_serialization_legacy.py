"""torch.save's format before the zip (`_use_new_zipfile_serialization=False`): one stream of
pickles (magic number, protocol version, system info, the object with storages as persistent
ids, the sorted list of storage keys) followed by each storage as an int64 element count and
its raw bytes. Storage views (old checkpoints' sixth id field) are honoured; the pre-1.0 tar
layout is not emulated.
"""

from __future__ import annotations

import pickle
import struct
import sys
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from fake_torch._dtype import dtype as DType
from fake_torch._dtype import uint8
from fake_torch._kernels._common import new_tensor
from fake_torch._serialization_pickle import StorageIds, TorchPickler
from fake_torch._storage import UntypedStorage
from fake_torch._torch_device import CPU
from fake_torch.storage import TypedStorage

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
LONG_SIZE = struct.Struct("=l").size
INT_SIZE = struct.Struct("=i").size
SHORT_SIZE = struct.Struct("=h").size

Restore = Callable[[UntypedStorage, str], UntypedStorage]


def legacy_save(obj: Any, f: IO[bytes], protocol: int,
                location_tag: Callable[[UntypedStorage], str]) -> None:
    """`obj` in the pre-zip format; a device storage's bytes come over with one device-to-host
    copy each."""
    ids = StorageIds(location_tag)

    def persistent_id(o: Any) -> Any:
        found = ids(o)
        return None if found is None else (*found, None)  # no storage view

    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": SHORT_SIZE, "int": INT_SIZE, "long": LONG_SIZE}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle.dump(header, f, protocol=protocol)
    TorchPickler(f, protocol, persistent_id).dump(obj)
    keys = sorted(ids.storages)
    pickle.dump(keys, f, protocol=protocol)
    for key in keys:
        raw, dt = ids.storages[key]
        f.write(struct.pack("<q", raw.nbytes() // dt.itemsize))
        f.write(raw.cpu()._bytes.data)
    f.flush()


def is_tar(f: IO[bytes]) -> bool:
    """Whether `f` holds a tar archive (torch's format before 1.0), read without moving."""
    start = f.tell()
    head = f.read(262)
    f.seek(start)
    return head[257:262] == b"ustar"


def legacy_load(f: IO[bytes], restore: Restore, pickle_module: Any,
                unpickler: Callable[..., Any], **pickle_load_args: Any) -> Any:
    """An object saved in the pre-zip format. Each storage is created at its final location
    while unpickling, then filled from the stream (a device storage by one host-to-device copy
    more, as torch fills it)."""
    if is_tar(f):
        raise NotImplementedError("torch.load of a checkpoint in the tar format of torch < 1.0 "
                                  "is not emulated by fake_torch")
    deserialized: dict[str, TypedStorage] = {}

    def persistent_load(saved_id: Any) -> Any:
        tag = saved_id[0].decode("ascii") if isinstance(saved_id[0], bytes) else saved_id[0]
        if tag == "module":
            return saved_id[1]  # a module class pickled with its source (never checked here)
        if tag != "storage":
            raise RuntimeError(f"Unknown saved id type: {saved_id[0]}")
        storage_type, root_key, location, numel, view = saved_id[1:]
        dt: DType = uint8 if storage_type is UntypedStorage else storage_type.dtype
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if root_key not in deserialized:
            empty = UntypedStorage._wrap(np.empty(numel * dt.itemsize, np.uint8), CPU, None,
                                         resizable=True)
            deserialized[root_key] = TypedStorage(wrap_storage=restore(empty, location),
                                                  dtype=dt, _internal=True)
        root = deserialized[root_key]
        if view is None:
            return root
        view_key, offset, size = view
        if view_key not in deserialized:
            start = offset * dt.itemsize
            deserialized[view_key] = TypedStorage(
                wrap_storage=root._untyped_storage[start:start + size * dt.itemsize], dtype=dt,
                _internal=True)
        return deserialized[view_key]

    if pickle_module.load(f, **pickle_load_args) != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = pickle_module.load(f, **pickle_load_args)
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    pickle_module.load(f, **pickle_load_args)  # system info: sizes and byte order
    reader = unpickler(f, **pickle_load_args)
    reader.persistent_load = persistent_load
    result = reader.load()
    for key in pickle_module.load(f, **pickle_load_args):
        _fill(f, deserialized[key])
    return result


def _fill(f: IO[bytes], storage: TypedStorage) -> None:
    """Read one storage's count and bytes from the stream into it."""
    (numel,) = struct.unpack("<q", f.read(8))
    nbytes = numel * storage.dtype.itemsize
    data = f.read(nbytes)
    if len(data) != nbytes or nbytes != storage.nbytes():
        raise RuntimeError(f"storage has wrong byte size: expected {storage.nbytes()} got "
                           f"{len(data)}")
    raw = storage._untyped_storage
    if raw.device.type == "cpu":
        raw._bytes[...] = np.frombuffer(data, np.uint8)
        return
    host = new_tensor((0,), uint8, CPU).set_(
        UntypedStorage._wrap(np.frombuffer(bytearray(data), np.uint8), CPU, None, True),
        0, (nbytes,), (1,))
    new_tensor((0,), uint8, raw.device).set_(raw, 0, (nbytes,), (1,)).copy_(host)
