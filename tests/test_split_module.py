"""fx.passes.split_module against torch's: a 3-layer toy graph cut at its attention calls into
2L+1 = 7 pieces, as vLLM's backend cuts a model (attention pieces alone, everything between them
in one piece each, later wrapped in CUDA graphs). The texts below were printed by real torch 2.13
(CPU build) for the same graphs; the one deliberate difference: F.linear prints as
`torch.nn.functional.linear` where torch shows `torch._C._nn.linear`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import fx, nn
from fake_torch._simulated._dispatch import record_ops
from fake_torch.fx import Graph, GraphModule
from fake_torch.fx.passes.split_module import split_module
from fake_torch.nn import functional as F

NUM_LAYERS, HIDDEN = 3, 4


def attention(q: Any, k: Any, v: Any) -> Any:
    """Stand-in for vLLM's attention custom op: the op the graph is cut at."""
    return (q @ k.transpose(-2, -1)).softmax(-1) @ v


def toy_model(lib: Any = torch) -> Any:
    """Holds the parameters the toy graph reads: layers.<i>.qkv / .o, and norm."""
    model = lib.nn.Module()
    model.layers = lib.nn.ModuleList([_layer(lib) for _ in range(NUM_LAYERS)])
    model.norm = lib.nn.Linear(HIDDEN, HIDDEN)
    return model


def _layer(lib: Any) -> Any:
    layer = lib.nn.Module()
    layer.qkv = lib.nn.Linear(HIDDEN, 3 * HIDDEN, bias=False)
    layer.o = lib.nn.Linear(HIDDEN, HIDDEN)
    return layer


def build_toy_graph(lib: Any, fx_mod: Any) -> Any:
    """x -> L x [qkv linear, split, attention, o linear, residual add, relu] -> norm."""
    functional = lib.nn.functional
    g = fx_mod.Graph()
    h = g.placeholder("x")
    for i in range(NUM_LAYERS):
        qkv = g.call_function(functional.linear, (h, g.get_attr(f"layers.{i}.qkv.weight")))
        q, k, v = (g.call_function(operator.getitem,
                                   (qkv, (Ellipsis, slice(j * HIDDEN, (j + 1) * HIDDEN))))
                   for j in range(3))
        a = g.call_function(attention, (q, k, v))
        o = g.call_function(functional.linear, (a, g.get_attr(f"layers.{i}.o.weight"),
                                                g.get_attr(f"layers.{i}.o.bias")))
        h = g.call_function(lib.relu, (g.call_function(lib.add, (h, o)),))
    g.output(g.call_module("norm", (h,)))
    return g


def run_eagerly(model: Any, x: torch.Tensor) -> torch.Tensor:
    """The toy graph's calls as plain code (the oracle)."""
    h = x
    for layer in model.layers:
        qkv = F.linear(h, layer.qkv.weight)
        q, k, v = (qkv[..., j * HIDDEN:(j + 1) * HIDDEN] for j in range(3))
        h = torch.relu(torch.add(h, F.linear(attention(q, k, v), layer.o.weight, layer.o.bias)))
    return model.norm(h)  # type: ignore[no-any-return]


def vllm_subgraph_ids(gm: Any, split_op: Callable[..., Any] = attention) -> dict[Any, int]:
    """vLLM's split_graph numbering: each split op alone in its own piece."""
    subgraph_id, ids = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("output", "placeholder"):
            continue
        if node.op == "call_function" and node.target is split_op:
            subgraph_id += 1
            ids[node] = subgraph_id
            subgraph_id += 1
        else:
            ids[node] = subgraph_id
    return ids


def split_toy(lib: Any = torch, fx_mod: Any = fx, splitter: Any = split_module,
              **kwargs: Any) -> tuple[Any, Any, Any]:
    model = toy_model(lib)
    gm = fx_mod.GraphModule(model, build_toy_graph(lib, fx_mod))
    ids = vllm_subgraph_ids(gm)
    return model, gm, splitter(gm, None, lambda n: ids[n], **kwargs)


