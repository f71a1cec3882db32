"""Decode with CUDA graphs the way nano-vllm's ModelRunner and SGLang's CudaGraphRunner do.

Plain torch code (it runs on real torch and on fake_torch). One graph per capture size
`[1, 2, 4, 8] + [16, 32, ...]` up to `max_bs`, all reading the same persistent input buffers
(sized for `max_bs`), captured largest first into ONE shared memory pool: each capture reuses the
blocks the bigger one before it freed, so the pool costs about the largest graph, not the sum.

A decode step of `bs` rows replays the smallest graph that holds them: copy the inputs into the
buffers' first `bs` rows, point the padded rows at position 0, replay, slice the first `bs` rows
of that graph's output. A padded row is harmless: rows are independent (no op mixes them), and
it writes its key/value at position 0 of cache row b >= bs, a row no sequence of this step uses
(the next prefill of that row overwrites it). Above the largest size the step runs eagerly, and
says so in `num_eager_steps`. The model derives each row's KV-cache slot and attention mask from
its position (the context length stays the full cache), so ids and positions are all the inputs
a graph reads.

Mostly imported (examples/decode_runner.py, the demo); run by itself it shows the point in a few
lines, one decode step at batch 3 eagerly and as a replay of the graph of 4:

    python -m fake_torch run examples/cuda_graph_runner.py
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from llama import Llama


def capture_sizes(max_bs: int) -> list[int]:
    """nano-vllm's / SGLang's batch sizes to capture, clipped to `max_bs`."""
    return [bs for bs in [1, 2, 4, 8, *range(16, max_bs + 1, 16)] if bs <= max_bs]


@dataclass
class StepStats:
    """How decode steps ran: on a graph of each size, or eagerly (nothing falls back silently)."""

    num_graph_steps: dict[int, int] = field(default_factory=dict)  # capture size -> replays
    num_eager_steps: int = 0


class CudaGraphRunner:
    """Decode steps of `model` ([bs] token ids at [bs] positions -> logits [bs, V])."""

    def __init__(self, model: Llama, max_bs: int, shared_pool: bool = True) -> None:
        self.model = model
        self.max_bs = max_bs
        self.shared_pool = shared_pool  # False: each graph its own private pool (to compare)
        device = model.embed_tokens.weight.device
        # persistent inputs, sized for the largest batch; every graph reads a prefix of them
        self.input_ids = torch.zeros(max_bs, dtype=torch.int64, device=device)
        self.positions = torch.zeros(max_bs, dtype=torch.int64, device=device)
        self.graph_bs = capture_sizes(max_bs)
        self.graphs: dict[int, torch.cuda.CUDAGraph] = {}
        self.outputs: dict[int, torch.Tensor] = {}  # each graph's static logits [bs, V]
        self.graph_pool: Any = None  # the shared pool's handle, once the first capture made it
        self.stats = StepStats()

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """The decode step itself: [bs] ids at [bs] positions -> logits [bs, V]."""
        logits: torch.Tensor = self.model(input_ids[:, None], positions[:, None])
        return logits

    @torch.inference_mode()
    def capture_cudagraph(self) -> None:
        """Capture one graph per size in `graph_bs`, largest first, into one shared pool (a
        private pool each when `shared_pool` is False: only to measure what sharing saves)."""
        for bs in reversed(self.graph_bs):
            graph = torch.cuda.CUDAGraph()
            ids, pos = self.input_ids[:bs], self.positions[:bs]
            self.forward(ids, pos)  # warmup: lazy init and allocator caches, outside the graph
            with torch.cuda.graph(graph, pool=self.graph_pool):
                self.outputs[bs] = self.forward(ids, pos)  # capture
            if self.shared_pool and self.graph_pool is None:
                self.graph_pool = graph.pool()  # the next (smaller) captures share its pool
            self.graphs[bs] = graph

    def graph_size_for(self, bs: int) -> int | None:
        """The smallest captured size that holds `bs` rows; None: the step runs eagerly."""
        return next((size for size in self.graph_bs if size >= bs and size in self.graphs), None)

    @torch.inference_mode()
    def run_model(self, input_ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """One decode step: replay the smallest graph that holds the batch, else run eagerly."""
        bs = input_ids.shape[0]
        graph_bs = self.graph_size_for(bs)
        if graph_bs is None:  # eager: above the largest graph (or nothing captured)
            self.stats.num_eager_steps += 1
            return self.forward(input_ids, positions)
        # replay: copy the new inputs into the static buffers, pad, replay, slice
        self.input_ids[:bs].copy_(input_ids)
        self.positions[:bs].copy_(positions)
        if graph_bs != bs:
            self.positions[bs:graph_bs].zero_()  # padded rows: position 0 of unused cache rows
        self.graphs[graph_bs].replay()
        self.stats.num_graph_steps[graph_bs] = self.stats.num_graph_steps.get(graph_bs, 0) + 1
        return self.outputs[graph_bs][:bs]


@torch.inference_mode()
def main(max_bs: int = 8, bs: int = 3) -> None:
    """One decode step of `bs` rows eagerly, then as a replay (padded to the graph that holds
    it), with each way's launches (fake_torch counts them; real torch prints "-")."""
    from llama import LlamaConfig

    counter = getattr(torch, "LaunchCounter", None)
    if not torch.cuda.is_available():
        print("no CUDA device: CUDA graphs need one (run it with python -m fake_torch run)")
        return
    torch.manual_seed(0)
    model = Llama(LlamaConfig()).to("cuda").eval()
    model.allocate_kv_cache(max_bs)
    runner = CudaGraphRunner(model, max_bs)
    runner.capture_cudagraph()
    print(f"captured {len(runner.graphs)} graphs, sizes {sorted(runner.graphs)}, "
          "into one shared pool")
    ids = torch.randint(0, model.embed_tokens.weight.shape[0], (bs,), device="cuda")
    positions = torch.full((bs,), 5, dtype=torch.int64, device="cuda")
    for name, step in (("eager", runner.forward), ("replay", runner.run_model)):
        if counter is not None:
            counter.reset()
        logits = step(ids, positions)
        launches = "-" if counter is None else str(counter.n)
        print(f"{name:>6}: one decode step of {bs} rows, {launches} launches, logits "
              f"{list(logits.shape)}")
    graph_bs = runner.graph_size_for(bs)
    print(f"the replay ran the graph of {graph_bs} ({graph_bs} rows computed for {bs})"
          + ("" if counter is None else f", launching {dict(counter.by_op)}"))


if __name__ == "__main__":
    main()
