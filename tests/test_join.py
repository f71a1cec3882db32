"""Joining and rearranging whole tensors: cat/stack (h/v/dstack), repeat/tile,
repeat_interleave, flip, roll, tril/triu, diag — against real torch (values, dtype promotion,
layout, errors, dispatched ops) and numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracles import (
    DTYPES,
    assert_raises_like_torch,
    assert_same_error,
    assert_same_tensor,
    launches,
    outcome,
    torch_launches,
)

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def make(mod: Any, a: np.ndarray, dtype: str) -> Any:
    """The same values on both sides, in `dtype` (converted by the library itself)."""
    return mod.from_numpy(np.array(a, dtype=np.float32)).to(getattr(mod, dtype))


def both(fn: Callable[[Any], Any]) -> None:
    """Run fn(torch) and fn(fake_torch): the same result, or the same error."""
    theirs, t_err = outcome(lambda: fn(torch))
    ours, o_err = outcome(lambda: fn(ft))
    assert_same_error(o_err, t_err)
    if t_err is None:
        assert_same_tensor(ours, theirs)


# --- cat / stack -----------------------------------------------------------------------------

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(1, 4),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
def test_cat_stack_match_torch(data: st.DataObject, n: int, shape: tuple[int, ...]) -> None:
    arrays, dtypes = [], []
    for _ in range(n):
        s = list(shape)
        if s and data.draw(st.integers(0, 3)) == 0:  # vary one dim (cat joins along it)
            k = data.draw(st.integers(0, len(s) - 1))
            s[k] = data.draw(st.integers(0, 3))
        if data.draw(st.integers(0, 9)) == 0:
            s = [0]  # torch's legacy empty 1-D tensor
        arrays.append(np.arange(int(np.prod(s)), dtype=np.float32).reshape(s) - 2)
        dtypes.append(data.draw(st.sampled_from(DTYPES)))
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    op = data.draw(st.sampled_from(["cat", "concat", "concatenate", "stack", "hstack", "vstack",
                                    "dstack"]))
    note(f"{op} dim={dim} shapes={[a.shape for a in arrays]} dtypes={dtypes}")

    def run(mod: Any) -> Any:
        ts = [make(mod, a, d) for a, d in zip(arrays, dtypes, strict=True)]
        if op in ("hstack", "vstack", "dstack"):
            return getattr(mod, op)(ts)
        return getattr(mod, op)(ts, dim)

    both(run)
    if op in ("cat", "stack") and len(set(dtypes)) == 1 and dtypes[0] == "float32":
        out, err = outcome(lambda: run(ft))
        kept = [a for a in arrays if a.shape != (0,)] if op == "cat" else arrays
        if err is None and kept:  # numpy agrees on the values
            fn = np.concatenate if op == "cat" else np.stack
            np.testing.assert_array_equal(out.numpy(), fn(kept, dim))


# --- repeat / tile / repeat_interleave --------------------------------------------------------

@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
       dtype=st.sampled_from(DTYPES))
def test_repeat_tile_interleave_match_torch(data: st.DataObject, shape: tuple[int, ...],
                                            dtype: str) -> None:
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    nd = len(shape)
    transpose = data.draw(st.booleans()) and nd >= 2
    op = data.draw(st.sampled_from(["repeat", "tile", "ri_int", "ri_tensor", "ri_self"]))
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=max(nd - 1, 0),
                                    max_size=nd + 1)))
    dim = data.draw(st.one_of(st.none(), st.integers(-max(nd, 1), max(nd, 1) - 1)))
    r = data.draw(st.integers(-1, 3))
    size = (shape[dim] if dim is not None and nd else int(np.prod(shape)))
    rep_list = data.draw(st.lists(st.integers(0, 3), min_size=size, max_size=size)
                         if data.draw(st.integers(0, 4)) else st.lists(st.integers(-1, 3),
                                                                       max_size=3))
    given_size = data.draw(st.sampled_from([None, sum(rep_list), sum(rep_list) + 1]))
    note(f"{op} reps={reps} dim={dim} r={r} rep_list={rep_list} output_size={given_size}")

    def run(mod: Any) -> Any:
        x = make(mod, a, dtype)
        x = x.transpose(0, 1) if transpose else x
        rt = mod.tensor(rep_list, dtype=mod.int64)
        if op == "repeat":
            return x.repeat(*reps) if reps else x.repeat(())
        if op == "tile":
            return mod.tile(x, reps)
        if op == "ri_int":
            return x.repeat_interleave(r, dim)
        if op == "ri_tensor":
            return x.repeat_interleave(rt, dim, output_size=given_size)
        return mod.repeat_interleave(rt)

    both(run)


# --- flip / roll / tril / triu / diag -----------------------------------------------------------

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
       dtype=st.sampled_from(DTYPES))
def test_flip_roll_tri_diag_match_torch(data: st.DataObject, shape: tuple[int, ...],
                                        dtype: str) -> None:
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 1
    nd = len(shape)
    dims = data.draw(st.lists(st.integers(-max(nd, 1), max(nd, 1) - 1), max_size=3))
    shifts = data.draw(st.lists(st.integers(-5, 5), min_size=1, max_size=3))
    k = data.draw(st.integers(-3, 3))
    view = data.draw(st.sampled_from(["none", "transpose", "step"]))
    op = data.draw(st.sampled_from(["flip", "fliplr", "flipud", "roll", "roll_flat", "tril",
                                    "triu", "tril_", "triu_", "diag"]))
    note(f"{op} dims={dims} shifts={shifts} k={k} view={view}")

    def run(mod: Any) -> Any:
        x = make(mod, a, dtype)
        if view == "transpose" and nd >= 2:
            x = x.transpose(0, -1)
        elif view == "step" and nd >= 1:
            x = x[..., ::2]
        if op == "flip":
            out = x.flip(dims)
            return out, out.stride()  # flip keeps the input's dim order, as clone does
        if op in ("fliplr", "flipud"):
            return getattr(mod, op)(x)
        if op == "roll":
            return x.roll(shifts, dims)
        if op == "roll_flat":
            return mod.roll(x, shifts[0])
        if op in ("tril", "triu"):
            return getattr(mod, op)(x, k)
        if op in ("tril_", "triu_"):
            y = x.clone()
            assert getattr(y, op)(k) is y
            return y
        return mod.diag(x, k)

    theirs, t_err = outcome(lambda: run(torch))
    ours, o_err = outcome(lambda: run(ft))
    assert_same_error(o_err, t_err)
    if t_err is None:
        if op == "flip":
            assert_same_tensor(ours[0], theirs[0])
            assert ours[1] == theirs[1]
        else:
            assert_same_tensor(ours, theirs)
    if t_err is None and dtype == "float32" and view == "none" and op in ("tril", "triu"):
        np.testing.assert_array_equal(ours.numpy(), getattr(np, op)(a, k))


# --- launches ------------------------------------------------------------------------------------

LAUNCH_CASES: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("cat", lambda m, x, y: m.cat([x, y], 1)),
    ("cat promotes", lambda m, x, y: m.cat([x, y.to(m.int64)])),
    ("cat one", lambda m, x, y: m.cat([x])),
    ("cat legacy empty", lambda m, x, y: m.cat([x, m.empty(0, device=x.device)])),
    ("concat", lambda m, x, y: m.concat([x, y])),
    ("stack", lambda m, x, y: m.stack([x, y], 1)),
    ("hstack/vstack/dstack", lambda m, x, y: (m.hstack([x, y]), m.vstack([x, y]),
                                              m.dstack([x[0], y[0]]))),
    ("vstack 1-D", lambda m, x, y: m.vstack([x[0, 0], y[0, 0]])),
    ("repeat", lambda m, x, y: x.repeat(2, 1, 1, 1)),
    ("tile", lambda m, x, y: x.tile((2,))),
    ("repeat_interleave int", lambda m, x, y: x.repeat_interleave(2, 1)),
    ("repeat_interleave int flat", lambda m, x, y: x.repeat_interleave(2)),
    ("repeat_interleave int non-contiguous flat",
     lambda m, x, y: x.transpose(0, 2).repeat_interleave(2)),
    ("flip", lambda m, x, y: x.flip(0, 2)),
    ("fliplr", lambda m, x, y: m.fliplr(x)),
    ("roll", lambda m, x, y: x.roll((1, -1), (0, 2))),
    ("roll flat", lambda m, x, y: x.roll(3)),
    ("tril/triu", lambda m, x, y: (x.tril(), x.triu(1))),
    ("tril_", lambda m, x, y: x.tril_(-1)),
    ("diag 2-D", lambda m, x, y: x[0].diag()),
    ("diag 1-D", lambda m, x, y: x[0, 0].diag(1)),
]


@pytest.mark.parametrize("name, fn", LAUNCH_CASES, ids=[c[0] for c in LAUNCH_CASES])
def test_launches_match_torch_dispatch(name: str, fn: Callable[[Any, Any, Any], Any]) -> None:
    """On cuda, our launches are exactly torch's non-view aten ops for the same call."""
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    with torch_launches() as expected:
        expected_out = fn(torch, torch.from_numpy(a.copy()), torch.from_numpy(a.copy() + 1))
    x, y = ft.tensor(a, device="cuda"), ft.tensor(a + 1, device="cuda")
    with launches() as names:
        out = fn(ft, x, y)
    assert names == expected
    if isinstance(expected_out, tuple):
        for o, t in zip(out, expected_out, strict=True):
            assert_same_tensor(o.cpu(), t)
    else:
        assert_same_tensor(out.cpu(), expected_out)


