"""fake_torch's Dynamo against real torch 2.13's on functions traced with symbolic sizes
(tests/dynamic_cases.py): the same number of graphs handed to the backend, the same placeholders
(names, kinds and example sizes: `s77: SymInt` before `l_x_` of size `(s77, 4)`), the same
shape guards (as truth tables over the symbols' values, so `(s77//2) <= s77` equals no guard
where both hold for every size) and the same outputs at each of three sizes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from dynamic_cases import CASES, CONFIGS, FACTORIES, UNBACKED, Case

import fake_torch

VALUES = range(2, 18)  # the sizes a symbol's guards are tabulated over


@dataclass
class Seen:
    """What one backend call was handed."""

    placeholders: list[tuple[str, str, str]]  # (name, kind, example size)
    table: dict[tuple[tuple[str, int], ...], bool]  # symbol values -> all guards hold
    nodes: list[tuple[str, str, str, str]]  # (op, target, arguments, example) of every node


def _placeholders(gm: Any, L: Any) -> list[tuple[str, str, str]]:
    out = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("example_value")
        if isinstance(value, L.Tensor):
            out.append((node.name, "Tensor", str(tuple(value.shape))))
        else:
            out.append((node.name, type(value).__name__, str(value)))
    return out


def _nodes(gm: Any, L: Any) -> list[tuple[str, str, str, str]]:
    """Every node as (op, target, arguments with each node as `%<its index>`, example value: a
    tensor's size, a SymInt's expression); a runtime assert's message names its condition's
    node, whose name is Dynamo's choice: that name is left out."""
    index = {node: i for i, node in enumerate(gm.graph.nodes)}

    def arg(a: Any) -> str:
        if isinstance(a, L.fx.Node):
            return f"%{index[a]}"
        if isinstance(a, (tuple, list)):
            return f"({', '.join(arg(x) for x in a)})"
        if isinstance(a, dict):
            return "{" + ", ".join(f"{k}: {arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, str) and a.startswith("Runtime assertion failed"):
            return a.rsplit(" on node ", 1)[0]
        return repr(a)

    out = []
    for node in gm.graph.nodes:
        target = node.target if isinstance(node.target, str) and node.op != "placeholder" \
            else str(getattr(node.target, "__name__", node.target))
        value = node.meta.get("example_value")
        shown = str(tuple(value.shape)) if isinstance(value, L.Tensor) else str(value)
        out.append((node.op, target, arg(node.args) + arg(node.kwargs),
                    shown if node.op != "output" else ""))
    return out


def _table(guards: list[Any]) -> dict[tuple[tuple[str, int], ...], bool]:
    exprs = [g.expr for g in guards]
    symbols = sorted({s for e in exprs for s in e.free_symbols}, key=str)
    table = {}
    for values in itertools.product(VALUES, repeat=len(symbols)):
        subs = dict(zip(symbols, values, strict=True))
        key = tuple((str(s), v) for s, v in subs.items())
        table[key] = all(bool(e.xreplace(subs)) for e in exprs)
    return table


def _run(L: Any, case: Case) -> tuple[list[Seen], list[Any]]:
    name, fn, make, marks, sizes = case
    if name in FACTORIES:
        fn = fn(L)
    seen: list[Seen] = []

    def backend(gm: Any, example_inputs: Any) -> Any:
        ctx = L._guards.TracingContext.try_get()
        env = ctx.fake_mode.shape_env if ctx is not None and ctx.fake_mode is not None else None
        seen.append(Seen(_placeholders(gm, L), _table(list(env.guards) if env else []),
                         _nodes(gm, L)))
        return gm.forward

    L._dynamo.reset()
    compiled = L.compile(fn, backend=backend)
    outs: list[Any] = []
    with L._dynamo.config.patch(**CONFIGS.get(name, {})):
        for n in sizes:
            args = make(L, n)
            for i, dim, *kind in marks or ():
                unbacked = kind == ["unbacked"]
                mark = L._dynamo.decorators.mark_unbacked if unbacked else L._dynamo.mark_dynamic
                mark(args[i], dim)
            try:
                out = compiled(*args)
            except Exception as e:  # torch's error, e.g. a marked dim that the code specialised
                outs.append((type(e).__name__, str(e).split("\n")[0]))
                break
            outs.append(np.asarray(out.tolist()))
    return seen, outs


# where fake_torch's Dynamo differs from torch's on purpose; each must still differ
DIFFERS = {
    "int_of_size": "int(x.size(0)) specialises the size here: Python's int() must return an "
                   "int, which a SymInt is not (torch's Dynamo interprets the bytecode and keeps "
                   "it symbolic); the marked dim then raises ConstraintViolationError",
}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_dynamo_hands_the_backend_what_torchs_does(case: Case) -> None:
    torch = pytest.importorskip("torch")
    theirs, their_outs = _run(torch, case)
    ours, our_outs = _run(fake_torch, case)
    same = ([s.placeholders for s in ours] == [s.placeholders for s in theirs]
            and [s.table for s in ours] == [s.table for s in theirs]
            and len(our_outs) == len(their_outs))
    if case[0] in DIFFERS:
        assert not same or any(type(a) is not type(b) for a, b in zip(our_outs, their_outs,
                                                                     strict=False)), \
            f"{case[0]} now behaves as torch: drop its DIFFERS entry"
        return
    assert [s.placeholders for s in ours] == [s.placeholders for s in theirs]
    assert [s.table for s in ours] == [s.table for s in theirs]
    if case[0] in UNBACKED:  # the symbols' nodes and runtime asserts, as torch places them
        assert [s.nodes for s in ours] == [s.nodes for s in theirs]
    assert len(our_outs) == len(their_outs)
    for mine, want in zip(our_outs, their_outs, strict=True):
        if isinstance(want, tuple):  # torch raised: the same exception, the same first line
            assert mine == want
        else:
            np.testing.assert_allclose(mine, want, rtol=1e-5, atol=1e-5)


def _split_pieces(L: Any) -> list[Any]:
    """A symbolic graph cut in two after its fourth node: each piece's placeholders, the base
    graph's nodes, and print_readable's signature line."""
    import importlib

    split_module = importlib.import_module(L.__name__ + ".fx.passes.split_module").split_module
    seen: list[Any] = []

    def backend(gm: Any, example_inputs: Any) -> Any:
        names = [n.name for n in gm.graph.nodes]
        split = split_module(gm, None, lambda n: 0 if names.index(n.name) < 4 else 1)
        seen.extend((name, [n.op for n in mod.graph.nodes if n.op == "placeholder"],
                     [n.name for n in mod.graph.nodes if n.op == "placeholder"][1:])
                    for name, mod in split.named_children())
        seen.append([(n.op, n.name) for n in split.graph.nodes])
        readable = gm.print_readable(print_output=False)
        seen.append(next(line.strip() for line in readable.splitlines() if "def forward" in line))
        return gm.forward

    def f(x: Any) -> Any:
        y = x.view(x.size(0), 2, -1) * 2
        return y.sum(1).reshape(-1) + x.size(0)

    L._dynamo.reset()
    x = L.randn(5, 4)
    L._dynamo.mark_dynamic(x, 0)
    L.compile(f, backend=backend)(x)
    return seen


def test_split_module_passes_a_pieces_symbols_and_print_readable_shows_them_as_torch() -> None:
    """Each piece whose values have the symbol in their sizes takes the symbol as an input
    (split_module), and the symbol's placeholder prints as `s77: "Sym(s77)"`."""
    torch = pytest.importorskip("torch")
    assert _split_pieces(fake_torch) == _split_pieces(torch)
