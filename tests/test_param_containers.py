"""nn.ParameterList and nn.ParameterDict against real torch: registration (named_parameters,
state_dict), indexing, slicing, dict operations, repr, and torch's errors."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def both(program: Callable[[Any], Any]) -> tuple[Any, Any]:
    return program(torch), program(ft)


def _list(t: Any) -> Any:
    pl = t.nn.ParameterList([t.nn.Parameter(t.ones(2, 3)), t.zeros(4), "not a tensor"])
    pl.append(t.ones(1, dtype=t.float64))
    pl += [t.ones(2, 2)]
    pl[1] = t.full((5,), 2.0)
    return pl


def test_parameter_list_matches_torch() -> None:
    theirs, ours = both(_list)
    assert repr(ours) == repr(theirs)
    assert len(ours) == len(theirs) == 5
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["0", "1", "3", "4"]
    assert [type(p).__name__ for p in ours] == [type(p).__name__ for p in theirs]
    np.testing.assert_array_equal(ours[-4].numpy(), theirs[-4].detach().numpy())
    assert len(ours[1:4:2]) == 2 and type(ours[1:4:2]).__name__ == "ParameterList"
    assert ours[2] == theirs[2] == "not a tensor"
    assert "0" not in dir(ours)
    ours.cuda()
    assert repr(ours).count("(cuda:0)") == 4


def _dict(t: Any) -> Any:
    pd = t.nn.ParameterDict({"w": t.ones(2), "b": t.nn.Parameter(t.zeros(3, 1))})
    pd.update([("z", t.ones(1)), ("k", 3)])
    pd.update(OrderedDict([("y", t.ones(2, 2)), ("a", t.ones(1))]))
    pd["x"] = t.zeros(2)
    return pd


def test_parameter_dict_matches_torch() -> None:
    theirs, ours = both(_dict)
    assert repr(ours) == repr(theirs)
    assert list(ours.keys()) == list(theirs.keys())  # a dict by sorted key, then in order
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.get("nope", 7) == theirs.get("nope", 7) == 7
    assert ours.pop("k") == theirs.pop("k") == 3
    assert ours.popitem()[0] == theirs.popitem()[0] == "x"
    assert ours.setdefault("q") is None is theirs.setdefault("q")
    assert "q" in ours and "q" in theirs
    merged_t, merged_f = theirs | torch.nn.ParameterDict({"m": torch.ones(1)}), \
        ours | ft.nn.ParameterDict({"m": ft.ones(1)})
    assert list(merged_f.keys()) == list(merged_t.keys())
    assert list(reversed(ours)) == list(reversed(theirs))
    ours.clear()
    assert len(ours) == 0 and list(ours.state_dict()) == []


ERRORS: list[Callable[[Any], Any]] = [
    lambda t: t.nn.ParameterList([t.ones(1)])[3],
    lambda t: t.nn.ParameterList([t.ones(1)])["0"],
    lambda t: t.nn.ParameterList(t.ones(2)),
    lambda t: t.nn.ParameterList([t.ones(1)])(t.ones(1)),
    lambda t: t.nn.ParameterDict({"a": t.ones(1)})[0],
    lambda t: t.nn.ParameterDict(5),
    lambda t: t.nn.ParameterDict([("a", t.ones(1), 1)]),
    lambda t: t.nn.ParameterDict([5]),
    lambda t: t.nn.ParameterDict({"a": t.ones(1)})(t.ones(1)),
    lambda t: t.nn.ParameterDict({"a": t.ones(1)})["b"],
]


@pytest.mark.parametrize("program", ERRORS)
def test_container_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)
