"""What make_fx records for the public ops torch does not dispatch as one aten op of their
name: torch's CompositeImplicit decompositions (reshape -> view or clone + _unsafe_view,
matmul -> expand/view/bmm/_unsafe_view, x[...] -> slice/select/unsqueeze/index, .to ->
_to_copy, rms_norm's CPU composite), argument orders aten has (embedding(weight, indices)),
and ops that record nothing when they change nothing (`.to` to the same dtype, `.contiguous()`
of a contiguous tensor).

A rule is `rule(tracer, args, kwargs) -> result`, given the public call's arguments; it runs
aten overloads with `tracer.call(name, overload, *args, **kwargs)` (each runs and is one node).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import fake_torch
from fake_torch._dynamo.symbolic import concrete
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
    if len(args) == 2 and isinstance(args[1], fake_torch.dtype):
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


@rule("positive", "resolve_conj", "resolve_neg", "real", "conj")
def _same(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A real tensor's positive, resolve_conj, resolve_neg, real, conj: itself, nothing
    dispatched."""
    x: Tensor = args[0]
    if x.is_complex() or (tr.current == "positive" and x.dtype == fake_torch.bool):
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
    shape = list(fake_torch.broadcast_shapes(*(tuple(t.shape) for t in args)))
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


@rule("conv1d", "conv2d", "conv3d")
def _conv(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """F.convNd -> aten.convolution (as torch's make_fx records it on the CPU)."""
    names = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
    given = dict(zip(names, args, strict=False)) | kwargs
    n = int(tr.current[-2])

    def spread(v: Any) -> list[Any]:
        return [v] * n if isinstance(v, int) else list(v)
    padding = given.get("padding", 0)
    if isinstance(padding, str):
        return tr.record_as("convolution", "default", args, kwargs, tr.run_public(args, kwargs))
    return tr.call("convolution", "default", given["input"], given["weight"], given.get("bias"),
                   spread(given.get("stride", 1)), spread(padding),
                   spread(given.get("dilation", 1)), False, [0] * n, given.get("groups", 1))


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
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), fake_torch.float32)
    made = [v if isinstance(v, Tensor) else
            tr.call("scalar_tensor", "default", v, dtype=dtype, device=cond.device)
            for v in values]
    return tr.call("where", "self", cond, *made)


