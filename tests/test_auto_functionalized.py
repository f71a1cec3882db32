"""auto_functionalized (torch._higher_order_ops.auto_functionalize) against real torch: its
eager result (the op's output, then the written arguments' new values; the arguments left as
they were) and how make_fx records it (one node of its own, a getitem per item)."""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np
import pytest

import fake_torch as ft


@functools.cache
def _ops(L: Any) -> tuple[Any, Any]:
    """Two mutating custom ops in library `L` (fake_torch or torch), with fake impls:
    aftest::rn writes `result` and returns nothing (vLLM's rms_norm shape);
    aftest::two writes `a` and `b` and returns a new tensor."""
    def rn(result: Any, input: Any, weight: Any, epsilon: float) -> None:
        result.copy_(input * weight + epsilon)

    def rn_fake(result: Any, input: Any, weight: Any, epsilon: float) -> None:
        return None

    def two(a: Any, x: Any, b: Any) -> Any:
        a.add_(x)
        b.mul_(2)
        return x * 3

    def two_fake(a: Any, x: Any, b: Any) -> Any:
        return L.empty_like(x)

    custom_op: Any = L.library.custom_op
    custom_op("aftest::rn", mutates_args=["result"], schema=(
        "(Tensor(a0!) result, Tensor input, Tensor weight, float epsilon) -> ()"),
    )(rn).register_fake(rn_fake)
    custom_op("aftest::two", mutates_args=["b", "a"],
              schema="(Tensor(a0!) a, Tensor x, Tensor(a1!) b) -> Tensor",
              )(two).register_fake(two_fake)
    return L.ops.aftest.rn.default, L.ops.aftest.two.default


def _af(L: Any) -> Any:
    if L is ft:
        from fake_torch._higher_order_ops.auto_functionalize import auto_functionalized
    else:
        from torch._higher_order_ops.auto_functionalize import auto_functionalized
    return auto_functionalized


def _values(result: Any) -> list[Any]:
    return [None if r is None else np.asarray(r.tolist()) for r in result]


def _eager(L: Any) -> tuple[list[Any], list[Any], list[Any]]:
    rn, two = _ops(L)
    af = _af(L)
    x, w, out = L.arange(3.0), L.full((3,), 2.0), L.zeros(3)
    a, b = L.ones(3), L.full((3,), 5.0)
    r1 = af(rn, result=out, input=x, weight=w, epsilon=0.5)
    r2 = af(two, a=a, x=x, b=b)
    assert type(r1) is tuple and type(r2) is tuple
    return _values(r1), _values(r2), _values((out, a, b))


def test_eager_result_and_inputs_untouched() -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = _eager(ft), _eager(torch)
    for o, t in zip(ours, theirs, strict=True):
        assert len(o) == len(t)
        for a, b in zip(o, t, strict=True):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b)
    assert ours[0][0] is None  # `-> None`: (None, new result)
    np.testing.assert_allclose(ours[0][1], [0.5, 2.5, 4.5])
    np.testing.assert_allclose(ours[2][0], [0.0, 0.0, 0.0])  # `out` itself not written
    np.testing.assert_allclose(ours[1][1], [1.0, 2.0, 3.0])  # schema order: a, then b
    np.testing.assert_allclose(ours[1][2], [10.0, 10.0, 10.0])


def _errors(L: Any) -> list[tuple[type, str]]:
    rn, _ = _ops(L)
    af = _af(L)
    x = L.ones(3)
    found = []
    calls: tuple[Any, ...] = (lambda: af(L.ops.aten.add.Tensor, self=x, other=x),
                              lambda: af(rn, x, x, x, 0.5),
                              lambda: af(rn, input=x, weight=x, epsilon=0.5))
    for call in calls:
        with pytest.raises(Exception) as caught:
            call()
        found.append((caught.type, str(caught.value)))
    return found


def test_errors_match_torch() -> None:
    torch = pytest.importorskip("torch")
    assert _errors(ft) == _errors(torch)
    assert _errors(ft)[0] == (AssertionError, "Cannot auto-functionalize op aten.add.Tensor")


