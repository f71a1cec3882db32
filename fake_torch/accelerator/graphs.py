"""torch.accelerator.Graph: a CUDA graph through the device-generic API, used as a context
manager on the current stream (`with stream, graph:`)."""

from __future__ import annotations

from fake_torch.cuda import _device_queries
from fake_torch.cuda import memory as cuda_memory
from fake_torch.cuda.graphs import CUDAGraph

_MODES = {"default": "global", "global": "global", "thread_local": "thread_local",
          "relaxed": "relaxed"}


class Graph(CUDAGraph):
    """A graph that captures the work of the current stream between `capture_begin` and
    `capture_end` (or inside `with graph:`) and replays it as one launch."""

    def __init__(self, keep_graph: bool = False, *, pool: tuple[int, int] | None = None,
                 capture_error_mode: str = "default") -> None:
        super().__init__(keep_graph)
        self.graph_pool = pool
        self.capture_error_mode = capture_error_mode

    def capture_begin(self) -> None:  # type: ignore[override]
        """Begin capturing the current stream's work, with the pool and error mode given at
        construction."""
        if self.capture_error_mode not in _MODES:
            raise RuntimeError("Unknown capture error mode. Expected `default`, `global`, "
                               f"`thread_local`, or `relaxed`, got {self.capture_error_mode}")
        super().capture_begin(self.graph_pool,
                              capture_error_mode=_MODES[self.capture_error_mode])

    def __enter__(self) -> None:
        _device_queries.synchronize()
        cuda_memory.empty_cache()
        self.capture_begin()

    def __exit__(self, *exc_info: object) -> None:
        self.capture_end()


__all__ = ["Graph"]
