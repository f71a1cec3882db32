"""make_fx's rules for the nn ops torch's CPU build dispatches its own way: matmul
(at::native::_matmul_impl), linear (at::linear), rms_norm's composite, layer_norm ->
native_layer_norm, sdpa -> the CPU flash kernel, embedding's (weight, indices), conv ->
convolution. See _aten_rules for what a rule is."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fake_torch import _dtype
from fake_torch._kernels.expand import broadcast_shapes
from fake_torch._tensor import Tensor
from fake_torch.fx.experimental._aten_rules import reshape_to, rule

if TYPE_CHECKING:
    from fake_torch.fx.experimental.proxy_tensor import _Tracer


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
    batch = list(broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
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
    opmath = _dtype.float64 if x.dtype == _dtype.float64 else _dtype.float32
    if eps is None:
        eps = _dtype.finfo(opmath).eps
    if opmath == _dtype.float32:  # torch's kernel takes eps as its opmath scalar
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
    if mask is not None and mask.dtype == _dtype.bool_:
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


@rule("max_pool2d")
def _max_pool2d(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """max_pool2d_with_indices and its two items, whether or not the indices are wanted;
    the arguments given (sizes as pairs), as torch passes them."""
    names = ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
             "return_indices")
    given = dict(zip(names, args, strict=False)) | kwargs
    wanted = bool(given.pop("return_indices", False))
    if given.get("stride") is None:
        given.pop("stride", None)
    pairs = ("kernel_size", "stride", "padding", "dilation")
    passed = [[v, v] if k in pairs and isinstance(v, int) else
              list(v) if k in pairs else v for k, v in given.items()]
    out = tr.call("max_pool2d_with_indices", "default", *passed)
    return tuple(out) if wanted else out[0]


@rule("logsigmoid")
def _logsigmoid(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return tr.call("log_sigmoid_forward", "default", args[0])[0]


@rule("relu6")
def _relu6(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    inplace = bool(args[1] if len(args) > 1 else kwargs.get("inplace", False))
    return tr.call("hardtanh_" if inplace else "hardtanh", "default", args[0], 0, 6)
