"""torch.isin against real torch CPU (values, the scalar forms, errors) and against what CUDA
torch 2.13's shared isin_Tensor_Tensor_out launches (fake_torch/_kernels/isin.py; the default
path's 4 kernels and the scalar form's 1 were counted on an H200)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import assert_raises_like_torch, launches, outcome

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

NAN = float("nan")


def _x(lib: Any) -> Any:
    return lib.tensor([[1, 2], [3, 4]])


def _big(lib: Any) -> Any:
    return lib.arange(-50, 50) * 3


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("default path", lambda lib: lib.isin(_x(lib), lib.tensor([2, 3]))),
    ("invert", lambda lib: lib.isin(_x(lib), lib.tensor([2, 3]), invert=True)),
    ("keywords", lambda lib: lib.isin(elements=_x(lib), test_elements=lib.tensor([2]))),
    ("scalar test", lambda lib: lib.isin(_x(lib), 3)),
    ("scalar test float", lambda lib: lib.isin(_x(lib), 3.0)),
    ("scalar test invert", lambda lib: lib.isin(_x(lib), 3, invert=True)),
    ("scalar elements", lambda lib: lib.isin(3, _x(lib))),
    ("scalar float elements", lambda lib: lib.isin(2.5, lib.tensor([2, 3]))),
    ("0-dim tensors", lambda lib: lib.isin(lib.tensor(3), lib.tensor([3]))),
    ("0-dim test", lambda lib: lib.isin(_x(lib), lib.tensor(2))),
    ("promotes", lambda lib: lib.isin(_x(lib), lib.tensor([2.5, 3.0]))),
    ("uint8 vs negative", lambda lib: lib.isin(_x(lib).to(lib.uint8), lib.tensor([-1, 2]))),
    ("half", lambda lib: lib.isin(_x(lib).half(), lib.tensor([2.0]))),
    ("bfloat16", lambda lib: lib.isin(_x(lib).bfloat16(), lib.tensor([2.0]))),
    ("NaN never found", lambda lib: lib.isin(lib.tensor([1.0, NAN]), lib.tensor([NAN]))),
    ("NaN, sorting path",
     lambda lib: lib.isin(lib.tensor([1.0, NAN, 3.0]), lib.tensor([NAN, 3.0] * 20))),
    ("NaN, sorting path, invert",
     lambda lib: lib.isin(lib.tensor([1.0, NAN, 3.0]), lib.tensor([NAN, 3.0] * 20), invert=True)),
    ("empty elements", lambda lib: lib.isin(lib.tensor([]), lib.tensor([1.0]))),
    ("empty test", lambda lib: lib.isin(_x(lib), lib.tensor([], dtype=lib.int64))),
    ("empty test invert",
     lambda lib: lib.isin(_x(lib), lib.tensor([], dtype=lib.int64), invert=True)),
    ("strided test, viewable", lambda lib: lib.isin(_x(lib), lib.arange(20).reshape(4, 5).t())),
    ("sorting path", lambda lib: lib.isin(_big(lib), lib.arange(0, 100))),
    ("sorting path strided, invert",
     lambda lib: lib.isin(_big(lib).reshape(10, 10).t(), lib.arange(0, 100), invert=True)),
    ("sorting path assume_unique",
     lambda lib: lib.isin(_big(lib), lib.arange(0, 100), assume_unique=True)),
    ("sorting path duplicates",
     lambda lib: lib.isin(_big(lib).reshape(10, 10), lib.tensor([3, 3, 6, 9, 200, -3] * 10))),
    ("sorting path float", lambda lib: lib.isin(_big(lib).float(), lib.arange(0, 100))),
    ("out=", lambda lib: lib.isin(_x(lib), lib.tensor([2]),
                                  out=lib.empty(2, 2, dtype=lib.bool))),
]

REFUSED: list[tuple[str, Callable[[Any], Any]]] = [
    ("two scalars", lambda lib: lib.isin(1, 2)),
    ("a string", lambda lib: lib.isin(_x(lib), "a")),
    ("bool tensors", lambda lib: lib.isin(lib.tensor([True, False]), lib.tensor([True]))),
    ("bool scalar", lambda lib: lib.isin(_x(lib), True)),
    ("bool elements", lambda lib: lib.isin(_x(lib).bool(), 1)),
    ("bool scalar elements", lambda lib: lib.isin(True, _x(lib))),
    ("complex scalar", lambda lib: lib.isin(_x(lib), 1j)),
    ("uint16", lambda lib: lib.isin(_big(lib).to(lib.uint16), lib.tensor([2]))),
    ("test not viewable", lambda lib: lib.isin(_x(lib), lib.tensor([[2, 3], [4, 5]]).t())),
    ("assume_unique an int", lambda lib: lib.isin(_x(lib), lib.tensor([2]), assume_unique=1)),
    ("invert None", lambda lib: lib.isin(_x(lib), lib.tensor([2]), invert=None)),
    ("out float", lambda lib: lib.isin(_x(lib), lib.tensor([2]), out=lib.empty(2, 2))),
]


@pytest.mark.parametrize("program", [p for _, p in CASES], ids=[n for n, _ in CASES])
def test_isin_like_torch(program: Callable[[Any], Any]) -> None:
    theirs, their_error = outcome(lambda: program(torch))
    ours, our_error = outcome(lambda: program(ft))
    assert their_error is None and our_error is None, (their_error, our_error)
    assert ours.dtype is ft.bool and tuple(ours.shape) == tuple(theirs.shape)
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("program", [p for _, p in REFUSED], ids=[n for n, _ in REFUSED])
def test_refused_as_torch_refuses(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), m=st.integers(0, 60), seed=st.integers(0, 2**16),
       assume_unique=st.booleans(), invert=st.booleans(), floats=st.booleans())
def test_both_paths_agree_with_torch(n: int, m: int, seed: int, assume_unique: bool,
                                     invert: bool, floats: bool) -> None:
    """Random sizes cross numpy's threshold both ways; assume_unique only with unique data (torch
    promises nothing otherwise)."""
    rng = np.random.default_rng(seed)
    pool = rng.permutation(200) if assume_unique else rng.integers(0, 30, 200)
    elements, test = pool[:n] - 100 * assume_unique, pool[n:n + m] - 100 * assume_unique
    if floats:
        elements, test = elements / 2, test / 2
    theirs = torch.isin(torch.from_numpy(elements), torch.from_numpy(test),
                        assume_unique=assume_unique, invert=invert)
    ours = ft.isin(ft.from_numpy(elements).cuda(), ft.from_numpy(test).cuda(),
                   assume_unique=assume_unique, invert=invert)
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize(("call", "expected"), [
    # the default path (H200: 4 kernels for 64 elements against 8)
    (lambda e, t8, t4k: ft.isin(e, t8), ["fill_", "eq", "any", "copy_"]),
    (lambda e, t8, t4k: ft.isin(e, t8, invert=True), ["fill_", "ne", "all", "copy_"]),
    # the sorting path: one launch per aten op (the H200 ran 44 kernels for 64 against 4096)
    (lambda e, t8, t4k: ft.isin(e, t4k),
     ["_unique", "_unique", "cat", "sort", "eq", "copy_", "fill_", "index_copy_", "index",
      "copy_"]),
    (lambda e, t8, t4k: ft.isin(e, t4k, assume_unique=True),
     ["cat", "sort", "eq", "copy_", "fill_", "index_copy_", "copy_"]),
    # a scalar test element is one eq (H200: 1); a scalar element a scalar_tensor first
    (lambda e, t8, t4k: ft.isin(e, 3), ["eq"]),
    (lambda e, t8, t4k: ft.isin(3, t8), ["scalar_tensor", "fill_", "eq", "any", "copy_"]),
    (lambda e, t8, t4k: ft.isin(e[:0], t8), []),
])
def test_launches_as_cuda_torch(call: Callable[..., Any], expected: list[str]) -> None:
    e = ft.arange(64, device="cuda")
    t8, t4k = ft.arange(8, device="cuda") * 5, ft.arange(4096, device="cuda") * 3
    with launches() as names:
        call(e, t8, t4k)
    assert names == expected


def test_threshold_is_numpys() -> None:
    """fewer than int(10 * n ** 0.145) test elements take the default path: 64 elements -> 18."""
    e = ft.arange(64, device="cuda")
    for m, path in ((17, "fill_"), (18, "_unique")):
        test = ft.arange(m, device="cuda")
        with launches() as names:
            ft.isin(e, test)
        assert names[0] == path


def test_sorting_path_syncs_the_host_and_default_path_captures() -> None:
    """_unique's size is data: the host waits for it, which a CUDA graph capture refuses; the
    default path has no sync and replays."""
    e = ft.arange(64, device="cuda")
    t8, t4k = ft.arange(8, device="cuda") * 5, ft.arange(4096, device="cuda") * 3
    g = ft.cuda.CUDAGraph()
    with ft.cuda.graph(g):
        found = ft.isin(e, t8)
    t8.copy_(ft.arange(8, device="cuda"))
    g.replay()
    assert int(found.sum()) == 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError):
            with ft.cuda.graph(ft.cuda.CUDAGraph()):
                ft.isin(e, t4k)


def test_no_tensor_method() -> None:
    assert not hasattr(torch.Tensor, "isin") and not hasattr(ft.Tensor, "isin")
