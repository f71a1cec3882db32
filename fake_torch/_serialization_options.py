"""torch.serialization's options: the flags torch.load(mmap=True) maps files with, the byte
order assumed for a checkpoint without a byteorder record, and whether torch.save writes crc32s.
"""

from __future__ import annotations

from enum import Enum
from mmap import MAP_PRIVATE, MAP_SHARED

_mmap_flags = MAP_PRIVATE


def get_default_mmap_options() -> int:
    """The flags torch.load(mmap=True) maps with: mmap.MAP_PRIVATE (default) or MAP_SHARED."""
    return _mmap_flags


def mmap_shared() -> bool:
    """Whether torch.load(mmap=True) maps files shared (writes reach the file)."""
    return _mmap_flags == MAP_SHARED


class set_default_mmap_options:
    """Set torch.load(mmap=True)'s flags (as a call, or for a `with` block)."""

    def __init__(self, flags: int) -> None:
        global _mmap_flags
        if flags != MAP_PRIVATE and flags != MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _mmap_flags
        _mmap_flags = flags

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        global _mmap_flags
        _mmap_flags = self.prev


class LoadEndianness(Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


_load_endianness: LoadEndianness | None = None


def get_default_load_endianness() -> LoadEndianness | None:
    """The byte order assumed for a checkpoint without a byteorder record (None: little)."""
    return _load_endianness


def set_default_load_endianness(endianness: LoadEndianness | None) -> None:
    """Set the byte order assumed for a checkpoint without a byteorder record."""
    global _load_endianness
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _load_endianness = endianness


def fallback_byteorder() -> bytes | None:
    """The byte order of a checkpoint without a byteorder record (None: this machine's)."""
    if _load_endianness is LoadEndianness.NATIVE:
        return None
    return b"big" if _load_endianness is LoadEndianness.BIG else b"little"


def get_crc32_options() -> bool:
    """Whether torch.save writes each record's crc32: always, in fake_torch."""
    return True


def set_crc32_options(compute_crc32: bool) -> None:
    """torch.save without crc32s is not emulated (Python's zipfile always writes them)."""
    if not compute_crc32:
        raise NotImplementedError("torch.serialization.set_crc32_options(False) is not "
                                  "emulated by fake_torch: its torch.save always writes crc32s")
