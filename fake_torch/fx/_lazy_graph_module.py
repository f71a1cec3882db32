"""torch.fx._lazy_graph_module: whether new GraphModules compile their code lazily.

Torch can defer a GraphModule's `recompile()` until its first call, to save time when many are
made. fake_torch's GraphModule generates its code at once, always: a lazy one would behave the
same from outside (same code, same calls), so the switch is kept and read, never needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_use_lazy_graph_module_flag = False


@contextmanager
def _use_lazy_graph_module(should_use: bool) -> Iterator[None]:
    """Inside the block, GraphModules are (`should_use`) or are not made lazily."""
    global _use_lazy_graph_module_flag
    prior = _use_lazy_graph_module_flag
    _use_lazy_graph_module_flag = should_use
    try:
        yield
    finally:
        _use_lazy_graph_module_flag = prior


def _force_skip_lazy_graph_module() -> bool:
    """True where GraphModules are never lazy: fake_torch's always generate code at once."""
    return True