BASE_CODE = """\



def forward(self, x):
    layers_0_qkv_weight = getattr(self.layers, "0").qkv.weight
    submod_0 = self.submod_0(x, layers_0_qkv_weight);  layers_0_qkv_weight = None
    getitem = submod_0[0]
    getitem_1 = submod_0[1]
    getitem_2 = submod_0[2];  submod_0 = None
    submod_1 = self.submod_1(getitem, getitem_1, getitem_2);  getitem = getitem_1 = getitem_2 = None
    layers_0_o_weight = getattr(self.layers, "0").o.weight
    layers_0_o_bias = getattr(self.layers, "0").o.bias
    layers_1_qkv_weight = getattr(self.layers, "1").qkv.weight
    submod_2 = self.submod_2(submod_1, layers_0_o_weight, layers_0_o_bias, x, layers_1_qkv_weight);  submod_1 = layers_0_o_weight = layers_0_o_bias = x = layers_1_qkv_weight = None
    getitem_3 = submod_2[0]
    getitem_4 = submod_2[1]
    getitem_5 = submod_2[2]
    getitem_6 = submod_2[3];  submod_2 = None
    submod_3 = self.submod_3(getitem_3, getitem_4, getitem_5);  getitem_3 = getitem_4 = getitem_5 = None
    layers_1_o_weight = getattr(self.layers, "1").o.weight
    layers_1_o_bias = getattr(self.layers, "1").o.bias
    layers_2_qkv_weight = getattr(self.layers, "2").qkv.weight
    submod_4 = self.submod_4(submod_3, layers_1_o_weight, layers_1_o_bias, getitem_6, layers_2_qkv_weight);  submod_3 = layers_1_o_weight = layers_1_o_bias = getitem_6 = layers_2_qkv_weight = None
    getitem_7 = submod_4[0]
    getitem_8 = submod_4[1]
    getitem_9 = submod_4[2]
    getitem_10 = submod_4[3];  submod_4 = None
    submod_5 = self.submod_5(getitem_7, getitem_8, getitem_9);  getitem_7 = getitem_8 = getitem_9 = None
    layers_2_o_weight = getattr(self.layers, "2").o.weight
    layers_2_o_bias = getattr(self.layers, "2").o.bias
    submod_6 = self.submod_6(submod_5, layers_2_o_weight, layers_2_o_bias, getitem_10);  submod_5 = layers_2_o_weight = layers_2_o_bias = getitem_10 = None
    return submod_6
    """  # noqa: E501

SUBMOD_2_CODE = """\



def forward(self, attention, layers_0_o_weight, layers_0_o_bias, x, layers_1_qkv_weight):
    linear = torch.nn.functional.linear(attention, layers_0_o_weight, layers_0_o_bias);  attention = layers_0_o_weight = layers_0_o_bias = None
    add = torch.add(x, linear);  x = linear = None
    relu = torch.relu(add);  add = None
    linear_1 = torch.nn.functional.linear(relu, layers_1_qkv_weight);  layers_1_qkv_weight = None
    getitem = linear_1[(Ellipsis, slice(0, 4, None))]
    getitem_1 = linear_1[(Ellipsis, slice(4, 8, None))]
    getitem_2 = linear_1[(Ellipsis, slice(8, 12, None))];  linear_1 = None
    return (getitem, getitem_1, getitem_2, relu)
    """  # noqa: E501


# --- the vLLM cut -------------------------------------------------------------------------------


def test_cut_at_attention_gives_2L_plus_1_pieces() -> None:
    _, _, split = split_toy(keep_original_order=True)
    names = [n.target for n in split.graph.nodes if n.op == "call_module"]
    assert names == [f"submod_{i}" for i in range(2 * NUM_LAYERS + 1)]
    assert split.meta["partition_names"] == set(names)
    assert [name for name, _ in split.named_children()] == [*names, "layers"]
    for i, name in enumerate(names):
        piece = getattr(split, name)
        assert type(piece).__name__ == "GraphModule"
        calls = [n.target for n in piece.graph.nodes if n.op == "call_function"]
        if i % 2:  # attention pieces hold the attention call and nothing else
            assert calls == [attention]
        else:
            assert attention not in calls
    assert [n.target for n in split.submod_6.graph.nodes if n.op == "call_module"] == ["norm"]
    assert isinstance(split.submod_6.norm, nn.Linear)


def test_base_graph_passes_values_across_pieces() -> None:
    _, _, split = split_toy(keep_original_order=True)
    assert split.code == BASE_CODE
    assert split.submod_2.code == SUBMOD_2_CODE
    attention_global = attention.__module__.replace(".", "_") + "_attention"
    assert split.submod_1.code == (
        "\n\n\ndef forward(self, getitem, getitem_1, getitem_2):\n"
        f"    attention = {attention_global}(getitem, getitem_1, getitem_2);  "
        "getitem = getitem_1 = getitem_2 = None\n    return attention\n    ")
    # parameters read by get_attr stay in the base module and are passed in; a called
    # submodule (norm) travels into the piece that calls it
    assert sorted(dict(split.named_parameters())) == sorted(
        [f"layers.{i}.{w}" for i in range(NUM_LAYERS) for w in ("qkv.weight", "o.weight",
                                                               "o.bias")]
        + ["submod_6.norm.bias", "submod_6.norm.weight"])
    assert dict(split.submod_2.named_parameters()) == {}


