"""Counts that teach: the launches of one step run eagerly, compiled (fused) and compiled with
mode="reduce-overhead" (replayed), and which eager ops each fused kernel absorbed.

    counts = measure(model, decode_step, tokens, positions)  # decode_step(m, tokens, positions)
    print(format_table(counts))

`measure` compiles the model with torch.compile through a backend that runs the real inductor
backend and keeps what it compiled, so the table can list the kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fake_torch._inductor.backends import inductor
from fake_torch._inductor.scheduler import Kernel
from fake_torch._simulated._counter import LaunchCounter


@dataclass
class StepCounts:
    """Launches of one steady-state step each way, and the kernels of the compiled graphs."""

    eager: int
    compiled: int
    reduce_overhead: int
    graphs: list[list[Kernel]] = field(default_factory=list)  # each compiled graph's kernels

    @property
    def kernels(self) -> list[Kernel]:
        return [k for graph in self.graphs for k in graph]

    @property
    def fused(self) -> list[Kernel]:
        return [k for k in self.kernels if k.fused]


def _recording(graphs: list[list[Kernel]]) -> Callable[..., Any]:
    """The inductor backend, keeping each compiled graph's kernels."""

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        compiled = inductor(gm, example_inputs)
        graphs.append(list(getattr(compiled, "kernels", [])))
        return compiled

    return backend


def _launches(step: Callable[..., Any], model: Any, args: tuple[Any, ...], calls: int) -> int:
    """Launches of the `calls`-th of `calls` steps, each a new step for CUDA graph trees."""
    from fake_torch.compiler import cudagraph_mark_step_begin

    for _ in range(calls):
        cudagraph_mark_step_begin()
        LaunchCounter.reset()
        step(model, *args)
    return LaunchCounter.n


def measure(model: Any, step: Callable[..., Any], *args: Any, calls: int = 3) -> StepCounts:
    """Launches of one step `step(m, *args)` with m = `model` as it is, torch.compile(model)
    and torch.compile(model, mode="reduce-overhead"): the `calls`-th step each way (with 3:
    after a warmup and a recording, a replay). A step may change state (a KV cache): only
    launches are compared, never values. Clears torch.compile's caches before and after."""
    from fake_torch._compile import compile
    from fake_torch._dynamo import reset

    eager = _launches(step, model, args, 1)
    graphs: list[list[Kernel]] = []
    reset()
    compiled = _launches(step, compile(model, backend=_recording(graphs)), args, calls)
    reset()
    replayed = _launches(step, compile(model, mode="reduce-overhead"), args, calls)
    reset()
    return StepCounts(eager, compiled, replayed, graphs)


# what a copy kernel around an index_copy_ into a graph input does (it absorbs no eager launch)
_COPIES = {"in": "(copy of the input that index_copy_ writes)",
           "back": "(copy of the result back into that input)"}


def format_table(counts: StepCounts, title: str = "launches per step") -> str:
    """The three counts, then the graph's kernels: each fused kernel with the eager ops it
    absorbed, and the extern launches by op."""
    in_graphs = len(counts.kernels)
    outside = counts.compiled - in_graphs
    externs: dict[str, int] = {}
    for k in counts.kernels:
        if not k.fused:
            externs[k.name] = externs.get(k.name, 0) + 1
    lines = [
        f"{title}:",
        f"  {'eager':<26}{counts.eager:>5}",
        f"  {'compiled (fused)':<26}{counts.compiled:>5}   ({in_graphs} in "
        f"{len(counts.graphs)} graph(s), {outside} outside)",
        f"  {'reduce-overhead (replay)':<26}{counts.reduce_overhead:>5}",
        "",
        f"{len(counts.fused)} fused kernels, and what each absorbed:",
    ]
    lines += [f"  {k.name:<52} {_COPIES[k.copy] if k.copy else ' '.join(k.ops)}"
              for k in counts.fused]
    lines.append(f"{in_graphs - len(counts.fused)} extern launches: "
                 + ", ".join(f"{name} x{n}" for name, n in externs.items()))
    return "\n".join(lines)
