"""torch.fx.experimental.symbolic_shapes: questions about possibly-symbolic sizes.

fake_torch's sizes are plain ints, except the numbers `.item()` returns while tracing with
captured scalar outputs (SymNumber, torch's unbacked SymInt "u0"). Dynamic dims are traced at
their concrete sizes and re-specialised per size (see _dynamo/convert_frame.py), so they are
ints here. A ShapeEnv (torch's store of symbols and their guards) is not emulated.
"""

from __future__ import annotations

from typing import Any

from fake_torch._dynamo.sym_number import SymNumber


def is_symbolic(val: Any) -> bool:
    """True for a symbolic number (a SymNumber), False for a plain int, float or bool."""
    return isinstance(val, SymNumber)


def statically_known_true(x: Any) -> bool:
    """True when `x` is known true without adding a guard: a plain bool that is True; a
    symbolic expression is not known."""
    if isinstance(x, SymNumber):
        return False
    if not isinstance(x, bool):
        raise AssertionError(f"Expected bool, got {type(x)}")
    return x


def guard_size_oblivious(expr: Any) -> bool:
    """`bool(expr)`, as torch evaluates it for a size expression."""
    return bool(expr)


class ShapeEnv:
    """torch's store of shape symbols and their guards; fake_torch keeps no symbols."""

    def __init__(self, *, should_record_events: bool | None = None,
                 tracked_fakes: list[Any] | None = None, **kwargs: Any) -> None:
        raise NotImplementedError(
            "torch.fx.experimental.symbolic_shapes.ShapeEnv is not emulated by fake_torch: "
            "its dynamic dims are re-specialised per concrete size, not kept as symbols")


__all__ = ["ShapeEnv", "guard_size_oblivious", "is_symbolic", "statically_known_true"]
