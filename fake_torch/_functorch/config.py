"""torch._functorch.config: AOTAutograd's knobs that torch.compile users set, with torch 2.13's
defaults. fake_torch has no AOTAutograd and no autograd cache: the values are kept and read
back (libraries save and restore them), and change nothing.

`patch(...)` sets some for a block or a decorated function, as torch's config modules do.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

autograd_cache_normalize_inputs: bool = True
bundled_autograd_cache: bool = False
enable_autograd_cache: bool = True
enable_remote_autograd_cache: bool | None = None
donated_buffer: bool = True
view_replay_for_aliased_outputs: bool = True


class _Patch(contextlib.ContextDecorator):
    """`with config.patch(name=value):` or `@config.patch(...)`: the old values come back."""

    def __init__(self, changes: dict[str, Any]) -> None:
        self.changes = changes
        self.saved: list[dict[str, Any]] = []

    def __enter__(self) -> None:
        module = sys.modules[__name__]
        for k in self.changes:  # unknown names fail on entry, before anything changed
            if k.startswith("_") or not hasattr(module, k) or callable(getattr(module, k)):
                raise AttributeError(f"torch._functorch.config.{k} does not exist")
        self.saved.append({k: getattr(module, k) for k in self.changes})
        for k, v in self.changes.items():
            setattr(module, k, v)

    def __exit__(self, *exc: object) -> None:
        module = sys.modules[__name__]
        for k, v in self.saved.pop().items():
            setattr(module, k, v)


def patch(arg1: str | dict[str, Any] | None = None, arg2: Any = None,
          **kwargs: Any) -> _Patch:
    """patch(name, value), patch({name: value}) or patch(name=value)."""
    changes: dict[str, Any] = dict(kwargs)
    if isinstance(arg1, str):
        changes[arg1] = arg2
    elif isinstance(arg1, dict):
        changes.update(arg1)
    return _Patch(changes)
