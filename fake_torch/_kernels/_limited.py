"""Which kernels torch compiles for its limited dtypes, and its error for the others.

torch's float8s, float4_e2m1fn_x2 and uint16/32/64 live in few dtype dispatch lists: a float8
tensor can be copied, cast, viewed, indexed, multiplied and compared for equality, but not
added; uint16/32/64 miss the signed-arithmetic and ordering kernels. The sets below are what
torch 2.13's CPU build accepts (tests/test_dtypes_extra.py checks them against it); any other
pointwise op or reduction whose common dtype is limited raises torch's NotImplementedError."""

from __future__ import annotations

from fake_torch._dtype import (
    FLOAT8_DTYPES,
    LIMITED_DTYPES,
    SCALAR_NAME,
    UNSIGNED_DTYPES,
    dtype,
    float8_e8m0fnu,
)
from fake_torch._tensor import Tensor

LIMITED = frozenset(LIMITED_DTYPES)

# the pointwise ops and reductions a float8 tensor may go through (e8m0fnu has no abs)
_FLOAT8_OK = frozenset({"mul", "eq", "ne", "abs", "isnan", "where", "all", "any"})
# the ones uint16/32/64 may not (the rest compute, or promote to float first)
_UNSIGNED_REFUSED = frozenset({
    "add", "sub", "rsub", "abs", "neg", "sign", "maximum", "minimum", "clamp", "clamp_min",
    "clamp_max", "relu", "gt", "lt", "ge", "le", "greater", "less", "greater_equal",
    "less_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_not",
    "bitwise_left_shift", "bitwise_right_shift", "floor_divide", "remainder", "pow", "square",
    "amax", "amin", "max", "min", "argmax", "argmin",
})
# the kernel torch names in its error, where it is not "<op>_cpu"
_CPU_KERNEL = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "div": "div_cpu",
    "true_divide": "div_cpu", "floor_divide": "div_floor_cpu", "pow": "pow", "square": "pow",
    "relu": "clamp_min_scalar_cpu", "clamp_min": "maximum_cpu", "clamp_max": "minimum_cpu",
    "sigmoid": "sigmoid_cpu_reduced_float", "isinf": "isinf", "bitwise_left_shift": "lshift_cpu",
    "bitwise_right_shift": "rshift_cpu", "amax": "max_values_cpu", "amin": "min_values_cpu",
    "max": "max_all", "min": "min_all", "mean": "sum_cpu", "prod": "prod_out_cpu",
    **{f: f"{f}_vml_cpu" for f in ("ceil", "cos", "erf", "exp", "floor", "log", "log1p",
                                   "round", "sin", "sqrt", "tanh", "trunc")},
}


def check_kernel(op: str, dt: dtype, x: Tensor) -> None:
    """Raise torch's NotImplementedError when `op` (a launch name; an in-place `add_` is `add`)
    has no kernel for the limited dtype `dt`. Call only when `dt in LIMITED`."""
    name = op.removesuffix("_")
    if dt in FLOAT8_DTYPES:
        ok = name in _FLOAT8_OK and not (dt is float8_e8m0fnu and name == "abs")
    else:
        ok = dt in UNSIGNED_DTYPES and name not in _UNSIGNED_REFUSED
    if not ok:
        kernel = f"{name}_cuda" if x.is_cuda else _CPU_KERNEL.get(name, f"{name}_cpu")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[dt]}'")
