"""torch._functorch.config: AOTAutograd's knobs that torch.compile users set, with torch 2.13's
defaults. fake_torch has no AOTAutograd and no autograd cache: the values are kept and read
back (libraries save and restore them), and change nothing.

`patch(...)` sets some for a block or a decorated function, as torch's config modules do.
"""

from __future__ import annotations

from typing import Any

from fake_torch import _config_module

autograd_cache_normalize_inputs: bool = True
bundled_autograd_cache: bool = False
enable_autograd_cache: bool = True
enable_remote_autograd_cache: bool | None = None
donated_buffer: bool = True
view_replay_for_aliased_outputs: bool = True


def save_config_portable(*, ignore_private_configs: bool = True,
                         readonly_values: bool = False) -> dict[str, Any]:
    """The settings as a plain dict (a cache key's part), as torch's config modules give it."""
    return _config_module.portable(__name__)


def patch(arg1: str | dict[str, Any] | None = None, arg2: Any = None,
          **kwargs: Any) -> _config_module.ConfigPatch:
    """patch(name, value), patch({name: value}) or patch(name=value)."""
    return _config_module.ConfigPatch(__name__, "torch._functorch.config",
                                      _config_module.changes_of(arg1, arg2, kwargs))


