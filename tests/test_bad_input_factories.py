"""Bad input to the tensor factories, against torch CPU (tests/bad_input.py: a silent result
where torch raises fails, and so does another exception class or first message line)."""

from __future__ import annotations

from typing import Any

import pytest
from bad_input import Program, check
from hypothesis import given, settings
from hypothesis import strategies as st

CASES: dict[str, Program] = {
    # sizes
    "zeros negative size": lambda L: L.zeros(-1),
    "zeros negative in tuple": lambda L: L.zeros((2, -3)),
    "ones float size": lambda L: L.ones(2.5),
    "empty string size": lambda L: L.empty("3"),
    "empty None size": lambda L: L.empty(None),
    "full negative size": lambda L: L.full((-2,), 1.0),
    "full size not a sequence": lambda L: L.full(3, 1.0),
    "full str value": lambda L: L.full((2,), "a"),
    "full None value": lambda L: L.full((2,), None),
    "rand negative size": lambda L: L.rand(3, -1),
    "randn float size": lambda L: L.randn(2.0),
    "zeros no size": lambda L: L.zeros(),
    "new_ones no size": lambda L: L.ones(2).new_ones(),
    "rand no size": lambda L: L.rand(),
    "zeros empty size is fine": lambda L: L.zeros(()),
    # dtypes and devices
    "zeros dtype as a string": lambda L: L.zeros(2, dtype="float32"),
    "ones dtype a Python class is fine": lambda L: L.ones(2, dtype=int) + L.ones(2, dtype=float),
    "zeros unknown device": lambda L: L.zeros(2, device="gpu"),
    "zeros device index string": lambda L: L.zeros(2, device="cpu:x"),
    "rand int dtype": lambda L: L.rand(2, dtype=L.int64),
    "randn bool dtype": lambda L: L.randn(2, dtype=L.bool),
    "randn int32 dtype": lambda L: L.randn(2, dtype=L.int32),
    # requires_grad on tensors that cannot have gradients
    "zeros int requires_grad": lambda L: L.zeros(3, dtype=L.int64, requires_grad=True),
    "ones bool requires_grad": lambda L: L.ones(3, dtype=L.bool, requires_grad=True),
    "empty int32 requires_grad": lambda L: L.empty(2, dtype=L.int32, requires_grad=True),
    "full int requires_grad": lambda L: L.full((2,), 1, requires_grad=True),
    "full bool requires_grad": lambda L: L.full((2,), True, requires_grad=True),
    "tensor int requires_grad": lambda L: L.tensor([1, 2], requires_grad=True),
    "tensor bool requires_grad": lambda L: L.tensor([True], requires_grad=True),
    "arange int requires_grad": lambda L: L.arange(3, requires_grad=True),
    "randint requires_grad": lambda L: L.randint(0, 3, (2,), requires_grad=True),
    "zeros_like int requires_grad": lambda L: L.zeros_like(L.zeros(2, dtype=L.int64),
                                                           requires_grad=True),
    "ones_like uint8 requires_grad": lambda L: L.ones_like(L.zeros(2), dtype=L.uint8,
                                                           requires_grad=True),
    "full_like int requires_grad": lambda L: L.full_like(L.zeros(2, dtype=L.int16), 3,
                                                         requires_grad=True),
    "empty_like int requires_grad": lambda L: L.empty_like(L.zeros(2, dtype=L.int8),
                                                           requires_grad=True),
    "linspace int requires_grad": lambda L: L.linspace(0, 4, 5, dtype=L.int64,
                                                       requires_grad=True),
    "eye int requires_grad": lambda L: L.eye(2, dtype=L.int64, requires_grad=True),
    "float requires_grad is fine": lambda L: L.zeros(2, dtype=L.float16, requires_grad=True),
    # values that do not fit the dtype (c10's checked_convert)
    "full half overflow": lambda L: L.full((2,), 1e5, dtype=L.float16),
    "full bfloat16 overflow": lambda L: L.full((2,), 1e39, dtype=L.bfloat16),
    "full float overflow": lambda L: L.full((2,), 1e39, dtype=L.float32),
    "full int8 overflow": lambda L: L.full((2,), 200, dtype=L.int8),
    "full uint8 overflow": lambda L: L.full((2,), 256, dtype=L.uint8),
    "full int64 overflow": lambda L: L.full((2,), 2**63, dtype=L.int64),
    "full int beyond 64 bits": lambda L: L.full((2,), 2**64, dtype=L.float64),
    "full int below int64": lambda L: L.full((2,), -2**63 - 1, dtype=L.float64),
    "full int nan": lambda L: L.full((2,), float("nan"), dtype=L.int32),
    "full_like half overflow": lambda L: L.full_like(L.zeros(2, dtype=L.float16), 7e4),
    "full half inf is fine": lambda L: L.full((2,), float("inf"), dtype=L.float16),
    # ranges
    "arange step zero": lambda L: L.arange(0, 5, 0),
    "arange wrong sign": lambda L: L.arange(5, 0, 1),
    "arange negative to zero": lambda L: L.arange(-3),
    "arange nan": lambda L: L.arange(float("nan")),
    "arange inf": lambda L: L.arange(0, float("inf")),
    "linspace negative steps": lambda L: L.linspace(0, 1, -1),
    "linspace steps float": lambda L: L.linspace(0, 1, 2.5),
    "eye negative": lambda L: L.eye(-1),
    "eye negative columns": lambda L: L.eye(2, -1),
    "randint low >= high": lambda L: L.randint(3, 3, (2,)),
    "randint high <= 0": lambda L: L.randint(0, (2,)),
    "randint no size": lambda L: L.randint(3),
    "randint float dtype high": lambda L: L.randint(0, 300, (2,), dtype=L.uint8),
    "randperm negative": lambda L: L.randperm(-1),
    "normal negative std": lambda L: L.normal(0.0, -1.0, (2,)),
    "multinomial negative": lambda L: L.multinomial(L.tensor([0.5, -0.1]), 1),
    "multinomial too many": lambda L: L.multinomial(L.tensor([0.5, 0.5]), 3),
    "bernoulli p out of range": lambda L: L.bernoulli(L.tensor([1.5])),
    # torch.tensor data
    "tensor ragged": lambda L: L.tensor([[1, 2], [3]]),
    "tensor of strings": lambda L: L.tensor(["a", "b"]),
    "tensor of None": lambda L: L.tensor([None]),
    "tensor of a dict": lambda L: L.tensor({1: 2}),
    "tensor mixed list and scalar": lambda L: L.tensor([1, [2]]),
    "tensor int overflow": lambda L: L.tensor([2**64]),
    "tensor of a tensor list multi": lambda L: L.tensor([L.ones(2), L.ones(2)]),
    "as_tensor of strings": lambda L: L.as_tensor(["a"]),
    "from_numpy of a list": lambda L: L.from_numpy([1, 2]),
    "scalar_tensor of a string": lambda L: L.scalar_tensor("a"),
    "new_full half overflow": lambda L: L.zeros(2, dtype=L.float16).new_full((2,), 1e5),
    "new_zeros negative": lambda L: L.zeros(2).new_zeros((-1,)),
    "new_ones int requires_grad": lambda L: L.zeros(2, dtype=L.int64).new_ones(
        2, requires_grad=True),
    "new_tensor int requires_grad": lambda L: L.zeros(2).new_tensor([1], dtype=L.int64,
                                                                   requires_grad=True),
}


