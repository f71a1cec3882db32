"""torch.backends.cuda.preferred_blas_library and torch._C._BlasBackend, and the small module
constants torch code reads at import time (torch.inf, torch.nan, torch.cuda._HAS_PYNVML),
against real torch's CPU build, which links the same ATen Context and Python front end."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from oracles import assert_raises_like_torch

import fake_torch as ft

torch = pytest.importorskip("torch")


@pytest.fixture
def blas_default() -> Iterator[None]:
    yield
    for lib in (torch, ft):
        lib.backends.cuda.preferred_blas_library("default")


def test_blas_backend_enum_is_torchs() -> None:
    ours, theirs = ft._C._BlasBackend, torch._C._BlasBackend
    assert {n: int(v) for n, v in ours.__members__.items()} == {
        n: int(v) for n, v in theirs.__members__.items()}
    for name in ("Default", "Cublas", "Ck"):
        mine, real = getattr(ours, name), getattr(theirs, name)
        assert (repr(mine), str(mine), mine.name, mine.value) == (
            repr(real), str(real), real.name, real.value)
    assert (ours.Cublas == 1) is (theirs.Cublas == 1) is False  # not an int, as pybind's enum


def test_preferred_blas_library_reads_default_back_as_cublas(blas_default: None) -> None:
    for lib in (torch, ft):
        assert repr(lib.backends.cuda.preferred_blas_library()) == "<_BlasBackend.Cublas: 1>"
        assert lib.backends.cuda.preferred_blas_library("ck").name == "Ck"
        assert lib.backends.cuda.preferred_blas_library().name == "Ck"
        assert lib.backends.cuda.preferred_blas_library("hipblas").name == "Cublas"
        assert lib.backends.cuda.preferred_blas_library(lib._C._BlasBackend.Default).name == (
            "Cublas")
    # a CUDA build has cuBLASLt (the CPU build refuses it)
    assert ft.backends.cuda.preferred_blas_library("cublaslt") is ft._C._BlasBackend.Cublaslt


@pytest.mark.parametrize("bad", ["cublas_lt", 3, None.__class__])
def test_preferred_blas_library_rejects_as_torch(bad: Any, blas_default: None) -> None:
    assert_raises_like_torch(lambda lib: lib.backends.cuda.preferred_blas_library(bad))


def test_module_constants_are_torchs() -> None:
    assert (ft.inf, type(ft.inf)) == (torch.inf, float) and ft.inf == math.inf
    assert math.isnan(ft.nan) and math.isnan(torch.nan)
    assert {"inf", "nan"} <= set(ft.__all__) & set(torch.__all__)
    assert ft.cuda._HAS_PYNVML is torch.cuda._HAS_PYNVML is False  # no pynvml here