@rule("embedding")
def _embedding(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    indices, weight = args[:2]
    return tr.call("embedding", "default", weight, indices)


# --- matmul: at::native::_matmul_impl -----------------------------------------------------------

@rule("matmul", "__matmul__")
def _matmul(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a, b = args[0], args[1] if len(args) > 1 else kwargs["other"]
    d1, d2 = a.dim(), b.dim()
    if d1 == 1 and d2 == 1:
        return tr.call("dot", "default", a, b)
    if d1 == 2 and d2 == 1:
        return tr.call("mv", "default", a, b)
    if d1 == 1 and d2 == 2:
        row = tr.call("unsqueeze", "default", a, 0)
        return tr.call("squeeze", "dim", tr.call("mm", "default", row, b), 0)
    if d1 == 2 and d2 == 2:
        return tr.call("mm", "default", a, b)
    sa, sb = tr.sizes(a), tr.sizes(b)  # SymInts where the trace is symbolic
    if d1 >= 3 and d2 in (1, 2):  # fold a's batch into its rows: one mm
        flat = reshape_to(tr, a, [math.prod(sa[:-1]), sa[-1]])
        if d2 == 1:
            out = tr.call("mv", "default", flat, b)
            return tr.call("_unsafe_view", "default", out, sa[:-1])
        out = tr.call("mm", "default", flat, b)
        return tr.call("_unsafe_view", "default", out, [*sa[:-1], sb[-1]])
    # broadcast the batch dims, one bmm over their product
    n = sa[-2] if d1 > 1 else 1
    m = sa[-1]
    p = sb[-1] if d2 > 1 else 1
    batch = list(fake_torch.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
    count = math.prod(batch)
    a3 = a if d1 > 1 else tr.call("unsqueeze", "default", a, 0)
    b3 = b if d2 > 1 else tr.call("unsqueeze", "default", b, -1)
    a3 = reshape_to(tr, tr.call("expand", "default", a3, [*batch, n, m]), [count, n, m])
    b3 = reshape_to(tr, tr.call("expand", "default", b3, [*batch, m, p]), [count, m, p])
    out = tr.call("bmm", "default", a3, b3)
    shape = [*batch, *([n] if d1 > 1 else []), *([p] if d2 > 1 else [])]
    # torch's symbolic matmul (a Python decomposition) views where its C++ one _unsafe_views
    return tr.call("view" if tr.symbolic is not None else "_unsafe_view", "default", out, shape)


@rule("linear")
def _linear(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """at::linear: addmm for a 2-d input with a bias, a 3-d contiguous one folded into its
    rows around one addmm, else matmul then the bias added in place."""
    names = ("input", "weight", "bias")
    given = dict(zip(names, args, strict=False)) | kwargs
    x, weight, bias = given["input"], given["weight"], given.get("bias")
    if x.dim() == 2 and bias is not None:
        return tr.call("addmm", "default", bias, x, tr.call("t", "default", weight))
    if bias is not None and x.dim() == 3 and x.is_contiguous():
        n0, n1, k = tr.sizes(x)
        flat = tr.call("view", "default", x, [n0 * n1, k])
        out = tr.call("addmm", "default", bias, flat, tr.call("t", "default", weight))
        return tr.call("view", "default", out, [n0, n1, tr.sizes(out)[1]])
    out = _matmul(tr, (x, tr.call("t", "default", weight)), {})
    if bias is not None:
        out = tr.call("add_", "Tensor", out, bias)
    return out


# --- normalisation and attention as torch's CPU build dispatches them ----------------------------

def _normalized(tr: _Tracer, x: Tensor, shape: Any) -> None:
    """The trailing sizes equal normalized_shape: with symbolic sizes, the guard torch's
    check records (a symbol given as an int is specialised to it)."""
    sizes = [shape] if isinstance(shape, int) else list(shape)
    got = list(tr.example(x).shape)[len(list(x.shape)) - len(sizes):]
    if len(sizes) > len(got) or any(bool(g != s) for g, s in zip(got, sizes, strict=True)):
        tr.run_public((x, sizes), {})  # the op's own error


@rule("rms_norm")
def _rms_norm(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The composite torch runs on CPU: [_to_copy] pow, mean, add_, rsqrt, mul, [mul]."""
    names = ("input", "normalized_shape", "weight", "eps")
    given = dict(zip(names, args, strict=False)) | kwargs
    x: Tensor = given["input"]
    shape = given["normalized_shape"]
    n = 1 if isinstance(shape, int) else len(shape)
    _normalized(tr, x, shape)
    weight, eps = given.get("weight"), given.get("eps")
    opmath = fake_torch.float64 if x.dtype == fake_torch.float64 else fake_torch.float32
    if eps is None:
        eps = fake_torch.finfo(opmath).eps
    if opmath == fake_torch.float32:  # torch's kernel takes eps as its opmath scalar
        eps = float(np.float32(eps))
    xf = x if x.dtype == opmath else tr.call("_to_copy", "default", x, dtype=opmath)
    dims = [x.dim() - 1 - i for i in range(n)]
    sq = tr.call("pow", "Tensor_Scalar", xf, 2)
    mean = tr.call("mean", "dim", sq, dims, True)
    rstd = tr.call("rsqrt", "default", tr.call("add_", "Scalar", mean, eps))
    out = tr.call("mul", "Tensor", xf, rstd)
    if weight is not None:
        out = tr.call("mul", "Tensor", out, weight)
    if out.dtype != x.dtype:
        out = tr.call("_to_copy", "default", out, dtype=x.dtype)
    return out


@rule("layer_norm")
def _layer_norm(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    names = ("input", "normalized_shape", "weight", "bias", "eps")
    given = dict(zip(names, args, strict=False)) | kwargs
    shape = given["normalized_shape"]
    shape = [shape] if isinstance(shape, int) else list(shape)
    _normalized(tr, given["input"], shape)
    out = tr.call("native_layer_norm", "default", given["input"], shape, given.get("weight"),
                  given.get("bias"), given.get("eps", 1e-5))
    return out[0]


@rule("scaled_dot_product_attention")
def _sdpa(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """CPU: a bool mask becomes an additive float one (where), then the flash kernel."""
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
             "enable_gqa")
    given = dict(zip(names, args, strict=False)) | kwargs
    q, k, v = given["query"], given["key"], given["value"]
    mask = given.get("attn_mask")
    if mask is not None and mask.dtype == fake_torch.bool:
        zero = tr.call("scalar_tensor", "default", 0.0, dtype=q.dtype, device=q.device)
        ninf = tr.call("scalar_tensor", "default", float("-inf"), dtype=q.dtype,
                       device=q.device)
        mask = tr.call("where", "self", mask, zero, ninf)
    extra: dict[str, Any] = {}
    if mask is not None:
        extra["attn_mask"] = mask
    if given.get("scale") is not None:
        extra["scale"] = given["scale"]
    out = tr.call("_scaled_dot_product_flash_attention_for_cpu", "default", q, k, v,
                  given.get("dropout_p", 0.0), given.get("is_causal", False), **extra)
    return out[0]


# --- indexing: torch's applySlicing, then index / index_put_ ------------------------------------

def _basic_index(tr: _Tracer, x: Tensor, index: Any) -> tuple[Tensor, list[Any]]:
    """Slices, ints, None and Ellipsis as views; the tensors left for advanced indexing, by
    the dim they index (None elsewhere)."""
    items = list(index) if isinstance(index, tuple) else [index]
    dim = 0
    advanced: list[Any] = []
    for i, item in enumerate(items):
        if item is Ellipsis:  # the dims the items after it do not index
            later = sum(1 for it in items[i + 1:] if it is not None and it is not Ellipsis)
            skip = max(x.dim() - dim - later, 0)
            dim += skip
            advanced.extend([None] * skip)
        elif item is None:
            x = tr.call("unsqueeze", "default", x, dim)
            dim += 1
            advanced.append(None)
        elif isinstance(item, int) and not isinstance(item, bool):
            x = tr.call("select", "int", x, dim, item)
        elif isinstance(item, slice):
            size = x.shape[dim]
            start, stop, step = item.start, item.stop, item.step
            # torch skips a slice that keeps every element; not where sizes are symbolic
            full = start in (None, 0) and step in (None, 1) and (stop is None or stop >= size) \
                and tr.symbolic is None
            if not full:
                x = tr.call("slice", "Tensor", x, dim, 0 if start is None else start,
                            2 ** 63 - 1 if stop is None else stop,
                            *(() if step in (None, 1) else (step,)))
            dim += 1
            advanced.append(None)
        elif isinstance(item, Tensor):
            dim += 1
            advanced.append(item)
        else:
            raise NotImplementedError(f"make_fx: indexing with {type(item).__name__} is not "
                                      "emulated by fake_torch")
    return x, advanced


@rule("__getitem__")
def _getitem(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, index = args
    if isinstance(index, Tensor) and index.dtype == fake_torch.bool:
        return tr.call("index", "Tensor", x, [index])
    x, advanced = _basic_index(tr, x, index)
    if any(a is not None for a in advanced):
        while advanced and advanced[-1] is None:
            advanced.pop()
        return tr.call("index", "Tensor", x, advanced)
    if x is args[0]:  # x[...] / x[:]: torch still makes a new view
        return tr.call("alias", "default", x)
    return x


@rule("__setitem__")
def _setitem(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, index, value = args
    target, advanced = _basic_index(tr, x, index)
    if any(a is not None for a in advanced):
        while advanced and advanced[-1] is None:
            advanced.pop()
        if not isinstance(value, Tensor):
            value = tr.call("scalar_tensor", "default", value, dtype=x.dtype, device=x.device)
        tr.call("index_put_", "default", target, advanced, value)
    elif isinstance(value, Tensor):
        tr.call("copy_", "default", target, value)
    else:
        tr.call("fill_", "Scalar", target, value)
    return None
