"""CUDAGraphWrapper: one CUDA graph per batch key, captured in the capture phase, then replayed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from vllm_runner.config import CUDAGraphMode
from vllm_runner.counter import compilation_counter
from vllm_runner.forward_context import BatchDescriptor, get_forward_context
from vllm_runner.utils import weak_ref_tensors


class CaptureOutsidePhaseError(RuntimeError):
    """A wrapper met a new batch key outside the runner's capture phase."""


@dataclass
class CUDAGraphEntry:
    """What one capture saw: the graph, its output and the addresses of its tensor inputs."""

    batch_descriptor: BatchDescriptor
    cudagraph: torch.cuda.CUDAGraph | None = None
    output: Any = None
    input_addresses: list[int] = field(default_factory=list)


def _addresses(args: tuple[Any, ...]) -> list[int]:
    return [a.data_ptr() for a in args if isinstance(a, torch.Tensor)]


class CUDAGraphWrapper:
    """Runs `runnable` through a CUDA graph when the forward context's runtime mode is this
    wrapper's mode; any other runtime mode (NONE included) calls `runnable` directly.

    The graph reads its inputs where they were at capture: callers pass the same static buffers
    (the runner's persistent inputs, or an earlier graph's outputs) at every replay.

    Outputs: the entry keeps only weak references (unless `weak_ref_outputs` is False), so once
    the capture's forward pass is over its memory is free in the pool for the next capture; a
    replay returns those weak tensors, valid until the next replay of any graph of the pool.
    `weak_ref_output` also drops the output inside the capture itself: only safe for a graph
    whose output no later graph of the same pass reads (the last piece, or a FULL graph)."""

    def __init__(self, runnable: Callable[..., Any], mode: CUDAGraphMode, pool: Any,
                 debug_mode: bool = False, weak_ref_outputs: bool = True,
                 weak_ref_output: bool = False) -> None:
        assert mode in (CUDAGraphMode.PIECEWISE, CUDAGraphMode.FULL)
        self.runnable = runnable
        self.mode = mode
        self.pool = pool
        self.debug_mode = debug_mode
        self.weak_ref_outputs = weak_ref_outputs
        self.weak_ref_output = weak_ref_output and weak_ref_outputs
        self.entries: dict[BatchDescriptor, CUDAGraphEntry] = {}

    def __call__(self, *args: Any) -> Any:
        context = get_forward_context()
        key = context.batch_descriptor
        if context.runtime_mode is not self.mode or key is None:
            return self.runnable(*args)  # bypass: eager, or another level's graph
        entry = self.entries.get(key)
        if entry is None:  # capture
            if not context.capturing:
                raise CaptureOutsidePhaseError(
                    f"{self.mode.name} CUDA graph wrapper: no graph for {key} and not in the "
                    "capture phase; capture every size first (runner.capture_model()) or "
                    "dispatch this batch to CUDAGraphMode.NONE")
            graph = torch.cuda.CUDAGraph()
            entry = self.entries[key] = CUDAGraphEntry(key, graph, None, _addresses(args))
            with torch.cuda.graph(graph, pool=self.pool):
                # nothing runs here: the output holds what capture leaves in it
                output = self.runnable(*args)
                if self.weak_ref_output:
                    output = weak_ref_tensors(output)  # its block is free before capture ends
            entry.output = weak_ref_tensors(output) if self.weak_ref_outputs else output
            compilation_counter.num_cudagraph_captured += 1
            return output
        if self.debug_mode:  # replay check
            seen = _addresses(args)
            if seen != entry.input_addresses:
                raise RuntimeError(f"input addresses for {key} changed since capture: expected "
                                   f"{entry.input_addresses}, got {seen}; pass the static "
                                   "buffers the graph was captured with")
        assert entry.cudagraph is not None
        entry.cudagraph.replay()  # replay
        return entry.output
