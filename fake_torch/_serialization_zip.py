"""The zip container of torch.save's format (torch's PyTorchFileWriter / PyTorchFileReader).

One folder per archive (`<name>/`: the file's stem, or "archive" for a buffer) holding
`data.pkl`, `.format_version`, `.storage_alignment`, `byteorder`, one `data/<key>` per storage,
`version` and `.data/serialization_id`, in that order, every record stored uncompressed with
its bytes aligned to 64 in the file (a padding extra field, "FB", as torch's writer pads), so a
loader can map storages straight from the file.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from typing import IO, Any

import numpy as np

ALIGNMENT = 64
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # a zip local file header, 30 bytes
_PAD_TAG = b"FB"
_END_RECORD_SIZE = 22  # the smallest zip: its end-of-central-directory record alone


class ZipWriter:
    """Writes records into `<archive_name>/` of a zip written to `file`."""

    def __init__(self, file: IO[bytes], archive_name: str) -> None:
        self._zip = zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True)
        self._prefix = archive_name
        self._crc = 0
        self._size = 0

    def write_record(self, name: str, data: bytes | memoryview) -> None:
        """One record, its bytes starting at a multiple of 64 in the file."""
        info = zipfile.ZipInfo(f"{self._prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        nbytes = len(data)
        # the local header: 30 bytes, the name, our padding field, and the zip64 sizes field
        # zipfile appends for a record this large
        zip64 = 20 if nbytes * 1.05 > zipfile.ZIP64_LIMIT else 0
        start = self._zip.fp.tell() if self._zip.fp is not None else 0
        fixed = start + _LOCAL_HEADER.size + len(info.filename.encode()) + 4 + zip64
        pad = -fixed % ALIGNMENT
        info.extra = _PAD_TAG + struct.pack("<H", pad) + b"\0" * pad
        self._zip.writestr(info, data)
        self._crc = zlib.crc32(data, self._crc)
        self._size += nbytes

    def close(self) -> None:
        """The trailing records (version, serialization id) and the central directory."""
        self.write_record("version", b"3\n")
        # an id of the contents (torch's is one too: equal files get equal ids)
        self.write_record(".data/serialization_id",
                          f"{self._crc:020d}{self._size:020d}".encode())
        self._zip.close()


def _bad_archive(detail: str) -> RuntimeError:
    return RuntimeError(
        f"PytorchStreamReader failed reading zip archive: {detail}. This is an internal miniz "
        "error. If you are seeing this error, there is a high likelihood that your checkpoint "
        "file is corrupted. This can happen if the checkpoint was not saved properly, was "
        "transferred incorrectly, or the file was modified after saving.")


class ZipReader:
    """The records of a torch.save zip in `file` (a path's open file or a seekable buffer)."""

    def __init__(self, file: IO[bytes]) -> None:
        start = file.tell()
        size = file.seek(0, 2) - start
        file.seek(start)
        if size < _END_RECORD_SIZE:  # miniz's check before it looks for the directory
            raise _bad_archive("not a ZIP archive")
        try:
            self._zip = zipfile.ZipFile(file)
        except zipfile.BadZipFile:
            raise _bad_archive("failed finding central directory") from None
        self._file = file
        infos = self._zip.infolist()
        if not infos:
            raise _bad_archive("file has no records")
        self.archive_name = infos[0].filename.split("/", 1)[0]
        self._records = {i.filename[len(self.archive_name) + 1:]: i for i in infos
                         if i.filename.startswith(self.archive_name + "/")}

    def names(self) -> list[str]:
        return list(self._records)

    def has_record(self, name: str) -> bool:
        return name in self._records

    def _info(self, name: str) -> zipfile.ZipInfo:
        info = self._records.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               "found")
        return info

    def get_record(self, name: str) -> bytes:
        return self._zip.read(self._info(name))

    def record_offset(self, name: str) -> int:
        """Where the record's bytes start in the file (after its local header)."""
        info = self._info(name)
        self._file.seek(info.header_offset)
        *_, name_len, extra_len = _LOCAL_HEADER.unpack(self._file.read(_LOCAL_HEADER.size))
        return int(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)

    def read_record_into(self, name: str, out: np.ndarray[Any, Any]) -> None:
        """The record's bytes into `out` (uint8, its size): straight from the file when the
        record is stored uncompressed, as torch writes them."""
        info = self._info(name)
        if info.file_size != out.nbytes:
            raise RuntimeError(f"PytorchStreamReader: record {name} holds {info.file_size} "
                               f"bytes, the checkpoint's pickle expects {out.nbytes}")
        if info.compress_type != zipfile.ZIP_STORED:
            out[...] = np.frombuffer(self._zip.read(info), np.uint8)
            return
        self._file.seek(self.record_offset(name))
        view = out.data.cast("B")
        readinto = getattr(self._file, "readinto", None)
        got = int(readinto(view)) if readinto is not None else _read_into(self._file, view)
        if got != out.nbytes:
            raise _bad_archive(f"record {name} is truncated")


def _read_into(file: IO[bytes], view: memoryview) -> int:
    data = file.read(len(view))
    view[:len(data)] = data
    return len(data)
