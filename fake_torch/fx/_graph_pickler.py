"""torch.fx._graph_pickler: pickling GraphModules with their fake-tensor metadata (vLLM's compile
cache). The option set is torch's; pickling itself is not emulated: fake_torch's graphs hold
fake_torch tensors and ops that torch's unpickler could not load, and its own cache would need
a format of its own."""

from __future__ import annotations

import dataclasses
import io
import pickle
from collections.abc import Callable
from typing import Any, NoReturn


def _ops_filter_safe(name: str) -> bool:
    """Ops that unpickle on any machine with torch: aten's and fbgemm's."""
    return name.startswith(("torch.ops.aten", "torch.ops.fbgemm"))


def _node_metadata_key_filter_safe(key: str) -> bool:
    """Node metadata that pickles: not the source and module stacks."""
    return key not in ["source_fn_stack", "nn_module_stack", "fwd_source_fn_stack"]


@dataclasses.dataclass
class Options:
    """What GraphPickler lets through (torch's fields and defaults)."""

    ops_filter: Callable[[str], bool] | None = _ops_filter_safe
    node_metadata_key_filter: Callable[[str], bool] | None = _node_metadata_key_filter_safe
    ignore_raw_node: bool = False


def _refuse(what: str) -> NoReturn:
    raise NotImplementedError(f"torch.fx._graph_pickler.GraphPickler.{what} is not emulated by "
                              "fake_torch: it does not serialize compiled graphs")


class GraphPickler(pickle.Pickler):
    """torch's Pickler for GraphModules; constructing one works, pickling raises."""

    def __init__(self, file: io.BytesIO, options: Options | None = None) -> None:
        super().__init__(file)
        self.options = options or Options()

    def reducer_override(self, obj: object) -> Any:
        _refuse("reducer_override")

    @classmethod
    def dumps(cls, obj: object, options: Options | None = None) -> bytes:
        _refuse("dumps")

    @staticmethod
    def loads(data: bytes, fake_mode: Any) -> object:
        _refuse("loads")


__all__ = ["GraphPickler", "Options"]
