"""torch._higher_order_ops.auto_functionalize: `auto_functionalized`, the functional form of a
mutating custom op that AOTAutograd writes into graphs (`auto_functionalized(op, x=..., ...)`).

A call clones the arguments the op's schema marks written (`Tensor(a!) x`), runs the op on
the clones with the other arguments as given, and returns the op's output (a tuple's items
spread, else the one value, None included) followed by the clones' new values in schema
order: `auto_functionalized(rms_norm.default, result=out, ...)` -> `(None, new_result)`; the
arguments are left as they were. Under make_fx it is one node of its own (its op first, the
keyword arguments as given) and a `getitem` per item, as torch records it
(fake_torch.fx.experimental.proxy_tensor).

Differences from torch: the clones are `clone()` (preserve_format) where torch keeps the
strides of any layout; fake_torch's own graphs keep mutating ops in place (no
functionalization), so only code that calls it (vLLM's pattern functions) makes this node.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fake_torch import _torch_function
from fake_torch._library.schema import parse_schema
from fake_torch._ops import HigherOrderOperator, OpOverload
from fake_torch._tensor import Tensor

_BUILTIN_NAMESPACES = frozenset({"aten", "prim", "prims"})


def _schema_parts(op: OpOverload) -> tuple[list[tuple[str, str, bool]], str]:
    """An op's schema as [(type, name, written)] for its arguments (type with its alias
    annotation, e.g. "Tensor(a!)", "Tensor($0! -> )?", "(int, int)?") and the text of its
    returns."""
    schema = op._schema
    parsed = parse_schema(schema, frozenset(_base_names(schema)))
    return [(a.type, a.name, a.is_write) for a in parsed.arguments], parsed.returns


def _base_names(schema: str) -> list[str]:
    """Every word of a schema: an already-registered op's types need no second check."""
    return re.findall(r"\w+", schema)


def mutable_arg_names(op: OpOverload) -> list[str]:
    """The arguments `op`'s schema marks written (`Tensor(a!) x`, `Tensor! x`), in schema order
    (torch's get_mutable_args names)."""
    return [name for _, name, written in _schema_parts(op)[0] if written]


def can_auto_functionalize(op: Any) -> bool:
    """torch's rule: a non-builtin OpOverload that writes only Tensor / Tensor? / Tensor[]
    arguments and returns nothing aliased (None, or new tensors)."""
    if not isinstance(op, OpOverload) or op.namespace in _BUILTIN_NAMESPACES:
        return False
    parts, returns = _schema_parts(op)
    written = [kind for kind, _, is_written in parts if is_written]
    if not written or not all(kind.startswith("Tensor") for kind in written):
        return False
    return "(" not in returns.strip("()")  # "Tensor(a!)": a return aliasing an argument


def clone_kwargs(op: OpOverload, kwargs: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """`kwargs` with each argument `op` writes replaced by a clone (a list's items each,
    None kept), and those clones in schema order."""
    new_kwargs = dict(kwargs)
    clones: list[Any] = []
    for name in mutable_arg_names(op):
        value = kwargs[name]
        if isinstance(value, (list, tuple)):
            value = [v.clone() if isinstance(v, Tensor) else v for v in value]
        elif value is not None:
            value = value.clone()
        new_kwargs[name] = value
        clones.append(value)
    return new_kwargs, clones


def auto_functionalized_dense(run: Callable[..., Any], op: OpOverload,
                              kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """`run` (the op's kernel, or its fake impl) on clones of the arguments `op` writes:
    the op's output items, then the clones (torch's auto_functionalized_dense)."""
    new_kwargs, clones = clone_kwargs(op, kwargs)
    out = run(**new_kwargs)
    if isinstance(out, tuple):
        return (*out, *clones)
    return (out, *clones)


class AutoFunctionalized(HigherOrderOperator):
    """The higher-order operator `auto_functionalized` (one instance): see the module
    docstring."""

    def __init__(self) -> None:
        super().__init__("auto_functionalized", cacheable=True)

    def __call__(self, /, _mutable_op: OpOverload, **kwargs: Any) -> Any:
        if not can_auto_functionalize(_mutable_op):
            raise AssertionError(f"Cannot auto-functionalize op {_mutable_op}")
        if _torch_function.state.enabled:  # make_fx's mode records it as one node
            return _torch_function.handle(self, self._dense, (_mutable_op,), kwargs,
                                          relevant=tuple(kwargs.values()))
        return self._dense(_mutable_op, **kwargs)

    @staticmethod
    def _dense(_mutable_op: OpOverload, **kwargs: Any) -> tuple[Any, ...]:
        return auto_functionalized_dense(_mutable_op, _mutable_op, kwargs)


auto_functionalized = AutoFunctionalized()

__all__ = ["AutoFunctionalized", "auto_functionalized", "auto_functionalized_dense",
           "can_auto_functionalize"]
