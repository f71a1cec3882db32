"""Views and reshapes: fake_torch against real torch (strides, offsets, errors, launches) and
numpy (values).

The core property: a chain of random view ops gives, at every step, the same shape, strides,
storage offset, contiguity and values as real torch, shares memory with its base both ways, and
launches nothing; reshape/contiguous/clone launch exactly what torch dispatches.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracles import (
    assert_raises_like_torch,
    assert_same_error,
    launches,
    outcome,
    pair,
    torch_launches,
)

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def assert_same_view(ours: ft.Tensor, theirs: Any, our_base: ft.Tensor, their_base: Any) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.stride() == theirs.stride()
    if theirs.numel() or theirs.storage_offset() <= their_base.numel():
        # (an empty view may point past its storage's end in torch; numpy cannot)
        assert ours.storage_offset() == theirs.storage_offset()
    assert ours.is_contiguous() == theirs.is_contiguous()
    if theirs.numel():  # torch reports data_ptr() == 0 for an empty tensor
        assert (ours.data_ptr() - our_base.data_ptr() ==
                theirs.data_ptr() - their_base.data_ptr())
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# --- random view chains against torch -----------------------------------------------------------

def _draw_op(data: st.DataObject, shape: tuple[int, ...],
             base_shape: tuple[int, ...] = ()) -> tuple[str, tuple[Any, ...]]:
    """One view op with parameters that are mostly (not always) valid for `shape`."""
    nd = len(shape)
    ops = ["unsqueeze", "view", "reshape", "flatten", "expand", "as_strided"]
    if nd:
        ops += ["transpose", "permute", "slice", "select", "squeeze", "narrow", "movedim",
                "unflatten", "chunk", "split", "tensor_split", "unbind", "getitem"]
    if nd <= 2:
        ops.append("t")
    if nd >= 2:
        ops += ["diagonal", "mT"]
    op = data.draw(st.sampled_from(ops))
    dim = st.integers(-nd, nd - 1) if nd else st.just(0)
    if op == "transpose" or op == "movedim":
        return op, (data.draw(dim), data.draw(dim))
    if op == "permute":
        return op, tuple(data.draw(st.permutations(range(nd))))
    if op == "slice":
        d = data.draw(st.integers(0, nd - 1))
        lo = data.draw(st.one_of(st.none(), st.integers(-4, 5)))
        hi = data.draw(st.one_of(st.none(), st.integers(-4, 5)))
        return op, (d, lo, hi, data.draw(st.integers(1, 3)))
    if op == "select":
        d = data.draw(dim)
        return op, (d, data.draw(st.integers(-shape[d] - 1, shape[d])))
    if op == "unsqueeze":
        return op, (data.draw(st.integers(-nd - 1, nd)),)
    if op == "squeeze":
        return op, data.draw(st.sampled_from([(), (data.draw(dim),)]))
    if op in ("view", "reshape"):
        n = int(np.prod(shape))
        sizes = [d for d in range(1, n + 1) if n % d == 0] or [0]
        first = data.draw(st.sampled_from(sizes))
        rest = n // first if first else 0
        new = data.draw(st.sampled_from([(first, rest), (-1,), (rest, 1, first), (first, -1)]))
        return op, tuple(new)
    if op == "flatten":
        return op, (data.draw(dim), data.draw(dim))
    if op == "expand":
        lead = data.draw(st.lists(st.integers(1, 3), max_size=1))
        sizes = [data.draw(st.sampled_from([-1, 1, 2, 3])) if s == 1 else -1 for s in shape]
        return op, tuple(lead + sizes)
    if op == "narrow":
        d = data.draw(dim)
        start = data.draw(st.integers(-shape[d], shape[d]))
        return op, (d, start, data.draw(st.integers(0, shape[d])))
    if op == "unflatten":
        d = data.draw(dim)
        return op, (d, data.draw(st.sampled_from([(1, -1), (-1, 1), (shape[d],), (2, -1)])))
    if op in ("chunk", "split", "tensor_split"):
        return op, (data.draw(st.integers(1, 3)), data.draw(dim), data.draw(st.integers(0, 3)))
    if op == "unbind":
        return op, (data.draw(dim), data.draw(st.integers(0, 4)))
    if op == "getitem":
        items: list[Any] = []
        for s in shape[: data.draw(st.integers(1, nd))]:
            choices = [slice(None), None, 0, -1, slice(1, None, 2), slice(-2, None)]
            items.append(data.draw(st.sampled_from(
                choices if Ellipsis in items else [*choices, Ellipsis])))
            if items[-1] in (0, -1) and s == 0:
                items[-1] = slice(None)
        return op, tuple(items)
    if op == "diagonal":
        return op, (data.draw(st.integers(-2, 2)), data.draw(dim), data.draw(dim))
    if op == "as_strided":  # (an empty view past the storage's end is not representable)
        n = data.draw(st.integers(0, 4))
        return op, (n, data.draw(st.integers(0, 3)),
                    data.draw(st.integers(0, 6 if n else int(np.prod(base_shape)))))
    return op, ()


def _apply(mod: Any, x: Any, op: str, args: tuple[Any, ...]) -> Any:
    """The op on `x`; pieces of split-like ops are picked by the last arg."""
    if op == "slice":
        d, lo, hi, step = args
        return x[(slice(None),) * d + (slice(lo, hi, step),)]
    if op in ("chunk", "split", "tensor_split"):
        n, d, pick = args
        pieces = getattr(x, op)(n, d)
        return pieces[pick % len(pieces)] if pieces else x
    if op == "unbind":
        d, pick = args
        pieces = x.unbind(d)
        return pieces[pick % len(pieces)] if pieces else x
    if op == "getitem":
        return x[args]
    if op == "mT":
        return x.mT
    if op == "as_strided":
        n, stride, offset = args
        return x.as_strided((n,), (stride,), offset)
    if op == "unflatten":
        return x.unflatten(*args)
    return getattr(x, op)(*args)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4), data=st.data())
def test_random_view_chains_match_torch(shape: tuple[int, ...], data: st.DataObject) -> None:
    our_base, their_base = pair(shape)
    ours, theirs = our_base, their_base
    for _ in range(data.draw(st.integers(1, 5))):
        op, args = _draw_op(data, tuple(theirs.shape), shape)
        note(f"{op}{args} on {tuple(theirs.shape)} {theirs.stride()}")
        t_out, t_err = outcome(lambda: _apply(torch, theirs, op, args))  # noqa: B023
        o_out, o_err = outcome(lambda: _apply(ft, ours, op, args))  # noqa: B023
        assert_same_error(o_err, t_err)
        if t_err is not None:
            continue
        if not np.shares_memory(t_out.numpy(), their_base.numpy()) and t_out.numel():
            assert not np.shares_memory(o_out._a, our_base._a)  # a reshape that had to copy
            np.testing.assert_array_equal(o_out.numpy(), t_out.numpy())
            return
        ours, theirs = o_out, t_out
        assert_same_view(ours, theirs, our_base, their_base)
    # a write through the view is seen in the base (unless torch refuses an overlapping write)
    t_set = outcome(lambda: theirs.__setitem__(Ellipsis, -1.0))[1]
    o_set = outcome(lambda: ours.__setitem__(Ellipsis, -1.0))[1]
    assert_same_error(o_set, t_set)
    np.testing.assert_array_equal(our_base.numpy(), their_base.numpy())
    # and a write into the base is seen through the view
    their_base.copy_(torch.arange(their_base.numel(), dtype=torch.float32).reshape(shape) * 3)
    our_base._a[...] = their_base.numpy()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), data=st.data())
def test_views_of_cuda_tensors_launch_nothing(shape: tuple[int, ...], data: st.DataObject) -> None:
    x = ft.zeros(shape, device="cuda")
    ft.LaunchCounter.reset()
    for _ in range(4):
        op, args = _draw_op(data, tuple(x.shape))
        if op in ("reshape", "flatten"):  # (may copy: launches are checked against torch below)
            continue
        y, err = outcome(lambda: _apply(ft, x, op, args))  # noqa: B023
        if err is None:
            x = y
            assert x.is_cuda
    assert ft.LaunchCounter.n == 0


# --- reshape / contiguous / clone: copies --------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4),
       perm_seed=st.randoms(use_true_random=False),
       dtype=st.sampled_from(["float32", "int64", "float16", "bool", "bfloat16"]))
def test_clone_contiguous_reshape_values_and_layout(shape: tuple[int, ...], perm_seed: Any,
                                                    dtype: str) -> None:
    perm = list(range(len(shape)))
    perm_seed.shuffle(perm)
    base = (np.arange(int(np.prod(shape))) % 7).reshape(shape)
    tdt = getattr(torch, dtype)
    theirs = torch.from_numpy(base.copy()).to(tdt).permute(perm)
    ours = ft.from_numpy(base.copy()).to(getattr(ft, dtype)).permute(*perm)
    for fn in (lambda x: x.clone(), lambda x: x.contiguous(), lambda x: x.reshape(-1),
               lambda x: x[..., ::2].clone(), lambda x: x.flatten()):
        t, o = fn(theirs), fn(ours)
        assert o.stride() == t.stride() and tuple(o.shape) == tuple(t.shape)
        assert o.dtype == getattr(ft, dtype)
        np.testing.assert_array_equal(np.asarray(o.to(ft.float32).numpy()),
                                      t.to(torch.float32).numpy())


def test_clone_keeps_a_dense_layout_and_copies() -> None:
    ours, theirs = pair((2, 3, 4))
    for fn in (lambda x: x.transpose(0, 2), lambda x: x.permute(1, 2, 0),
               lambda x: x[:, :, ::2], lambda x: x[:, :1].expand(2, 3, 4),
               lambda x: x.unsqueeze(1).expand(2, 5, 3, 4)):
        o, t = fn(ours).clone(), fn(theirs).clone()
        assert o.stride() == t.stride()
        assert not np.shares_memory(o._a, ours._a)
    assert ours.clone(memory_format=None).is_contiguous()
    with pytest.raises(TypeError, match=r"must be torch\.memory_format, not str"):
        ours.clone(memory_format="torch.channels_last")
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
        ours.clone(memory_format=ft.channels_last)


def test_contiguous_returns_self_when_contiguous() -> None:
    x = ft.zeros(2, 3, device="cuda")
    ft.LaunchCounter.reset()
    assert x.contiguous() is x
    assert x[:1].contiguous().data_ptr() == x.data_ptr()
    assert ft.LaunchCounter.n == 0
    y = x.t().contiguous()
    assert y.is_contiguous() and y.data_ptr() != x.data_ptr()
    assert ft.LaunchCounter.n == 1 and ft.LaunchCounter.by_op == {"clone": 1}


@pytest.mark.parametrize("name, fn", [
    ("view", lambda x: x.view(6, 4)),
    ("view -1", lambda x: x.view(-1, 2)),
    ("reshape contiguous", lambda x: x.reshape(4, 6)),
    ("reshape non-contiguous", lambda x: x.transpose(0, 1).reshape(12, 2)),
    ("reshape_as", lambda x: x.transpose(0, 1).reshape_as(x)),
    ("reshape viewable transpose", lambda x: x.transpose(1, 2).reshape(2, 4, 3)),
    ("flatten", lambda x: x.flatten()),
    ("flatten non-contiguous", lambda x: x.transpose(0, 1).flatten(1)),
    ("flatten 0-d", lambda x: x[0, 0, 0].flatten()),
    ("unflatten", lambda x: x.unflatten(2, (2, 2))),
    ("squeeze/unsqueeze", lambda x: x.unsqueeze(1).squeeze()),
    ("permute+transpose", lambda x: x.permute(2, 0, 1).transpose(0, 1)),
    ("t/T/mT", lambda x: (x[0].t(), x[0].T, x.mT)),
    ("expand", lambda x: x[:, :1].expand(-1, 5, -1).expand_as(x[:, :1].expand(2, 5, 4))),
    ("narrow/select", lambda x: x.narrow(1, 1, 2).select(0, 1)),
    ("movedim", lambda x: x.movedim((0, 1), (2, 0))),
    ("split/chunk/unbind", lambda x: (x.split(2, 2), x.split([1, 3], 2), x.chunk(2), x.unbind(1))),
    ("tensor_split", lambda x: (x.tensor_split(3, 2), x.tensor_split([1, 2], 1))),
    ("contiguous of contiguous", lambda x: x.contiguous()),
    ("contiguous of transposed", lambda x: x.transpose(0, 1).contiguous()),
    ("clone", lambda x: x.clone()),
    ("clone of transposed", lambda x: x.transpose(0, 2).clone()),
    ("as_strided", lambda x: x.as_strided((2, 2), (1, 2), 1)),
    ("diagonal", lambda x: x.diagonal(0, 1, 2)),
    ("view dtype", lambda x: x.view(ft.int32 if isinstance(x, ft.Tensor) else torch.int32)),
    ("broadcast_to", lambda x: (x[:1], x)[0].broadcast_to((2, 3, 4))),
    ("reshape then view", lambda x: x.transpose(0, 1).reshape(3, 8).view(24)),
])
def test_launches_match_torch_dispatch(name: str, fn: Callable[[Any], Any]) -> None:
    """Our op names on cuda equal torch's non-view aten ops for the same call."""
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    theirs = torch.from_numpy(base.copy())
    ours = ft.tensor(base, device="cuda")
    with torch_launches() as expected:
        fn(theirs)
    with launches() as names:
        fn(ours)
    assert names == expected


