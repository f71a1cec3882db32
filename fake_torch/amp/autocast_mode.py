"""torch.autocast / torch.amp.autocast: a block (or a decorated function) in which listed ops
run in a lower-precision dtype (fake_torch.amp._policy), with torch 2.13's checks, warnings
and state handling. Inference semantics only: custom_fwd / custom_bwd decorate the methods of
an autograd Function as in torch, and run as torch runs them when called."""

from __future__ import annotations

import collections.abc
import functools
import warnings
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import numpy as np

from fake_torch._dtype import bfloat16, dtype, float16, float64
from fake_torch._tensor import Tensor
from fake_torch.amp import _state
from fake_torch.amp._state import is_autocast_available

__all__ = [
    "autocast",
    "autocast_decorator",
    "custom_bwd",
    "custom_fwd",
    "is_autocast_available",
]

F = TypeVar("F", bound=Callable[..., Any])


def autocast_decorator(autocast_instance: autocast, func: F) -> F:
    @functools.wraps(func)
    def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast  # type: ignore[return-value]


class autocast:
    """Run the block's listed ops in `dtype` (default: torch.get_autocast_dtype(device_type),
    float16 on cuda, bfloat16 on cpu); see fake_torch.amp._policy for which ops cast, to
    what, and the launches the casts cost."""

    def __init__(self, device_type: str, dtype: dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = _state.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{self.device}'")
        self.custom_backend_name = "privateuseone"
        if self.device == self.custom_backend_name:
            raise NotImplementedError("torch.autocast('privateuseone'): fake_torch has no "
                                      "custom backend module to ask for its amp dtypes")
        self._cache_enabled = (_state.is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled and self.device != "cuda" and self.fast_dtype not in (bfloat16, float16):
            name = self.device.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling "
                f"autocast.\n{name} Autocast only supports dtypes of torch.bfloat16, "
                "torch.float16 currently.", stacklevel=2)
            enabled = False
        # cuda: the simulated device is an H200, with bfloat16 support, so no cuda check fails
        self._enabled = enabled

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = _state.is_autocast_cache_enabled()
        self.prev = _state.is_autocast_enabled(self.device)
        self.prev_fastdtype = _state.get_autocast_dtype(self.device)
        _state.set_autocast_enabled(self.device, self._enabled)
        _state.set_autocast_dtype(self.device, self.fast_dtype)
        _state.autocast_increment_nesting()
        _state.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type: object, exc_val: object, exc_tb: object) -> Literal[False]:
        # the casts cached for reuse are dropped when the outermost block exits
        if _state.autocast_decrement_nesting() == 0:
            _state.clear_autocast_cache()
        _state.set_autocast_enabled(self.device, self.prev)
        _state.set_autocast_dtype(self.device, self.prev_fastdtype)
        _state.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: F) -> F:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")
        return autocast_decorator(self, func)


class _UnmanagedAutocast(autocast):
    """An autocast entered by `_enter_autocast`, not by a with statement."""


def _enter_autocast(*vals: Any) -> autocast:
    mode = _UnmanagedAutocast(*vals)
    mode.__enter__()
    return mode


def _exit_autocast(mode: autocast) -> None:
    mode.__exit__(None, None, None)


def _cast(value: Any, device_type: str, dtype: dtype) -> Any:
    """Floating tensors on `device_type` (float64 excepted) in `value`, a tensor or a nest of
    containers, cast to `dtype`; strings and numpy arrays pass through."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        if isinstance(value, (list, tuple)):
            return type(value)(iterable)
        return iterable
    return value


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str,
               cast_inputs: dtype | None = None) -> Any:
    """Decorate the forward of an autograd Function: inside an autocast block with
    `cast_inputs`, its floating inputs are cast to it and it runs with autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    forward = fwd

    @functools.wraps(forward)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = _state.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _state.is_autocast_enabled(device_type)
            return forward(*args, **kwargs)
        inside = _state.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if not inside:
            return forward(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return forward(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorate the backward of an autograd Function: it runs with the autocast state its
    forward ran with."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    backward = bwd

    @functools.wraps(backward)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return backward(*args, **kwargs)

    return decorate_bwd
