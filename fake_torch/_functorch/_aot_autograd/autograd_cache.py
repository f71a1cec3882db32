"""torch._functorch._aot_autograd.autograd_cache: AOTAutograd's cache of compiled graphs.

fake_torch has no AOTAutograd, so its cache never holds an entry: `clear()` empties nothing,
and what would load or store one refuses by name. vLLM imports `AOTAutogradCache` to patch
its `_get_shape_env` (torch's GuardedCache helper: the shape env of the tracing context).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class AOTAutogradCache:
    """Caches the results of running AOTAutograd (none in fake_torch)."""

    @classmethod
    def _get_shape_env(cls) -> Any:
        """The shape env of the current tracing context's fake mode (None outside one)."""
        from fake_torch._guards import TracingContext

        ctx = TracingContext.try_get()
        if not ctx or not ctx.fake_mode:
            return None
        return getattr(ctx.fake_mode, "shape_env", None)

    @staticmethod
    def clear() -> None:
        """Empty the cache: fake_torch's is always empty."""

    @staticmethod
    def try_load(mod: Any, args: list[Any], aot_config: Any, compiler_config_extra: Any,
                 local: bool, remote: bool, compile_region_name: str | None = None) -> Any:
        raise NotImplementedError(
            "torch._functorch._aot_autograd.autograd_cache.AOTAutogradCache.try_load is not "
            "emulated by fake_torch: it has no AOTAutograd")

    @staticmethod
    def save(key: str, entry: Any, remote: bool) -> None:
        raise NotImplementedError(
            "torch._functorch._aot_autograd.autograd_cache.AOTAutogradCache.save is not "
            "emulated by fake_torch: it has no AOTAutograd")


def autograd_cache_key(mod: Any, example_inputs: Sequence[Any], config: Any,
                       compiler_config_extra: Any = None) -> tuple[str, list[str]]:
    """The cache key AOTAutograd would file `mod` under; fake_torch has no AOTAutograd, so
    nothing calls it (vLLM patches it to learn the key of a hit) and a call refuses by name."""
    raise NotImplementedError("torch._functorch._aot_autograd.autograd_cache."
                              "autograd_cache_key: fake_torch has no AOTAutograd")


__all__ = ["AOTAutogradCache", "autograd_cache_key"]
