"""torch._inductor.decomposition: the decompositions inductor traces with (`fwd_only`).

`select_decomp_table()` maps aten OpOverloads to Python functions written with public ops;
make_fx calls one instead of recording its op, so the ops it calls are recorded (as torch's
make_fx does with a decomposition table). Only the decompositions of the ops common in LLM
code are here (torch's table has several hundred): t, transpose -> permute, _unsafe_view -> view,
_softmax / _log_softmax -> amax, sub, exp, sum[, log], div / sub, silu -> neg, exp, add, div,
exact gelu -> erf, native_layer_norm -> var_mean, ..., _to_copy of a dtype ->
prims.convert_element_type, index_copy_ -> index_put_, masked_fill of a number -> where.
Not here: torch's ones / zeros / *_like -> aten.full (full's layout=torch.strided argument is
not emulated), so fake_torch's aten graphs keep those fills as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch import _namespace, _ops
from fake_torch._tensor import Tensor
from fake_torch.fx.experimental._aten_overloads import overload

Decomposition = Callable[..., Any]


def _convert_element_type(x: Tensor, dtype: Any) -> Tensor:
    return x.to(dtype, copy=True)


def _prims_convert_element_type() -> _ops.OpOverload:
    """torch.ops.prims.convert_element_type.default (made on first use)."""
    packets = _ops.ops.namespace("prims")._packets
    packet = packets.get("convert_element_type")
    if packet is None:
        packet = _ops.register("prims", "convert_element_type",
                               "(Tensor a, ScalarType dtype) -> Tensor", _convert_element_type)
    return packet.default


def _t(x: Tensor) -> Tensor:
    return x.permute(list(range(x.dim() - 1, -1, -1)))


def _transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    order = list(range(x.dim()))
    a, b = dim0 % max(x.dim(), 1), dim1 % max(x.dim(), 1)
    order[a], order[b] = order[b], order[a]
    return x.permute(order)


def _unsafe_view(x: Tensor, size: list[Any]) -> Tensor:
    return x.view(size)


def _softmax(x: Tensor, dim: int, half_to_float: bool) -> Any:
    shifted = x - x.amax([dim], True)
    e = shifted.exp()
    return e / e.sum([dim], keepdim=True)


def _log_softmax(x: Tensor, dim: int, half_to_float: bool) -> Any:
    shifted = x - x.amax([dim], True)
    return shifted - shifted.exp().sum([dim], keepdim=True).log()


def _silu(x: Tensor, inplace: bool = False) -> Any:
    return x / ((-x).exp() + 1)


def _gelu(x: Tensor, approximate: str = "none") -> Any:
    if approximate != "none":  # torch's table keeps tanh gelu's own decomposition
        raise NotImplementedError("select_decomp_table: gelu(approximate='tanh') is not "
                                  "decomposed by fake_torch")
    return x * 0.5 * ((x * 0.7071067811865476).erf() + 1)


def _native_layer_norm(x: Tensor, normalized_shape: list[int], weight: Tensor | None,
                       bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    dims = list(range(x.dim() - len(normalized_shape), x.dim()))
    var, mean = _namespace.torch().var_mean(x, dims, correction=0, keepdim=True)
    rstd = (var + eps).rsqrt()
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def _masked_fill(x: Tensor, mask: Tensor, value: Any) -> Tensor:
    return _namespace.torch().where(mask, value, x)  # type: ignore[no-any-return]


def _to_copy(x: Tensor, **kwargs: Any) -> Tensor:
    if set(kwargs) - {"dtype"}:
        raise NotImplementedError("select_decomp_table: _to_copy of a device or layout is not "
                                  "decomposed by fake_torch")
    return _prims_convert_element_type()(x, kwargs.get("dtype", x.dtype))  # type: ignore[no-any-return]


def _index_copy_(x: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    dim = dim % max(x.dim(), 1)
    return x.index_put_([*([None] * dim), index], source)


def select_decomp_table() -> dict[Any, Decomposition]:
    """The decompositions inductor traces patterns with (fwd_only)."""
    return {
        overload("t"): _t,
        overload("transpose", "int"): _transpose,
        overload("_unsafe_view"): _unsafe_view,
        overload("_softmax"): _softmax,
        overload("_log_softmax"): _log_softmax,
        overload("silu"): _silu,
        overload("gelu"): _gelu,
        overload("native_layer_norm"): _native_layer_norm,
        overload("_to_copy"): _to_copy,
        overload("masked_fill", "Scalar"): _masked_fill,
        overload("index_copy_"): _index_copy_,
    }


__all__ = ["select_decomp_table"]
