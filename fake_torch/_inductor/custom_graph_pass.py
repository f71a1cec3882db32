"""torch._inductor.custom_graph_pass: the base class of graph passes users hand to inductor
(config.post_grad_custom_pre_pass / post_grad_custom_post_pass)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeAlias

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


class CustomInferenceAwareGraphPass(CustomGraphPass):
    """A pass told whether the graph is an inference graph: `__call__(graph, is_inference)`
    (fake_torch compiles inference graphs only: is_inference is True)."""

    @abstractmethod
    def __call__(self, graph: Graph, is_inference: bool) -> None:  # type: ignore[override]
        """Implementation of the custom pass."""


CustomGraphPassCallable: TypeAlias = CustomGraphPass | Callable[[Graph], None]
CustomGraphPassType: TypeAlias = (CustomGraphPassCallable | list[CustomGraphPassCallable]
                                  | tuple[CustomGraphPassCallable, ...] | None)


def get_custom_graph_passes(custom_pass: CustomGraphPassType
                            ) -> tuple[CustomGraphPassCallable, ...]:
    """A config option's passes: none, the one given, or each of a list or tuple."""
    if custom_pass is None:
        return ()
    if isinstance(custom_pass, (list, tuple)):
        return tuple(custom_pass)
    return (custom_pass,)


__all__ = ["CustomGraphPass", "CustomInferenceAwareGraphPass", "get_custom_graph_passes"]
