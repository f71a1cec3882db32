"""torch._dynamo: the frontend of torch.compile (tracing into FX graphs, guards, recompiles,
graph breaks) and its tools: explain, export, reset, config, counters, the backend registry."""

from fake_torch._dynamo import config, decorators, exc, utils
from fake_torch._dynamo.backends.registry import list_backends, lookup_backend, register_backend
from fake_torch._dynamo.convert_frame import reset
from fake_torch._dynamo.decorators import (
    allow_in_graph,
    assume_constant_result,
    mark_static_address,
    set_stance,
)
from fake_torch._dynamo.eval_frame import (
    OptimizedModule,
    disable,
    explain,
    is_compiling,
    optimize,
)
from fake_torch._dynamo.export import export
from fake_torch._dynamo.tracing_mode import user_break as graph_break
from fake_torch._tensor import Tensor


def mark_dynamic(t: Tensor, index: int | list[int] | tuple[int, ...], **kwargs: object) -> None:
    """Compile `t`'s dim(s) `index` as dynamic from the first compile on."""
    indices = [index] if isinstance(index, int) else list(index)
    dims: set[int] = getattr(t, "_dynamo_dynamic_indices", set())
    dims.update(indices)
    t._dynamo_dynamic_indices = dims  # type: ignore[attr-defined]


def maybe_mark_dynamic(t: Tensor, index: int | list[int] | tuple[int, ...]) -> None:
    mark_dynamic(t, index)


def mark_static(t: Tensor, index: int | list[int] | tuple[int, ...] | None = None) -> None:
    """Keep `t`'s dim(s) static even under automatic dynamic shapes."""
    dims: set[int] = getattr(t, "_dynamo_dynamic_indices", set())
    if index is None:
        dims.clear()
    else:
        dims.difference_update([index] if isinstance(index, int) else index)


__all__ = [
    "OptimizedModule", "allow_in_graph", "assume_constant_result", "config", "decorators",
    "disable", "exc", "explain", "export", "graph_break",
    "is_compiling", "list_backends", "lookup_backend", "mark_dynamic", "mark_static",
    "mark_static_address",
    "maybe_mark_dynamic", "optimize", "register_backend", "reset", "set_stance",
    "utils",
]