def test_module_functions_match_methods() -> None:
    ours, theirs = pair((2, 3, 4))
    cases: list[tuple[str, tuple[Any, ...]]] = [
        ("reshape", ((4, 6),)), ("flatten", (1,)), ("unflatten", (1, (3, 1))),
        ("unsqueeze", (0,)), ("squeeze", ()), ("transpose", (0, 2)), ("swapaxes", (0, 1)),
        ("swapdims", (1, 2)), ("permute", ((2, 1, 0),)), ("narrow", (2, 1, 2)),
        ("select", (1, -1)), ("movedim", (0, -1)), ("moveaxis", (1, 0)), ("clone", ()),
        ("diagonal", (0, 0, 2)), ("adjoint", ()),
    ]
    for name, args in cases:
        o, t = getattr(ft, name)(ours, *args), getattr(torch, name)(theirs, *args)
        assert_same_view(o, t, ours, theirs) if name != "clone" else None
        np.testing.assert_array_equal(o.numpy(), t.numpy())
    for name in ("split", "chunk", "tensor_split"):
        o_parts, t_parts = getattr(ft, name)(ours, 2, 2), getattr(torch, name)(theirs, 2, 2)
        assert len(o_parts) == len(t_parts)
        for o, t in zip(o_parts, t_parts, strict=True):
            assert_same_view(o, t, ours, theirs)
    assert ft.t(ours[0]).stride() == torch.t(theirs[0]).stride()
    assert ft.as_strided(ours, (3,), (2,), 1).tolist() == torch.as_strided(
        theirs, (3,), (2,), 1).tolist()
    assert ft.broadcast_to(ours[0], (2, 3, 4)).stride() == torch.broadcast_to(
        theirs[0], (2, 3, 4)).stride()
    o_b = ft.broadcast_tensors(ours, ours[0, :, :1])
    t_b = torch.broadcast_tensors(theirs, theirs[0, :, :1])
    assert isinstance(o_b, tuple) and [x.stride() for x in o_b] == [x.stride() for x in t_b]
    assert ft.broadcast_shapes((2, 1), (3,), 1) == torch.broadcast_shapes((2, 1), (3,), 1)
    for n in (1, 2, 3):
        for x in (ours[0, 0, 0], ours[0, 0], ours[0], ours):
            fn = getattr(ft, f"atleast_{n}d")
            tx = torch.from_numpy(x.numpy())
            assert tuple(fn(x).shape) == tuple(getattr(torch, f"atleast_{n}d")(tx).shape)
        assert isinstance(getattr(ft, f"atleast_{n}d")(ours, ours), tuple)


