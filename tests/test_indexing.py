"""Indexing: __getitem__ / __setitem__ and the index ops, against real torch (values, views,
errors, dispatched ops) and numpy.

Basic indices must be views that launch nothing; advanced ones copy with torch's launches
("index", "index_put_", ...); assignments write through views into the base.
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
    NoHostSync,
    assert_raises_like_torch,
    assert_same_error,
    assert_same_tensor,
    launches,
    outcome,
    pair,
    torch_launches,
)

import fake_torch as ft
from fake_torch._simulated import _dispatch

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


# --- random index expressions ------------------------------------------------------------------

Item = tuple[Any, ...]


@st.composite
def index_items(draw: st.DrawFn, shape: tuple[int, ...]) -> list[Item]:
    """A random index tuple for `shape`: mostly valid, sometimes not (errors must match)."""
    items: list[Item] = []
    dim = 0
    for _ in range(draw(st.integers(1, len(shape) + 1))):
        size = shape[dim] if dim < len(shape) else 1
        kinds = ["int", "slice", "slice", "none", "long", "list", "mask", "bool", "int32", "t0d"]
        if not any(i[0] == "ellipsis" for i in items):
            kinds.append("ellipsis")
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            items.append(("int", draw(st.integers(-size - 1, size))))
        elif kind == "slice":
            items.append(("slice", draw(st.one_of(st.none(), st.integers(-size - 1, size + 1))),
                          draw(st.one_of(st.none(), st.integers(-size - 1, size + 1))),
                          draw(st.sampled_from([None, 1, 2, 3, 3, -1]))))
        elif kind in ("long", "int32", "list"):
            n = draw(st.integers(0, 3))
            vals = draw(st.lists(st.integers(-size, size), min_size=n, max_size=n))
            shp = draw(st.sampled_from([(n,), (1, n)])) if kind != "list" else (n,)
            items.append((kind, np.array(vals, dtype=np.int64).reshape(shp)))
        elif kind == "mask":
            width = draw(st.integers(1, max(1, min(2, len(shape) - dim))))
            mshape = shape[dim:dim + width] if draw(st.booleans()) or True else ()
            if draw(st.integers(0, 9)) == 0:
                mshape = (*mshape[:-1], 7) if mshape else (7,)
            items.append(("mask", draw(st.lists(st.booleans(), min_size=int(np.prod(mshape)),
                                                max_size=int(np.prod(mshape)))), mshape))
            dim += width - 1
        elif kind == "bool":
            items.append(("bool", draw(st.booleans())))
        elif kind == "t0d":
            items.append(("t0d", draw(st.integers(-size, size - 1 if size else 0)),
                          draw(st.sampled_from(["int64", "bool"]))))
        else:
            items.append((kind,))
        if kind not in ("none", "bool", "ellipsis"):
            dim += 1
    return items


def materialize(items: list[Item], mod: Any) -> tuple[Any, ...]:
    if mod is np:
        mod = _NumpyAsTorch
    out: list[Any] = []
    for it in items:
        kind = it[0]
        if kind == "int":
            out.append(it[1])
        elif kind == "slice":
            out.append(slice(*it[1:]))
        elif kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        elif kind == "bool":
            out.append(it[1])
        elif kind == "long":
            out.append(mod.from_numpy(it[1].copy()))
        elif kind == "int32":
            out.append(mod.from_numpy(it[1].astype(np.int32)))
        elif kind == "list":
            out.append(it[1].tolist())
        elif kind == "mask":
            out.append(mod.from_numpy(np.array(it[1], dtype=bool).reshape(it[2])))
        elif kind == "t0d":
            out.append(mod.tensor(it[1], dtype=getattr(mod, it[2])) if it[2] == "int64" else
                       mod.tensor(bool(it[1] % 2)))
    return tuple(out)


class _NumpyAsTorch:
    """Just enough of a torch-like namespace to build numpy index arrays."""

    @staticmethod
    def from_numpy(a: np.ndarray) -> np.ndarray:
        return a

    @staticmethod
    def tensor(v: Any, dtype: Any = None) -> np.ndarray:
        return np.array(v)

    int64 = np.int64


def _is_basic(items: list[Item]) -> bool:
    return all(i[0] in ("int", "slice", "none", "ellipsis") or
               (i[0] == "t0d" and i[2] == "int64") for i in items)


def _index(items: list[Item], mod: Any) -> Any:
    idx = materialize(items, mod)
    return idx[0] if len(idx) == 1 and items[0][0] != "list" else idx


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), data=st.data())
def test_getitem_matches_torch(shape: tuple[int, ...], data: st.DataObject) -> None:
    items = data.draw(index_items(shape))
    note(f"items={items}")
    ours, theirs = pair(shape)
    t_out, t_err = outcome(lambda: theirs[_index(items, torch)])
    o_out, o_err = outcome(lambda: ours[_index(items, ft)])
    assert_same_error(o_err, t_err)
    if t_err is not None:
        return
    assert_same_tensor(o_out, t_out)
    if _is_basic(items):  # a view: same strides and offset, shares memory with the base
        assert o_out.stride() == t_out.stride()
        if t_out.numel():
            assert o_out.storage_offset() == t_out.storage_offset()
            assert np.shares_memory(o_out._a, ours._a)
    elif o_out.numel():
        assert not np.shares_memory(o_out._a, ours._a)
    arrays = any(i[0] in ("long", "list") for i in items)
    if o_out.numel() and not any(i[0] in ("bool", "t0d", "int32", "mask") for i in items) \
            and not (arrays and any(i[0] == "int" for i in items)):
        # numpy agrees on ints, slices, None, Ellipsis and integer arrays, but not on an int
        # beside an array: numpy makes the int an advanced index too, torch selects with it
        # first (x[0, :, [0]] of a (1, 2, 1) array is (1, 2) in numpy, (2, 1) in torch)
        np.testing.assert_array_equal(o_out.numpy(), ours.numpy()[_index(items, np)])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), data=st.data(),
       dtype=st.sampled_from(["float32", "int64", "int32", "bool", "float16"]))
def test_setitem_matches_torch(shape: tuple[int, ...], data: st.DataObject, dtype: str) -> None:
    items = data.draw(index_items(shape))
    ours, theirs = pair(shape, dtype)
    target, err = outcome(lambda: theirs[_index(items, torch)])
    kind = data.draw(st.sampled_from(["scalar", "same", "broadcast", "lead1", "wrong", "dtype"]))
    if err is not None or kind == "scalar":
        value: Any = data.draw(st.sampled_from([7, -1, 2.5, True]))
        to_mod: Callable[[Any, Any], Any] = lambda v, mod: v  # noqa: E731
    else:
        vshape = tuple(target.shape)
        if kind == "broadcast":
            vshape = vshape[data.draw(st.integers(0, len(vshape))):]
        elif kind == "lead1":
            vshape = (1, 1, *vshape)
        elif kind == "wrong":
            vshape = (*vshape, 2)
        value = (np.arange(int(np.prod(vshape))) * 3 + 5).astype(
            "float64" if kind == "dtype" else dtype).reshape(vshape)
        to_mod = lambda v, mod: mod.from_numpy(v.copy())  # noqa: E731
    note(f"items={items} value={value!r}")
    _, t_err = outcome(lambda: theirs.__setitem__(_index(items, torch), to_mod(value, torch)))
    _, o_err = outcome(lambda: ours.__setitem__(_index(items, ft), to_mod(value, ft)))
    assert_same_error(o_err, t_err)
    if t_err is None:  # (torch's kernel may write part of the values before it raises)
        assert_same_tensor(ours, theirs)


@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), data=st.data())
def test_basic_indexing_on_cuda_launches_nothing(shape: tuple[int, ...],
                                                 data: st.DataObject) -> None:
    items = data.draw(index_items(shape))
    if not _is_basic(items) or any(i[0] == "t0d" for i in items):
        return
    x = ft.zeros(shape, device="cuda")
    ft.LaunchCounter.reset()
    outcome(lambda: x[_index(items, ft)])
    assert ft.LaunchCounter.n == 0


# --- dispatched ops against torch ---------------------------------------------------------------

def _lt(mod: Any, values: list[Any], dev: str | None = None) -> Any:
    t = mod.tensor(values)
    return t if dev is None else t.to(dev)


LAUNCH_CASES: list[tuple[str, Callable[..., Any]]] = [
    ("int/slice/None/...", lambda m, x, d: x[1, None, ..., 1:3]),
    ("slice step", lambda m, x, d: x[:, ::2]),
    ("x[...]", lambda m, x, d: x[...]),
    ("x[:, :]", lambda m, x, d: x[:, :]),
    ("x[True]", lambda m, x, d: x[True]),
    ("x[False]", lambda m, x, d: x[False]),
    ("long tensor", lambda m, x, d: x[d["i"]]),
    ("mixed basic+advanced", lambda m, x, d: x[1, :, d["i"]]),
    ("two separated tensors", lambda m, x, d: x[d["i"], :, d["i"]]),
    ("bool mask", lambda m, x, d: x[d["m"]]),
    ("bool mask 1-D", lambda m, x, d: x[d["m2"]]),
    ("0-d long tensor", lambda m, x, d: x[d["i0"]]),
    ("set scalar basic", lambda m, x, d: x.__setitem__((0, 1), 1.0)),
    ("set scalar slice", lambda m, x, d: x.__setitem__(slice(None), 0.0)),
    ("set tensor same shape", lambda m, x, d: x.__setitem__(0, d["v34"])),
    ("set tensor broadcast", lambda m, x, d: x.__setitem__(0, d["v4"])),
    ("set 0-d cpu tensor", lambda m, x, d: x.__setitem__(0, d["s"])),
    ("set scalar advanced", lambda m, x, d: x.__setitem__(d["i"], 1.0)),
    ("set tensor advanced", lambda m, x, d: x.__setitem__(d["i"], d["v4"])),
    ("set mask scalar", lambda m, x, d: x.__setitem__(d["m"], 0.0)),
    ("set mixed", lambda m, x, d: x.__setitem__((slice(None), d["i"]), 0.0)),
    ("set True", lambda m, x, d: x.__setitem__(True, d["v34"])),
    ("set False", lambda m, x, d: x.__setitem__(False, d["v34"])),
    ("set 0-d index", lambda m, x, d: x.__setitem__(d["i0"], 2.0)),
    ("index_select", lambda m, x, d: x.index_select(1, d["i"])),
    ("gather", lambda m, x, d: x.gather(1, d["g"])),
    ("scatter value", lambda m, x, d: x.scatter(1, d["g"], 2.0)),
    ("scatter src", lambda m, x, d: x.scatter(1, d["g"], d["src"])),
    ("scatter_ src", lambda m, x, d: x.scatter_(1, d["g"], d["src"])),
    ("scatter_ reduce", lambda m, x, d: x.scatter_(1, d["g"], 2.0, reduce="multiply")),
    ("scatter_add", lambda m, x, d: x.scatter_add(1, d["g"], d["src"])),
    ("scatter_add_", lambda m, x, d: x.scatter_add_(1, d["g"], d["src"])),
    ("index_copy_", lambda m, x, d: x.index_copy_(1, d["i"], d["src"])),
    ("index_copy", lambda m, x, d: x.index_copy(1, d["i"], d["src"])),
    ("index_fill_", lambda m, x, d: x.index_fill_(1, d["i"], 2.0)),
    ("index_fill tensor", lambda m, x, d: x.index_fill(1, d["i"], d["s"])),
    ("masked_fill", lambda m, x, d: x.masked_fill(d["m"], 0.0)),
    ("masked_fill_ broadcast", lambda m, x, d: x.masked_fill_(d["m2"][:, None, None], 1.0)),
    ("masked_select", lambda m, x, d: x.masked_select(d["m"])),
    ("nonzero", lambda m, x, d: x.nonzero()),
    ("nonzero as_tuple", lambda m, x, d: m.nonzero(x, as_tuple=True)),
    ("take_along_dim dim", lambda m, x, d: m.take_along_dim(x, d["g"], 1)),
    ("take_along_dim flat", lambda m, x, d: m.take_along_dim(x, d["i"])),
    ("take", lambda m, x, d: m.take(x, d["i"])),
    ("index_put_", lambda m, x, d: x.index_put_((d["i"],), d["s"], accumulate=True)),
    ("index_put", lambda m, x, d: m.index_put(x, (d["i"], d["i"]), d["s"])),
]


def _launch_data(mod: Any, dev: str | None) -> dict[str, Any]:
    def t(a: np.ndarray) -> Any:
        x = mod.from_numpy(a.copy())
        return x if dev is None else x.to(dev)

    mask = (np.arange(24).reshape(2, 3, 4) % 3) == 0
    return {
        "i": t(np.array([0, 1])), "i0": t(np.array(1)), "m": t(mask), "m2": t(np.array([1, 0]) > 0),
        "v34": t(np.ones((3, 4), np.float32)), "v4": t(np.ones(4, np.float32)),
        "s": mod.tensor(2.0), "g": t(np.array([[[0, 2, 1, 0]] * 2] * 2)),
        "src": t(np.ones((2, 2, 4), np.float32)),
    }


@pytest.mark.parametrize("name, fn", LAUNCH_CASES, ids=[c[0] for c in LAUNCH_CASES])
def test_launches_match_torch_dispatch(name: str, fn: Callable[..., Any]) -> None:
    """On cuda, our launches are exactly torch's non-view aten ops for the same call, and the
    values agree."""
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7
    theirs = torch.from_numpy(base.copy())
    t_data = _launch_data(torch, None)
    with torch_launches() as expected:
        fn(torch, theirs, t_data)
    t_res = fn(torch, torch.from_numpy(base.copy()), _launch_data(torch, None))
    ours = ft.tensor(base, device="cuda")
    o_data = _launch_data(ft, "cuda")
    with launches() as names:
        o_res = fn(ft, ours, o_data)
    assert names == expected
    if isinstance(t_res, torch.Tensor):
        assert_same_tensor(o_res.cpu(), t_res)
    elif isinstance(t_res, tuple):
        for o, t in zip(o_res, t_res, strict=True):
            assert_same_tensor(o.cpu(), t)
    else:
        assert_same_tensor(ours.cpu(), theirs)


def test_list_index_on_cuda_is_a_host_to_device_copy_then_index() -> None:
    """torch builds a list index on the host and copies it to the device (an H2D copy a CPU
    dispatch trace cannot show), then launches "index"."""
    x = ft.zeros(2, 3, device="cuda")
    with launches() as names:
        y = x[[1, 0]]
    assert names[-1] == "index" and len(names) == 2
    assert ft.LaunchCounter.by_kind["memcpy_h2d"] == 1
    assert y.is_cuda and tuple(y.shape) == (2, 3)


def test_data_dependent_shapes_sync_the_host_on_cuda() -> None:
    x = ft.tensor(np.arange(6.0).reshape(2, 3), device="cuda")
    mask = ft.tensor(np.arange(6).reshape(2, 3) > 2, device="cuda")
    idx = ft.tensor([1, 0], device="cuda")
    with _dispatch.push_mode(NoHostSync()):
        for call in (lambda: x[mask], lambda: x.masked_select(mask), lambda: x.nonzero(),
                     lambda: ft.repeat_interleave(idx)):
            with pytest.raises(RuntimeError, match="sync"):
                call()
        # shapes known on the host: no sync
        x[idx]
        x[mask] = 0.0
        x.index_select(0, idx)
        ft.repeat_interleave(idx, output_size=1)
        x.masked_fill(mask, 1.0)


# --- the index ops against torch over random shapes --------------------------------------------

@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), data=st.data(),
       dtype=st.sampled_from(["float32", "int64", "float64", "bfloat16"]))
def test_index_ops_match_torch(shape: tuple[int, ...], data: st.DataObject, dtype: str) -> None:
    nd = len(shape)
    dim = data.draw(st.integers(-nd, nd - 1))
    d = dim % nd
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    n = data.draw(st.integers(0, 4))
    lo = -shape[d] if data.draw(st.booleans()) else 0
    vec = rng.integers(lo, shape[d] + (data.draw(st.integers(0, 9)) == 0), n)
    ishape = tuple(data.draw(st.integers(1, s + 1)) if k != d else data.draw(st.integers(0, 4))
                   for k, s in enumerate(shape))
    idx = rng.integers(0, shape[d] + (data.draw(st.integers(0, 9)) == 0), ishape)
    src = rng.standard_normal(ishape).astype(np.float32)
    mask = rng.random(shape[data.draw(st.integers(0, nd)):]) < 0.5
    perm_src = rng.standard_normal([n if k == d else s for k, s in enumerate(shape)])
    op = data.draw(st.sampled_from([
        "index_select", "gather", "scatter", "scatter_", "scatter_add", "scatter_value",
        "index_copy", "index_fill", "masked_fill", "masked_fill_", "masked_select", "nonzero",
        "take_along_dim", "take", "index_put_acc", "scatter_reduce"]))
    note(f"{op} dim={dim} vec={vec} idx={idx.shape}")

    def run(mod: Any) -> Any:
        x = mod.from_numpy((np.arange(int(np.prod(shape))) - 3).reshape(shape).astype(
            "float32")).to(getattr(mod, dtype))

        def t(a: np.ndarray, like: bool = False) -> Any:
            out = mod.from_numpy(np.ascontiguousarray(a))
            return out.to(x.dtype) if like else out

        if op == "index_select":
            return x.index_select(dim, t(vec))
        if op == "gather":
            return x.gather(dim, t(idx))
        if op == "scatter":
            return x.scatter(dim, t(idx), t(src, True))
        if op == "scatter_":
            return x.scatter_(dim, t(idx), t(src, True))
        if op == "scatter_reduce":
            return x.scatter_(dim, t(idx), t(src, True), reduce="add")
        if op == "scatter_add":
            return x.scatter_add(dim, t(idx), t(src, True))
        if op == "scatter_value":
            return x.scatter(dim, t(idx), 1.5)
        if op == "index_copy":
            return x.index_copy(dim, t(np.unique(vec % shape[d])[:n]), t(perm_src[tuple(
                slice(0, len(np.unique(vec % shape[d])[:n])) if k == d else slice(None)
                for k in range(nd))], True))
        if op == "index_fill":
            return x.index_fill(dim, t(vec), -2.0)
        if op == "masked_fill":
            return x.masked_fill(t(mask), 9.0)
        if op == "masked_fill_":
            return x.masked_fill_(t(mask), mod.tensor(4.0))
        if op == "masked_select":
            return x.masked_select(t(mask))
        if op == "nonzero":
            return x.nonzero()
        if op == "take_along_dim":
            return mod.take_along_dim(x, t(idx - (shape[d] // 2)), dim)
        if op == "take":
            return mod.take(x, t(vec))
        return x.index_put_((t(vec),), t(np.ones(1, np.float32), True), accumulate=True)

    t_out, t_err = outcome(lambda: run(torch))
    o_out, o_err = outcome(lambda: run(ft))
    assert_same_error(o_err, t_err)
    if t_err is None:
        if op == "scatter_" or op == "scatter":  # duplicate indices: any one writer may win
            assert tuple(o_out.shape) == tuple(t_out.shape)
            return
        assert_same_tensor(o_out, t_out)


# --- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    "x[5]", "x[-3]", "x[0, 3]", "torch.tensor(1.)[0]", "torch.tensor(1.)[1]", "x[0, 0, 0, 0]",
    "x[::-1]", "x[::0]", "x[1.5]", "x['a']", "x[torch.tensor([0.])]", "x[torch.tensor([0, 5])]",
    "x[:, torch.tensor([0, 5])]", "x[:, :, torch.tensor([0, 5])]", "x[i, torch.tensor([0, 5])]",
    "x[torch.tensor([-3])]", "x[torch.tensor([True, False, True])]",
    "x[:, torch.ones(2, 4, dtype=torch.bool)]", "x[i, torch.tensor([0, 1, 2])]",
    "x[torch.tensor([0, 1], dtype=torch.int16)]", "x[torch.tensor(5)]",
    "x.__setitem__(0, torch.ones(4, 3))", "x.__setitem__(0, torch.ones(2, 3, 4))",
    "x.__setitem__(i, torch.ones(3))", "x.__setitem__(i, torch.ones(4, dtype=torch.int64))",
    "x.__setitem__(i, torch.tensor(1))", "x[0].__setitem__(slice(1, None), x[0][:-1])",
    "x.__setitem__(x > 0, torch.ones(3))", "x[:, :1].expand(2, 3, 4).__setitem__(0, 1.0)",
    "x.__setitem__(0, [1, 2])", "torch.zeros(3, dtype=torch.int8).__setitem__(0, 300)",
    "torch.zeros(3).__setitem__(0, 1e300)", "torch.zeros(3, dtype=torch.int64).__setitem__(0, "
    "float('inf'))", "torch.zeros(3, dtype=torch.int64).__setitem__(0, 2 ** 70)",
    "x.index_select(0, torch.zeros(1, 1, dtype=torch.long))", "x.index_select(0, torch.zeros(1))",
    "x.index_select(1, torch.tensor([3]))", "x.index_select(1, torch.tensor([-1]))",
    "x[0, 0].index_select(0, torch.tensor([7]))", "x.gather(1, torch.zeros(2, 2).long())",
    "x.gather(1, torch.zeros(3, 2, 4).long())", "x.gather(1, torch.zeros(2, 2, 4))",
    "x.gather(1, torch.full((2, 2, 4), 3))", "x.gather(1, torch.full((2, 2, 4), -1))",
    "x.scatter_(1, g, torch.ones(2, 2, 4, dtype=torch.float64))", "x.scatter_(1, g, x)",
    "x.scatter_(1, g, torch.ones(2, 1, 4))", "x.scatter_(1, torch.zeros(3, 2, 4).long(), 1.0)",
    "x.scatter_(1, torch.full((2, 2, 4), 3), 1.0)", "x.scatter_(1, torch.zeros(2, 2).long(), 1.)",
    "x.scatter_(1, g, 1.0, reduce='max')", "x.scatter_add_(1, g, 1.0)",
    "x.scatter(1, torch.zeros(2, 2, 4), 1.0)", "x.scatter_add_(1, g, x.double()[:, :2])",
    "x.index_copy_(1, torch.zeros(1, 1).long(), x[:, :1])",
    "x.index_copy_(1, torch.zeros(1, dtype=torch.int32), x[:, :1])",
    "x.index_copy_(1, torch.zeros(1).long(), x[:, :1].double())",
    "x.index_copy_(1, torch.zeros(2).long(), x[:, :1])",
    "x.index_copy_(1, torch.zeros(1).long(), x[:1, :1])", "x.index_copy(1, i, x[:, 0])",
    "x.index_copy_(1, torch.tensor([3]), x[:, :1])", "x.index_fill_(1, i.int(), 1.)",
    "x.index_fill_(1, torch.tensor([3]), 1.)", "x.index_fill_(1, torch.zeros(1, 1).long(), 1.)",
    "x.index_fill_(1, i, torch.ones(1))", "x.masked_fill(x, 1.)",
    "x.masked_fill(torch.ones(4, dtype=torch.uint8), 1.)",
    "x.masked_fill(torch.ones(4).long(), 1.)", "x[0, :, :1].clone().masked_fill_(x[0] > 0, 1.)",
    "x.masked_fill_(torch.ones(5, dtype=torch.bool), 1.)", "x.masked_fill(x > 0, torch.ones(1))",
    "torch.zeros(3, dtype=torch.int8).masked_fill(torch.ones(3, dtype=torch.bool), 300)",
    "x.masked_select(x)", "x.masked_select(torch.ones(5, dtype=torch.bool))",
    "torch.take_along_dim(x, torch.zeros(2, 2).long(), 1)",
    "torch.take_along_dim(x, torch.zeros(2, 2, 4, dtype=torch.int32), 1)",
    "torch.take_along_dim(x, torch.tensor([-1]))", "torch.take_along_dim(x.transpose(0, 1), i)",
    "torch.take_along_dim(x, torch.zeros(2, 1, 5).long(), 1)", "torch.take(x, torch.tensor([24]))",
    "torch.take(x, torch.tensor([1], dtype=torch.int32))", "x.index_put_((i,), torch.ones(3))",
    "x.index_put_((i,), torch.ones(4).long())", "x.index_put_((torch.tensor([5]),), x[0, 0, 0])",
    "x.index_put_((x[0] > 0,), torch.ones(3))",
])
def test_errors_match_torch(call: str) -> None:
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def env(mod: Any) -> dict[str, Any]:
        return {"torch": mod, "x": mod.from_numpy(base.copy()), "i": mod.tensor([0, 1]),
                "g": mod.zeros(2, 2, 4, dtype=mod.int64)}

    assert_raises_like_torch(lambda lib: eval(call, env(lib)))


def test_deprecation_warnings_match_torch() -> None:
    x = ft.zeros(2, 3)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        x[ft.tensor([1, 0], dtype=ft.uint8)]
    with pytest.warns(UserWarning, match="Using a non-tuple sequence for multidimensional"):
        x[[0, slice(None)]]
    with pytest.warns(UserWarning, match="Use of index_put_ on expanded tensors is deprecated"):
        x[:1].expand(2, 3).index_put_((ft.tensor([0]),), ft.tensor(1.0))


# --- aliasing -----------------------------------------------------------------------------------

def test_assignment_through_views_reaches_the_base_and_back() -> None:
    ours, theirs = pair((3, 4, 5))
    for fn in (lambda x: x[1], lambda x: x[:, 1:3].transpose(0, 1), lambda x: x[..., ::2],
               lambda x: x.view(12, 5)[2:7], lambda x: x.permute(2, 0, 1)[1]):
        o_view, t_view = fn(ours), fn(theirs)
        o_view[0] = -1.0
        t_view[0] = -1.0
        o_view[1:, 0] = ft.tensor(-2.0)
        t_view[1:, 0] = torch.tensor(-2.0)
        o_view[ft.tensor([0])] += 0  # read-modify-write through advanced indexing
        assert_same_tensor(ours, theirs)
        ours._a[...] += 1
        theirs += 1
        assert_same_tensor(o_view, t_view)


def test_advanced_results_are_copies() -> None:
    x = ft.tensor(np.arange(12.0).reshape(3, 4))
    y = x[ft.tensor([0, 2])]
    y[...] = 0.0
    assert x.numpy().sum() == 66.0
    z = x[ft.from_numpy(np.arange(12).reshape(3, 4) > 5)]
    z[...] = 0.0
    assert x.numpy().sum() == 66.0
