"""torch.fx: graphs of torch calls (Graph, Node), the modules that run them (GraphModule,
Interpreter), symbolic tracing into them (symbolic_trace, Tracer, Proxy, wrap), and graph
passes (fx.passes.split_module)."""

from fake_torch.fx import passes  # noqa: F401  (torch loads torch.fx.passes with torch.fx)
from fake_torch.fx._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from fake_torch.fx.graph import Graph
from fake_torch.fx.graph_module import GraphModule
from fake_torch.fx.interpreter import Interpreter
from fake_torch.fx.node import Node, map_arg
from fake_torch.fx.proxy import Proxy

__all__ = ["PH", "Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer", "map_arg",
           "symbolic_trace", "wrap"]
