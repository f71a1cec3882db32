"""Bad input to reductions, scans, sorts and selections, against torch CPU
(tests/bad_input.py: a silent result where torch raises fails, and so does another exception
class or first message line)."""

from __future__ import annotations

from typing import Any

import pytest
from bad_input import ARG_PARSER, ONE_IMPL, PY_ARITY, Program, check
from hypothesis import given, settings
from hypothesis import strategies as st


def _x(L: Any) -> Any:
    return L.arange(6.0).reshape(2, 3)


def _e(L: Any) -> Any:
    return L.ones(0, 3)


CASES: dict[str, Program] = {
    # dims out of range, repeated, of the wrong type
    "sum dim out of range": lambda L: _x(L).sum(2),
    "sum negative dim out of range": lambda L: _x(L).sum(-3),
    "sum repeated dims": lambda L: _x(L).sum((0, 0)),
    "sum repeated negative dims": lambda L: _x(L).sum((1, -1)),
    "sum dim a float": lambda L: _x(L).sum(1.0),
    "sum dim a string": lambda L: _x(L).sum("a"),
    "mean dim out of range": lambda L: _x(L).mean(5),
    "amax dim out of range": lambda L: L.amax(_x(L), 3),
    "amax repeated dims": lambda L: L.amax(_x(L), (0, 0)),
    "prod dim tuple": lambda L: _x(L).prod((0, 1)),
    "argmax dim out of range": lambda L: _x(L).argmax(2),
    "max dim out of range": lambda L: _x(L).max(2),
    "min dim out of range": lambda L: L.min(_x(L), -3),
    "cumsum dim out of range": lambda L: _x(L).cumsum(2),
    "cumsum no dim": lambda L: L.cumsum(_x(L)),
    "softmax dim out of range": lambda L: L.softmax(_x(L), 2),
    "log_softmax dim out of range": lambda L: L.log_softmax(_x(L), -3),
    "std dim out of range": lambda L: _x(L).std(2),
    "var repeated dims": lambda L: _x(L).var((0, 0)),
    "all dim out of range": lambda L: L.all(_x(L) > 0, 2),
    "any dim out of range": lambda L: (_x(L) > 0).any(3),
    "norm dim out of range": lambda L: L.norm(_x(L), dim=2),
    "sort dim out of range": lambda L: L.sort(_x(L), 2),
    "argsort dim out of range": lambda L: _x(L).argsort(-3),
    # dim=None where torch takes none
    "max dim None": lambda L: _x(L).max(dim=None),
    "min dim None": lambda L: _x(L).min(dim=None),
    "torch.max dim None": lambda L: L.max(_x(L), dim=None),
    "max dim None keepdim": lambda L: L.max(_x(L), dim=None, keepdim=True),
    "argmax dim None is fine": lambda L: L.argmax(_x(L), dim=None),
    "sum dim None is fine": lambda L: _x(L).sum(dim=None),
    "max a string": lambda L: _x(L).max("a"),
    "max a float": lambda L: _x(L).max(1.5),
    # dtypes a reduction does not take
    "mean of ints": lambda L: L.arange(3).mean(),
    "mean of bools": lambda L: L.ones(2, dtype=L.bool).mean(),
    "std of ints": lambda L: L.arange(3).std(),
    "var of ints": lambda L: L.var(L.arange(3)),
    "softmax of ints": lambda L: L.softmax(L.arange(3), 0),
    "log_softmax of ints": lambda L: L.arange(3).log_softmax(0),
    "sum dtype a string": lambda L: _x(L).sum(dtype="float"),
    "mean dtype int": lambda L: _x(L).mean(dtype=L.int64),
    "cumsum dtype a string": lambda L: _x(L).cumsum(0, dtype="a"),
    "norm of ints": lambda L: L.norm(L.arange(3)),
    "quantile of ints": lambda L: L.quantile(L.arange(3), 0.5),
    # empty inputs
    "max of empty": lambda L: _e(L).max(),
    "min of empty": lambda L: L.min(_e(L)),
    "argmax of empty": lambda L: _e(L).argmax(),
    "amax of empty": lambda L: L.amax(_e(L)),
    "max over the empty dim": lambda L: _e(L).max(0),
    "argmin over the empty dim": lambda L: _e(L).argmin(0),
    "sum of empty is fine": lambda L: _e(L).sum(),
    "max over a nonempty dim is fine": lambda L: _e(L).max(1),
    # k and q out of range
    "topk k too large": lambda L: L.topk(_x(L), 4),
    "topk k negative": lambda L: _x(L).topk(-1),
    "quantile q above one": lambda L: L.quantile(_x(L), 1.5),
    "quantile q tensor out of range": lambda L: L.quantile(_x(L), L.tensor([0.5, -0.1])),
    "quantile bad interpolation": lambda L: L.quantile(_x(L), 0.5, interpolation="mid"),
    "norm p a string": lambda L: L.norm(_x(L), p="nuc", dim=0),
    "std correction a string": lambda L: _x(L).std(correction="a"),
    "softmax dtype a string": lambda L: L.softmax(_x(L), 0, dtype="float"),
    "multinomial of 3d": lambda L: L.multinomial(L.ones(2, 2, 2), 1),
}


# cases whose first message line is known to differ from torch's (the class is torch's)
TEXT_DIFFERS: dict[str, str] = {
    "cumsum no dim": PY_ARITY,
    "torch.max dim None": ONE_IMPL,
    "max dim None keepdim": ONE_IMPL,
    "std correction a string": ARG_PARSER,
}


@pytest.mark.parametrize("name", CASES)
def test_bad_reduction_input_fails_as_torch(name: str) -> None:
    check(CASES[name], TEXT_DIFFERS.get(name))


@settings(max_examples=80, deadline=None)
@given(ndim=st.integers(0, 3), dim=st.integers(-5, 5), keepdim=st.booleans(),
       op=st.sampled_from(["sum", "mean", "amax", "argmax", "max", "min", "cumsum", "softmax",
                           "std", "var", "all", "sort"]))
def test_reductions_over_random_dims(ndim: int, dim: int, keepdim: bool, op: str) -> None:
    def program(L: Any) -> Any:
        x = L.ones(*([2] * ndim))
        if op == "all":
            return L.all(x > 0, dim, keepdim=keepdim)
        if op in ("cumsum", "softmax", "sort"):
            return getattr(L, op)(x, dim)
        return getattr(L, op)(x, dim, keepdim=keepdim)

    check(program)
