"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode.

fake_torch has no autograd, so these only keep torch's thread-local state (grad mode, inference
mode) that `is_grad_enabled()` / `is_inference_mode_enabled()` report. Each works as a context
manager and as a decorator (generator functions included), with torch's quirks:
`@no_grad` and `@inference_mode` work without parentheses, `set_grad_enabled(False)` takes
effect as soon as it is called, and `inference_mode(True)` also turns grad mode off.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Generator
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    grad_enabled = True
    inference = False


_state = _State()


def is_grad_enabled() -> bool:
    """True unless a no_grad / set_grad_enabled(False) / inference_mode block is active."""
    return _state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


def _set_grad_enabled(mode: bool) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    _state.grad_enabled = mode


def _wrap_generator(ctx_factory: Callable[[], Any], func: Callable[..., Any]) -> Callable[..., Any]:
    """Enter the context around every resumption of the generator, as torch does."""

    @functools.wraps(func)
    def generator_context(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException as exc:
                    with ctx_factory():
                        response = gen.throw(exc)
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_context


class _DecoratorContextManager:
    """A context manager that also decorates: each call runs inside a fresh clone."""

    def __call__(self, orig_func: F) -> F:
        if inspect.isclass(orig_func):
            raise RuntimeError("Cannot decorate classes; decorate each method instead")
        if inspect.isgeneratorfunction(orig_func):
            return cast(F, _wrap_generator(self.clone, orig_func))

        @functools.wraps(orig_func)
        def decorate_context(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return orig_func(*args, **kwargs)

        return cast(F, decorate_context)

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Usable as `@ctx` as well as `@ctx()`."""

    def __new__(cls, orig_func: Callable[..., Any] | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Context manager / decorator that turns grad mode off inside it."""

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc: object) -> None:
        _state.grad_enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Context manager / decorator that turns grad mode on inside it."""

    def __init__(self, orig_func: Callable[..., Any] | None = None) -> None:
        self.prev = True

    def __enter__(self) -> None:
        self.prev = _state.grad_enabled
        _state.grad_enabled = True

    def __exit__(self, *exc: object) -> None:
        _state.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to `mode` now; as a context manager, restore the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = _state.grad_enabled
        self.mode = mode
        _set_grad_enabled(mode)

    def __call__(self, orig_func: F) -> F:
        _state.grad_enabled = self.prev  # used as a decorator: undo the immediate effect
        return super().__call__(orig_func)

    def __enter__(self) -> None:
        _state.grad_enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _state.grad_enabled = self.prev

    def __repr__(self) -> str:
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Context manager / decorator for inference mode: mode=True also turns grad mode off;
    mode=False turns inference mode off and grad mode on (torch's InferenceMode guard)."""

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # @inference_mode without parentheses

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self._saved: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        self._saved.append((_state.grad_enabled, _state.inference))
        _state.grad_enabled, _state.inference = not self.mode, self.mode

    def __exit__(self, *exc: object) -> None:
        _state.grad_enabled, _state.inference = self._saved.pop()

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)


__all__ = ["enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
           "no_grad", "set_grad_enabled"]
