"""Bad input to Tensor methods (fill_, copy_, to, view(dtype), item and the Python number
protocol, requires_grad_, masked_fill_, type, new_*), against torch CPU (tests/bad_input.py: a
silent result where torch raises fails, and so does another exception class or first message
line)."""

from __future__ import annotations

from typing import Any

import pytest
from bad_input import PY_ARITY, Program, check
from hypothesis import given, settings
from hypothesis import strategies as st


def _x(L: Any, dtype: str = "float32") -> Any:
    return L.zeros(2, dtype=getattr(L, dtype))


def _set_requires_grad(t: Any) -> Any:
    t.requires_grad = True
    return t


CASES: dict[str, Program] = {
    # fill_: c10's checked_convert of the value into the dtype
    "fill_ half overflow": lambda L: _x(L, "float16").fill_(1e6),
    "fill_ half negative overflow": lambda L: _x(L, "float16").fill_(-7e4),
    "fill_ half just above max": lambda L: _x(L, "float16").fill_(65504.5),
    "fill_ half from an int": lambda L: _x(L, "float16").fill_(70000),
    "fill_ bfloat16 overflow": lambda L: _x(L, "bfloat16").fill_(1e39),
    "fill_ float overflow": lambda L: _x(L).fill_(3.5e38),
    "fill_ int8 overflow": lambda L: _x(L, "int8").fill_(128),
    "fill_ int8 float overflow": lambda L: _x(L, "int8").fill_(200.0),
    "fill_ uint8 below -255": lambda L: _x(L, "uint8").fill_(-256),
    "fill_ int32 nan": lambda L: _x(L, "int32").fill_(float("nan")),
    "fill_ int64 inf": lambda L: _x(L, "int64").fill_(float("inf")),
    "fill_ int beyond 64 bits": lambda L: _x(L).fill_(2**64),
    "fill_ int below int64": lambda L: _x(L, "float64").fill_(-2**63 - 1),
    "fill_ a string": lambda L: _x(L).fill_("a"),
    "fill_ None": lambda L: _x(L).fill_(None),
    "fill_ a 1d tensor": lambda L: _x(L).fill_(L.ones(2)),
    "fill_ a list": lambda L: _x(L).fill_([1.0]),
    "fill_ half inf is fine": lambda L: _x(L, "float16").fill_(float("-inf")),
    "fill_ half nan is fine": lambda L: _x(L, "float16").fill_(float("nan")),
    "fill_ uint8 -1 wraps": lambda L: _x(L, "uint8").fill_(-1),
    "fill_ bool 2 is fine": lambda L: _x(L, "bool").fill_(2),
    "zero_ an argument": lambda L: _x(L).zero_(1),
    # copy_
    "copy_ shapes": lambda L: _x(L).copy_(L.ones(3)),
    "copy_ grows": lambda L: _x(L).copy_(L.ones(2, 2)),
    "copy_ a list": lambda L: _x(L).copy_([1.0, 2.0]),
    "copy_ a number": lambda L: _x(L).copy_(1.0),
    "copy_ non_blocking a string": lambda L: _x(L).copy_(L.ones(2), non_blocking="a") * 0,
    # to / type / casts
    "to an unknown device": lambda L: _x(L).to("gpu"),
    "to a dtype string": lambda L: _x(L).to("float32"),
    "to two dtypes": lambda L: _x(L).to(L.float16, L.float32),
    "to memory_format a string": lambda L: _x(L).to(memory_format="x"),
    "type an unknown name": lambda L: _x(L).type("torch.FooTensor"),
    "type a number": lambda L: _x(L).type(3),
    "view dtype of another size": lambda L: L.zeros(3, dtype=L.int8).view(L.float32),
    "view dtype a string": lambda L: _x(L).view("float"),
    "half() an argument": lambda L: _x(L).half(1),
    # the Python number protocol
    "item of many": lambda L: _x(L).item(),
    "item of none": lambda L: L.ones(0).item(),
    "int of many": lambda L: int(_x(L)),
    "float of many": lambda L: float(_x(L)),
    "bool of many": lambda L: bool(_x(L)),
    "bool of none": lambda L: bool(L.ones(0)),
    "index of a float tensor": lambda L: [1, 2][L.tensor(1.0)],
    "len of 0d": lambda L: len(L.ones(())),
    "iter of 0d": lambda L: list(L.ones(())),
    "tolist an argument": lambda L: _x(L).tolist(1),
    "size dim out of range": lambda L: _x(L).size(1),
    "stride dim out of range": lambda L: _x(L).stride(-2),
    "size dim a string": lambda L: _x(L).size("a"),
    # requires_grad
    "requires_grad_ on ints": lambda L: _x(L, "int64").requires_grad_(),
    "requires_grad_ on bools": lambda L: _x(L, "bool").requires_grad_(True),
    "requires_grad_ on uint8": lambda L: _x(L, "uint8").requires_grad_(),
    "requires_grad_ False on ints is fine": lambda L: _x(L, "int32").requires_grad_(False),
    "requires_grad on ints, set": lambda L: _set_requires_grad(_x(L, "int64")),
    "Parameter of ints": lambda L: L.nn.Parameter(_x(L, "int64")),
    "Parameter of ints, no grad, is fine": lambda L: L.nn.Parameter(_x(L, "int64"),
                                                                    requires_grad=False),
    # masked_fill_ / index_fill_ / clamp_ and other value-taking methods
    "masked_fill_ float mask": lambda L: _x(L).masked_fill_(L.ones(2), 1.0),
    "masked_fill_ half overflow": lambda L: _x(L, "float16").masked_fill_(
        L.tensor([True, True]), 1e5),
    "masked_fill_ bfloat16 overflow": lambda L: _x(L, "bfloat16").masked_fill_(
        L.tensor([True, True]), 1e39),
    "masked_fill_ a string": lambda L: _x(L).masked_fill_(L.tensor([True, True]), "a"),
    "index_fill_ half overflow": lambda L: _x(L, "float16").index_fill_(0, L.tensor([0]), 1e5),
    "index_fill_ uint8 overflow": lambda L: _x(L, "uint8").index_fill_(0, L.tensor([0]), 300),
    "clamp_ half overflow": lambda L: _x(L, "float16").clamp_(max=7e4),
    "clamp_ int8 overflow": lambda L: _x(L, "int8").clamp_(min=-200),
    "new_full half overflow": lambda L: _x(L, "float16").new_full((2,), 1e5),
    "new_full a string": lambda L: _x(L).new_full((2,), "a"),
    "new_empty negative": lambda L: _x(L).new_empty((-1,)),
    "new_ones float size": lambda L: _x(L).new_ones(1.5),
    "expand_as a list": lambda L: _x(L).expand_as([1, 2]),
    "repeat_interleave negative": lambda L: _x(L).repeat_interleave(-1),
    "contiguous bad memory format": lambda L: _x(L).contiguous(memory_format="x"),
    "numel an argument": lambda L: _x(L).numel(1),
    "dim an argument": lambda L: _x(L).dim(0),
}


