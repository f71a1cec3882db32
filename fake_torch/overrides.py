"""torch.overrides: TorchFunctionMode and the `__torch_function__` protocol's helpers.

    class Log(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            print(func.__name__)
            return func(*args, **(kwargs or {}))

    with Log():
        model(x)  # prints every public call: linear, silu, add, ... (not what they call)

Every public op of fake_torch enters through the API-level door (fake_torch._torch_function),
which hands the call to this thread's innermost mode, popped while it runs, and to Tensor
subclasses that override `__torch_function__`. torch.compile traces by pushing such a mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from fake_torch import _torch_function

__all__ = ["BaseTorchFunctionMode", "TorchFunctionMode", "get_default_nowrap_functions",
           "handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like"]


class TorchFunctionMode:
    """A context manager whose `__torch_function__(func, types, args, kwargs)` sees every
    public call made inside it, on this thread. Calls it makes go to the modes below it."""

    inner: TorchFunctionMode

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> Any:
        _torch_function.push_mode(self)
        return self

    def __exit__(self, exc_type: object, exc_val: object, exc_tb: object) -> None:
        _torch_function.pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        import warnings

        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`", stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every call as it is (a base to override one case of)."""

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Iterable[Any],
                          *args: Any, **kwargs: Any) -> Any:
    """Run `public_api(*args, **kwargs)` through this thread's mode and the overriding types
    among `relevant_args`; TypeError when none of them implements it."""
    return _torch_function.handle(public_api, None, args, kwargs, relevant=relevant_args)


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """A mode is active, or some argument's type overrides __torch_function__ (exact Tensors
    and nn.Parameters do not)."""
    return _torch_function.is_mode_enabled() or bool(
        _torch_function.overloaded_args(relevant_args))


def has_torch_function_unary(obj: Any) -> bool:
    return has_torch_function((obj,))


def has_torch_function_variadic(*args: Any) -> bool:
    return has_torch_function(args)


def is_tensor_like(inp: Any) -> bool:
    """A Tensor, or an object whose type defines __torch_function__."""
    from fake_torch._tensor import Tensor

    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def get_default_nowrap_functions() -> set[Callable[..., Any]]:
    """What the default Tensor.__torch_function__ returns unwrapped: none here (fake_torch
    has no `grad` or `_base` accessors that dispatch)."""
    return set()


def _get_current_function_mode() -> TorchFunctionMode | None:
    stack = _torch_function.mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    return _torch_function.mode_stack()


def _push_mode(mode: TorchFunctionMode) -> None:
    _torch_function.push_mode(mode)


def _pop_mode() -> TorchFunctionMode:
    return _torch_function.pop_mode()  # type: ignore[no-any-return]


@contextmanager
def _pop_mode_temporarily() -> Iterator[TorchFunctionMode]:
    with _torch_function.pop_mode_temporarily() as mode:
        yield mode