def test_view_dtype_matches_torch() -> None:
    for src, dst, fn in [
        ("float32", "int32", lambda x: x), ("float32", "float16", lambda x: x[:, 1:]),
        ("float32", "float64", lambda x: x), ("float32", "float64", lambda x: x[:, :2]),
        ("float32", "bfloat16", lambda x: x.t()), ("float16", "float32", lambda x: x),
        ("uint8", "bool", lambda x: x % 2), ("int64", "int8", lambda x: x[1]),
    ]:
        base = np.arange(12).reshape(3, 4)
        theirs = fn(torch.from_numpy(base.copy()).to(getattr(torch, src)))
        ours = fn(ft.from_numpy(base.copy()).to(getattr(ft, src)))
        t_out, t_err = outcome(lambda: theirs.view(getattr(torch, dst)))  # noqa: B023
        o_out, o_err = outcome(lambda: ours.view(getattr(ft, dst)))  # noqa: B023
        assert_same_error(o_err, t_err)
        if t_err is None:
            assert tuple(o_out.shape) == tuple(t_out.shape)
            assert o_out.stride() == t_out.stride()
            assert o_out.storage_offset() == t_out.storage_offset()
            np.testing.assert_array_equal(o_out.to(ft.float64).numpy(),
                                          t_out.to(torch.float64).numpy())