# cases whose first message line is known to differ from torch's (the class is torch's)
TEXT_DIFFERS: dict[str, str] = {
    "zero_ an argument": PY_ARITY,
    "tolist an argument": PY_ARITY,
    "numel an argument": PY_ARITY,
    "dim an argument": PY_ARITY,
    "half() an argument": "memory_format is positional in fake_torch, keyword-only in torch",
}


@pytest.mark.parametrize("name", CASES)
def test_bad_method_input_fails_as_torch(name: str) -> None:
    check(CASES[name], TEXT_DIFFERS.get(name))


_dtypes = st.sampled_from(["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                           "bfloat16", "float32", "float64"])


@settings(max_examples=120, deadline=None)
@given(value=st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                       st.floats(-1e6, 1e6), st.integers(-2**65, 2**65),
                       st.integers(-300, 300), st.booleans()),
       dtype=_dtypes,
       method=st.sampled_from(["fill_", "masked_fill_", "index_fill_", "new_full"]))
def test_value_taking_methods_over_random_values_and_dtypes(value: float | int | bool,
                                                            dtype: str, method: str) -> None:
    def program(L: Any) -> Any:
        x = L.zeros(2, dtype=getattr(L, dtype))
        if method == "masked_fill_":
            return x.masked_fill_(L.tensor([True, False]), value)
        if method == "index_fill_":
            return x.index_fill_(0, L.tensor([1]), value)
        if method == "new_full":
            return x.new_full((2,), value)
        return x.fill_(value)

    check(program)


@settings(max_examples=60, deadline=None)
@given(dtype=_dtypes, requires_grad=st.booleans())
def test_requires_grad_over_random_dtypes(dtype: str, requires_grad: bool) -> None:
    check(lambda L: L.zeros(2, dtype=getattr(L, dtype)).requires_grad_(requires_grad))
