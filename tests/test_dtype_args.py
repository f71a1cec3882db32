"""Python's number types where torch takes a dtype: its argument parser reads `int` as int64,
`float` as float64 (never the default dtype), `bool` as bool and `complex` as complex128 in
every `ScalarType` parameter (factories, reductions, `Tensor.to`, `view(dtype)`,
promote_types, finfo, ...), while `Tensor.type` and `set_default_dtype` refuse them. Each case
runs in real torch and in fake_torch: same result, or the same error class and first line."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_same_error, launches, outcome, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def _x(lib: Any) -> Any:
    return lib.arange(8, dtype=lib.float32).reshape(2, 4) / 3


# (name, program): the program's result is compared by `_summary`
ACCEPTED: list[tuple[str, Callable[[Any], Any]]] = [
    ("tensor int", lambda lib: lib.tensor(0, dtype=int)),
    ("tensor float is float64", lambda lib: lib.tensor([1, 2], dtype=float)),
    ("tensor bool", lambda lib: lib.tensor([0, 3], dtype=bool)),
    ("as_tensor", lambda lib: lib.as_tensor([1.5], dtype=int)),
    ("asarray", lambda lib: lib.asarray([1], dtype=float)),
    ("zeros", lambda lib: lib.zeros(2, dtype=float)),
    ("ones int", lambda lib: lib.ones(2, 3, dtype=int)),
    ("empty", lambda lib: lib.empty(2, dtype=bool).shape),
    ("full", lambda lib: lib.full((2,), 1, dtype=int)),
    ("arange", lambda lib: lib.arange(3, dtype=float)),
    ("linspace", lambda lib: lib.linspace(0, 1, 3, dtype=float)),
    ("eye", lambda lib: lib.eye(2, dtype=int)),
    ("scalar_tensor", lambda lib: lib.scalar_tensor(1, dtype=int)),
    ("zeros_like", lambda lib: lib.zeros_like(_x(lib), dtype=int)),
    ("full_like", lambda lib: lib.full_like(_x(lib), 7, dtype=int)),
    ("empty_like", lambda lib: lib.empty_like(_x(lib), dtype=int).dtype),
    ("new_zeros", lambda lib: _x(lib).new_zeros(2, dtype=int)),
    ("new_full", lambda lib: _x(lib).new_full((2,), 3, dtype=int)),
    ("new_tensor", lambda lib: _x(lib).new_tensor([1], dtype=float)),
    ("randn dtype", lambda lib: lib.randn(2, dtype=float).dtype),
    ("randint dtype", lambda lib: lib.randint(0, 3, (2,), dtype=int).dtype),
    ("randperm float", lambda lib: lib.randperm(3, dtype=float).dtype),
    ("sum", lambda lib: _x(lib).sum(dtype=int)),
    ("sum float", lambda lib: lib.sum(_x(lib), 0, dtype=float)),
    ("sum bool", lambda lib: lib.sum(_x(lib), 0, dtype=bool)),
    ("prod", lambda lib: _x(lib).prod(dtype=int)),
    ("mean float", lambda lib: _x(lib).mean(dtype=float)),
    ("cumsum", lambda lib: _x(lib).cumsum(0, dtype=int)),
    ("softmax positional", lambda lib: lib.softmax(_x(lib), 0, float)),
    ("Tensor.softmax", lambda lib: _x(lib).softmax(0, float)),
    ("F.softmax", lambda lib: lib.nn.functional.softmax(_x(lib), 0, dtype=float)),
    ("F.log_softmax", lambda lib: lib.nn.functional.log_softmax(_x(lib), 0, dtype=float)),
    ("vector_norm", lambda lib: lib.linalg.vector_norm(_x(lib), dtype=float)),
    ("to(int)", lambda lib: _x(lib).to(int)),
    ("to(dtype=int)", lambda lib: _x(lib).to(dtype=int)),
    ("to(float)", lambda lib: _x(lib).to(float)),
    ("to(bool)", lambda lib: _x(lib).to(bool)),
    ("to(device, int)", lambda lib: _x(lib).to("cpu", int)),
    ("to(None, float)", lambda lib: _x(lib).to(None, float)),
    ("to(device=, dtype=)", lambda lib: _x(lib).to(device="cpu", dtype=float)),
    ("to(int, True)", lambda lib: _x(lib).to(int, True)),
    ("view(int)", lambda lib: _x(lib).view(int).shape),
    ("view(dtype=float)", lambda lib: _x(lib).view(dtype=float).shape),
    ("view(bool)", lambda lib: _x(lib).view(bool).shape),
    ("type(legacy class)", lambda lib: _x(lib).type(lib.LongTensor)),
    ("type(dtype=legacy class)", lambda lib: _x(lib).type(dtype=lib.IntTensor)),
    ("type(torch.Tensor)", lambda lib: _x(lib).double().type(lib.Tensor)),
    ("type(str)", lambda lib: _x(lib).type("torch.LongTensor")),
    ("promote_types", lambda lib: lib.promote_types(int, float)),
    ("promote_types mixed", lambda lib: lib.promote_types(lib.int32, float)),
    ("promote_types bool complex", lambda lib: lib.promote_types(bool, complex)),
    ("can_cast", lambda lib: (lib.can_cast(int, float), lib.can_cast(float, lib.int32))),
    ("finfo(float)", lambda lib: repr(lib.finfo(float))),
    ("finfo(complex)", lambda lib: lib.finfo(complex).bits),
    ("iinfo(int)", lambda lib: repr(lib.iinfo(int))),
    ("Module.to(float)", lambda lib: lib.nn.Linear(2, 2).to(float).weight.dtype),
    ("Module.to(dtype=float)", lambda lib: lib.nn.Linear(2, 2).to(dtype=float).weight.dtype),
    ("Module.to(cpu, float)", lambda lib: lib.nn.Linear(2, 2).to("cpu", float).weight.dtype),
    ("Module.type(str)", lambda lib: lib.nn.Linear(2, 2).type("torch.DoubleTensor").bias.dtype),
    ("Module.type(dtype)", lambda lib: lib.nn.Linear(2, 2).type(dst_type=lib.half).bias.dtype),
]

REFUSED: list[tuple[str, Callable[[Any], Any]]] = [
    ("Tensor.type(int)", lambda lib: _x(lib).type(int)),
    ("Tensor.type(float)", lambda lib: lib.tensor(1).type(float)),
    ("Tensor.type(numpy type)", lambda lib: _x(lib).type(np.float32)),
    ("Tensor.type(5)", lambda lib: _x(lib).type(5)),
    ("Tensor.type(bad str)", lambda lib: _x(lib).type("torch.float32")),
    ("Module.type(float)", lambda lib: lib.nn.Linear(2, 2).type(float)),
    ("Module.type(LongTensor)", lambda lib: lib.nn.Linear(2, 2).type(lib.LongTensor)),
    ("Module.to(int)", lambda lib: lib.nn.Linear(2, 2).to(int)),
    ("set_default_dtype(float)", lambda lib: lib.set_default_dtype(float)),
    ("set_default_dtype(int)", lambda lib: lib.set_default_dtype(int)),
    ("set_default_dtype(int64)", lambda lib: lib.set_default_dtype(lib.int64)),
    ("set_default_dtype(str)", lambda lib: lib.set_default_dtype("float32")),
    ("mean(dtype=int)", lambda lib: _x(lib).mean(dtype=int)),
    ("to(str)", lambda lib: _x(lib).to(str)),
    ("to('float32')", lambda lib: _x(lib).to("float32")),
    ("device('')", lambda lib: lib.device("")),
    ("device('cuda:')", lambda lib: lib.device("cuda:")),
    ("device('cuda:01')", lambda lib: lib.device("cuda:01")),
    ("device('foo:0')", lambda lib: lib.device("foo:0")),
    ("zeros(dtype=str)", lambda lib: lib.zeros(2, dtype=str)),
    ("zeros(dtype='float32')", lambda lib: lib.zeros(2, dtype="float32")),
    ("zeros(dtype=numpy type)", lambda lib: lib.zeros(2, dtype=np.float32)),
    ("zeros(dtype=NoneType)", lambda lib: lib.ones(2, dtype=type(None))),
    ("cumsum_ keeps its dtype", lambda lib: _x(lib).cumsum_(0, dtype=int)),
    ("promote_types(str)", lambda lib: lib.promote_types("a", lib.int32)),
    ("promote_types(3)", lambda lib: lib.promote_types(lib.int32, 3)),
    ("can_cast(str)", lambda lib: lib.can_cast("a", lib.int32)),
    ("can_cast(to=str type)", lambda lib: lib.can_cast(lib.int32, str)),
    ("finfo(str)", lambda lib: lib.finfo("a")),
    ("finfo(int)", lambda lib: lib.finfo(int)),
    ("finfo(bool)", lambda lib: lib.finfo(bool)),
    ("iinfo(3)", lambda lib: lib.iinfo(3)),
    ("iinfo(float)", lambda lib: lib.iinfo(float)),
    ("iinfo(torch.bool)", lambda lib: lib.iinfo(lib.bool)),
    ("iinfo(bool)", lambda lib: lib.iinfo(bool)),
]


def _summary(value: Any) -> Any:
    """What both libraries' results are compared by: a tensor's dtype, shape and values."""
    if isinstance(value, (ft.Tensor, torch.Tensor)):
        return (str(value.dtype), tuple(value.shape), value.tolist())
    if isinstance(value, (ft.dtype, torch.dtype, ft.Size, torch.Size)):
        return str(value)
    return value


@pytest.mark.parametrize("program", [p for _, p in ACCEPTED], ids=[n for n, _ in ACCEPTED])
def test_python_types_are_dtypes_as_in_torch(program: Callable[[Any], Any]) -> None:
    theirs, their_error = outcome(lambda: program(torch))
    ours, our_error = outcome(lambda: program(ft))
    assert their_error is None and our_error is None, (their_error, our_error)
    assert _summary(ours) == _summary(theirs)


@pytest.mark.parametrize("program", [p for _, p in REFUSED], ids=[n for n, _ in REFUSED])
def test_refused_as_torch_refuses(program: Callable[[Any], Any]) -> None:
    default = (torch.get_default_dtype(), ft.get_default_dtype())
    try:
        _, theirs = outcome(lambda: program(torch))
        _, ours = outcome(lambda: program(ft))
    finally:
        torch.set_default_dtype(default[0])
        ft.set_default_dtype(default[1])
    assert theirs is not None, "torch accepted the call"
    assert_same_error(ours, theirs)


def test_float_is_float64_whatever_the_default_dtype() -> None:
    for lib in (torch, ft):
        before = lib.get_default_dtype()
        lib.set_default_dtype(lib.float16)
        try:
            assert lib.zeros(1, dtype=float).dtype is lib.float64
            assert lib.zeros(1).dtype is lib.float16
        finally:
            lib.set_default_dtype(before)


def test_modes_see_the_python_type_that_was_passed() -> None:
    """torch hands __torch_function__ the arguments as written; the op then reads int64."""
    def seen(lib: Any, mode_base: type) -> tuple[list[Any], Any]:
        got: list[Any] = []

        class Record(mode_base):  # type: ignore[misc, valid-type]
            def __torch_function__(self, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                got.append((kwargs or {}).get("dtype"))
                return func(*args, **(kwargs or {}))

        with Record():
            out = lib.zeros(2, dtype=int).sum(dtype=float)
        return got, str(out.dtype)

    from torch.overrides import TorchFunctionMode

    theirs = seen(torch, TorchFunctionMode)
    ours = seen(ft, ft.overrides.TorchFunctionMode)
    assert theirs == ours == ([int, float], "torch.float64")


def test_a_python_type_costs_the_launches_of_its_dtype() -> None:
    """`x.to(int)` on cuda is the one `_to_copy` that `x.to(torch.int64)` is; `sum(dtype=float)`
    one reduction; a factory with `dtype=int` one fill."""
    x = ft.arange(6, device="cuda", dtype=ft.float32)
    tx = torch.arange(6, dtype=torch.float32)
    for program in (lambda lib, t: t.to(int), lambda lib, t: t.sum(dtype=float),
                    lambda lib, t: lib.ones(3, dtype=int, device=t.device)):
        with torch_launches() as theirs:
            program(torch, tx)
        with launches() as ours:
            program(ft, x)
        assert ours == theirs and len(ours) == 1


def test_autocast_and_compile_read_the_python_type_too() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ft.autocast("cuda", dtype=ft.float16):
            assert ft.zeros(2, dtype=int, device="cuda").dtype is ft.int64

    @ft.compile(backend="eager")
    def f(x: ft.Tensor) -> ft.Tensor:
        return x.to(float) + ft.ones(2, dtype=int, device=x.device)

    assert f(ft.ones(2)).dtype is ft.float64
