"""torch._dynamo.backends.registry: backend names -> compiler functions.

A backend is `backend(gm: fx.GraphModule, example_inputs: list[Tensor], **kwargs) -> callable`:
called once per captured graph, it returns what later calls run, a callable taking the graph's
placeholder values positionally and returning what its output node returns (a tuple).
torch.compile passes `mode=` and `options=` as keyword arguments when the user gave them.

Built in: "eager" and "aot_eager" (tagged "debug"); fake_torch._inductor registers "inductor"
and "cudagraphs" when it is imported, which `lookup_backend` / `list_backends` do on demand.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable, Sequence
from typing import Any

from fake_torch._dynamo.exc import InvalidBackend

CompiledFn = Callable[..., Any]
CompilerFn = Callable[..., CompiledFn]

_COMPILER_FNS: dict[str, CompilerFn] = {}
_TAGS: dict[str, tuple[str, ...]] = {}
_LAZY_MODULES = ("fake_torch._dynamo.backends.debugging", "fake_torch._inductor")


def register_backend(compiler_fn: CompilerFn | None = None, name: str | None = None,
                     tags: Sequence[str] = ()) -> Any:
    """Register `compiler_fn` under `name` (default: its __name__), so that
    `torch.compile(backend=name)` finds it; usable as a decorator, with or without arguments."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    if not callable(compiler_fn):
        raise AssertionError(f"compiler_fn must be callable, got {type(compiler_fn)}")
    name = name or compiler_fn.__name__
    if name in _COMPILER_FNS:
        raise AssertionError(f"duplicate name: {name}")
    _COMPILER_FNS[name] = compiler_fn
    _TAGS[name] = tuple(tags)
    return compiler_fn


def _lazy_import() -> None:
    """Import the modules that register backends (the Inductor one only where it exists)."""
    for module in _LAZY_MODULES:
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)


def is_registered(name: str) -> bool:
    _lazy_import()
    return name in _COMPILER_FNS


def lookup_backend(compiler_fn: str | CompilerFn) -> CompilerFn:
    """A backend name -> its compiler function (torch's InvalidBackend for unknown names);
    a callable is returned as it is."""
    if isinstance(compiler_fn, str):
        if compiler_fn not in _COMPILER_FNS:
            _lazy_import()
        if compiler_fn not in _COMPILER_FNS:
            raise InvalidBackend(name=compiler_fn)
        return _COMPILER_FNS[compiler_fn]
    return compiler_fn


def list_backends(exclude_tags: Sequence[str] | None = ("debug", "experimental")) -> list[str]:
    """The names `torch.compile(backend=...)` accepts, without those tagged `exclude_tags`."""
    _lazy_import()
    excluded = set(exclude_tags or ())
    return sorted(name for name in _COMPILER_FNS if not excluded.intersection(_TAGS[name]))


__all__ = ["list_backends", "lookup_backend", "register_backend"]
