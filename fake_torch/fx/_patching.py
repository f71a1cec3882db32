"""What symbolic tracing patches while it runs, and puts back after: module calls and
attribute reads (the Tracer's), and the functions kept as calls (fx.wrap's, math's)."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from typing import Any

from fake_torch.fx.node import map_aggregate
from fake_torch.fx.proxy import Proxy


class _Patcher:
    """Replace dict entries and class attributes; put everything back on exit."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []
        self._visited: set[int] = set()

    def patch(self, frame_dict: dict[str, Any], name: str, new_fn: Callable[..., Any]) -> None:
        if name in frame_dict:
            orig = frame_dict[name]
            self._undo.append(lambda: frame_dict.__setitem__(name, orig))
        else:
            self._undo.append(lambda: frame_dict.pop(name, None))
        frame_dict[name] = new_fn

    def patch_method(self, cls: type, name: str, new_fn: Callable[..., Any]) -> None:
        orig = getattr(cls, name)
        self._undo.append(lambda: setattr(cls, name, orig))
        setattr(cls, name, new_fn)

    def visit_once(self, thing: object) -> bool:
        """First time this object (a globals dict) is seen in this trace."""
        if id(thing) in self._visited:
            return False
        self._visited.add(id(thing))
        return True

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()


# (id(globals dict), function name) -> that globals dict: the functions fx.wrap registered
_wrapped_fns_to_patch: dict[tuple[int, str], dict[str, Any]] = {}


def _find_proxy(*objects_to_search: object) -> Proxy | None:
    found: list[Proxy] = []

    def find(x: Any) -> Any:
        if isinstance(x, Proxy):
            found.append(x)
        return x

    map_aggregate(objects_to_search, find)
    return found[-1] if found else None


def _create_wrapped_func(orig_fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(orig_fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        """Called on a Proxy: one call_function node; else the function itself."""
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return_proxy = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            return_proxy.node.meta["is_wrapped"] = True
            return return_proxy
        return orig_fn(*args, **kwargs)

    return wrapped


def _patch_wrapped_functions(patcher: _Patcher) -> None:
    for (_, name), frame_dict in _wrapped_fns_to_patch.copy().items():
        if name not in frame_dict and hasattr(builtins, name):
            orig_fn = getattr(builtins, name)
        else:
            orig_fn = frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig_fn))


def _autowrap_check(patcher: _Patcher, frame_dict: dict[str, Any],
                    function_ids: set[int]) -> None:
    """Wrap the autowrapped functions (math's) found in a globals dict."""
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value))


__all__: list[str] = []
