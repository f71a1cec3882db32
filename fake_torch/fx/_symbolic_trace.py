"""torch.fx.symbolic_trace: not emulated (graphs come from torch.compile or fx.Graph)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch.nn.modules.module import Module


def symbolic_trace(root: Module | Callable[..., Any],
                   concrete_args: dict[str, Any] | None = None) -> Any:
    """Raises: fake_torch records graphs by running code under torch.compile, not by proxies."""
    raise NotImplementedError("torch.fx.symbolic_trace is not emulated by fake_torch: build a "
                              "graph with torch.fx.Graph, or get one from torch.compile (a "
                              "backend receives the traced GraphModule)")


__all__ = ["symbolic_trace"]
