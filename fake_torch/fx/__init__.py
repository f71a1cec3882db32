"""torch.fx: graphs of torch calls (Graph, Node), the modules that run them (GraphModule,
Interpreter), and graph passes (fx.passes.split_module)."""

from fake_torch.fx._symbolic_trace import symbolic_trace
from fake_torch.fx.graph import Graph
from fake_torch.fx.graph_module import GraphModule
from fake_torch.fx.interpreter import Interpreter
from fake_torch.fx.node import Node, map_arg

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "map_arg", "symbolic_trace"]
