"""TorchScript's markers, which model code applies at import time whether or not it is ever
scripted: `torch.jit.Final[bool]` class annotations (timm), `@torch.jit.ignore`, `@unused`,
`@export`. Each marks the function as torch does (its `_torchscript_modifier`) and returns it
unchanged: outside torch.jit.script, which fake_torch does not emulate, torch does no more."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Final, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


class FunctionModifiers:
    """How TorchScript treats a marked function (torch._jit_internal.FunctionModifiers)."""

    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"
    COPY_TO_SCRIPT_WRAPPER = ("if this method is not scripted, copy the python method onto the "
                              "scripted model")
    _DROP = "_drop (function is fully ignored, declaration can be unscriptable)"


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """`@torch.jit.ignore` (or `@torch.jit.ignore(drop)`): TorchScript would leave the function
    as a call to Python (drop=True: replace it by a raise)."""
    if callable(drop):  # used bare: drop is the function
        drop._torchscript_modifier = FunctionModifiers.IGNORE
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got "
                           f"{drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now drop "
                      "the function call on compilation. Use torch.jit.unused now. {}",
                      FutureWarning, stacklevel=2)
        drop = drop_on_export
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the function "
                      "call on compilation. Use torch.jit.unused now. {}", FutureWarning,
                      stacklevel=2)

    def decorator(fn: _F) -> _F:
        fn._torchscript_modifier = (  # type: ignore[attr-defined]
            FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE)
        return fn
    return decorator


def unused(fn: _F) -> _F:
    """`@torch.jit.unused`: TorchScript would replace calls to it by a raise (a property's
    getter and setter are marked)."""
    if isinstance(fn, property):
        fn.fget._torchscript_modifier = FunctionModifiers.UNUSED
        if fn.fset:
            fn.fset._torchscript_modifier = FunctionModifiers.UNUSED
        return fn
    fn._torchscript_modifier = FunctionModifiers.UNUSED  # type: ignore[attr-defined]
    return fn


def export(fn: _F) -> _F:
    """`@torch.jit.export`: TorchScript would compile the method even if forward never calls
    it."""
    fn._torchscript_modifier = FunctionModifiers.EXPORT  # type: ignore[attr-defined]
    return fn


__all__ = ["Final", "FunctionModifiers", "export", "ignore", "unused"]
