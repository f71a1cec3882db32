"""torch.UntypedStorage.from_file (safetensors' "pt" loader maps checkpoints with it) and the
byte access of an UntypedStorage, run side by side with real torch (its CPU build maps files
the same way): values, sharing, errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fake_torch as ft

Lib = Any


@pytest.fixture
def torch() -> Lib:
    return pytest.importorskip("torch")


def _file(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_a_private_mapping_reads_the_file_and_keeps_writes_to_itself(
        tmp_path: Path, torch: Lib) -> None:
    for lib in (torch, ft):
        path = _file(tmp_path, f"{lib.__name__}.bin", bytes(range(10)))
        s = lib.UntypedStorage.from_file(path, False, 10)
        assert (s.nbytes(), len(s), s.device, s.is_shared(), s.resizable()) == (
            10, 10, lib.device("cpu"), True, False)
        assert s.tolist() == list(range(10)) == list(s)
        part = s[2:5]  # the same memory, from byte 2
        assert (type(part).__name__, part.nbytes(), part.data_ptr() - s.data_ptr()) == (
            "UntypedStorage", 3, 2)
        part[0] = 300  # stored modulo 256, into the mapping
        assert (s[2], s[-1]) == (44, 9)
        assert Path(path).read_bytes() == bytes(range(10))  # private: the file is untouched
        t = lib.empty(0, dtype=lib.uint8).set_(s)
        assert t.tolist()[:3] == [0, 1, 44]
        assert lib.UntypedStorage.from_file(path, False).nbytes() == 0  # nbytes=0: empty


def test_a_shared_mapping_writes_through_and_grows_the_file(tmp_path: Path, torch: Lib) -> None:
    for lib in (torch, ft):
        path = _file(tmp_path, f"{lib.__name__}.bin", bytes(4))
        s = lib.UntypedStorage.from_file(path, True, 6)  # grows the 4-byte file to 6
        s[5] = 7
        del s
        assert Path(path).read_bytes() == bytes([0, 0, 0, 0, 0, 7])
        fresh = str(tmp_path / f"{lib.__name__}-new.bin")
        assert lib.UntypedStorage.from_file(fresh, True, 3).tolist() == [0, 0, 0]


def test_repr_and_view_of_a_mapped_checkpoint_as_safetensors_reads_it(
        tmp_path: Path, torch: Lib) -> None:
    values = np.arange(6, dtype=np.float32)
    header = b"12345678"  # a stand-in header; the tensor's bytes follow it
    path = _file(tmp_path, "ckpt.bin", header + values.tobytes())
    for lib in (torch, ft):
        s = lib.UntypedStorage.from_file(path, False, len(header) + values.nbytes)
        body = s[len(header):]
        t = lib.empty(0, dtype=lib.float32).set_(body, 0, (2, 3))
        np.testing.assert_array_equal(t.numpy(), values.reshape(2, 3))
    assert repr(ft.UntypedStorage.from_file(path, False, 3)) == repr(
        torch.UntypedStorage.from_file(path, False, 3))


ERRORS: dict[str, Callable[[Lib, str], object]] = {
    "missing file": lambda lib, d: lib.UntypedStorage.from_file(d + "/none.bin", False, 4),
    "file too small": lambda lib, d: lib.UntypedStorage.from_file(d + "/small.bin", False, 20),
    "negative size": lambda lib, d: lib.UntypedStorage.from_file(d + "/small.bin", False, -1),
    "not a path": lambda lib, d: lib.UntypedStorage.from_file(123),
    "index past the end": lambda lib, d: lib.UntypedStorage.from_file(
        d + "/small.bin", False, 10)[20],
    "slice with a step": lambda lib, d: lib.UntypedStorage.from_file(
        d + "/small.bin", False, 10)[1:8:2],
}


@pytest.mark.parametrize("call", ERRORS.values(), ids=ERRORS.keys())
def test_errors_are_torchs(call: Callable[[Lib, str], object], tmp_path: Path,
                           torch: Lib) -> None:
    _file(tmp_path, "small.bin", bytes(10))
    with pytest.raises(Exception) as theirs:
        call(torch, str(tmp_path))
    with pytest.raises(type(theirs.value)) as ours:
        call(ft, str(tmp_path))
    assert str(ours.value) == str(theirs.value)
