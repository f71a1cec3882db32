"""Piecewise CUDA graphs, vLLM's way, as a torch.compile backend in a few lines.

The backend cuts the traced model at every attention call (`F.scaled_dot_product_attention`):
attention runs eagerly (on a GPU its kernel depends on each sequence's length), and every piece
between two attention calls is one CUDA graph per batch size, all in one shared memory pool.

    compiled = torch.compile(model, backend=PiecewiseBackend())

Per piece and batch size:
  # warmup   the first call runs the piece eagerly;
  # capture  the second copies its inputs into static buffers and captures the piece;
  # replay   every later call copies new inputs into those buffers (an input that already is
             the buffer, a parameter or an earlier graph's output, is not copied) and replays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch import cuda
from fake_torch._tensor import Tensor
from fake_torch.fx import GraphModule, Node
from fake_torch.fx.passes.split_module import split_module
from fake_torch.nn import Module
from fake_torch.nn.functional import scaled_dot_product_attention


class _Graphed:
    """One piece's CUDA graph at one batch size: static inputs, graph, static outputs."""

    def __init__(self, piece: GraphModule, args: tuple[Any, ...], pool: Any) -> None:
        self.static_inputs = args
        self.graph = cuda.CUDAGraph()
        with cuda.graph(self.graph, pool=pool):
            self.static_outputs = piece(*args)  # capture

    def replay(self, args: tuple[Any, ...]) -> Any:
        for static, new in zip(self.static_inputs, args, strict=True):
            if isinstance(new, Tensor) and new.data_ptr() != static.data_ptr():
                static.copy_(new)
        self.graph.replay()
        return self.static_outputs


class GraphedPiece(Module):
    """A piece of the split model, run through one CUDA graph per input shape."""

    def __init__(self, piece: GraphModule, backend: PiecewiseBackend) -> None:
        super().__init__()
        self.piece = piece
        self.backend = backend
        self.warm: set[tuple[Any, ...]] = set()
        self.graphs: dict[tuple[Any, ...], _Graphed] = {}

    def forward(self, *args: Any) -> Any:
        key = tuple(tuple(a.shape) if isinstance(a, Tensor) else a for a in args)
        if key not in self.warm:  # warmup
            self.warm.add(key)
            return self.piece(*args)
        if key not in self.graphs:  # capture
            self.graphs[key] = _Graphed(self.piece, args, self.backend.pool)
            self.backend.num_captured += 1
        return self.graphs[key].replay(args)  # replay


def _is_attention(node: Node) -> bool:
    return node.op == "call_function" and node.target is scaled_dot_product_attention


class PiecewiseBackend:
    """A torch.compile backend: split at attention, graph the pieces between attention calls."""

    def __init__(self) -> None:
        self.pool = cuda.graph_pool_handle()  # one pool shared by every piece's graphs
        self.num_captured = 0  # graphs captured, over every piece and batch size

    def __call__(self, gm: GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        part, parts = 0, {}
        for node in gm.graph.nodes:  # attention alone in odd parts, the rest in even parts
            if _is_attention(node):
                parts[node] = part + 1
                part += 2
            else:
                parts[node] = part
        split = split_module(gm, gm, lambda n: parts[n])
        for name, piece in list(split.named_children()):
            if isinstance(piece, GraphModule) and not any(map(_is_attention, piece.graph.nodes)):
                setattr(split, name, GraphedPiece(piece, self))
        forward: Callable[..., Any] = split.forward
        return forward
