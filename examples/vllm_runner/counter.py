"""Compilation counter with vLLM's field names; `expect(**deltas)` reads like a spec."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager


@dataclasses.dataclass
class CompilationCounter:
    """Counts the backend and the CUDA graph wrappers add to."""

    num_models_seen: int = 0
    num_graphs_seen: int = 0  # graphs the torch.compile backend was handed
    num_piecewise_graphs_seen: int = 0  # pieces after splitting, attention pieces included
    num_piecewise_capturable_graphs_seen: int = 0  # pieces wrapped for CUDA graphs
    num_backend_compilations: int = 0  # capturable pieces compiled for the general shape
    num_cudagraph_captured: int = 0
    num_eager_steps: int = 0  # steps above the largest capture size, run unpadded

    def clone(self) -> CompilationCounter:
        return copy.deepcopy(self)

    def reset(self) -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, 0)

    @contextmanager
    def expect(self, **deltas: int) -> Iterator[None]:
        """Assert that the block changes each named count by exactly its delta."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(deltas) - names)
        if unknown:
            raise ValueError(f"unknown counter name(s) {unknown}; the counter has "
                             f"{sorted(names)}")
        before = self.clone()
        yield
        for name, delta in deltas.items():
            seen = getattr(self, name) - getattr(before, name)
            if seen != delta:
                raise AssertionError(f"{name}: expected a change of {delta}, saw {seen}")


compilation_counter = CompilationCounter()
