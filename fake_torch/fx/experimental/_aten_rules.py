"""What make_fx records for the public ops torch does not dispatch as one aten op of their
name: torch's CompositeImplicit decompositions (reshape -> view or clone + _unsafe_view,
matmul -> expand/view/bmm/_unsafe_view, x[...] -> slice/select/unsqueeze/index, .to ->
_to_copy, rms_norm's CPU composite), argument orders aten has (embedding(weight, indices)),
and ops that record nothing when they change nothing (`.to` to the same dtype, `.contiguous()`
of a contiguous tensor).

A rule is `rule(tracer, args, kwargs) -> result`, given the public call's arguments; it runs
aten overloads with `tracer.call(name, overload, *args, **kwargs)` (each runs and is one node).
Here: views, shapes, dtype moves and arithmetic; `_aten_rules_nn` (matmul, linear, norms,
attention, conv) and `_aten_rules_index` (x[...], x[...] = v) add theirs to RULES.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from fake_torch import _dtype
from fake_torch._dynamo.symbolic import concrete
from fake_torch._kernels.expand import broadcast_shapes
from fake_torch._memory_format import contiguous_format
from fake_torch._tensor import Tensor

if TYPE_CHECKING:
    from fake_torch.fx.experimental.proxy_tensor import _Tracer

Rule = Callable[["_Tracer", tuple[Any, ...], dict[str, Any]], Any]
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn
    return register


def _sizes(args: Sequence[Any]) -> list[Any]:
    """`view(2, 3)` and `view((2, 3))` alike: [2, 3]."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def _viewable(x: Tensor, shape: list[Any]) -> bool:
    try:
        x.view(concrete(shape))
    except RuntimeError:
        return False
    return True


def reshape_to(tr: _Tracer, x: Tensor, shape: list[Any]) -> Tensor:
    """at::reshape: a view when strides allow, else a contiguous clone viewed."""
    if _viewable(x, shape):
        return tr.call("view", "default", x, shape)  # type: ignore[no-any-return]
    copy = tr.call("clone", "default", x, memory_format=contiguous_format)
    return tr.call("_unsafe_view", "default", copy, shape)  # type: ignore[no-any-return]


