"""Forward hooks: the handle that removes one, and the hooked call path of Module.__call__."""

from __future__ import annotations

import functools
import itertools
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fake_torch.nn.modules.module import Module


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: `handle.remove()` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks_dict: dict[int, Any], *extra_dicts: dict[int, Any]) -> None:
        self.id = next(RemovableHandle._ids)
        self._dicts = (hooks_dict, *extra_dicts)

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class WrappedHook:
    """A hook called with its module first (held weakly, as torch's _WrappedHook holds it),
    or as it is when registered without one."""

    def __init__(self, hook: Callable[..., Any], module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)


def call_with_hooks(module: Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """forward pre-hooks -> forward -> forward hooks, as torch's Module._call_impl runs them."""
    called: set[int] = set()
    result: Any = None
    try:
        for hook_id, hook in list(module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                new = hook(module, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {new}.")
                    args, kwargs = new
            else:
                new = hook(module, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        result = module.forward(*args, **kwargs)
        for hook_id, hook in list(module._forward_hooks.items()):
            called.add(hook_id)
            out = _run_forward_hook(module, hook_id, hook, args, kwargs, result)
            if out is not None:
                result = out
        return result
    except Exception:
        for hook_id, hook in list(module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called and hook_id not in called:
                try:
                    out = _run_forward_hook(module, hook_id, hook, args, kwargs, result)
                    if out is not None:
                        result = out
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised in "
                                  f"forward: {e}", stacklevel=2)
        raise


def _run_forward_hook(module: Module, hook_id: int, hook: Any, args: tuple[Any, ...],
                      kwargs: dict[str, Any], result: Any) -> Any:
    if hook_id in module._forward_hooks_with_kwargs:
        return hook(module, args, kwargs, result)
    return hook(module, args, result)