def test_pieces_compute_eager_values_with_eager_launches() -> None:
    model, gm, split = split_toy(keep_original_order=True)
    model.cuda()
    for _ in range(3):
        x = torch.randn(2, HIDDEN, device="cuda")
        with record_ops() as eager_ops:
            eager = run_eagerly(model, x)
        with record_ops() as graph_ops:
            whole = gm(x)
        with record_ops() as split_ops:
            pieces = split(x)
        np.testing.assert_array_equal(whole.cpu().numpy(), eager.cpu().numpy())
        np.testing.assert_array_equal(pieces.cpu().numpy(), eager.cpu().numpy())
        assert split_ops == graph_ops == eager_ops
        assert eager_ops == ["mm", "mm", "_softmax", "mm", "addmm", "add", "relu"] * 3 + ["addmm"]


def test_copies_keep_meta_and_point_at_their_originals() -> None:
    model = toy_model()
    gm = GraphModule(model, build_toy_graph(torch, fx))
    for n in gm.graph.nodes:
        n.meta["example_value"] = n.name
    ids = vllm_subgraph_ids(gm)
    split = split_module(gm, model, lambda n: ids[n])
    originals = {n.name: n for n in gm.graph.nodes}
    attn_node = next(n for n in piece(split, 1).graph.nodes if n.op == "call_function")
    assert attn_node.meta["orig"] is originals["attention"]
    assert attn_node.meta["example_value"] == "attention"
    q_in = next(iter(piece(split, 1).graph.nodes))  # a placeholder fed by submod_0
    assert q_in.op == "placeholder" and q_in.meta["orig"] is originals["getitem"]
    # a copy of a copy still points at the first original
    again = split_module(piece(split, 2), None, lambda n: 0)
    relu = next(n for n in piece(again, 0).graph.nodes if n.name == "relu")
    assert relu.meta["orig"] is originals["relu"]


def piece(split: GraphModule, i: int) -> GraphModule:
    sub = getattr(split, f"submod_{i}")
    assert isinstance(sub, GraphModule)
    return sub


# --- orders and options -------------------------------------------------------------------------


def branch_graph() -> tuple[GraphModule, dict[str, int]]:
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.neg, (x,))
    b = g.call_function(torch.relu, (x,))
    c = g.call_function(torch.exp, (x,))
    d = g.call_function(torch.add, (a, b))
    g.output(g.call_function(torch.add, (d, c)))
    return GraphModule({}, g), {"neg": 3, "relu": 1, "exp": 2, "add": 4, "add_1": 0}


@pytest.mark.parametrize(("keep", "order"), [
    (False, ["submod_2", "submod_1", "submod_3", "submod_4", "submod_0"]),  # torch's LIFO walk
    (True, ["submod_3", "submod_1", "submod_2", "submod_4", "submod_0"]),  # first appearance
])
def test_partition_order(keep: bool, order: list[str]) -> None:
    gm, part = branch_graph()
    split = split_module(gm, None, lambda n: part[n.name], keep_original_order=keep)
    assert [n.target for n in split.graph.nodes if n.op == "call_module"] == order
    x = torch.randn(3)
    np.testing.assert_array_equal(split(x).numpy(), gm(x).numpy())


def test_options() -> None:
    qualname_map: dict[str, str] = {}
    split_toy(keep_original_order=True, qualname_map=qualname_map)
    assert qualname_map == {"submod_6.norm": "norm"}
    _, _, affixed = split_toy(partition_affix="pp")
    assert sorted(affixed.meta["partition_names"]) == [f"submod_pp_{i}" for i in range(7)]
    _, _, renamed = split_toy(keep_original_input_name=False)
    assert "def forward(self, arg_0, arg_1, arg_2, arg_3, arg_4):" in renamed.submod_2.code
    _, _, named = split_toy(keep_original_node_name=True)
    assert [n.name for n in named.submod_2.graph.nodes if n.op == "call_function"] == [
        "linear_1", "add", "relu", "linear_2", "getitem_3", "getitem_4", "getitem_5"]
    _, gm, tupled = split_toy(tuple_return=True)
    assert tupled.submod_1.code.rstrip().endswith("return (attention,)")
    x = torch.randn(2, HIDDEN)
    np.testing.assert_array_equal(tupled(x).numpy(), gm(x).numpy())


def test_cycle_between_partitions_is_refused() -> None:
    gm, _ = branch_graph()
    with pytest.raises(RuntimeError, match=r"^cycle exists between partitions!$"):
        split_module(gm, None, lambda n: 0 if n.name in ("neg", "add_1") else 1)


