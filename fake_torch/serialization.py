"""torch.serialization: torch.save and torch.load in torch's own file format, both ways with
real torch (fake_torch loads what torch wrote, torch loads what fake_torch writes).

    torch.save(model.state_dict(), "model.pt")         a zip: pickle + one record per storage
    torch.load("model.pt")                             weights_only=True: an allowlist unpickler
    torch.load("model.pt", mmap=True)                  storages mapped from the file, no copy
    torch.load("model.pt", map_location="cuda")        one host-to-device copy per storage

Launches, as torch's CUDA build makes them: saving copies each cuda storage to the host once
(one "copy_", memcpy_d2h); loading onto cuda copies each storage to the device once (one
"copy_", memcpy_h2d), however many tensors view it. Loading onto the cpu launches nothing.
The zip container is fake_torch/_serialization_zip.py, the pickling fake_torch/
_serialization_pickle.py, the pre-zip format fake_torch/_serialization_legacy.py.
"""

from __future__ import annotations

import _compat_pickle
import functools
import io
import os
import pickle
import pickletools
import re
import sys
import warnings
from collections.abc import Callable
from typing import IO, Any, TypeAlias

import numpy as np

from fake_torch import _serialization_names as names
from fake_torch import _weights_only_unpickler
from fake_torch._dtype import uint8
from fake_torch._serialization_legacy import (
    INT_SIZE,
    LONG_SIZE,
    MAGIC_NUMBER,
    PROTOCOL_VERSION,
    SHORT_SIZE,
    legacy_load,
    legacy_save,
)
from fake_torch._serialization_location import (
    MAP_LOCATION,
    Restore,
    default_restore_location,
    is_meta_location,
    location_tag,
    meta_storage,
    register_package,
    restore_location,
    validate_cuda_device,
)
from fake_torch._serialization_names import StorageType
from fake_torch._serialization_options import (
    LoadEndianness,
    fallback_byteorder,
    get_crc32_options,
    get_default_load_endianness,
    get_default_mmap_options,
    mmap_shared,
    set_crc32_options,
    set_default_load_endianness,
    set_default_mmap_options,
)
from fake_torch._serialization_pickle import StorageIds, TorchPickler, find_torch_class
from fake_torch._serialization_zip import ALIGNMENT, ZipReader, ZipWriter
from fake_torch._storage import UntypedStorage
from fake_torch._torch_device import CPU
from fake_torch.storage import TypedStorage

__all__ = ["DEFAULT_PROTOCOL", "INT_SIZE", "LONG_SIZE", "MAGIC_NUMBER", "MAP_LOCATION",
           "PROTOCOL_VERSION", "SHORT_SIZE", "LoadEndianness", "SourceChangeWarning",
           "StorageType", "add_safe_globals", "clear_safe_globals", "default_restore_location",
           "get_crc32_options", "get_default_load_endianness", "get_default_mmap_options",
           "get_safe_globals", "get_unsafe_globals_in_checkpoint", "load", "location_tag",
           "register_package", "safe_globals", "save", "set_crc32_options",
           "set_default_load_endianness", "set_default_mmap_options", "skip_data",
           "validate_cuda_device"]

DEFAULT_PROTOCOL = 2
FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if "
    "you got the file from a trusted source.")
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


# --- safe globals for weights_only loads -------------------------------------------------------

def add_safe_globals(safe_globals: list[Any]) -> None:
    """Mark functions/classes (or (object, "module.name") pairs) safe for weights_only loads."""
    _weights_only_unpickler._add_safe_globals(safe_globals)


def get_safe_globals() -> list[Any]:
    """The globals the user marked safe for weights_only loads."""
    return _weights_only_unpickler._get_safe_globals()


def clear_safe_globals() -> None:
    """Forget every global marked safe."""
    _weights_only_unpickler._clear_safe_globals()


class safe_globals(_weights_only_unpickler._safe_globals):
    """`with torch.serialization.safe_globals([MyClass]):` marks them safe inside the block."""


class SourceChangeWarning(Warning):
    """torch's warning that a pickled module class's source changed (fake_torch never checks
    sources, so never warns it)."""


class skip_data:
    """torch.serialization.skip_data (save or load storages without their bytes): not
    emulated."""

    def __init__(self, materialize_fake_tensors: bool = False) -> None:
        raise NotImplementedError("torch.serialization.skip_data is not emulated by fake_torch")


# --- files ---------------------------------------------------------------------------------

def _is_path(f: object) -> bool:
    return isinstance(f, (str, os.PathLike))


def _check_seekable(f: IO[bytes]) -> None:
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" in str(e) or "tell" in str(e):
            raise type(e)(f"{e}. You can only torch.load from a file that is seekable. Please "
                          "pre-load the data into a buffer like io.BytesIO and try to load "
                          "from it instead.") from None
        raise


def _is_zipfile(f: IO[bytes]) -> bool:
    start = f.tell()
    head = f.read(4)
    f.seek(start)
    return head == b"PK\x03\x04"


# --- save ----------------------------------------------------------------------------------

