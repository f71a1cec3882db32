"""Which kernels torch compiles for its limited dtypes, and its error for the others.

torch's float8s, float4_e2m1fn_x2 and uint16/32/64 live in few dtype dispatch lists: a float8
tensor can be copied, cast, viewed, indexed, multiplied and compared for equality, but not
added; uint16/32/64 miss the signed-arithmetic and ordering kernels. The sets below are what
torch 2.13's CPU build accepts (tests/test_dtypes_extra.py checks them against it); any other
pointwise op or reduction whose common dtype is limited raises torch's NotImplementedError.

complex64/complex128 (numpy's own complex types) are checked at the same two places, the other
way round: the ops below compute on them as torch does; the orderings torch refuses raise its
error; any other op raises NotImplementedError naming it (not emulated for complex here, even
where torch has a kernel), never numpy's complex answer, which may not be torch's."""

from __future__ import annotations

from fake_torch._dtype import (
    FLOAT8_DTYPES,
    LIMITED_DTYPES,
    SCALAR_NAME,
    UNSIGNED_DTYPES,
    complex64,
    complex128,
    dtype,
    float8_e8m0fnu,
)
from fake_torch._tensor import Tensor

LIMITED = frozenset(LIMITED_DTYPES)
COMPLEX = frozenset((complex64, complex128))
CHECKED = LIMITED | COMPLEX  # the dtypes whose pointwise ops and reductions call check_kernel

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


# the pointwise ops and reductions fake_torch computes on complex64/complex128 as torch does
_COMPLEX_OK = frozenset({
    "add", "sub", "rsub", "mul", "div", "true_divide", "neg", "exp", "log", "sqrt", "rsqrt",
    "reciprocal", "sin", "cos", "tanh", "sigmoid", "pow", "square", "eq", "ne", "isnan", "copy",
    "isinf", "where", "abs", "angle", "sgn", "_conj_physical", "sum", "mean", "prod",
    "masked_fill", "lerp", "log1p", "silu", "any", "all", "logical_and", "logical_or",
    "logical_xor", "logical_not", "nan_to_num",
})
# torch's own refusals that are not its "<kernel>" not implemented for '<dtype>' error
_COMPLEX_ERRORS: dict[str, tuple[type[Exception], str]] = {
    **{f: (NotImplementedError, "clamp is not supported for complex types")
       for f in ("clamp", "clamp_min", "clamp_max", "relu", "hardtanh")},
    **{f: (NotImplementedError, f"{f} is not supported for complex inputs")
       for f in ("floor", "ceil", "trunc")},
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "sign": (NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex "
             "numbers. Please use torch.sgn instead."),
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
}
# the "<kernel>" torch's dtype dispatch names in its error for these (CPU build; a cuda tensor
# names "<op>_cuda", as for the limited dtypes, except the orderings, which share CUDA's one
# "compare_cuda" dispatch: aten/src/ATen/native/cuda/CompareKernels.cu)
_COMPLEX_KERNELS = frozenset({
    "lt", "le", "gt", "ge", "amax", "amin", "max", "min", "floor_divide", "remainder", "fmod",
    "atan2", "round", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "erf",
    "hypot", "copysign", "gelu", "softplus", "erfinv",
})
_COMPLEX_CPU_KERNEL = {**_CPU_KERNEL, "erf": "erf_vml_cpu", "erfinv": "erfinv_vml_cpu",
                       "gelu": "GeluKernelImpl", "softplus": "softplus_cpu"}


def check_kernel(op: str, dt: dtype, x: Tensor) -> None:
    """Raise torch's NotImplementedError when `op` (a launch name; an in-place `add_` is `add`)
    has no kernel for the limited dtype `dt`, or torch's (or fake_torch's) error for an op on
    a complex one. Call only when `dt in CHECKED`."""
    name = op.removesuffix("_")
    if dt in COMPLEX:
        check_complex(name, dt, x)
        return
    if dt in FLOAT8_DTYPES:
        ok = name in _FLOAT8_OK and not (dt is float8_e8m0fnu and name == "abs")
    else:
        ok = dt in UNSIGNED_DTYPES and name not in _UNSIGNED_REFUSED
    if not ok:
        kernel = f"{name}_cuda" if x.is_cuda else _CPU_KERNEL.get(name, f"{name}_cpu")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[dt]}'")


def check_complex(name: str, dt: dtype, x: Tensor) -> None:
    """The complex half of check_kernel (`name`: the launch name without a trailing "_")."""
    if name in _COMPLEX_OK:
        return
    refused = _COMPLEX_ERRORS.get(name)
    if refused is not None:
        raise refused[0](refused[1])
    if name in _COMPLEX_KERNELS:
        if x.is_cuda:
            kernel = "compare_cuda" if name in ("lt", "le", "gt", "ge") else f"{name}_cuda"
        else:
            kernel = _COMPLEX_CPU_KERNEL.get(name, f"{name}_cpu")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAME[dt]}'")
    raise complex_not_emulated(name, dt)


def complex_not_emulated(name: str, dt: dtype) -> NotImplementedError:
    """fake_torch's refusal of an op it does not compute on complex tensors."""
    return NotImplementedError(f"torch.{name} on a {dt} tensor is not emulated by fake_torch "
                               "(its complex support covers creation, views, casts, "
                               "arithmetic, exp/log/sqrt/trig, abs/angle, sum/mean/prod)")