# --- a vLLM-style backend: CUDA graphs around the pieces between attention calls ---------------


class PiecewiseCUDAGraph(nn.Module):
    """Warm up, then capture `piece` into a CUDA graph reading static input buffers; later calls
    copy the changing inputs in and replay (one launch for the whole piece). Parameters are
    static: the graph reads them where they are, as vLLM's piecewise backend does."""

    def __init__(self, piece: GraphModule) -> None:
        super().__init__()
        self.piece = piece
        self.graph: torch.cuda.CUDAGraph | None = None
        self.static_inputs: list[torch.Tensor] = []
        self.static_out: Any = None

    def forward(self, *args: torch.Tensor) -> Any:
        if self.graph is None:
            self.piece(*args)  # warmup
            self.static_inputs = [a if isinstance(a, nn.Parameter) else a.clone() for a in args]
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):  # capture
                self.static_out = self.piece(*self.static_inputs)
        for static, a in zip(self.static_inputs, args, strict=True):
            if static is not a:
                static.copy_(a)
        self.graph.replay()  # replay
        return self.static_out


def test_pieces_wrapped_in_cuda_graphs_replay_to_eager_values() -> None:
    model, _, split = split_toy(keep_original_order=True)
    model.cuda()
    split.cuda()
    for i in range(0, 2 * NUM_LAYERS + 1, 2):
        name = f"submod_{i}"
        setattr(split, name, PiecewiseCUDAGraph(getattr(split, name)))
    split(torch.randn(2, HIDDEN, device="cuda"))  # warmup + capture of every graphed piece
    attention_ops = ["mm", "_softmax", "mm"]  # eager, between the graphs
    for _ in range(3):
        x = torch.randn(2, HIDDEN, device="cuda")
        with record_ops() as ops:
            out = split(x)
        np.testing.assert_array_equal(out.cpu().numpy(), run_eagerly(model, x).cpu().numpy())
        # piece 0 copies x in; the later pieces copy attention's output and the residual
        assert ops == ["copy_", "cudaGraphLaunch", *attention_ops,
                       "copy_", "copy_", "cudaGraphLaunch", *attention_ops,
                       "copy_", "copy_", "cudaGraphLaunch", *attention_ops,
                       "copy_", "copy_", "cudaGraphLaunch"]


# --- against real torch (skipped where it is not installed) -------------------------------------


@pytest.mark.parametrize("kwargs", [
    {"keep_original_order": True}, {}, {"keep_original_node_name": True},
    {"keep_original_input_name": False}, {"partition_affix": "pp"},
    {"tuple_return": True, "keep_original_order": True}])
def test_same_split_as_real_torch(kwargs: dict[str, Any]) -> None:
    real = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
    if real is torch:
        pytest.skip("`torch` is fake_torch here (installed)")
    import torch.fx as real_fx
    from torch.fx.passes.split_module import split_module as real_split_module

    def render(lib: Any, fx_mod: Any, splitter: Any) -> str:
        qualname_map: dict[str, str] = {}
        _, _, split = split_toy(lib, fx_mod, splitter, qualname_map=qualname_map, **kwargs)
        texts = [split.code, str(split.graph), repr(qualname_map),
                 repr(sorted(split.meta["partition_names"]))]
        texts += [f"{name}:{child.code}" for name, child in split.named_children()
                  if name.startswith("submod")]
        return "\n".join(texts)

    ours = render(torch, fx, split_module).replace("torch.nn.functional.linear",
                                                   "torch._C._nn.linear")
    assert ours == render(real, real_fx, real_split_module)


def test_same_branch_orders_as_real_torch() -> None:
    real = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
    if real is torch:
        pytest.skip("`torch` is fake_torch here (installed)")
    import torch.fx as real_fx
    from torch.fx.passes.split_module import split_module as real_split_module

    def render(lib: Any, fx_mod: Any, splitter: Any, keep: bool) -> str:
        g = fx_mod.Graph()
        x = g.placeholder("x")
        a = g.call_function(lib.neg, (x,))
        b = g.call_function(lib.relu, (x,))
        c = g.call_function(lib.exp, (x,))
        g.output(g.call_function(lib.add, (g.call_function(lib.add, (a, b)), c)))
        part = {"neg": 3, "relu": 1, "exp": 2, "add": 4, "add_1": 0}
        split = splitter(fx_mod.GraphModule({}, g), None, lambda n: part[n.name],
                         keep_original_order=keep)
        return str(split.code)

    for keep in (False, True):
        assert render(torch, fx, split_module, keep) == \
            render(real, real_fx, real_split_module, keep)
