"""`torch.tensor(<Python data>)` inside a compiled graph: a constant made at compile time.

Dynamo keeps `torch.tensor([-1], device="cuda")` as a node; aot_autograd traces it to a graph
constant (`_tensor_constant0`, uploaded once when the graph is compiled) read through
`aten.lift_fresh_copy`, which inductor lowers to a pointwise clone (a one-element constant is
folded to a `full`, pointwise too). So a compiled call copies nothing from the host: the
constant's values reach the kernel from device memory, and a CUDA graph can capture it
(transformers' sliding-window cache indexes with `torch.tensor([-1], device=...)` in its
compiled decode step). Eagerly each call is a host-to-device copy, which capture refuses.

This pass makes the same rewrite on Dynamo's graph: each `torch.tensor` node whose arguments
hold no graph value becomes `get_attr(_tensor_constantN).clone()`, the tensor made once here
(its host-to-device copy counted now, at compile time).
"""

from __future__ import annotations

from typing import Any

from fake_torch import _namespace
from fake_torch._tensor import Tensor
from fake_torch.fx import GraphModule, Node

_PREFIX = "_tensor_constant"


def _holds_node(value: Any) -> bool:
    if isinstance(value, Node):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_node(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_node(v) for v in value.values())
    return False


def _constant_call(n: Node, factory: Any) -> bool:
    """n calls `factory` on Python values only (no graph value among its arguments)."""
    return n.op == "call_function" and n.target is factory and \
        not _holds_node((n.args, n.kwargs))


def lift_tensor_constants(gm: GraphModule) -> GraphModule:
    """Rewrite gm's constant `torch.tensor(...)` calls in place (see the module docstring);
    gm itself, recompiled if anything changed."""
    factory: Any = _namespace.torch().tensor  # the public entry Dynamo records as its target
    graph, taken = gm.graph, 0
    for n in list(graph.nodes):
        if not _constant_call(n, factory):
            continue
        while hasattr(gm, f"{_PREFIX}{taken}"):
            taken += 1
        name = f"{_PREFIX}{taken}"
        constant: Tensor = factory(*n.args, **n.kwargs)
        setattr(gm, name, constant)
        with graph.inserting_before(n):
            fresh = graph.call_method("clone", (graph.get_attr(name),))
        fresh.meta = dict(n.meta)
        n.replace_all_uses_with(fresh)
        graph.erase_node(n)
    if taken or hasattr(gm, f"{_PREFIX}0"):
        gm.recompile()
    return gm