def _graph(L: Any, mode: str) -> list[tuple[str, Any]]:
    if L is ft:
        from fake_torch.fx.experimental.proxy_tensor import make_fx
    else:
        from torch.fx.experimental.proxy_tensor import make_fx
    rn, two = _ops(L)
    af = _af(L)

    def f(out: Any, x: Any, w: Any) -> Any:
        got = af(rn, result=out, input=x * 2, weight=w, epsilon=1e-6)
        res = af(two, a=got[1], x=x, b=w)
        return res[0] + res[2]

    gm = make_fx(f, tracing_mode=mode)(L.zeros(4, 3), L.ones(4, 3), L.ones(3))
    rows: list[tuple[str, Any]] = []
    for n in gm.graph.nodes:
        if n.op != "call_function":
            continue
        if n.target is operator.getitem:
            val = n.meta.get("val")  # torch: none for a None item
            rows.append(("getitem", (n.args[0].name, n.args[1],
                                     None if val is None else tuple(int(s) for s in val.shape))))
        elif n.target is af:
            rows.append((n.name, (str(n.args[0]), len(n.args), sorted(n.kwargs))))
        else:
            rows.append((str(n.target), None))
    return rows


@pytest.mark.parametrize("mode", ["real", "fake", "symbolic"])
def test_make_fx_records_one_node(mode: str) -> None:
    torch = pytest.importorskip("torch")
    ours = _graph(ft, mode)
    assert ours == _graph(torch, mode)
    assert ours[1] == ("auto_functionalized",
                       ("aftest.rn.default", 1, ["epsilon", "input", "result", "weight"]))
    assert ours[2:4] == [("getitem", ("auto_functionalized", 0, None)),
                         ("getitem", ("auto_functionalized", 1, (4, 3)))]


def test_make_fx_real_mode_runs_on_clones() -> None:
    from fake_torch.fx.experimental.proxy_tensor import make_fx

    L: Any = ft
    rn, _ = _ops(L)
    af = _af(L)
    out = L.zeros(3)
    gm: Any = make_fx(lambda o, x: af(rn, result=o, input=x, weight=x, epsilon=1.0)[1])(
        out, L.ones(3))
    assert out.tolist() == [0.0, 0.0, 0.0]  # the op ran on a clone
    assert gm(L.zeros(3), L.full((3,), 2.0)).tolist() == [5.0, 5.0, 5.0]


def _fwd_only_targets(L: Any) -> list[str]:
    if L is ft:
        from fake_torch._inductor.pattern_matcher import fwd_only
    else:
        from torch._inductor.pattern_matcher import fwd_only
    rn, _ = _ops(L)
    af = _af(L)

    def search(out: Any, x: Any, w: Any) -> Any:  # a vLLM fusion pattern's shape
        return af(rn, result=out, input=x, weight=w, epsilon=1e-6)[1]

    gm = fwd_only(search, (L.zeros(4, 3), L.ones(4, 3), L.ones(3)))
    return [n.op if n.op != "call_function" else str(n.target) for n in gm.graph.nodes]


def test_fwd_only_traces_a_pattern_function() -> None:
    torch = pytest.importorskip("torch")
    ours = _fwd_only_targets(ft)
    assert ours == _fwd_only_targets(torch)
    assert ours == ["placeholder"] * 3 + ["auto_functionalized", str(operator.getitem),
                                          "output"]  # the unused getitem 0 eliminated


@functools.cache
def _shorthand_op(L: Any) -> Any:
    """An op declared as vLLM's csrc/torch_bindings.cpp declares its kernels: `Tensor!`,
    `Tensor!?` (written, no named alias set) and a tuple type `(int, int)?`."""
    lib = L.library.Library("aftest_short", "FRAGMENT")
    lib.define("quant(Tensor! result, Tensor input, Tensor!? residual, "
               "(int, int)? group_shape=None) -> ()")

    def quant(result: Any, input: Any, residual: Any, group_shape: Any = None) -> None:
        result.copy_(input * 2)
        if residual is not None:
            residual.add_(input)

    lib.impl("quant", quant, "CompositeExplicitAutograd")
    _LIBS.append(lib)
    return L.ops.aftest_short.quant.default


_LIBS: list[Any] = []  # the libraries above stay alive (their ops with them)


def _shorthand(L: Any) -> list[Any]:
    op, af = _shorthand_op(L), _af(L)
    x, out, res = L.arange(3.0), L.zeros(3), L.ones(3)
    with_res = af(op, result=out, input=x, residual=res, group_shape=(1, 2))
    without = af(op, result=out, input=x, residual=None, group_shape=None)
    return [_values(with_res), _values(without), _values((out, res))]


def test_shorthand_written_arguments_as_vllm_declares_them() -> None:
    torch = pytest.importorskip("torch")
    got, want = _shorthand(ft), _shorthand(torch)
    assert [[None if v is None else v.tolist() for v in r] for r in got] == \
        [[None if v is None else v.tolist() for v in r] for r in want]
