"""torch.fx._utils: the lazily formatted graph listings torch's compile logs print."""

from __future__ import annotations

import sys
from typing import Any

from fake_torch._logging import LazyString
from fake_torch.fx.graph import Graph
from fake_torch.fx.graph_module import GraphModule
from fake_torch.fx.node import Node


def lazy_format_graph_code(name: str, gm: GraphModule, maybe_id: int | None = None,
                           **kwargs: Any) -> LazyString:
    """A LazyString that, printed, is "TRACED GRAPH" + `name` (and `maybe_id`) + the module's
    file + its print_readable() listing; nothing is formatted until it is printed."""
    title = name if maybe_id is None else f"{name} {maybe_id}"
    kwargs.setdefault("print_output", False)
    if "colored" in kwargs:
        try:
            if not sys.stdout.isatty():
                kwargs["colored"] = False
        except AttributeError:
            kwargs["colored"] = False

    def text() -> str:
        listing = gm.print_readable(**kwargs)
        return _format_graph_code(f"===== {title} =====\n", gm.forward.__code__.co_filename,
                                  listing)

    return LazyString(text)


def _format_graph_code(name: str, filename: str, graph_str: str) -> str:
    return f"TRACED GRAPH\n {name} {filename} {graph_str}\n"


def first_call_function_nn_module_stack(graph: Graph) -> dict[str, Any] | None:
    """The nn_module_stack of the graph's first call_function node (None if none has one)."""
    for node in graph.nodes:
        if node.op == "call_function" and "nn_module_stack" in node.meta:
            stack: dict[str, Any] = node.meta["nn_module_stack"]
            return stack
    return None


def get_node_context(node: Node, num_nodes: int = 2) -> str:
    """The formatted `node` and the nodes before it (`num_nodes` in all), oldest first."""
    contexts = []
    cur = node
    for _ in range(num_nodes):
        contexts.append(str(cur.format_node()))
        if cur.op == "root":
            break
        cur = cur.prev
    return "\n".join(contexts[::-1])