# --- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    "x.view(3, 3)", "x.view(-1, -1)", "x.view(-2, 12)", "torch.empty(0, 3).view(0, -1)",
    "x.transpose(0, 1).view(-1)", "x.view(2.0, 12)", "x.reshape(5, 5)", "torch.reshape(x, 24)",
    "x.flatten(2, 1)", "x.flatten(4)", "x.unflatten(2, (3, 2))", "x.unflatten(2, ())",
    "x.unflatten(2, (-1, 3))", "x.unsqueeze(4)", "x.unsqueeze(-5)", "x.squeeze((0, 0))",
    "x.squeeze(3)", "x.transpose(0, 3)", "x.permute(0, 1)", "x.permute(0, 1, 1)",
    "x.permute(0, 1, 3)", "x.t()", "x[0, 0].mT", "x.expand(4)", "x.expand(2, 5, 4)",
    "x.expand(-1, 2, 3, 4)", "x[:, :1].expand(2, -2, 4)", "x.bool().expand(4)",
    "x.half().expand(4)", "x.to(torch.bfloat16).expand(4)", "x.expand_as(x[0, 0])",
    "x.narrow(1, 4, 1)", "x.narrow(1, 1, 3)", "x.narrow(1, 1, -1)", "x[0, 0, 0].narrow(0, 0, 1)",
    "x.select(0, 5)", "x.select(-1, -5)", "x[0, 0, 0].select(0, 0)",
    "x.movedim((0, 1), (0,))", "x.movedim((0, 0), (1, 2))", "x.movedim((-1, 2), (0, 1))",
    "x.split([1, 2], 2)", "x.split(-1, 2)", "x.split(0, 2)", "x.split([-1, 5], 2)",
    "x[0, 0, 0].split(1)", "x.chunk(0)", "x[0, 0, 0].chunk(2)", "x[0, 0, 0].unbind()",
    "x.tensor_split(0)", "x[0, 0, 0].tensor_split(2)", "x.tensor_split(torch.ones(1, 1).long())",
    "x.as_strided((30,), (1,))", "x[1].as_strided((2,), (1,), 30)", "x.as_strided((2,), (-1,))",
    "x.as_strided((-2,), (1,))", "x.diagonal(0, 1, 1)", "torch.broadcast_to(x, (3, 4))",
    "torch.broadcast_tensors(x, x[0, 0, :2])", "torch.broadcast_shapes((2, 3), (4,))",
    "torch.broadcast_shapes((2, 1), (1, 4), (3, 4))",
    "torch.ones(2, 3).view(torch.float64)", "x[0, 0, 0].view(torch.float64)",
    "x.transpose(1, 2).view(torch.float16)", "torch.ones(8)[1:5].view(torch.float64)",
])
def test_errors_match_torch(call: str) -> None:
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_raises_like_torch(
        lambda lib: eval(call, {"torch": lib, "x": lib.from_numpy(base.copy())}))


def test_T_warns_like_torch_beyond_two_dims() -> None:
    x = ft.zeros(2, 3, 4)
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        assert tuple(x.T.shape) == (4, 3, 2)
    assert tuple(x[0].T.shape) == (4, 3)


def test_views_keep_the_device_and_storage() -> None:
    x = ft.zeros(4, 4, device="cuda")
    for v in (x.view(16), x.t(), x[1:], x.unsqueeze(0), x.expand(2, 4, 4), x.as_strided((2,),
              (5,))):
        assert v.is_cuda and v._storage is x._storage
    # writes through a cuda view reach the base, as on a GPU
    x.view(16)._a[3] = 7
    assert x._a[0, 3] == 7


def test_sizes_accept_torch_size_lists_and_index_objects() -> None:
    x = ft.zeros(2, 3, 4)
    assert x.view(ft.Size([6, 4])).shape == (6, 4)
    assert x.view([6, 4]).shape == (6, 4)
    assert x.reshape(np.int64(4), 6).shape == (4, 6)
    assert x.expand(ft.tensor(2), -1, -1).shape == (2, 3, 4)
    assert x.permute([2, 0, 1]).shape == (4, 2, 3)
    assert operator.index(np.int32(3)) == 3