@pytest.mark.parametrize("program", CASES.values(), ids=CASES.keys())
def test_bad_factory_input_fails_as_torch(program: Program) -> None:
    check(program)


@settings(max_examples=60, deadline=None)
@given(size=st.lists(st.integers(-3, 3), min_size=1, max_size=3),
       dtype=st.sampled_from(["float32", "float16", "int64", "bool", "uint8"]),
       requires_grad=st.booleans(),
       factory=st.sampled_from(["zeros", "ones", "empty", "rand", "randn"]))
def test_factories_over_random_sizes_dtypes_and_requires_grad(
        size: list[int], dtype: str, requires_grad: bool, factory: str) -> None:
    def program(L: Any) -> Any:
        return getattr(L, factory)(*size, dtype=getattr(L, dtype), requires_grad=requires_grad)

    check(program)


@settings(max_examples=60, deadline=None)
@given(value=st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                       st.integers(-2**65, 2**65), st.booleans()),
       dtype=st.sampled_from(["float16", "bfloat16", "float32", "float64", "int8", "uint8",
                              "int16", "int32", "int64", "bool"]))
def test_full_over_random_values_and_dtypes(value: float | int | bool, dtype: str) -> None:
    check(lambda L: L.full((2,), value, dtype=getattr(L, dtype)))
