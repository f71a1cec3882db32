"""Unbacked sizes (u0) against real torch 2.13: torch.library.get_ctx() in a fake impl, numbers
from `.item()` that the function returns or branches on, the data-dependent error under
fullgraph. (The graphs themselves, node by node, are compared in test_dynamic_vs_torch.py.)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import fake_torch


def _compile(L: Any, fn: Any, **options: Any) -> tuple[Any, list[Any]]:
    graphs: list[Any] = []

    def backend(gm: Any, example_inputs: Any) -> Any:
        graphs.append([(n.op, str(n.meta.get("example_value"))) for n in gm.graph.nodes
                       if n.op in ("placeholder", "output")])
        return gm.forward

    L._dynamo.reset()
    return L.compile(fn, backend=backend, **options), graphs


def test_get_ctx_outside_a_fake_impl_is_none() -> None:
    torch = pytest.importorskip("torch")
    assert torch.library.get_ctx() is None
    assert fake_torch.library.get_ctx() is None


def _ctx(L: Any, shape_env: bool) -> Any:
    from importlib import import_module

    fake_impl = import_module(f"{L.__name__}._library.fake_impl")
    fake_tensor = import_module(f"{L.__name__}._subclasses.fake_tensor")
    symbolic_shapes = import_module(f"{L.__name__}.fx.experimental.symbolic_shapes")
    env = symbolic_shapes.ShapeEnv() if shape_env else None
    return fake_impl.FakeImplCtx(fake_tensor.FakeTensorMode(shape_env=env), "mylib::op")


def _outcome(call: Any) -> tuple[str, str]:
    try:
        value = call()
    except Exception as e:
        return type(e).__name__, str(e)
    return "ok", str(value)


@pytest.mark.parametrize("how", ["default", "bounded", "negative_min", "symint_bound",
                                 "no_shape_env"])
def test_new_dynamic_size_as_torch(how: str) -> None:
    """The symbol (u0, its range), and torch's errors: a negative min, a SymInt bound, a fake
    mode without a ShapeEnv (DynamicOutputShapeException)."""
    torch = pytest.importorskip("torch")

    def run(L: Any) -> tuple[str, str, str]:
        ctx = _ctx(L, how != "no_shape_env")
        if how == "default":
            call = ctx.new_dynamic_size
        elif how == "bounded":
            def call() -> Any:
                return ctx.new_dynamic_size(min=2, max=9)
        elif how == "negative_min":
            def call() -> Any:
                return ctx.new_dynamic_size(min=-1)
        elif how == "symint_bound":
            def call() -> Any:
                return ctx.new_dynamic_size(max=ctx.new_dynamic_size())
        else:
            call = ctx.new_dynamic_size
        kind, text = _outcome(call)
        env = ctx._shape_env
        ranges = str(sorted((str(k), str(v)) for k, v in env.var_to_range.items())) \
            if env is not None else ""
        return kind, text, ranges

    assert run(fake_torch) == run(torch)


def _item_returned(x: Any) -> Any:
    n = x.sum().item()
    return x + 1, n


def _branch_on_item(x: Any) -> Any:
    n = x.sum().item()
    y = x * 2
    if n > 2:
        return y + 1
    return y - 1


@pytest.mark.parametrize("fn", [_item_returned, _branch_on_item])
def test_item_numbers_as_torch(fn: Any) -> None:
    """A returned `.item()` number is its value (a graph output); Python branching on one
    breaks the graph (the number computed first): same outputs, same number of graphs."""
    torch = pytest.importorskip("torch")

    def run(L: Any) -> tuple[list[Any], int]:
        with L._dynamo.config.patch(capture_scalar_outputs=True):
            compiled, graphs = _compile(L, fn)
            outs = []
            for values in ([1, 2, 0, 3], [0, 0, 1], [4, 4, 4]):
                out = compiled(L.tensor(values))
                outs.append([np.asarray(o.tolist()) if isinstance(o, L.Tensor) else o
                             for o in (out if isinstance(out, tuple) else (out,))])
        return outs, len(graphs)

    mine, theirs = run(fake_torch), run(torch)
    assert mine[1] == theirs[1]
    for a, b in zip(mine[0], theirs[0], strict=True):
        assert [np.asarray(v).tolist() for v in a] == [np.asarray(v).tolist() for v in b]
        assert [type(v).__name__ for v in a if not isinstance(v, np.ndarray)] == \
            [type(v).__name__ for v in b if not isinstance(v, np.ndarray)]


def test_branch_on_an_unbacked_number_under_fullgraph_is_torchs_error() -> None:
    torch = pytest.importorskip("torch")

    def f(x: Any) -> Any:
        n = x.sum().item()
        if n > 2:
            return x + 1
        return x - 1

    def run(L: Any) -> tuple[str, str]:
        compiled, _ = _compile(L, f, fullgraph=True)
        with L._dynamo.config.patch(capture_scalar_outputs=True):
            kind, text = _outcome(lambda: compiled(L.tensor([1, 2, 3])))
        return kind, text.split("\n")[0]

    kind, first = run(fake_torch)
    their_kind, their_first = run(torch)
    assert kind == their_kind == "UserError"
    assert "Could not guard on data-dependent expression u0 > 2" in first
    assert "Could not guard on data-dependent expression u0 > 2" in their_first


@pytest.mark.parametrize("hint_override", [None, 64])
def test_mark_unbacked_hands_the_backend_u0_with_its_hint_override(
        hint_override: int | None) -> None:
    """mark_unbacked: the backend's first example input is the SymInt u0 (no hint), of range
    [0, int_oo], whose optimization_hint is hint_override (else torch's 8192 fallback)."""
    torch = pytest.importorskip("torch")
    from importlib import import_module

    def run(L: Any) -> list[Any]:
        symbolic_shapes = import_module(f"{L.__name__}.fx.experimental.symbolic_shapes")
        seen: list[Any] = []

        def backend(gm: Any, example_inputs: Any) -> Any:
            u = example_inputs[0]
            env = u.node.shape_env
            seen.extend([type(u).__name__, str(u), symbolic_shapes.optimization_hint(u),
                         symbolic_shapes.optimization_hint(u * 2 + 1), str(env.var_to_range),
                         str(env.var_to_hint_override)])
            return gm.forward

        L._dynamo.reset()
        x = L.ones(5, 3)
        L._dynamo.decorators.mark_unbacked(x, 0, hint_override=hint_override)
        out = L.compile(lambda t: t * 2, backend=backend)(x)
        seen.append(out.tolist())
        return seen

    assert run(fake_torch) == run(torch)


def test_print_after_the_break_shows_the_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """`print(n, x.size(0))` in traced code breaks the graph, and prints the numbers' values
    (torch's resumed code is given ints), for an unbacked `.item()` and a dynamic size."""
    torch = pytest.importorskip("torch")

    def f(x: Any) -> Any:
        n = x.sum().item()
        print("n =", n, x.size(0))
        return x + n

    def run(L: Any) -> tuple[str, list[int]]:
        with L._dynamo.config.patch(capture_scalar_outputs=True):
            compiled, _ = _compile(L, f)
            x = L.tensor([1, 2, 3])
            L._dynamo.mark_dynamic(x, 0)
            out = compiled(x).tolist()
        return capsys.readouterr().out, out

    assert run(fake_torch) == run(torch) == ("n = 6 3\n", [7, 8, 9])
