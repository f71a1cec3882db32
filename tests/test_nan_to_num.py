"""torch.nan_to_num / Tensor.nan_to_num / nan_to_num_ against real torch CPU: values, dtypes,
layouts, errors, launches (one per call, torch's dispatcher's op), and its output rule under
torch.compile."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_same_error, launches, outcome, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

SPECIAL = [float("nan"), float("inf"), -float("inf"), 1.5, -2.0, 0.0]


def _x(lib: Any, dtype: str, device: str = "cpu") -> Any:
    dt = getattr(lib, dtype)
    if dt.is_complex:
        parts = lib.tensor(SPECIAL)
        return lib.complex(parts, parts.flip(0)).to(dt).to(device)
    if dt.is_floating_point:
        return lib.tensor(SPECIAL, dtype=dt, device=device).reshape(2, 3).t()  # non-contiguous
    return lib.tensor([[1, 0, 3], [4, 5, 6]], device=device).to(dt)


def _plain(value: Any) -> Any:
    if isinstance(value, (torch.Tensor, ft.Tensor)):
        if value.dtype.is_complex:
            v = value.tolist()
            return (str(value.dtype), tuple(value.shape), value.stride(),
                    str(np.array(v, dtype=complex)))
        return (str(value.dtype), tuple(value.shape), value.stride(),
                str(np.array(value.float().tolist()) if value.dtype.is_floating_point
                    else value.tolist()))
    return value


PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    "defaults": lambda lib, x: lib.nan_to_num(x),
    "method": lambda lib, x: x.nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0),
    "positional": lambda lib, x: lib.nan_to_num(x, 7.0, 8.0),
    "posinf past the range": lambda lib, x: x.nan_to_num(posinf=1e300),
    "in place": lambda lib, x: x.clone().nan_to_num_(neginf=-1.0),
    "out": lambda lib, x: lib.nan_to_num(x, out=lib.empty_like(x)),
    "out of another dtype": lambda lib, x: lib.nan_to_num(
        x, out=lib.empty(x.shape, dtype=lib.float64 if x.dtype != lib.float64 else lib.int32)),
    "not a tensor": lambda lib, x: lib.nan_to_num([1.0]),
}
DTYPES = ["float32", "float16", "bfloat16", "float64", "complex64", "int64", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", PROGRAMS)
def test_nan_to_num_like_torch(name: str, dtype: str) -> None:
    program = PROGRAMS[name]
    if dtype == "complex64" and name == "out of another dtype":
        pytest.skip("complex out: covered by the real dtypes")
    theirs, their_error = outcome(lambda: program(torch, _x(torch, dtype)))
    ours, our_error = outcome(lambda: program(ft, _x(ft, dtype)))
    assert_same_error(our_error, their_error)
    if their_error is None:
        assert _plain(ours) == _plain(theirs)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_one_launch_as_torch_dispatches(dtype: str) -> None:
    x, y = _x(torch, dtype), _x(ft, dtype, "cuda")
    with torch_launches() as theirs:
        torch.nan_to_num(x)
        x.clone().nan_to_num_()
    with launches() as ours:
        ft.nan_to_num(y)
        y.clone().nan_to_num_()
    assert ours == theirs == ["nan_to_num", "clone", "nan_to_num_"]


def test_compiled_keeps_the_dtype_and_fuses() -> None:
    """The output rule: an int input stays int (nan=0.0 is not a promoting operand)."""
    ft._dynamo.reset()
    fn = ft.compile(lambda x, i: (x * 2).nan_to_num() + 1, fullgraph=True)
    x = _x(ft, "float32", "cuda")
    eager = (x * 2).nan_to_num() + 1
    with launches() as names:
        got = fn(x, 0)
    assert got.tolist() == eager.tolist()
    assert len(names) == 1  # mul, nan_to_num, add: one pointwise kernel
    assert ft.compile(lambda i: i.nan_to_num(1.5), fullgraph=True)(
        _x(ft, "int64", "cuda")).dtype == ft.int64
