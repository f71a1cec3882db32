"""torch._higher_order_ops: operators that take functions or ops (auto_functionalized)."""

from fake_torch._higher_order_ops.auto_functionalize import auto_functionalized

__all__ = ["auto_functionalized"]
