"""What torch's config modules (torch.utils._config_module) share: `patch(...)` as a context
manager or decorator that puts the old values back, and `save_config_portable()`. A fake_torch
config module keeps its settings as module globals and calls these with its own name."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

_SETTING = (bool, int, float, str, type(None))


def _settings(module_name: str) -> dict[str, Any]:
    return {k: v for k, v in vars(sys.modules[module_name]).items()
            if not k.startswith("_") and isinstance(v, _SETTING)}


class ConfigPatch(contextlib.ContextDecorator):
    """`with config.patch(name=value):` or `@config.patch(...)`: the old values come back."""

    def __init__(self, module_name: str, public_name: str, changes: dict[str, Any]) -> None:
        self.module_name = module_name
        self.public_name = public_name
        self.changes = changes
        self.saved: list[dict[str, Any]] = []

    def __enter__(self) -> None:
        module = sys.modules[self.module_name]
        known = _settings(self.module_name)
        for k in self.changes:  # unknown names fail on entry, before anything changed
            if k not in known:
                raise AttributeError(f"{self.public_name}.{k} does not exist")
        self.saved.append({k: getattr(module, k) for k in self.changes})
        for k, v in self.changes.items():
            setattr(module, k, v)

    def __exit__(self, *exc: object) -> None:
        module = sys.modules[self.module_name]
        for k, v in self.saved.pop().items():
            setattr(module, k, v)


def changes_of(arg1: str | dict[str, Any] | None, arg2: Any,
               kwargs: dict[str, Any]) -> dict[str, Any]:
    """patch(name, value), patch({name: value}) or patch(name=value), as one dict."""
    changes: dict[str, Any] = dict(kwargs)
    if isinstance(arg1, str):
        changes[arg1] = arg2
    elif isinstance(arg1, dict):
        changes.update(arg1)
    return changes


def portable(module_name: str) -> dict[str, Any]:
    """The settings as a plain dict (part of a compile-cache key)."""
    return _settings(module_name)