def save(obj: object, f: FileLike, pickle_module: Any = pickle,
         pickle_protocol: int = DEFAULT_PROTOCOL, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save `obj` to a file path or a writable file-like object in torch's format."""
    if not _is_path(f) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    if pickle_module is not pickle:
        raise NotImplementedError("torch.save(pickle_module=...) other than pickle is not "
                                  "emulated by fake_torch")
    if not _use_new_zipfile_serialization:
        if _is_path(f):
            with open(os.fspath(f), "wb") as opened:  # type: ignore[arg-type]
                legacy_save(obj, opened, pickle_protocol, location_tag)
        else:
            legacy_save(obj, f, pickle_protocol, location_tag)  # type: ignore[arg-type]
        return
    file: Any = f
    if not _is_path(f) and not callable(getattr(file, "write", None)):
        raise TypeError(f"Buffer of {str(type(file)).strip('<>')} has no callable attribute "
                        "'write'")
    ids = StorageIds(location_tag)  # pickled first: a refused object leaves no file behind
    data = io.BytesIO()
    TorchPickler(data, pickle_protocol, ids).dump(obj)
    if not _is_path(f):
        _write_zip(ZipWriter(file, "archive"), data, ids, _disable_byteorder_record)
        file.flush()
        return
    path = os.fspath(file)
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    try:
        opened = open(path, "wb")  # (closed by the with below)
    except OSError as e:  # torch's file writer reports it so
        raise RuntimeError("[enforce fail at inline_container.cc:747] . open file failed with "
                           f"strerror: {e.strerror}") from None
    with opened:
        name = os.path.splitext(os.path.basename(path))[0]
        _write_zip(ZipWriter(opened, name), data, ids, _disable_byteorder_record)


def _write_zip(zip_file: ZipWriter, data: io.BytesIO, ids: StorageIds,
               no_byteorder: bool) -> None:
    """The records, in torch's order; a cuda storage's bytes come over by one D2H copy."""
    zip_file.write_record("data.pkl", data.getbuffer())
    zip_file.write_record(".format_version", b"1")
    zip_file.write_record(".storage_alignment", str(ALIGNMENT).encode())
    if not no_byteorder:
        zip_file.write_record("byteorder", sys.byteorder.encode())
    for key, (raw, _) in ids.storages.items():
        zip_file.write_record(f"data/{key}", raw.cpu()._bytes.data)
    zip_file.close()


# --- load ----------------------------------------------------------------------------------

def _weights_only_message(message: str) -> str:
    """torch.load's text around a weights_only unpickler's error."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the checkpoint"
                f"\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error "
                "message.\n\tWeightsUnpickler error: " + message + _DOCS_MESSAGE)
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return text + "\n\n" + message + _DOCS_MESSAGE


def _weights_only_default(weights_only: bool | None, pickle_module: Any) -> bool:
    """weights_only as torch resolves it: the argument, default True (False when a
    pickle_module is given), and the
    TORCH_FORCE_WEIGHTS_ONLY_LOAD / TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD overrides."""
    truthy = ("1", "y", "yes", "true")
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_no and weights_only is None:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                      "the`weights_only` argument was not explicitly passed to `torch.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return pickle_module is None if weights_only is None else weights_only


def load(f: FileLike, map_location: MAP_LOCATION = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load an object torch.save wrote (by torch or fake_torch) from a path or a seekable
    file-like object. weights_only=True (the default) allows only tensors, containers,
    primitive types and the globals marked safe; mmap=True maps storages from the file."""
    weights_only = _weights_only_default(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
        if pickle_load_args:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    elif pickle_module is None:
        pickle_module = pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    if _is_path(f) and os.fspath(f).endswith(".safetensors"):  # type: ignore[arg-type]
        raise NotImplementedError("torch.load of a .safetensors file is not emulated by "
                                  "fake_torch (use safetensors.torch.load_file)")
    restore = restore_location(map_location)
    if is_meta_location(map_location):  # no storage is read: meta ones of its size instead
        restore = _to_meta
    if _is_path(f):
        with open(os.fspath(f), "rb") as opened:  # type: ignore[arg-type]
            return _load_file(opened, f, restore, pickle_module, weights_only, bool(mmap),
                              pickle_load_args)
    file: Any = f
    _check_seekable(file)
    return _load_file(file, f, restore, pickle_module, weights_only, bool(mmap),
                      pickle_load_args)


def _load_file(opened: IO[bytes], f: FileLike, restore: Restore,
               pickle_module: Any, weights_only: bool, mmap: bool,
               pickle_load_args: dict[str, Any]) -> Any:
    if _is_zipfile(opened):
        reader = ZipReader(opened)
        if reader.has_record("constants.pkl"):
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives "
                                   "passed to ``torch.load``. " + UNSAFE_MESSAGE)
            raise NotImplementedError("torch.load of a TorchScript archive (torch.jit.load) is "
                                      "not emulated by fake_torch")
        overall = None
        if mmap:
            if not _is_path(f):
                raise ValueError("f must be a file path in order to use the mmap argument")
            path = os.fspath(f)  # type: ignore[arg-type]
            overall = UntypedStorage.from_file(path, mmap_shared(),
                                               os.path.getsize(path))
        unpickler = (_weights_only_unpickler.Unpickler if weights_only
                     else _full_unpickler(pickle_module))
        return _wrap_weights_only(weights_only, lambda: _load_zip(
            reader, restore, unpickler, overall, pickle_load_args))
    if mmap:
        name = f"{f}, " if isinstance(f, str) else ""
        raise RuntimeError("mmap can only be used with files saved with "
                           f"`torch.save({name}_use_new_zipfile_serialization=True), please "
                           "torch.save your checkpoint with this option in order to use mmap.")
    if weights_only:
        return _wrap_weights_only(True, lambda: legacy_load(
            opened, restore, _weights_only_unpickler, _weights_only_unpickler.Unpickler,
            **pickle_load_args))
    return legacy_load(opened, restore, pickle_module, _full_unpickler(pickle_module),
                       **pickle_load_args)


def _to_meta(storage: UntypedStorage, location: str) -> UntypedStorage:
    """map_location="meta": the storage's size on meta (torch.load reads no bytes then)."""
    return meta_storage(storage.nbytes())


def _wrap_weights_only(weights_only: bool, run: Callable[[], Any]) -> Any:
    if not weights_only:
        return run()
    try:
        return run()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(_weights_only_message(str(e))) from None


@functools.cache
def _full_unpickler(pickle_module: Any) -> type:
    """pickle_module's Unpickler, its globals found as torch's are (find_torch_class)."""

    class UnpicklerWrapper(pickle_module.Unpickler):  # type: ignore[misc]
        def find_class(self, mod_name: str, name: str) -> Any:
            return find_torch_class(mod_name, name, super().find_class)

    return UnpicklerWrapper


def _load_zip(reader: ZipReader, restore: Restore,
              unpickler: Callable[..., Any], overall: UntypedStorage | None,
              pickle_load_args: dict[str, Any]) -> Any:
    """The object of a zip checkpoint: its pickle, each storage read (or mapped) once."""
    byteorder = (reader.get_record("byteorder") if reader.has_record("byteorder") else
                 fallback_byteorder() or sys.byteorder.encode())
    if byteorder not in (b"little", b"big"):
        raise ValueError("Unknown endianness type: " + byteorder.decode())
    loaded: dict[str, TypedStorage] = {}

    def load_storage(dt: Any, nbytes: int, key: str, location: str) -> TypedStorage:
        name = f"data/{key}"
        if restore is _to_meta:
            return TypedStorage(wrap_storage=meta_storage(nbytes), dtype=dt, _internal=True)
        if overall is not None:  # a slice of the file's mapping: no copy
            start = reader.record_offset(name)
            storage = overall[start:start + nbytes]
        else:
            data = np.empty(nbytes, np.uint8)
            reader.read_record_into(name, data)
            storage = UntypedStorage._wrap(data, CPU, None, resizable=True)
        if byteorder.decode() != sys.byteorder and dt.itemsize > 1:
            storage._bytes.view(dt.np).byteswap(inplace=True)
        return TypedStorage(wrap_storage=restore(storage, location), dtype=dt, _internal=True)

    def persistent_load(saved_id: Any) -> TypedStorage:
        if not isinstance(saved_id, tuple):
            raise AssertionError(f"saved_id must be a tuple, got {type(saved_id).__name__}")
        tag = saved_id[0].decode("ascii") if isinstance(saved_id[0], bytes) else saved_id[0]
        if tag != "storage":
            raise AssertionError("Unknown typename for persistent_load, expected 'storage' but "
                                 f"got '{tag}'")
        storage_type, key, location, numel = saved_id[1:]
        dt = uint8 if storage_type is UntypedStorage else storage_type.dtype
        if key not in loaded:
            if isinstance(location, bytes):
                location = location.decode("ascii")
            loaded[key] = load_storage(dt, numel * dt.itemsize, key, location)
        return loaded[key]

    data = io.BytesIO(reader.get_record("data.pkl"))
    pickled = unpickler(data, **pickle_load_args)
    pickled.persistent_load = persistent_load
    return pickled.load()


def get_unsafe_globals_in_checkpoint(f: FileLike) -> list[str]:
    """The globals a checkpoint's pickle names that a weights_only load would refuse."""
    safe = set(names.torch_globals()) | set(_weights_only_unpickler._user_allowed_globals())
    if _is_path(f):
        with open(os.fspath(f), "rb") as opened:  # type: ignore[arg-type]
            data = _pickle_record(opened)
    else:
        data = _pickle_record(f)  # type: ignore[arg-type]
    found = set()
    for opcode, arg, _ in pickletools.genops(data):
        if opcode.name == "GLOBAL":
            module, name = str(arg).split(" ", 1)
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            found.add(f"{_compat_pickle.IMPORT_MAPPING.get(module, module)}.{name}")
    return sorted(found - safe)


def _pickle_record(f: IO[bytes]) -> bytes:
    if not _is_zipfile(f):
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    reader = ZipReader(f)
    if reader.has_record("constants.pkl"):
        raise ValueError("Expected input to be a checkpoint returned by torch.save but got a "
                         "torchscript checkpoint")
    return reader.get_record("data.pkl")
