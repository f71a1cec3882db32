"""torch._higher_order_ops.auto_functionalize: `auto_functionalized`, the functional form of a
mutating custom op that AOTAutograd writes into graphs (`auto_functionalized(op, x=..., ...)`).

fake_torch's graphs keep mutating ops as they are (no functionalization), so no graph holds
this operator: it exists as the object passes compare node targets with, and calling it raises.
"""

from __future__ import annotations

from typing import Any

from fake_torch._ops import HigherOrderOperator


class AutoFunctionalized(HigherOrderOperator):
    """The higher-order operator `auto_functionalized` (one instance)."""

    def __init__(self) -> None:
        super().__init__("auto_functionalized", cacheable=True)

    def __call__(self, _mutable_op: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "torch._higher_order_ops.auto_functionalize.auto_functionalized is not emulated by "
            "fake_torch: its graphs are not functionalized, mutating ops stay in place")


auto_functionalized = AutoFunctionalized()

__all__ = ["AutoFunctionalized", "auto_functionalized"]