def test_repeat_interleave_with_a_tensor_launches_index_then_select() -> None:
    """A tensor of repeats: "repeat_interleave" builds the index, "index_select" gathers —
    as torch dispatches them (the index's length needs a host sync unless output_size)."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    with torch_launches() as expected:
        torch.from_numpy(a).repeat_interleave(torch.tensor([1, 0, 2]), 1)
    x = ft.tensor(a, device="cuda")
    reps = ft.tensor([1, 0, 2], device="cuda")
    with launches() as names:
        out = x.repeat_interleave(reps, 1)
    assert names == expected == ["repeat_interleave", "index_select"]
    np.testing.assert_array_equal(out.cpu().numpy(), np.repeat(a, [1, 0, 2], axis=1))
    two = ft.tensor(2, device="cuda")
    with launches() as names:
        x.repeat_interleave(two, 0, output_size=4)
    assert names == ["repeat_interleave", "index_select"]


def test_cat_result_is_a_fresh_contiguous_tensor() -> None:
    x = ft.tensor(np.arange(6.0).reshape(2, 3))
    out = ft.cat([x.t(), x.t()])
    assert out.is_contiguous() and not np.shares_memory(out._a, x._a)
    out[0, 0] = -1.0
    assert x._a[0, 0] == 0.0


# --- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    "torch.cat([])", "torch.cat([x, torch.ones(2, 4, 4)], 2)", "torch.cat([x, torch.ones(2, 3)])",
    "torch.cat([x, torch.tensor(1.)])", "torch.cat([torch.tensor(1.), x])", "torch.cat([x, x], 3)",
    "torch.cat(x)", "torch.stack([])", "torch.stack([x, torch.ones(2, 3)])",
    "torch.stack([x, x], 4)", "torch.hstack([])", "torch.vstack([])", "x.repeat(2, 2)",
    "x.repeat(2, -1, 2)", "x.repeat_interleave(-1)", "x.repeat_interleave(torch.tensor([1, 2]), 1)",
    "x.repeat_interleave(torch.ones(1, 3).long(), 1)",
    "x.repeat_interleave(torch.tensor([1, -2, 1]), 1)",
    "x.repeat_interleave(torch.tensor([1., 2, 1]), 1)",
    "x.repeat_interleave(torch.tensor([1, 2, 3]), 1, output_size=5)",
    "torch.repeat_interleave(torch.tensor([1., 2]))",
    "torch.repeat_interleave(torch.ones(2, 2).long())", "x.flip(0, 0)", "x.flip(3)", "x.flip()",
    "x.roll((1, 2), 0)", "x.roll((), ())", "x.roll(1, (0, 1))",
    "x.roll((1, 2))", "x[0, 0].fliplr()", "torch.tensor(1.).flipud()", "x[0, 0].tril()",
    "x[0, 0].triu()", "x.diag()", "torch.tensor(1.).diag()",
])
def test_errors_match_torch(call: str) -> None:
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_raises_like_torch(
        lambda lib: eval(call, {"torch": lib, "x": lib.from_numpy(base.copy())}))


def test_out_arguments_are_refused_by_name() -> None:
    x = ft.zeros(2, 3)
    for call in (lambda: ft.cat([x], out=x), lambda: ft.stack([x], out=x),
                 lambda: ft.tril(x, out=x), lambda: ft.diag(x, out=x),
                 lambda: ft.gather(x, 0, ft.zeros(1, 3, dtype=ft.int64), out=x),
                 lambda: ft.index_select(x, 0, ft.tensor([0]), out=x)):
        with pytest.raises(NotImplementedError, match=r"out=\.\.\.\) is not emulated"):
            call()