@rule("reshape")
def _reshape(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    shape = kwargs["shape"] if "shape" in kwargs else _sizes(args[1:])
    return reshape_to(tr, args[0], list(shape))


@rule("view")
def _view(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if len(args) == 2 and isinstance(args[1], _dtype.dtype):
        return tr.call("view", "dtype", args[0], args[1])
    return tr.call("view", "default", args[0], _sizes(args[1:] or (kwargs["size"],)))


@rule("flatten")
def _flatten(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x: Tensor = args[0]
    start = args[1] if len(args) > 1 else kwargs.get("start_dim", 0)
    end = args[2] if len(args) > 2 else kwargs.get("end_dim", -1)
    if x.dim() == 0:
        return reshape_to(tr, x, [1])
    start, end = start % x.dim(), end % x.dim()
    if start == end:
        return x
    shape = list(x.shape)
    return reshape_to(tr, x, [*shape[:start], math.prod(shape[start:end + 1]), *shape[end + 1:]])


@rule("expand", "permute", "repeat")
def _listed(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name = tr.current
    sizes = _sizes(args[1:]) if len(args) > 1 else list(next(iter(kwargs.values())))
    return tr.call(name, "default", args[0], sizes)


@rule("expand_as")
def _expand_as(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, other = args[0], args[1] if len(args) > 1 else kwargs["other"]
    return tr.call("expand", "default", x, list(other.shape))


@rule("T")
def _T(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x: Tensor = args[0]
    return tr.call("permute", "default", x, list(range(x.dim() - 1, -1, -1)))


@rule("mT")
def _mT(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return tr.call("transpose", "int", args[0], -2, -1)


@rule("narrow")
def _narrow(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, dim, start, length = args
    return tr.call("slice", "Tensor", x, dim, start, start + length)


@rule("chunk")
def _chunk(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x: Tensor = args[0]
    chunks = args[1] if len(args) > 1 else kwargs["chunks"]
    dim = args[2] if len(args) > 2 else kwargs.get("dim", 0)
    size = -(-x.shape[dim] // chunks)
    return tuple(tr.call("split", "Tensor", x, size, dim))


@rule("split")
def _split(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x = args[0]
    size = args[1] if len(args) > 1 else kwargs["split_size_or_sections"]
    dim = args[2] if len(args) > 2 else kwargs.get("dim", 0)
    if isinstance(size, int):
        return tuple(tr.call("split", "Tensor", x, size, dim))
    return tuple(tr.call("split_with_sizes", "default", x, list(size), dim))


@rule("empty")
def _empty(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    result = tr.run_public(args, kwargs)
    return tr.record_as("empty", "memory_format", (list(result.shape),),
                        {"dtype": result.dtype, "device": result.device}, result)


@rule("contiguous")
def _contiguous(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x: Tensor = args[0]
    if x.is_contiguous():
        return x
    return tr.call("clone", "default", x, memory_format=contiguous_format)


@rule("swapaxes", "swapdims")
def _swap(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return tr.call("transpose", "int", *args, *kwargs.values())


@rule("adjoint")
def _adjoint(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return tr.call("transpose", "int", args[0], -2, -1)


@rule("movedim", "moveaxis")
def _movedim(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    from fake_torch._kernels.shape import movedim_order

    x: Tensor = args[0]
    source, destination = [*args[1:], *kwargs.values()]
    return tr.call("permute", "default", x, movedim_order(x.dim(), source, destination))


@rule("fliplr", "flipud")
def _flip(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return tr.call("flip", "default", args[0], [1 if tr.current == "fliplr" else 0])


@rule("tile")
def _tile(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x: Tensor = args[0]
    dims = list(args[1] if len(args) > 1 else kwargs["dims"])
    dims = [1] * (x.dim() - len(dims)) + dims
    return tr.call("repeat", "default", x, dims)


@rule("concatenate", "concat")
def _concatenate(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return tr.call("cat", "default", *args, *kwargs.values())


@rule("positive", "resolve_conj", "resolve_neg", "real", "conj", "conj_physical")
def _same(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A real tensor's positive, resolve_conj, resolve_neg, real, conj, conj_physical:
    itself, nothing dispatched."""
    x: Tensor = args[0]
    if x.is_complex() or (tr.current == "positive" and x.dtype == _dtype.bool_):
        return tr.record_as(tr.current, "default", args, kwargs, tr.run_public(args, kwargs))
    return x


@rule("atleast_1d", "atleast_2d", "atleast_3d")
def _atleast(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    n = int(tr.current[-2])
    given = args[0] if len(args) == 1 else args
    items = given if isinstance(given, (tuple, list)) else (given,)
    out = []
    for x in items:
        if x.dim() >= n:
            out.append(x)
        elif n == 3 and x.dim() == 2:  # (a, b) -> (a, b, 1)
            out.append(tr.call("unsqueeze", "default", x, -1))
        elif n == 3 and x.dim() == 1:  # (a,) -> (1, a, 1)
            out.append(tr.call("unsqueeze", "default",
                               tr.call("unsqueeze", "default", x, 0), -1))
        else:
            out.append(reshape_to(tr, x, [*([1] * (n - x.dim())), *x.shape]))
    return out[0] if not isinstance(given, (tuple, list)) else tuple(out)


@rule("hstack", "vstack", "dstack")
def _stack_dims(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """atleast_{1,2,3}d of each, then one cat (hstack of 1-d tensors along dim 0)."""
    tensors = list(args[0] if args else kwargs["tensors"])
    n, dim = {"hstack": (1, 1), "vstack": (2, 0), "dstack": (3, 2)}[tr.current]
    saved = tr.current
    tr.current = f"atleast_{n}d"
    try:
        made = list(_atleast(tr, (tuple(tensors),), {}))
    finally:
        tr.current = saved
    if tr.current == "hstack" and made and made[0].dim() == 1:
        dim = 0
    return tr.call("cat", "default", made, dim)


@rule("broadcast_tensors")
def _broadcast_tensors(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    shape = list(broadcast_shapes(*(tuple(t.shape) for t in args)))
    return tuple(t if list(t.shape) == shape else tr.call("expand", "default", t, shape)
                 for t in args)


@rule("square", "square_")
def _square(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if tr.current == "square_":
        return tr.call("pow_", "Scalar", args[0], 2)
    return tr.call("pow", "Tensor_Scalar", args[0], 2)


@rule("true_divide")
def _true_divide(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return tr.call("div", "Tensor", *args, *kwargs.values())


@rule("argsort")
def _argsort(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return tr.call("sort", "default", *args, **kwargs)[1]


# --- dtype and device moves ---------------------------------------------------------------------

def to_copy(tr: _Tracer, x: Tensor, result: Tensor) -> Tensor:
    """`result` is what the public call made: nothing recorded when it is `x` itself."""
    if result is x:
        return x
    kwargs: dict[str, Any] = {}
    if result.dtype != x.dtype:
        kwargs["dtype"] = result.dtype
    if result.device != x.device:
        kwargs["device"] = result.device
    return tr.call("_to_copy", "default", x, **kwargs)  # type: ignore[no-any-return]


@rule("to", "type", "type_as", "float", "half", "double", "bfloat16", "int", "long", "bool",
      "short", "char", "byte", "cuda", "cpu")
def _to(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    result = tr.run_public(args, kwargs)
    if not isinstance(result, Tensor):  # x.type() -> 'torch.FloatTensor'
        return result
    return to_copy(tr, args[0], result)


# --- arithmetic spelled differently in aten -----------------------------------------------------

@rule("__rsub__")
def _rsub(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, other = args
    return tr.call("rsub", "Tensor" if isinstance(other, Tensor) else "Scalar", x, other)


@rule("__radd__", "__rmul__")
def _reflected(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, other = args
    return tr.call("add" if tr.current == "__radd__" else "mul", "Tensor", x, other)


@rule("softmax", "log_softmax")
def _softmax(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x: Tensor = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None:  # torch's legacy implicit dim (it warns)
        dim = 0 if x.dim() in (0, 1, 3) else 1
    dtype = args[2] if len(args) > 2 and not isinstance(args[2], int) else kwargs.get("dtype")
    if dtype is not None and dtype != x.dtype:
        x = tr.call("_to_copy", "default", x, dtype=dtype)
    return tr.call(f"_{tr.current}", "default", x, dim, False)


@rule("where")
def _where(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if len(args) == 1:
        return tr.run_public(args, kwargs)
    cond, *values = args
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), _dtype.float32)
    made = [v if isinstance(v, Tensor) else
            tr.call("scalar_tensor", "default", v, dtype=dtype, device=cond.device)
            for v in values]
    return tr.call("where", "self", cond, *made)
