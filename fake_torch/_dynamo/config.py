"""torch._dynamo.config: the knobs of torch.compile's frontend that fake_torch reads.

Names and defaults are torch 2.13's. `cache_size_limit` is the old name of `recompile_limit`
(reading or setting either means the other). `patch(...)` sets some for a block or a function.
"""

from __future__ import annotations

import contextlib
import sys
from types import ModuleType
from typing import Any

recompile_limit: int = 8  # compiled entries per function before it runs eagerly
accumulated_recompile_limit: int = 256
automatic_dynamic_shapes: bool = True  # a dim (or int) that changed becomes dynamic
assume_static_by_default: bool = True  # dynamic=None: start static, go dynamic on a change
capture_scalar_outputs: bool = False  # `.item()` becomes a graph node, not a graph break
capture_dynamic_output_shape_ops: bool = False  # nonzero/masked_select: an unbacked size
suppress_errors: bool = False
verbose: bool = False

# aliases, resolved by the module class below (declared so that type checkers see them)
cache_size_limit: int
accumulated_cache_size_limit: int
_ALIASES = {"cache_size_limit": "recompile_limit",
            "accumulated_cache_size_limit": "accumulated_recompile_limit"}


class _ConfigModule(ModuleType):
    """Module attributes with aliases, and an error for names torch does not have."""

    def __getattr__(self, name: str) -> Any:
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name: str, value: Any) -> None:
        name = _ALIASES.get(name, name)
        if not name.startswith("_") and name not in self.__dict__:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _ConfigModule


class _Patch(contextlib.ContextDecorator):
    """`with config.patch(recompile_limit=2):` or `@config.patch(...)`."""

    def __init__(self, changes: dict[str, Any]) -> None:
        self.changes = changes
        self.saved: list[dict[str, Any]] = []

    def __enter__(self) -> None:
        module = sys.modules[__name__]
        self.saved.append({k: getattr(module, k) for k in self.changes})
        for k, v in self.changes.items():
            setattr(module, k, v)

    def __exit__(self, *exc: object) -> None:
        module = sys.modules[__name__]
        for k, v in self.saved.pop().items():
            setattr(module, k, v)


def patch(arg1: str | dict[str, Any] | None = None, arg2: Any = None,
          **kwargs: Any) -> _Patch:
    """Set config values inside a `with` block or a decorated function: patch(name, value),
    patch({name: value}) or patch(name=value)."""
    changes: dict[str, Any] = dict(kwargs)
    if isinstance(arg1, str):
        changes[arg1] = arg2
    elif isinstance(arg1, dict):
        changes.update(arg1)
    module = sys.modules[__name__]
    for k in changes:
        getattr(module, k)  # unknown names fail here, not half-way through __enter__
    return _Patch(changes)

