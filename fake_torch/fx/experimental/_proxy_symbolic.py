"""make_fx's symbolic tracing helpers: the public call an aten op without a public op of its
name equals (whose output rule describes it: slice as `x[...]`, _unsafe_view as view), and
the symbols a node's SymInt arguments are made of, in the order torch reads them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch import _opdef
from fake_torch._sym import SymInt
from fake_torch._tensor import Tensor


def _method(name: str) -> _opdef.OpDef:
    return _opdef.tensor_methods()[name][0]


PublicForm = tuple[_opdef.OpDef, tuple[Any, ...], dict[str, Any]]


def _slice_form(x: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                step: Any = 1) -> PublicForm:
    index = (*[slice(None)] * dim, slice(start, None if end == 2 ** 63 - 1 else end, step))
    return _method("__getitem__"), (x, index), {}


def _index_form(x: Tensor, indices: list[Any]) -> PublicForm:
    index = tuple(slice(None) if i is None else i for i in indices)
    return _method("__getitem__"), (x, index), {}


def _to_copy_form(x: Tensor, **kwargs: Any) -> PublicForm:
    return _method("to"), (x,), {k: v for k, v in kwargs.items() if k in ("dtype", "device")}


# the aten ops no public op is named after, as the public call whose output rule they share
PUBLIC_FORM: dict[str, Callable[..., PublicForm]] = {
    "slice": _slice_form,
    "index": _index_form,
    "_to_copy": _to_copy_form,
    "_unsafe_view": lambda x, size: (_method("view"), (x, size), {}),
    "_softmax": lambda x, dim, half: (_method("softmax"), (x, dim), {}),
    "_log_softmax": lambda x, dim, half: (_method("log_softmax"), (x, dim), {}),
}


def symints(value: Any) -> list[SymInt]:
    if isinstance(value, SymInt):
        return [value]
    if isinstance(value, (tuple, list)):
        return [n for v in value for n in symints(v)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in symints(v)]
    return []


def preorder_symbols(expr: Any) -> list[Any]:
    import sympy

    return [e for e in sympy.preorder_traversal(expr) if isinstance(e, sympy.Symbol)]
