"""torch._dynamo.mutation_guard: GenerationTracker, the count of calls of compiled frames.

Each call of a torch.compile'd function starts a new generation (torch bumps it when a compiled
frame is entered). CUDA graph trees (torch._inductor.cudagraph_trees) read it: a new generation
is a new step, whose start frees the outputs of the previous step's warmup or recording."""

from __future__ import annotations


class GenerationTracker:
    generation: int = 0
