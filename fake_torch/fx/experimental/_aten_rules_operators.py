"""make_fx's rules for Tensor's Python operators (`x & y`, `2 ** x`, `y @ x`, ...): the aten
op each dispatches, as torch's `Tensor.__and__` and friends call it (a reflected operator
calls the op with the operands swapped: `x.__rpow__(2)` is `pow(2, x)`). See _aten_rules for
what a rule is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fake_torch.fx.experimental import _aten_overloads
from fake_torch.fx.experimental._aten_rules import rule
from fake_torch.fx.experimental._aten_rules_nn import matmul

if TYPE_CHECKING:
    from fake_torch.fx.experimental.proxy_tensor import _Tracer

# operator -> (the aten op, reflected: called as op(other, self))
_OPERATORS: dict[str, tuple[str, bool]] = {
    "__and__": ("bitwise_and", False), "__rand__": ("bitwise_and", False),
    "__or__": ("bitwise_or", False), "__ror__": ("bitwise_or", False),
    "__xor__": ("bitwise_xor", False), "__rxor__": ("bitwise_xor", False),
    "__iand__": ("bitwise_and_", False), "__ior__": ("bitwise_or_", False),
    "__ixor__": ("bitwise_xor_", False),
    "__lshift__": ("__lshift__", False), "__rshift__": ("__rshift__", False),
    "__ilshift__": ("__ilshift__", False), "__irshift__": ("__irshift__", False),
    "__rlshift__": ("bitwise_left_shift", True), "__rrshift__": ("bitwise_right_shift", True),
    "__eq__": ("eq", False), "__ne__": ("ne", False), "__lt__": ("lt", False),
    "__le__": ("le", False), "__gt__": ("gt", False), "__ge__": ("ge", False),
    "__floordiv__": ("floor_divide", False), "__rfloordiv__": ("floor_divide", True),
    "__ifloordiv__": ("floor_divide_", False),
    "__mod__": ("remainder", False), "__rmod__": ("remainder", True),
    "__imod__": ("remainder_", False),
    "__rpow__": ("pow", True),
}


@rule(*_OPERATORS)
def _operator(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name, reflected = _OPERATORS[tr.current]
    x, other = args
    operands = (other, x) if reflected else (x, other)
    tr.run_public(args, kwargs)  # its checks (dtypes an operator refuses)
    return tr.call(name, _aten_overloads.choose(name, operands, {}), *operands)


@rule("__invert__")
def _invert(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    tr.run_public(args, kwargs)  # its dtype check
    return tr.call("bitwise_not", "default", args[0])


@rule("__rmatmul__")
def _rmatmul(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return matmul(tr, (args[1], args[0]), {})


@rule("__rtruediv__")
def _rtruediv(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """`2 / x`: torch's Python operator is reciprocal(x) * 2."""
    x, other = args
    return tr.call("mul", "Tensor", tr.call("reciprocal", "default", x), other)
