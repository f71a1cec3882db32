"""The torch.compile backend: split at the splitting ops, wrap each capturable piece.

    model = CompiledModel(module, config)   # vLLM's @support_torch_compile, in small

The first call goes through torch.compile and hands the backend one graph; every later call
runs the backend's split graph directly, past dynamo's guards (as vLLM does), so one graph
serves every batch size. Attention pieces run eagerly; every other piece is wrapped in a
PIECEWISE CUDAGraphWrapper. A FULL wrapper, when the mode has one, wraps the whole model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import fx, nn
from torch.fx.passes.split_module import split_module

from vllm_runner.config import CompilationConfig, CUDAGraphMode
from vllm_runner.counter import compilation_counter
from vllm_runner.cuda_graph import CUDAGraphWrapper


def _op_name(node: fx.Node) -> str | None:
    op = getattr(node.target, "default", node.target)  # a packet's one overload
    name = getattr(op, "name", None)
    return name() if node.op == "call_function" and callable(name) else None


class VllmBackend:
    """A torch.compile backend: pieces between splitting ops become PIECEWISE graphs."""

    def __init__(self, config: CompilationConfig, pool: Any) -> None:
        self.config = config
        self.pool = pool
        self.split_gm: fx.GraphModule | None = None
        # the graph's inputs come in order of first use, not the forward's: for each, the
        # index of the forward argument it is, or the tensor itself (a parameter dynamo lifted)
        self.inputs: list[int | torch.Tensor] = []
        self.call_args: tuple[torch.Tensor, ...] = ()  # the arguments of the traced call

    def is_splitting_op(self, node: fx.Node) -> bool:
        return _op_name(node) in self.config.splitting_ops

    def __call__(self, gm: fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        compilation_counter.num_graphs_seen += 1
        positions = {id(a): i for i, a in enumerate(self.call_args)}
        self.inputs = [positions.get(id(x), x) for x in example_inputs]
        part, parts = 0, {}
        for node in gm.graph.nodes:  # each splitting op alone in its own part
            if self.is_splitting_op(node):
                parts[node] = part + 1
                part += 2
            else:
                parts[node] = part
        # keep order: attention mutates its `out` argument, a dependency fx cannot see
        split = split_module(gm, None, lambda n: parts[n], keep_original_order=True)
        wrap = self.config.cudagraph_mode.has_piecewise_cudagraphs()
        capturable = []
        for name, piece in split.named_children():
            if not isinstance(piece, fx.GraphModule):
                continue
            compilation_counter.num_piecewise_graphs_seen += 1
            if any(map(self.is_splitting_op, piece.graph.nodes)):
                continue  # attention: eager
            compilation_counter.num_piecewise_capturable_graphs_seen += 1
            compilation_counter.num_backend_compilations += 1  # compiled for the general shape
            capturable.append((name, piece))
        for name, piece in capturable if wrap else []:
            # not an nn.Module: replace the child by a plain attribute, as vLLM does
            delattr(split, name)
            split.__dict__[name] = CUDAGraphWrapper(
                piece, CUDAGraphMode.PIECEWISE, self.pool, self.config.debug_mode,
                self.config.weak_ref_outputs, weak_ref_output=name == capturable[-1][0])
        self.split_gm = split
        forward: Callable[..., Any] = split.forward
        return forward


class CompiledModel:
    """`module` compiled once by VllmBackend (or eager when `compile` is False), under a FULL
    CUDAGraphWrapper when the mode has full graphs. Every forward argument is a tensor whose
    dim 0 is the token count."""

    def __init__(self, module: nn.Module, config: CompilationConfig, pool: Any,
                 compile: bool = True) -> None:
        self.config = config
        self.run = _Run(module, VllmBackend(config, pool), compile)
        # the wrapper holds the run, never this object: no reference cycle keeps the graphs
        # (and their pool) alive past the model's last user
        self.forward: Callable[..., Any] = (
            CUDAGraphWrapper(self.run, CUDAGraphMode.FULL, pool, config.debug_mode,
                             config.weak_ref_outputs, weak_ref_output=True)
            if config.cudagraph_mode.has_full_cudagraphs() else self.run)
        if compile:
            compilation_counter.num_models_seen += 1

    @property
    def backend(self) -> VllmBackend:
        return self.run.backend

    def __call__(self, *args: torch.Tensor) -> Any:
        return self.forward(*args)


class _Run:
    """One forward pass: the first compiles (trace and split), later ones run the split graph."""

    def __init__(self, module: nn.Module, backend: VllmBackend, compile: bool) -> None:
        self.module = module
        self.backend = backend
        self.compile = compile
        self.single_output = True  # forward returned one tensor; the split graph, a 1-tuple

    def __call__(self, *args: torch.Tensor) -> Any:
        if not self.compile:
            return self.module(*args)
        if self.backend.split_gm is None:  # first call: trace and split
            for a in args:
                torch._dynamo.mark_dynamic(a, 0)
            self.backend.call_args = args
            out = torch.compile(self.module, backend=self.backend)(*args)
            self.single_output = not isinstance(out, tuple)
            return out
        inputs = [args[i] if isinstance(i, int) else i for i in self.backend.inputs]
        out = self.backend.split_gm(*inputs)
        return out[0] if self.single_output else out
