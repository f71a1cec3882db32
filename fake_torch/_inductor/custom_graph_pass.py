"""torch._inductor.custom_graph_pass: the base class of graph passes users hand to inductor
(config.post_grad_custom_pre_pass / post_grad_custom_post_pass)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from fake_torch.fx import Graph


class CustomGraphPass(ABC):
    """A pass over an FX graph: `__call__(graph)` changes it in place; `uuid()` names the pass's
    code and settings for the compile cache (None: do not cache)."""

    @abstractmethod
    def __call__(self, graph: Graph) -> None:
        """Implementation of the custom pass."""

    @abstractmethod
    def uuid(self) -> Any | None:
        """A value that changes whenever the pass's behaviour does."""


__all__ = ["CustomGraphPass"]
