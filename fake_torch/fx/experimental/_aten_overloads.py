"""The aten OpOverloads make_fx records (`torch.ops.aten.add.Tensor`), and which one a call is.

`overload(target, name, overload)` gives `torch.ops.aten.<name>.<overload>`, making the
overload on first use (fake_torch's aten packets start with `.default` only). What it runs:
the public op of that name (`aten.add.Tensor(x, y)` runs torch.add), or, for the aten ops no
public op is named after (`_unsafe_view`, `_to_copy`, `slice`, ...), a small kernel here made
of public ops. `choose(name, args, kwargs)` picks the overload torch's argument parser picks
for a public call: a Python number given to add/sub/mul/div is wrapped into a tensor
(`.Tensor`), the comparisons and masked_fill have `.Scalar` overloads, reductions with a dim
take `.dim`/`.dim_IntList`, and so on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from fake_torch import _dtype, _factories, _namespace, _ops
from fake_torch._opdef import aten_callable, aten_names
from fake_torch._tensor import Tensor
from fake_torch.nn import functional

Kernel = Callable[..., Any]


def _slice(x: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
           step: int = 1) -> Tensor:
    index: list[Any] = [slice(None)] * x.dim()
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


def _index(x: Tensor, indices: list[Tensor | None]) -> Tensor:
    return x[tuple(slice(None) if i is None else i for i in indices)]


def _to_copy(x: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
             pin_memory: Any = None, non_blocking: bool = False,
             memory_format: Any = None) -> Tensor:
    return x.to(device=device if device is not None else x.device,
                dtype=dtype if dtype is not None else x.dtype, non_blocking=non_blocking,
                copy=True)


def _native_layer_norm(x: Tensor, normalized_shape: list[int], weight: Tensor | None,
                       bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(out, mean, rstd); mean and rstd of the size of `x` with the normalized dims 1."""
    dims = [x.dim() - 1 - i for i in range(len(normalized_shape))]
    out = functional.layer_norm(x, normalized_shape, weight, bias, eps)
    xf = x.float()
    mean = xf.mean(dims, keepdim=True)
    rstd = (xf.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return out, mean, rstd


def _flash_cpu(q: Tensor, k: Tensor, v: Tensor, dropout_p: float = 0.0,
               is_causal: bool = False, *, attn_mask: Tensor | None = None,
               scale: float | None = None) -> tuple[Tensor, Tensor]:
    """(out, logsumexp): out (B, H, L, Ev), logsumexp (B, H, L) in float32."""
    out = functional.scaled_dot_product_attention(
        q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale)
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q.float() @ k.float().transpose(-2, -1)) * s  # (B, H, L, S)
    if is_causal:
        L, S = scores.shape[-2], scores.shape[-1]
        keep = _namespace.torch().ones(L, S, dtype=_dtype.bool_, device=q.device).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    if attn_mask is not None:
        scores = scores + attn_mask.float()
    return out, scores.logsumexp(-1)


def _embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
               scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    return functional.embedding(indices, weight)


def _convolution(x: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int],
                 padding: list[int], dilation: list[int], transposed: bool,
                 output_padding: list[int], groups: int) -> Tensor:
    if transposed:
        raise NotImplementedError("torch.ops.aten.convolution(transposed=True) is not emulated "
                                  "by fake_torch")
    conv = getattr(functional, f"conv{x.dim() - 2}d")
    return conv(x, weight, bias, stride, padding, dilation, groups)  # type: ignore[no-any-return]


def _softmax(x: Tensor, dim: int, half_to_float: bool) -> Tensor:
    return x.softmax(dim)


def _log_softmax(x: Tensor, dim: int, half_to_float: bool) -> Tensor:
    return x.log_softmax(dim)


def _sym_size(x: Tensor, dim: int) -> Any:
    return x.size(dim)


# the aten ops no public op of that name runs
_KERNELS: dict[str, Kernel] = {
    "_unsafe_view": lambda x, size: x.reshape(size),
    "_to_copy": _to_copy,
    "slice": _slice,
    "index": _index,
    "_softmax": _softmax,
    "_log_softmax": _log_softmax,
    "native_layer_norm": _native_layer_norm,
    "_scaled_dot_product_flash_attention_for_cpu": _flash_cpu,
    "embedding": _embedding,
    "empty": lambda size, **kw: _factories.empty(size, **kw),
    "sym_size": _sym_size,
    "convolution": _convolution,
    "lift_fresh_copy": lambda x: x.clone(),
    "alias": lambda x: x.view(x.shape),
    "log_sigmoid_forward": lambda x: (functional.logsigmoid(x),
                                      _factories.zeros_like(x)),  # (out, the CPU buffer)
    "rsub": lambda x, other, alpha=1: other - alpha * x,
}


def overload(name: str, overload_name: str = "default",
             public: Kernel | None = None) -> _ops.OpOverload:
    """torch.ops.aten.<name>.<overload_name>, made on first use; `public`: what it runs when
    no op definition is named `name` (a composite recorded as one op: hstack)."""
    packets = _ops.ops.namespace("aten")._packets
    kernel = _KERNELS.get(name) or aten_callable(name) or public
    packet = packets.get(name)
    if packet is None:
        if kernel is None and name not in aten_names():
            raise NotImplementedError(f"torch.ops.aten.{name} is not emulated by fake_torch")
        packet = _ops._aten_packet(name) if name in aten_names() else \
            _ops.OpOverloadPacket("aten", name, "(...) -> ...", kernel)  # type: ignore[arg-type]
        packets[name] = packet
    found = packet._overloads.get(overload_name)
    if found is None:
        run = kernel if kernel is not None else packet._first()._kernel
        found = packet.add_overload(overload_name, "(...) -> ...", run)
    elif name in _KERNELS and overload_name == "default" and found._kernel is not _KERNELS[name]:
        found._kernel = _KERNELS[name]  # the packet made before this module: it refused
    return found


