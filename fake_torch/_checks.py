"""torch._check, _check_with, _check_is_size: assertions that also teach a ShapeEnv.

On a plain bool they raise when false; on a SymBool over unbacked symbols they record a
runtime assert and narrow the symbols' ranges (torch._check(u0 >= 0): u0 in [0, int_oo])."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from fake_torch._sym import SymBool


def _not_registered(*args: Any) -> Any:
    raise RuntimeError("fake_torch/fx/experimental/symbolic_shapes.py registers the ShapeEnv's "
                       "checks when it is imported, and a symbolic value was made there")


class _ShapeEnvChecks:
    """What a check of a symbolic condition asks the ShapeEnv
    (fake_torch/fx/experimental/symbolic_shapes.py registers them when imported, so that
    torch._check imports nothing from fx)."""

    expect_true: Callable[[SymBool], bool] = _not_registered
    advise_is_size: Callable[[Any], None] = _not_registered
    advise_is_bounded: Callable[[Any, Any], None] = _not_registered


symbolic_shapes = _ShapeEnvChecks()

__all__ = ["_check", "_check_is_size", "_check_with"]

_DEFAULT = ("Expected cond to be True, but got False. (Could this error message be improved? "
            "If so, please report an enhancement request to PyTorch.)")


def _check_with(error_type: type[Exception], cond: bool | SymBool,
                message: Callable[[], Any] | None) -> None:
    """Raise `error_type(message())` unless `cond` (a symbolic one is expected true)."""
    if not isinstance(cond, (bool, SymBool)):
        from fake_torch._tensor import Tensor
        if isinstance(cond, Tensor):
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, "
                            "use torch._check_tensor_all() to assert that all elements are "
                            "true.")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if isinstance(cond, SymBool):
        if symbolic_shapes.expect_true(cond):
            return
    elif cond:
        return
    if not issubclass(error_type, Exception) or issubclass(error_type, Warning):
        raise AssertionError("error_type must be a subclass of Exception but not Warning, "
                             f"got {error_type}")
    if message is None:
        text = _DEFAULT
    else:
        if not callable(message):
            raise TypeError("message must be a callable")
        text = str(message())
    raise error_type(text)


def _check(cond: bool | SymBool, message: Callable[[], Any] | None = None) -> None:
    """Raise RuntimeError unless `cond` (torch's TORCH_CHECK)."""
    _check_with(RuntimeError, cond, message)


def _check_is_size(i: Any, message: Callable[[], Any] | None = None, *,
                   max: int | None = None) -> None:
    """Check `i >= 0` (and `i <= max`) and mark an unbacked `i` a size (deprecated in
    torch 2.13, with its FutureWarning)."""
    warnings.warn("_check_is_size will be removed in a future PyTorch release along with "
                  "guard_size_oblivious.     Use _check(i >= 0) instead.", FutureWarning,
                  stacklevel=2)
    _check(i >= 0, message)
    from fake_torch._sym import SymInt
    if isinstance(i, SymInt):
        symbolic_shapes.advise_is_size(i)
        if max is not None:
            _check(i <= max, message)
            symbolic_shapes.advise_is_bounded(i, max)
    elif max is not None:
        _check(i <= max, message)
