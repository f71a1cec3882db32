"""A compiled function's return value is rebuilt on every call around the new outputs, as
Dynamo's generated code rebuilds it (issue 23, item 1): a dict subclass with dataclass fields
(transformers' ModelOutput), a namedtuple, a tuple subclass, a dataclass registered as a pytree
node, nested in each other. Before the fix, anything but an exact tuple/list/dict was the object
of the first trace on every later call: stale tensors, and a greedy decode repeating its first
token. Each program runs in real torch (backend="eager", the oracle) and in fake_torch; values
and `counters["stats"]["unique_graphs"]` must agree."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, to_numpy

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

LIBS = [torch, ft]


pytestmark = pytest.mark.usefixtures("fresh_dynamo")  # (conftest.py)


class ModelOutput(OrderedDict):  # type: ignore[type-arg]
    """transformers' ModelOutput in small: a dataclass whose non-None fields are also its
    items (set in __post_init__), readable by name, key or index."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is not None:
                self[f.name] = value

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def to_tuple(self) -> tuple[Any, ...]:
        return tuple(self[k] for k in self.keys())


@dataclasses.dataclass
class CausalLMOutput(ModelOutput):
    logits: Any = None
    past_key_values: Any = None
    attentions: Any = None


Pair = namedtuple("Pair", ["first", "second"])


class Tagged(tuple):  # type: ignore[type-arg]
    """A tuple subclass that is not a namedtuple."""


@dataclasses.dataclass
class Point:
    x: Any
    y: Any
    label: str = "p"


@dataclasses.dataclass
class Batch:
    ids: Any
    mask: Any = None
    name: str = "b"


for _lib in LIBS:
    _lib.utils._pytree.register_pytree_node(
        Point, lambda p: ([p.x, p.y], p.label), lambda xs, label: Point(xs[0], xs[1], label))
    _lib.utils._pytree.register_dataclass(Batch, field_names=["ids", "mask"],
                                          drop_field_names=["name"])


def _x(lib: Any, i: int) -> Any:
    return lib.tensor((np.arange(4, dtype=np.float32) + 1) * (i + 1))


def _model_output(x: Any) -> Any:
    return CausalLMOutput(logits=x * 2, past_key_values=((x + 1, x - 1),))


def _namedtuple(x: Any) -> Any:
    return Pair(x.sin(), x.cos())


def _tuple_subclass(x: Any) -> Any:
    return Tagged((x + 1, x * 3))


def _pytree_dataclass(x: Any) -> Any:
    return Point(x * x, x - 2, "q")


def _registered_dataclass(x: Any) -> Any:
    return Batch(x.neg(), None, "r")


def _nested(x: Any) -> Any:
    return {"out": [CausalLMOutput(logits=x.exp(), past_key_values=Pair(x, x + 5))],
            "p": Tagged((Point(x + 1, x, "n"),))}


PROGRAMS: list[tuple[str, Callable[[Any], Any]]] = [
    ("ModelOutput (OrderedDict dataclass)", _model_output),
    ("namedtuple", _namedtuple),
    ("tuple subclass", _tuple_subclass),
    ("dataclass registered as a pytree node", _pytree_dataclass),
    ("register_dataclass", _registered_dataclass),
    ("nested", _nested),
]


def _plain(value: Any) -> Any:
    """A returned value as type names, keys and values (comparable across libraries: floats
    to 6 significant digits, as sin/exp may differ in the last bit)."""
    if isinstance(value, (torch.Tensor, ft.Tensor)):
        return [float(f"{v:.6g}") for v in to_numpy(value).ravel()]
    if isinstance(value, dict):
        return (type(value).__name__, [(k, _plain(v)) for k, v in value.items()],
                {k: _plain(v) for k, v in getattr(value, "__dict__", {}).items()})
    if isinstance(value, tuple):
        return (type(value).__name__, [_plain(v) for v in value])
    if isinstance(value, list):
        return ["list", [_plain(v) for v in value]]
    if dataclasses.is_dataclass(value):
        return (type(value).__name__, {k: _plain(v) for k, v in vars(value).items()})
    return value


@pytest.mark.parametrize("fn", [p for _, p in PROGRAMS], ids=[n for n, _ in PROGRAMS])
def test_returned_objects_are_rebuilt_each_call_like_torch(fn: Callable[[Any], Any]) -> None:
    results, graphs = [], []
    for lib in LIBS:
        compiled = lib.compile(fn, backend="eager")
        outs = [compiled(_x(lib, i)) for i in range(3)]
        assert len({id(o) for o in outs}) == 3, "a new object per call"
        results.append([_plain(o) for o in outs])
        graphs.append(lib._dynamo.utils.counters["stats"]["unique_graphs"])
        if lib is ft:  # and each holds its own call's values, as eager computes them
            assert [_plain(o) for o in outs] == [_plain(fn(_x(ft, i))) for i in range(3)]
    assert results[1] == results[0]
    assert graphs[1] == graphs[0] == 1