# the overload names make_fx chooses: what `torch.ops.aten.<name>.<overload>` may name
_OVERLOADS = frozenset({"default", "Tensor", "Scalar", "Tensor_mode", "Tensor_Scalar",
                        "Tensor_Tensor", "dim", "dims", "dim_IntList", "dim_int", "correction",
                        "dtype", "int", "memory_format", "self", "src", "self_Tensor", "start",
                        "start_step", "m"})


def _on_access(name: str, overload_name: str) -> _ops.OpOverload | None:
    """torch.ops.aten.<name>.<overload_name> on first access (None: not one make_fx knows)."""
    if overload_name not in _OVERLOADS:
        return None
    if name not in _KERNELS and name not in aten_names():
        return None
    return overload(name, overload_name)


_ops.set_aten_overload_hook(_on_access)


# --- which overload a public call is ------------------------------------------------------------

def _number(x: Any) -> bool:
    return isinstance(x, (int, float, complex, bool)) and not isinstance(x, Tensor)


# a Python number `other` is wrapped into a tensor by torch's parser: `.Tensor` either way
_WRAPPED = frozenset({"add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_",
                      "true_divide", "multiply", "subtract"})
# both overloads are bound: a number picks `.Scalar`
_SCALAR = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "eq_", "ne_", "lt_", "le_", "gt_", "ge_",
                     "masked_fill", "masked_fill_", "fill_", "remainder", "fmod", "remainder_",
                     "fmod_", "bitwise_and", "bitwise_or", "bitwise_xor",
                     "rsub", "xlogy", "index_fill", "index_fill_", "lerp", "lerp_"})
_DIMMED = {"mean": "dim", "sum": "dim_IntList", "max": "dim", "min": "dim", "prod": "dim_int",
           "std": "correction", "var": "correction", "all": "dim", "any": "dim",
           "argmax": "default", "argmin": "default", "amax": "default", "amin": "default",
           "logsumexp": "default", "nansum": "default"}
_FIXED = {"transpose": "int", "select": "int", "unbind": "int", "split": "Tensor",
          "empty": "memory_format", "where": "self", "scatter": "src", "scatter_": "src",
          "gather": "default", "index_select": "default", "topk": "default",
          "sort": "default", "cumsum": "default", "repeat_interleave": "self_Tensor"}


def choose(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The overload of aten `name` that torch dispatches this public call to."""
    rest = list(args[1:]) + [v for k, v in kwargs.items() if k in ("other", "value", "exponent")]
    if name in _WRAPPED:
        if name.startswith("div") and kwargs.get("rounding_mode") is not None:
            return "Tensor_mode"
        return "Tensor"
    if name in ("masked_fill", "masked_fill_", "index_fill", "index_fill_"):
        value = args[-1] if len(args) > 2 else kwargs.get("value")
        return "Scalar" if _number(value) else "Tensor"
    if name in _SCALAR:
        return "Scalar" if rest and _number(rest[0]) else "Tensor"
    if name in ("pow", "pow_"):
        if args and _number(args[0]):
            return "Scalar"
        return "Tensor_Scalar" if rest and _number(rest[0]) else "Tensor_Tensor"
    if name in ("clamp_min", "clamp_max", "clamp_min_", "clamp_max_", "floor_divide",
                "bitwise_left_shift", "bitwise_right_shift"):
        scalar = "Scalar" if name == "floor_divide" else "Tensor_Scalar"
        tensor = "default" if name == "floor_divide" else "Tensor"
        if name.startswith("clamp"):
            scalar = "default"
        return scalar if rest and _number(rest[0]) else tensor
    if name in ("var", "std", "var_mean", "std_mean"):
        return "correction"
    if name == "eye":
        return "m" if len([a for a in args if _number(a)]) == 2 else "default"
    if name == "isin":
        elements = args[0] if args else kwargs.get("elements")
        test = args[1] if len(args) > 1 else kwargs.get("test_elements")
        return "Scalar_Tensor" if _number(elements) else \
            "Tensor_Scalar" if _number(test) else "Tensor_Tensor"
    if name in ("clamp", "clamp_"):
        bounds = [*args[1:], kwargs.get("min"), kwargs.get("max")]
        return "Tensor" if any(isinstance(b, Tensor) for b in bounds) else "default"
    if name == "squeeze":
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        return "default" if dim is None else "dims" if isinstance(dim, (tuple, list)) else "dim"
    if name == "arange":
        numbers = [a for a in args if _number(a)]
        return {1: "default", 2: "start"}.get(len(numbers), "start_step")
    if name in _DIMMED:
        has_dim = (len(args) > 1 and not isinstance(args[1], Tensor)) or "dim" in kwargs
        return _DIMMED[name] if has_dim else "default"
    if name == "view" and len(args) == 2 and isinstance(args[1], _dtype.dtype):
        return "dtype"
    return _FIXED.get(name, "default")
