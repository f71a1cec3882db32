"""torch.asarray, torch.frombuffer, UntypedStorage.untyped and Tensor.view's keywords against
real torch: values, dtypes, shapes, whether memory is shared, and errors (class, first line).
safetensors' "pt" loader is the user: it aliases slices of a file-mapped storage as uint8 and
views them as each weight's dtype."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_same_error, outcome, to_numpy

import fake_torch as ft

torch = pytest.importorskip("torch")


def _summary(out: Any, shares: bool | None) -> tuple[Any, ...]:
    return (str(out.dtype), tuple(out.shape), str(out.device), shares,
            to_numpy(out).astype(np.float64).tolist())


def _both(program: Callable[[Any], tuple[Any, Any]]) -> None:
    """program(lib) -> (result tensor, the memory it may share: a tensor, array or storage);
    the same dtype, shape, device, values, sharing and errors in both libraries."""

    def run(lib: Any) -> Any:
        def body() -> tuple[Any, ...]:
            out, source = program(lib)
            if source is None:
                return _summary(out, None)
            start = (source.data_ptr() if hasattr(source, "data_ptr")
                     else source.ctypes.data if isinstance(source, np.ndarray)
                     else None)
            return _summary(out, out.data_ptr() == start)
        return outcome(body)

    ours, theirs = run(ft), run(torch)
    assert_same_error(ours[1], theirs[1])
    assert ours[0] == theirs[0]


def _floats(lib: Any) -> Any:
    return lib.arange(6, dtype=lib.float32)


ASARRAY = {
    "tensor: itself": lambda t: (t.asarray(x := _floats(t)), x),
    "tensor to float64": lambda t: (t.asarray(x := _floats(t), dtype=t.float64), x),
    "tensor copy=True": lambda t: (t.asarray(x := _floats(t), copy=True), x),
    "tensor copy=False, other dtype": lambda t: (
        t.asarray(_floats(t), dtype=t.float16, copy=False), None),
    "numpy shares": lambda t: (t.asarray(a := np.arange(4.0)), a),
    "numpy to float32": lambda t: (t.asarray(a := np.arange(4.0), dtype=t.float32), a),
    "numpy copy=False, other dtype": lambda t: (
        t.asarray(np.arange(4.0), dtype=t.float32, copy=False), None),
    "storage as uint8": lambda t: (t.asarray((s := _floats(t).untyped_storage()),
                                             dtype=t.uint8), s),
    "storage slice as uint8": lambda t: (t.asarray(_floats(t).untyped_storage()[4:12],
                                                   dtype=t.uint8), None),
    "storage as float32": lambda t: (t.asarray(s := _floats(t).untyped_storage(),
                                               dtype=t.float32), s),
    "storage, 6 bytes as int32": lambda t: (t.asarray(t.zeros(6, dtype=t.uint8)
                                                      .untyped_storage(), dtype=t.int32), None),
    "storage without dtype": lambda t: (t.asarray(t.ones(2, dtype=t.uint8).untyped_storage()),
                                        None),
    "bytearray as int32": lambda t: (t.asarray(bytearray(8), dtype=t.int32), None),
    "bytes: default dtype": lambda t: (t.asarray(bytes(8)), None),
    "list": lambda t: (t.asarray([1, 2]), None),
    "list of floats as float16": lambda t: (t.asarray([1.0, 2.5], dtype=t.float16), None),
    "list copy=False": lambda t: (t.asarray([1, 2], copy=False), None),
    "scalar": lambda t: (t.asarray(3), None),
    "bool": lambda t: (t.asarray(True), None),
    "numpy scalar": lambda t: (t.asarray(np.float32(2)), None),
}


@pytest.mark.parametrize("case", list(ASARRAY))
def test_asarray_matches_torch(case: str) -> None:
    _both(ASARRAY[case])


def test_asarray_refuses_a_device_change_without_copy() -> None:
    ours = outcome(lambda: ft.asarray(ft.ones(2), device="cuda", copy=False))[1]
    theirs = outcome(lambda: torch.asarray(torch.ones(2), device="meta", copy=False))[1]
    assert type(ours) is type(theirs) is ValueError
    assert str(ours) == str(theirs).replace("'meta'", "'cuda:0'")


def test_asarray_moves_to_cuda_with_one_copy() -> None:
    with ft.LaunchCounter.expect(1, _to_copy=1):
        out = ft.asarray(ft.arange(4.0).untyped_storage(), dtype=ft.float32, device="cuda")
    assert out.device.type == "cuda"
    np.testing.assert_array_equal(out.cpu().numpy(), np.arange(4.0, dtype=np.float32))


FROMBUFFER = {
    "all of it": lambda t: (t.frombuffer(bytearray(range(16)), dtype=t.int32), None),
    "count and offset": lambda t: (t.frombuffer(bytearray(range(16)), dtype=t.int16, count=3,
                                                offset=4), None),
    "float16": lambda t: (t.frombuffer(bytearray(8), dtype=t.float16), None),
    "bfloat16": lambda t: (t.frombuffer(bytearray(range(8)), dtype=t.bfloat16), None),
    "count too large": lambda t: (t.frombuffer(bytearray(16), dtype=t.int32, count=5), None),
    "ragged": lambda t: (t.frombuffer(bytearray(16), dtype=t.int32, offset=3), None),
    "offset past the end": lambda t: (t.frombuffer(bytearray(8), dtype=t.int32, offset=8),
                                      None),
    "negative offset": lambda t: (t.frombuffer(bytearray(8), dtype=t.int32, offset=-1), None),
    "empty": lambda t: (t.frombuffer(bytearray(0), dtype=t.int32), None),
    "not a buffer": lambda t: (t.frombuffer([1, 2], dtype=t.int32), None),
}


@pytest.mark.parametrize("case", list(FROMBUFFER))
def test_frombuffer_matches_torch(case: str) -> None:
    _both(FROMBUFFER[case])


_READ_ONLY = """
import sys, warnings
import {lib} as lib
buf = bytearray(8)
t = lib.frombuffer(buf, dtype=lib.int32)
t[1] = 5
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    lib.frombuffer(bytes(8), dtype=lib.int32)
    lib.frombuffer(bytes(8), dtype=lib.int32)
    lib.asarray(bytes(4))
print(bytes(buf), [(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught])
"""


def test_frombuffer_shares_a_writable_buffer_and_warns_once_on_a_read_only_one() -> None:
    """Writes through the tensor reach a bytearray; a read-only buffer warns, once a process."""
    def run(lib: str) -> str:
        done = subprocess.run([sys.executable, "-c", _READ_ONLY.format(lib=lib)],
                              capture_output=True, text=True, check=True)
        return done.stdout

    assert run("fake_torch") == run("torch")


def test_untyped_of_an_untyped_storage_is_itself() -> None:
    for lib in (ft, torch):
        s = lib.ones(2).untyped_storage()
        assert s.untyped() is s


VIEWS = {
    "dtype=": lambda t: (t.arange(4.0).view(dtype=t.int32), None),
    "size=": lambda t: (t.arange(4.0).view(size=(2, 2)), None),
    "size= and dtype=": lambda t: (t.arange(4.0).view(size=(2, 2), dtype=t.int32), None),
    "shape and dtype=": lambda t: (t.arange(4.0).view((2, 2), dtype=t.int32), None),
    "shape=": lambda t: (t.arange(4.0).view(shape=(2, 2)), None),
    "dtype= not a dtype": lambda t: (t.arange(4.0).view(dtype=3), None),
}


@pytest.mark.parametrize("case", list(VIEWS))
def test_view_keywords_match_torch(case: str) -> None:
    _both(VIEWS[case])