def test_register_dataclass_flattens_like_torch() -> None:
    """torch.utils._pytree.register_dataclass: the non-None fields are the children, the
    context their names and the None fields' names."""
    got = []
    for lib in LIBS:
        leaves, spec = lib.utils._pytree.tree_flatten(Batch(lib.ones(2), None, "z"))
        back = lib.utils._pytree.tree_unflatten([leaf * 3 for leaf in leaves], spec)
        paths = [lib.utils._pytree.keystr(p)
                 for p, _ in lib.utils._pytree.tree_flatten_with_path(Batch(1, 2))[0]]
        got.append((len(leaves), spec.context, _plain(back), paths))
    assert got[1] == got[0]


def test_register_dataclass_refuses_what_torch_refuses() -> None:
    @dataclasses.dataclass
    class Two:
        a: Any
        b: Any

    class Plain:
        pass

    assert_raises_like_torch(lambda lib: lib.utils._pytree.register_dataclass(Plain))
    assert_raises_like_torch(lambda lib: lib.utils._pytree.register_dataclass(
        Two, field_names=["a", "c"]))


def test_model_output_items_and_attributes_are_the_same_tensors() -> None:
    compiled = ft.compile(_model_output, backend="eager")
    compiled(_x(ft, 0))
    out = compiled(_x(ft, 1))
    assert type(out) is CausalLMOutput
    assert list(out.keys()) == ["logits", "past_key_values"]
    assert out.logits is out["logits"] is out[0]
    assert out.attentions is None
    np.testing.assert_array_equal(to_numpy(out.logits), to_numpy(_x(ft, 1) * 2))


def _greedy(lib: Any, step: Callable[..., Any], n: int) -> list[int]:
    """A greedy decode: each step's logits pick the next token."""
    rng = np.random.default_rng(0)
    emb = lib.tensor(rng.standard_normal((16, 8)).astype(np.float32))
    head = lib.tensor(rng.standard_normal((8, 16)).astype(np.float32))
    tokens = [3]
    for _ in range(n):
        out = step(lib.tensor([tokens[-1]]), emb, head)
        tokens.append(int(out.logits[0].argmax().item()))
    return tokens


def _decode_step(ids: Any, emb: Any, head: Any) -> Any:
    hidden = emb[ids].tanh()
    return CausalLMOutput(logits=hidden @ head, past_key_values=((hidden, hidden * 2),))


def test_greedy_decode_returning_a_model_output_matches_eager_and_torch() -> None:
    eager = _greedy(ft, _decode_step, 8)
    assert len(set(eager)) > 2, "a decode whose tokens change (else stale logits pass)"
    theirs = _greedy(torch, torch.compile(_decode_step, backend="eager"), 8)
    ours = _greedy(ft, ft.compile(_decode_step, backend="eager"), 8)
    assert ours == eager == theirs
    assert ft._dynamo.utils.counters["stats"]["unique_graphs"] == \
        torch._dynamo.utils.counters["stats"]["unique_graphs"] == 1


def test_greedy_decode_under_reduce_overhead_reads_each_replays_outputs(
        fresh_device: Any) -> None:
    """With CUDA graph trees the first trace's output is freed at the next call: returning it
    again raised "accessing tensor output of CUDAGraphs that has been overwritten"."""
    from fake_torch._inductor.cudagraph_trees import reset_cudagraph_trees

    reset_cudagraph_trees()
    try:
        rng = np.random.default_rng(0)
        emb = ft.tensor(rng.standard_normal((16, 8)).astype(np.float32), device="cuda")
        head = ft.tensor(rng.standard_normal((8, 16)).astype(np.float32), device="cuda")
        steps = [_decode_step, ft.compile(_decode_step, mode="reduce-overhead")]
        tokens: list[list[int]] = [[3], [3]]
        for _ in range(8):
            for step, seen in zip(steps, tokens, strict=True):
                out = step(ft.tensor([seen[-1]], device="cuda"), emb, head)
                seen.append(int(out.logits[0].argmax().item()))
        assert tokens[1] == tokens[0] and len(set(tokens[0])) > 2
        assert ft._dynamo.utils.counters["inductor"]["cudagraph_skips"] == 0
    finally:
        reset_cudagraph_trees()
