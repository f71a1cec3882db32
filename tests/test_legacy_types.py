"""torch's legacy tensor types (torch.LongTensor, torch.cuda.FloatTensor, ...) and the complex
dtype objects, against real torch CPU: construction, isinstance, their attributes and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

NAMES = ["DoubleTensor", "FloatTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
         "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", NAMES)
def test_each_type_builds_its_dtype_like_torch(name: str) -> None:
    ours, theirs = getattr(ft, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) and ours.__name__ == theirs.__name__
    assert type(ours).__name__ == type(theirs).__name__ == "tensortype"
    assert repr(ours.dtype) == repr(theirs.dtype) and ours.is_cuda is theirs.is_cuda is False
    for args in (([1, 0, 1],), ([[1, 1], [0, 1]],), ((1, 0),)):
        o, t = ours(*args), theirs(*args)
        assert repr(o.dtype) == repr(t.dtype) and o.shape == t.shape
        np.testing.assert_array_equal(o.numpy().astype(np.float64), t.float().numpy())
    for sizes in ((3,), (2, 3), (), (ft.Size([2, 2]),)):
        o = ours(*sizes)
        t = theirs(*(torch.Size(s) if isinstance(s, ft.Size) else s for s in sizes))
        assert o.shape == t.shape and repr(o.dtype) == repr(t.dtype)


def test_isinstance_holds_for_every_tensor_of_that_dtype_and_device() -> None:
    for lib in (torch, ft):
        x = lib.tensor([1, 2])
        assert isinstance(x, lib.LongTensor) and not isinstance(x, lib.IntTensor)
        assert isinstance(lib.zeros(2), lib.FloatTensor)
        assert not isinstance(lib.zeros(2, dtype=lib.float64), lib.FloatTensor)
        assert isinstance(lib.nn.Parameter(lib.zeros(1)), lib.FloatTensor)
        assert not issubclass(lib.LongTensor, lib.Tensor)
        assert not isinstance([1], lib.LongTensor)
    assert isinstance(ft.zeros(2, device="cuda"), ft.cuda.FloatTensor)
    assert not isinstance(ft.zeros(2, device="cuda"), ft.FloatTensor)
    assert not isinstance(ft.zeros(2), ft.cuda.FloatTensor)


def test_a_tensor_of_the_type_is_aliased_not_copied() -> None:
    x = ft.tensor([1, 2])
    with launches() as got:
        y = ft.LongTensor(x)
    assert got == [] and y is not x and y.data_ptr() == x.data_ptr()


def test_cuda_types_build_on_the_simulated_device() -> None:
    assert repr(ft.cuda.FloatTensor) == "<class 'torch.cuda.FloatTensor'>"
    with launches() as got:
        x = ft.cuda.LongTensor([1, 2])  # host data: one host-to-device copy
        y = ft.cuda.HalfTensor(2, 3)  # uninitialised: nothing
    assert got == ["copy_"]
    assert x.is_cuda and x.dtype is ft.int64 and x.tolist() == [1, 2]
    assert y.is_cuda and y.dtype is ft.float16 and y.shape == (2, 3)
    assert ft.cuda.BFloat16Tensor.dtype is ft.bfloat16 and ft.cuda.BoolTensor.is_cuda
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu but "
                                           "device type: cuda was passed"):
        ft.FloatTensor([1.0], device="cuda")


ERRORS: dict[str, Callable[[Any], Any]] = {
    "float": lambda T: T.LongTensor(3.0),
    "str": lambda T: T.LongTensor("a"),
    "negative": lambda T: T.LongTensor(-1),
    "other_dtype": lambda T: T.LongTensor(T.zeros(2)),
    "float_from_double": lambda T: T.FloatTensor(T.zeros(2, dtype=T.float64)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert_raises_like_torch(ERRORS[name])


# --- complex dtypes ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["complex32", "complex64", "complex128", "cfloat", "cdouble",
                                  "chalf"])
def test_complex_dtypes_have_torchs_attributes(name: str) -> None:
    ours, theirs = getattr(ft, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) and isinstance(ours, ft.dtype)
    for attr in ("is_complex", "is_floating_point", "is_signed", "itemsize", "abbr"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours.to_real()) == repr(theirs.to_real())
    assert ours.to_complex() is ours


def test_real_dtypes_convert_to_complex_like_torch() -> None:
    for name in ("float16", "bfloat16", "float32", "float64", "int64", "bool"):
        ours, theirs = getattr(ft, name), getattr(torch, name)
        assert ours.is_complex is False and ours.to_real() is ours
        assert ours.abbr == theirs.abbr
        if theirs.is_floating_point:
            assert repr(ours.to_complex()) == repr(theirs.to_complex())
        else:
            assert_raises_like_torch(lambda T, n=name: getattr(T, n).to_complex())


def test_complex_promotion_and_finfo_like_torch() -> None:
    pairs = [("complex64", "float64"), ("complex64", "int64"), ("complex32", "float32"),
             ("complex64", "complex128"), ("bfloat16", "complex32"), ("bool", "complex64")]
    for a, b in pairs:
        assert repr(ft.promote_types(getattr(ft, a), getattr(ft, b))) == repr(
            torch.promote_types(getattr(torch, a), getattr(torch, b)))
    for name in ("complex64", "complex128"):
        assert repr(ft.finfo(getattr(ft, name))) == repr(torch.finfo(getattr(torch, name)))
    assert_raises_like_torch(lambda T: T.iinfo(T.complex64))


def test_complex32_tensors_are_refused_naming_the_dtype() -> None:
    """complex64/complex128 tensors exist (tests/test_complex.py); complex32 has no numpy type."""
    for make in (lambda: ft.zeros(2, dtype=ft.complex32),
                 lambda: ft.ones(2).to(ft.chalf),
                 lambda: ft.empty(2, dtype=ft.complex32, device="cuda"),
                 lambda: ft.zeros(4, dtype=ft.float16).view(ft.complex32)):
        with pytest.raises(NotImplementedError, match=r"torch\.complex32.*not emulated"):
            make()
    assert ft.zeros(4).view(ft.complex64).dtype is ft.complex64
