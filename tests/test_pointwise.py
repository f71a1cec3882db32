"""Pointwise math, comparisons, casts and torch.testing: fake_torch against numpy and real torch.

Oracles: numpy (values over random broadcast shapes, in-place ops through aliasing views) and
real torch's CPU build (bit patterns of every binary op over all dtype pairs and scalar kinds,
type promotion, casts, error class and text, output strides, and the non-view aten ops torch
dispatches, which our cuda launch list must equal).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracles import (
    DTYPES,
    FLOAT_DTYPES,
    NP_DTYPE,
    assert_raises_like_torch,
    first_line,
    launches,
    outcome,
    same_bits,
    to_numpy,
    to_torch,
    torch_launches,
    torch_may_say,
    torch_ulps,
)

import fake_torch as ft
import fake_torch.testing
from fake_torch.nn.functional import gelu, silu


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch", reason="real torch (CPU build) not installed")


# --- data and conversions ---------------------------------------------------------------------

def sample(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values that exercise the dtype: floats with zeros and wide range, small ints, bools."""
    if name == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if name in FLOAT_DTYPES:
        v = np.asarray(rng.standard_normal(shape) * 4)
        v.ravel()[: v.size // 8] = 0.0
        return v.astype(np.float32).astype(NP_DTYPE[name])
    info = np.iinfo(NP_DTYPE[name])
    return np.asarray(rng.integers(max(info.min, -20), min(info.max, 20) + 1, shape),
                      dtype=NP_DTYPE[name])


def ours(a: np.ndarray, device: str = "cpu") -> ft.Tensor:
    t = ft.from_numpy(np.array(a, order="C"))  # (ascontiguousarray would make 0-dim 1-dim)
    return t if device == "cpu" else t.to(device)


def assert_same_outcome(torch: Any, label: str, t_fn: Callable[[], Any],
                        f_fn: Callable[[], Any], *, exact: bool = True) -> None:
    """Same exception class and first message line, or the same dtype, shape and values."""
    rt, et = outcome(t_fn)
    rf, ef = outcome(f_fn)
    if et is not None or ef is not None:
        assert et is not None and ef is not None, f"{label}: torch {et!r}, ours {ef!r}"
        assert type(ef) is type(et) and torch_may_say(first_line(et), first_line(ef)), (
            f"{label}: torch {type(et).__name__}: {et}\nours {type(ef).__name__}: {ef}")
        return
    if not isinstance(rt, torch.Tensor):
        assert rf == rt, label
        return
    assert repr(rf.dtype) == str(rt.dtype), f"{label}: dtype {rf.dtype} vs {rt.dtype}"
    a, b = to_numpy(rf), to_numpy(rt)
    if exact:
        assert same_bits(a, b, torch_ulps()), f"{label}:\nours  {a}\ntorch {b}"
    else:
        tol = {"float16": 2e-3, "bfloat16": 2e-2}.get(repr(rf.dtype)[6:], 2e-6)
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol,
                                   atol=tol, equal_nan=True, err_msg=label)


# --- numpy oracle: values over random broadcast shapes ---------------------------------------

BINARY_NP: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "add": (ft.add, np.add), "sub": (ft.sub, np.subtract), "mul": (ft.mul, np.multiply),
    "div": (ft.div, np.true_divide), "maximum": (ft.maximum, np.maximum),
    "minimum": (ft.minimum, np.minimum), "eq": (ft.eq, np.equal), "lt": (ft.lt, np.less),
    "ge": (ft.ge, np.greater_equal), "atan-free pow": (ft.pow, lambda a, b: np.abs(a) ** b),
}


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       op=st.sampled_from(sorted(BINARY_NP)), dt=st.sampled_from(["float32", "float64"]),
       seed=st.integers(0, 2**16))
def test_binary_ops_match_numpy_over_broadcast_shapes(shapes: Any, op: str, dt: str,
                                                      seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = (sample(dt, s, rng) for s in shapes.input_shapes)
    ft_fn, np_fn = BINARY_NP[op]
    if op == "atan-free pow":
        a = np.abs(a)
    got = ft_fn(ours(a), ours(b))
    assert got.shape == shapes.result_shape
    with np.errstate(all="ignore"):  # x / 0 is inf in both
        want = np_fn(a, b)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, equal_nan=True)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x)


UNARY_NP: dict[str, tuple[Callable[[ft.Tensor], ft.Tensor], Callable[[np.ndarray], Any]]] = {
    "exp": (ft.exp, np.exp), "log": (lambda x: ft.log(ft.abs(x)), lambda x: np.log(np.abs(x))),
    "log1p": (lambda x: ft.log1p(ft.abs(x)), lambda x: np.log1p(np.abs(x))),
    "sqrt": (lambda x: ft.abs(x).sqrt(), lambda x: np.sqrt(np.abs(x))),
    "rsqrt": (lambda x: x.abs().rsqrt(), lambda x: 1 / np.sqrt(np.abs(x))),
    "sin": (ft.sin, np.sin), "cos": (ft.cos, np.cos), "tanh": (ft.tanh, np.tanh),
    "sigmoid": (ft.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "relu": (ft.relu, lambda x: np.maximum(x, 0)),
    "silu": (silu, lambda x: x / (1 + np.exp(-x))),
    "gelu": (gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": (lambda x: gelu(x, approximate="tanh"), lambda x: 0.5 * x * (
        1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    "erf": (ft.erf, _erf), "abs": (ft.abs, np.abs), "neg": (ft.neg, np.negative),
    "floor": (ft.floor, np.floor), "ceil": (ft.ceil, np.ceil), "round": (ft.round, np.rint),
    "trunc": (ft.trunc, np.trunc), "sign": (ft.sign, np.sign), "square": (ft.square, np.square),
    "reciprocal": (ft.reciprocal, np.reciprocal),
    "clamp": (lambda x: x.clamp(-1, 2), lambda x: np.clip(x, -1, 2)),
}


@settings(max_examples=60, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=5),
       op=st.sampled_from(sorted(UNARY_NP)), dt=st.sampled_from(["float32", "float64"]),
       seed=st.integers(0, 2**16))
def test_unary_ops_match_numpy(shape: tuple[int, ...], op: str, dt: str, seed: int) -> None:
    a = sample(dt, shape, np.random.default_rng(seed))
    a[a == 0] = 0.5  # log, reciprocal
    ft_fn, np_fn = UNARY_NP[op]
    got = ft_fn(ours(a))
    assert got.dtype is getattr(ft, dt) and got.shape == shape
    np.testing.assert_allclose(got.numpy(), np_fn(a), rtol=2e-6, atol=1e-7)


@settings(max_examples=50, deadline=None)
@given(dt=st.sampled_from(["float16", "bfloat16"]), seed=st.integers(0, 2**16),
       op=st.sampled_from(["add", "sub", "mul", "div"]),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=6))
def test_16_bit_arithmetic_rounds_once_from_float32(dt: str, seed: int, op: str,
                                                    shapes: Any) -> None:
    """float16/bfloat16 results are the float32 result rounded to nearest-even, as torch."""
    rng = np.random.default_rng(seed)
    a, b = (sample(dt, s, rng) for s in shapes.input_shapes)
    b[b == 0] = 1
    ft_fn, np_fn = BINARY_NP[op]
    got = ft_fn(ours(a), ours(b))
    want = np_fn(a.astype(np.float32), b.astype(np.float32)).astype(NP_DTYPE[dt])
    assert same_bits(got.numpy(), want)


VIEWS: dict[str, Callable[[Any], Any]] = {  # the same view of a numpy array or a Tensor
    "row": lambda a: a[1], "column": lambda a: a[:, 2], "step": lambda a: a[::2, 1::2],
    "transpose": lambda a: a.T if isinstance(a, np.ndarray) else a.t(),
    "block": lambda a: a[1:3, 1:4],
}
INPLACE: dict[str, tuple[Callable[[ft.Tensor, ft.Tensor], Any], Callable[..., Any]]] = {
    "add_": (lambda v, o: v.add_(o, alpha=2), lambda v, o: v + 2 * o),
    "mul_": (lambda v, o: v.mul_(o), lambda v, o: v * o),
    "sub_": (lambda v, o: v.sub_(o), lambda v, o: v - o),
    "div_": (lambda v, o: v.div_(o), lambda v, o: v / o),
    "clamp_": (lambda v, o: v.clamp_(min=o), lambda v, o: np.maximum(v, o)),
    "copy_": (lambda v, o: v.copy_(o), lambda v, o: np.broadcast_to(o, v.shape)),
    "lerp_": (lambda v, o: v.lerp_(o, 0.25), lambda v, o: v + 0.25 * (o - v)),
    "exp_": (lambda v, o: v.exp_(), lambda v, o: np.exp(v)),
    "iadd": (lambda v, o: v.__iadd__(o), lambda v, o: v + o),
    "itruediv": (lambda v, o: v.__itruediv__(o), lambda v, o: v / o),
}


@settings(max_examples=60, deadline=None)
@given(view=st.sampled_from(sorted(VIEWS)), op=st.sampled_from(sorted(INPLACE)),
       broadcast=st.booleans(), seed=st.integers(0, 2**16))
def test_inplace_through_a_view_writes_the_base(view: str, op: str, broadcast: bool,
                                               seed: int) -> None:
    rng = np.random.default_rng(seed)
    base_np = sample("float64", (4, 6), rng)
    base = ours(base_np.copy())
    v_np = VIEWS[view](base_np)
    other_np = sample("float64", v_np.shape[-1:] if broadcast else v_np.shape, rng)
    other_np[other_np == 0] = 1.5
    ft_fn, np_fn = INPLACE[op]
    v = VIEWS[view](base)  # fake_torch's own view: the same memory as `base`
    ptr = v.data_ptr()
    result = ft_fn(v, ours(other_np))
    assert result is v and v.data_ptr() == ptr
    v_np[...] = np_fn(v_np.copy(), other_np)
    np.testing.assert_allclose(base.numpy(), base_np, rtol=1e-12)


# --- real torch: values bit for bit --------------------------------------------------------------

BINARY: dict[str, Callable[[Any], Callable[[Any, Any], Any]]] = {
    "add": lambda lib: lib.add, "sub": lambda lib: lib.sub, "mul": lambda lib: lib.mul,
    "div": lambda lib: lib.div, "floor_divide": lambda lib: lib.floor_divide,
    "remainder": lambda lib: lib.remainder,
    "div_trunc": lambda lib: lambda a, b: lib.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda lib: lambda a, b: lib.div(a, b, rounding_mode="floor"),
    "add_alpha": lambda lib: lambda a, b: lib.add(a, b, alpha=3),
    "sub_alpha": lambda lib: lambda a, b: lib.sub(a, b, alpha=3),
    "rsub": lambda lib: lambda a, b: lib.rsub(a, b, alpha=2) if isinstance(a, lib.Tensor)
    else lib.sub(b, a),
    "pow": lambda lib: lib.pow, "maximum": lambda lib: lib.maximum,
    "minimum": lambda lib: lib.minimum, "eq": lambda lib: lib.eq, "ne": lambda lib: lib.ne,
    "lt": lambda lib: lib.lt, "le": lambda lib: lib.le, "gt": lambda lib: lib.gt,
    "ge": lambda lib: lib.ge, "logical_and": lambda lib: lib.logical_and,
    "logical_or": lambda lib: lib.logical_or, "logical_xor": lambda lib: lib.logical_xor,
    "bitwise_and": lambda lib: lib.bitwise_and, "bitwise_or": lambda lib: lib.bitwise_or,
    "bitwise_xor": lambda lib: lib.bitwise_xor,
    "lshift": lambda lib: lambda a, b: a << b, "rshift": lambda lib: lambda a, b: a >> b,
    "truediv_op": lambda lib: lambda a, b: a / b, "mod_op": lambda lib: lambda a, b: a % b,
    "floordiv_op": lambda lib: lambda a, b: a // b, "pow_op": lambda lib: lambda a, b: a ** b,
}
SCALARS = [2, -3, 0.1, 2.5, True, 1000]


def _divisor_safe(name: str, op: str, a: np.ndarray) -> np.ndarray:
    """Integer division and shifts by zero / negatives raise or are undefined: avoid them."""
    if name in FLOAT_DTYPES or name == "bool":
        return a
    if op in ("floor_divide", "remainder", "div_trunc", "div_floor", "mod_op", "floordiv_op"):
        return np.asarray(np.where(a == 0, 1, a), dtype=a.dtype)
    if op in ("pow", "pow_op", "lshift", "rshift"):
        return np.asarray(np.abs(a), dtype=a.dtype)
    return a


@settings(max_examples=250, deadline=None)
@given(op=st.sampled_from(sorted(BINARY)), d1=st.sampled_from(DTYPES),
       d2=st.sampled_from(DTYPES + [f"scalar{i}" for i in range(len(SCALARS))]),
       scalar_first=st.booleans(), seed=st.integers(0, 2**16),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
def test_binary_ops_equal_torch_bit_for_bit(torch: Any, op: str, d1: str, d2: str,
                                            scalar_first: bool, seed: int, shapes: Any) -> None:
    """Every dtype pair and Python scalar kind: same result dtype, same bits (16-bit floats
    included), or the same error."""
    rng = np.random.default_rng(seed)
    a = sample(d1, shapes.input_shapes[0], rng)
    if d2.startswith("scalar"):
        s = SCALARS[int(d2[6:])]
        ta, fa = to_torch(a), ours(a)
        args_t, args_f = ((s, ta), (s, fa)) if scalar_first else ((ta, s), (fa, s))
    else:
        b = _divisor_safe(d2, op, sample(d2, shapes.input_shapes[1], rng))
        args_t, args_f = (to_torch(a), to_torch(b)), (ours(a), ours(b))
    # torch's CPU add/sub with alpha fuses the multiply-add in its vector loop but not in the
    # loop's scalar tail, so its float bits depend on element position; ours always fuse
    result = outcome(lambda: ft.result_type(*args_f))[0]
    fused = op in ("add_alpha", "sub_alpha") and result is not None and \
        result.is_floating_point
    torch_fn = lambda: BINARY[op](torch)(*args_t)  # noqa: E731
    if fused and repr(result) in ("torch.float16", "torch.bfloat16") and \
            not d2.startswith("scalar") and "bool" not in (d1, d2):  # (bool: sub's error)
        # a 16-bit result: the fused kernel reads its inputs in the 16-bit dtype, computes
        # in float32 and rounds once on store, as torch's float32 kernel then a cast does
        # (3 * a 16-bit value is exact in float32, so torch's unfused scalar tail agrees
        # there): bit for bit. torch's own 16-bit tail rounds the product to 16 bits first:
        # off by up to half its ulp, far more than the result's when the sum cancels
        # (-16 + 3 * 5.46875).
        dt = getattr(torch, repr(result)[6:])  # inputs cast to it first, as torch's are
        torch_fn = lambda: BINARY[op](torch)(  # noqa: E731
            *(t.to(dt).float() for t in args_t)).to(dt)
        fused = False
    assert_same_outcome(torch, f"{op}{args_f}", torch_fn, lambda: BINARY[op](ft)(*args_f),
                        exact=op not in ("pow", "pow_op") and not fused)


def _named(name: str) -> Callable[[Any], Any]:
    return lambda lib: getattr(lib, name)


UNARY: dict[str, tuple[Callable[[Any], Any], bool]] = {
    # name: (fn(lib) -> unary callable, bit-exact?)
    **{n: (_named(n), True) for n in
       ["neg", "abs", "sign", "floor", "ceil", "round", "trunc", "relu", "square",
        "reciprocal", "logical_not", "bitwise_not", "isnan", "isinf", "isfinite"]},
    **{n: (_named(n), False) for n in
       ["exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf"]},
    "silu": (lambda lib: silu if lib is ft else lib.nn.functional.silu, False),
    "gelu": (lambda lib: gelu if lib is ft else lib.nn.functional.gelu, False),
    "gelu_tanh": (lambda lib: (lambda x: (gelu if lib is ft else lib.nn.functional.gelu)(
        x, approximate="tanh")), False),
    "round_2": (lambda lib: lambda x: lib.round(x, decimals=2), True),
    "round_-1": (lambda lib: lambda x: lib.round(x, decimals=-1), True),
    "clamp": (lambda lib: lambda x: lib.clamp(x, -1, 1.5), True),
    "clamp_int": (lambda lib: lambda x: lib.clamp(x, 0, 2), True),
    "clamp_min": (lambda lib: lambda x: lib.clamp_min(x, 0.5), True),
    "clamp_t": (lambda lib: lambda x: x.clamp(min=x * 0.5, max=x.abs()), True),
    "pow_2": (lambda lib: lambda x: x ** 2, True), "pow_3": (lambda lib: lambda x: x ** 3, True),
    "pow_-1": (lambda lib: lambda x: x ** -1, True),
    "pow_-2": (lambda lib: lambda x: x ** -2, True),
    "rpow": (lambda lib: lambda x: 2 ** x, False),
    "rtruediv": (lambda lib: lambda x: 3 / x, True),
    "rsub_op": (lambda lib: lambda x: 1.5 - x, True), "rmod": (lambda lib: lambda x: 7 % x, True),
    "lerp_small": (lambda lib: lambda x: lib.lerp(x, x * 2 + 1, 0.3), True),
    "lerp_large": (lambda lib: lambda x: lib.lerp(x, x * 2 + 1, 0.7), True),
    "lerp_tensor": (lambda lib: lambda x: lib.lerp(x, x * 2 + 1, x.abs()), True),
    "where_scalar": (lambda lib: lambda x: lib.where(x > 0, x, 0.5), True),
    "where_scalar_self": (lambda lib: lambda x: lib.where(x > 0, 1, x), True),
    "isclose": (lambda lib: lambda x: lib.isclose(x, x * 1.001), True),
    "isclose_nan": (lambda lib: lambda x: lib.isclose(x / 0, x / 0, equal_nan=True), True),
    "allclose": (lambda lib: lambda x: lib.allclose(x, x + 1), True),
    "equal": (lambda lib: lambda x: lib.equal(x, x * 1), True),
    "mul_0dim": (lambda lib: lambda x: x * lib.tensor(0.1), True),
    "div_0dim_f64": (lambda lib: lambda x: x / lib.tensor(0.3, dtype=lib.float64), True),
    "add_0dim": (lambda lib: lambda x: x + lib.tensor(0.1), True),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_ops_equal_torch(torch: Any, op: str) -> None:
    """Bit for bit where torch's CPU math is correctly rounded; within a few ulp for the
    transcendental functions (torch uses SLEEF/MKL there, numpy its own)."""
    rng = np.random.default_rng(0)
    fn, exact = UNARY[op]
    for name in DTYPES:
        a = sample(name, (3, 5), rng)
        assert_same_outcome(torch, f"{op}({name})", lambda a=a: fn(torch)(to_torch(a)),
                            lambda a=a: fn(ft)(ours(a)), exact=exact)


EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 255.5, 256, 300, -1, -129, 128, 32768,
                  65504, 65520, 70000, 2**31, -2**31 - 1, 1e30, 1e-8, -6.2e10, 3.3, -3.7, 0.5,
                  1.5, 2.5, 1e-40])


@pytest.mark.parametrize("src", DTYPES)
def test_casts_equal_torch_bit_for_bit(torch: Any, src: str) -> None:
    """Every dtype pair, through torch's edge values: rounding to 16-bit floats, truncation,
    wraparound and NaN/inf into integers, nonzero into bool."""
    rng = np.random.default_rng(1)
    if src in FLOAT_DTYPES:
        t = torch.tensor(EDGES).to(getattr(torch, src))
        f = ours(to_numpy(t))
    else:
        a = sample(src, (40,), rng)
        t, f = to_torch(a), ours(a)
    for dst in DTYPES:
        assert_same_outcome(torch, f"{src}->{dst}", lambda d=dst: t.to(getattr(torch, d)),
                            lambda d=dst: f.to(getattr(ft, d)))


# --- type promotion -----------------------------------------------------------------------------

def test_result_type_equals_torch_over_all_dtype_pairs_and_scalar_kinds(torch: Any) -> None:
    def make(lib: Any, name: str, dims: int) -> Any:
        return lib.zeros((2,) * dims, dtype=getattr(lib, name))

    for n1, n2 in itertools.product(DTYPES, DTYPES):
        for d1, d2 in itertools.product((0, 1), (0, 1)):
            want = torch.result_type(make(torch, n1, d1), make(torch, n2, d2))
            got = ft.result_type(make(ft, n1, d1), make(ft, n2, d2))
            assert repr(got) == str(want), (n1, d1, n2, d2)
    for name, dims, scalar in itertools.product(DTYPES, (0, 1), (True, 3, -2, 1.5)):
        for first in (False, True):
            args_t = (scalar, make(torch, name, dims)) if first else (make(torch, name, dims),
                                                                    scalar)
            args_f = (scalar, make(ft, name, dims)) if first else (make(ft, name, dims), scalar)
            assert repr(ft.result_type(*args_f)) == str(torch.result_type(*args_t))
    assert ft.result_type(1, 2.0) is ft.float32 and ft.result_type(True, 2) is ft.int64


def test_ops_compute_in_the_promoted_dtype() -> None:
    i8 = ft.tensor([1, 2], dtype=ft.int8)
    assert (i8 + 1000).tolist() == [-23, -22]  # the scalar wraps into int8, as in torch
    assert (i8 * 1.5).dtype is ft.float32 and (i8 / i8).dtype is ft.float32
    assert (i8 // 2).dtype is ft.int8 and ft.tensor([True]).square().dtype is ft.int64
    assert (ft.ones(2, dtype=ft.float16) + ft.ones(2, dtype=ft.bfloat16)).dtype is ft.float32
    assert (ft.ones(2, dtype=ft.float16) + ft.tensor(1.0, dtype=ft.float64)).dtype is ft.float16
    assert ft.exp(ft.arange(3)).dtype is ft.float32 and ft.arange(3).abs().dtype is ft.int64


# --- errors ---------------------------------------------------------------------------------------

ERRORS: dict[str, Callable[[Any], Any]] = {
    "bad broadcast": lambda lib: lib.ones(2, 3) + lib.ones(3, 2),
    "in-place float into long": lambda lib: lib.arange(3).mul_(1.5),
    "in-place exp_ on long": lambda lib: lib.arange(3).exp_(),
    "in-place broadcast": lambda lib: lib.ones(3).add_(lib.ones(2, 3)),
    "in-place into expanded": lambda lib: lib.zeros(3).expand(2, 3).add_(1),
    "in-place partial overlap": lambda lib: (lambda x: x[1:].add_(x[:-1]))(lib.arange(5.0)),
    "copy_ partial overlap": lambda lib: (lambda x: x[1:].copy_(x[:-1]))(lib.arange(5.0)),
    "copy_ bad shape": lambda lib: lib.zeros(3).copy_(lib.zeros(2, 3)),
    "clamp_ long int": lambda lib: lib.arange(3).clamp_(0.5),
    "clamp no bounds": lambda lib: lib.ones(2).clamp(),
    "neg bool": lambda lib: -lib.ones(2, dtype=lib.bool),
    "sub bools": lambda lib: lib.ones(2, dtype=lib.bool) - lib.ones(2, dtype=lib.bool),
    "sub bool scalar": lambda lib: lib.arange(2) - True,
    "pos bool": lambda lib: +lib.ones(2, dtype=lib.bool),
    "abs bool": lambda lib: lib.ones(2, dtype=lib.bool).abs(),
    "floor bool": lambda lib: lib.ones(2, dtype=lib.bool).floor(),
    "relu bool": lambda lib: lib.ones(2, dtype=lib.bool).relu(),
    "int negative power": lambda lib: lib.arange(3) ** -1,
    "int pow overflow": lambda lib: lib.arange(3, dtype=lib.uint8) ** 1000,
    "int divide by zero": lambda lib: lib.arange(3) // 0,
    "int remainder by zero": lambda lib: lib.arange(3) % lib.zeros(3, dtype=lib.int64),
    "rounding mode": lambda lib: lib.div(lib.ones(2), 2, rounding_mode="up"),
    "alpha float for ints": lambda lib: lib.add(lib.arange(2), lib.arange(2), alpha=0.5),
    "alpha bool": lambda lib: lib.add(lib.ones(2), lib.ones(2), alpha=True),
    "alpha None": lambda lib: lib.ones(2).add(1, alpha=None),
    "bitwise float": lambda lib: lib.ones(2) & lib.ones(2),
    "invert float": lambda lib: ~lib.ones(2),
    "shift float": lambda lib: lib.ones(2) << 1,
    "where condition long": lambda lib: lib.where(lib.arange(2), 1.0, 0.0),
    "where scalar overflow": lambda lib: lib.where(lib.ones(1, dtype=lib.bool),
                                                   lib.ones(1, dtype=lib.int8), 1000),
    "lerp end dtype": lambda lib: lib.lerp(lib.ones(2), lib.ones(2).double(), 0.5),
    "lerp long": lambda lib: lib.lerp(lib.arange(2), lib.arange(2), 0.5),
    "isclose dtypes": lambda lib: lib.isclose(lib.ones(2), lib.arange(2)),
    "isclose rtol": lambda lib: lib.isclose(lib.ones(2), lib.ones(2), rtol=-1),
    "allclose dtypes": lambda lib: lib.allclose(lib.arange(2), lib.ones(2)),
    "fill_ overflow": lambda lib: lib.zeros(2, dtype=lib.int8).fill_(300),
    "fill_ 1-dim value": lambda lib: lib.zeros(2).fill_(lib.ones(2)),
    "round decimals float": lambda lib: lib.ones(2).round(decimals=2.5),
    "round decimals long": lambda lib: lib.arange(2).round(decimals=1),
    "to two dtypes": lambda lib: lib.ones(2).to(lib.int64, lib.float16),
    "to unknown kwarg": lambda lib: lib.ones(2).to(lib.float16, foo=1),
    "to bad device": lambda lib: lib.ones(2).to("xx"),
    "type bad name": lambda lib: lib.ones(2).type("torch.FooTensor"),
    "add str": lambda lib: lib.add(lib.ones(2), "a"),
    "operator str": lambda lib: lib.ones(2) + "a",
    "exp of float": lambda lib: lib.exp(1.0),
    "minimum scalar": lambda lib: lib.minimum(lib.ones(2), 1.5),
    "logical scalar": lambda lib: lib.logical_and(lib.ones(2), 1),
    "compare reversed": lambda lib: lib.gt(1, lib.ones(2)),
    "lt str": lambda lib: lib.ones(2) < "a",
    "silu long": lambda lib: (silu if lib is ft else lib.nn.functional.silu)(lib.arange(2)),
    "gelu long": lambda lib: (gelu if lib is ft else lib.nn.functional.gelu)(lib.arange(2)),
    "gelu approximate": lambda lib: (gelu if lib is ft else lib.nn.functional.gelu)(
        lib.ones(2), approximate="foo"),
    "numel of int": lambda lib: lib.numel(1),
    "is_floating_point of int": lambda lib: lib.is_floating_point(1),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_equal_torch(torch: Any, case: str) -> None:
    """The same exception class and the same first message line as torch."""
    assert_raises_like_torch(ERRORS[case])


def test_mixing_devices_raises_torchs_error() -> None:
    """(The CPU build of torch cannot make cuda tensors; this is its known text.)"""
    a, b = ft.ones(3, device="cuda"), ft.ones(3)
    for fn in (lambda: a + b, lambda: b * a, lambda: ft.where(a > 0, b, a),
               lambda: a.add_(b), lambda: b.add_(a), lambda: ft.maximum(a, b)):
        with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device"):
            fn()
    assert (a + ft.tensor(2.0)).tolist() == [3.0] * 3  # a 0-dim cpu tensor is read as a scalar
    assert (b + a.cpu()).device == ft.device("cpu")


def test_operators_decline_what_torch_declines() -> None:
    x = ft.ones(2)
    assert (x == None) is False and (x != "a") is True  # noqa: E711
    with pytest.raises(TypeError, match="unsupported operand"):
        operator.add(x, [1])
    assert isinstance(np.float32(2) * x, ft.Tensor)  # numpy defers to Tensor's __rmul__
    assert isinstance(np.float64(2) - x, ft.Tensor)


# --- layouts ------------------------------------------------------------------------------------

LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "transposed exp": lambda lib: lib.arange(6.0).view(2, 3).t().exp(),
    "transposed + column": lambda lib: lib.arange(6.0).view(2, 3).t() + lib.ones(3, 1),
    "transposed + contiguous": lambda lib: lib.arange(6.0).view(2, 3).t() + lib.ones(3, 2),
    "permuted 3d": lambda lib: lib.arange(24.0).view(2, 3, 4).permute(2, 0, 1) * 2,
    "transposed half": lambda lib: lib.arange(6.0).view(2, 3).t().half(),
    "strided half": lambda lib: lib.arange(6.0).view(2, 3)[:, ::2].half(),
    "transposed compare": lambda lib: lib.arange(6.0).view(2, 3).t() > 2,
    "broadcast row": lambda lib: lib.ones(3, 1) * lib.ones(4),
}


@pytest.mark.parametrize("case", sorted(LAYOUTS))
def test_output_strides_equal_torch(torch: Any, case: str) -> None:
    """Outputs follow the inputs' memory order (TensorIterator), so later views and
    .contiguous() launches behave as in torch."""
    t, f = LAYOUTS[case](torch), LAYOUTS[case](ft)
    assert f.stride() == t.stride() and f.is_contiguous() == t.is_contiguous()
    np.testing.assert_allclose(to_numpy(f).astype(np.float64), to_numpy(t).astype(np.float64),
                               rtol=1e-6)


# --- launches ------------------------------------------------------------------------------------

PROGRAMS: dict[str, Callable[[Any, Any, Any, Any], Any]] = {
    # (lib, x float 2x3, i int64 2x3, m bool 2x3) -> ...
    "x - 1": lambda lib, x, i, m: x - 1,
    "1 - x": lambda lib, x, i, m: 1 - x,
    "2 / x": lambda lib, x, i, m: 2 / x,
    "2 // x": lambda lib, x, i, m: 2 // x,
    "2 % x": lambda lib, x, i, m: 2 % x,
    "2 ** x": lambda lib, x, i, m: 2 ** x,
    "x ** 2": lambda lib, x, i, m: x ** 2,
    "-x, abs(x), +x": lambda lib, x, i, m: (-x, abs(x), +x),
    "where gt scalar": lambda lib, x, i, m: lib.where(x > 0, x, 0.0),
    "where two scalars": lambda lib, x, i, m: lib.where(m, 1.0, 0.0),
    "where int scalar": lambda lib, x, i, m: lib.where(m, i, 0.5),
    "where tensors": lambda lib, x, i, m: lib.where(m, i, x),
    "x.where": lambda lib, x, i, m: x.where(m, 0.0),
    "add alpha": lambda lib, x, i, m: lib.add(x, x, alpha=2),
    "inplace ops": lambda lib, x, i, m: (x.add_(1), x.mul_(x), x.clamp_(0, 1), x.sigmoid_()),
    "operators inplace": lambda lib, x, i, m: (x.__iadd__(1), x.__itruediv__(2),
                                               x.__ipow__(2), i.__ifloordiv__(2)),
    "isfinite float": lambda lib, x, i, m: x.isfinite(),
    "isfinite int": lambda lib, x, i, m: i.isfinite(),
    "isnan isinf": lambda lib, x, i, m: (x.isnan(), x.isinf()),
    "isclose": lambda lib, x, i, m: lib.isclose(x, x),
    "isclose int": lambda lib, x, i, m: lib.isclose(i, i),
    "isclose bool": lambda lib, x, i, m: lib.isclose(m, m),
    "isclose equal_nan": lambda lib, x, i, m: lib.isclose(x, x, equal_nan=True),
    "isclose zero tol": lambda lib, x, i, m: lib.isclose(x, x, rtol=0, atol=0),
    "allclose equal": lambda lib, x, i, m: (lib.allclose(x, x), lib.equal(x, x)),
    "casts": lambda lib, x, i, m: (x.float(), x.half(), x.to(lib.float32), x.long(),
                                   x.type(lib.float16), x.type_as(i), x.to(x), x.double()),
    "to copy": lambda lib, x, i, m: x.to(lib.float32, copy=True),
    "clamp tensor": lambda lib, x, i, m: (x.clamp(x, x + 1), x.clamp_min(0), x.clamp_max(x)),
    "rounding": lambda lib, x, i, m: (x.floor(), i.round(), x.trunc(), x.ceil(), x.sign()),
    "math": lambda lib, x, i, m: (x.exp(), i.log1p(), x.rsqrt(), x.sin(), x.tanh(),
                                  x.reciprocal(), x.square(), x.relu()),
    "activations": lambda lib, x, i, m: (
        (silu if lib is ft else lib.nn.functional.silu)(x),
        (gelu if lib is ft else lib.nn.functional.gelu)(x, approximate="tanh")),
    "logical bitwise": lambda lib, x, i, m: (m & m, m | True, ~m, i ^ i, i << 1,
                                              x.logical_and(i), m.logical_not()),
    "fill copy zero": lambda lib, x, i, m: (x.fill_(2.0), x.zero_(), x.copy_(i), x.fill_(0)),
    "lerp": lambda lib, x, i, m: (lib.lerp(x, x, 0.5), x.lerp_(x, x)),
    "min max": lambda lib, x, i, m: (lib.minimum(x, i), lib.maximum(x, x)),
    "division modes": lambda lib, x, i, m: (lib.div(x, 2, rounding_mode="floor"),
                                            lib.true_divide(i, 2), i.floor_divide_(2)),
    "comparisons": lambda lib, x, i, m: (x == 1, 1 < x, x != i, x.ge(i), x.eq_(1)),
    "rsub": lambda lib, x, i, m: (lib.rsub(x, 1), lib.rsub(x, x, alpha=2)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_launches_equal_torchs_non_view_aten_ops(torch: Any, name: str) -> None:
    rng = np.random.default_rng(0)
    x, i, m = sample("float32", (2, 3), rng), sample("int64", (2, 3), rng), sample(
        "bool", (2, 3), rng)
    tx, ti, tm = (to_torch(v) for v in (x, i, m))
    fx, fi, fm = (ours(v, "cuda") for v in (x, i, m))
    with torch_launches() as want:
        PROGRAMS[name](torch, tx, ti, tm)
    with launches() as got:
        PROGRAMS[name](ft, fx, fi, fm)
    assert got == want


def test_documented_launch_counts_on_cuda() -> None:
    x = ft.ones(2, 3, device="cuda")
    cases: list[tuple[Callable[[], Any], list[str]]] = [
        (lambda: x - 1, ["sub"]),
        (lambda: 1 - x, ["rsub"]),
        (lambda: 2 / x, ["reciprocal", "mul"]),
        (lambda: ft.where(x > 0, x, 0.0), ["gt", "scalar_tensor", "where"]),
        (lambda: x.float(), []),
        (lambda: x.to("cuda"), []),
        (lambda: x.isfinite(), ["abs", "ne", "eq", "mul"]),
        (lambda: ft.allclose(x, x), ["allclose"]),
    ]
    for fn, ops in cases:
        with launches() as names:
            fn()
        assert names == ops
    with launches() as names:
        ft.isclose(x, x)
    assert len(names) == 13


def test_copies_and_fills_are_counted_by_kind() -> None:
    x = ft.ones(2, 3, device="cuda")
    kinds = []
    for fn in (lambda: x.cpu(), lambda: ft.ones(2, 3).cuda(), lambda: x.half(),
               lambda: x.to("cpu", ft.float16), lambda: x.zero_(), lambda: x.fill_(0),
               lambda: x.fill_(1.5), lambda: x.copy_(ft.ones(3)), lambda: x.copy_(x * 1),
               lambda: x.copy_(ft.zeros(2, 3)), lambda: ft.zeros(2, 3).copy_(x)):
        ft.LaunchCounter.reset()
        fn()
        kinds.append(dict(ft.LaunchCounter.by_kind))
    assert kinds == [{"memcpy_d2h": 1}, {"memcpy_h2d": 1}, {"kernel": 1}, {"memcpy_d2h": 1},
                     {"memset": 1}, {"memset": 1}, {"kernel": 1}, {"memcpy_h2d": 1},
                     {"kernel": 1, "memcpy_d2d": 1}, {"memcpy_h2d": 1}, {"memcpy_d2h": 1}]


# --- Tensor.to and the casts ---------------------------------------------------------------------

def test_to_overloads_follow_torch() -> None:
    x = ft.ones(2, 3)
    assert x.to(ft.float32) is x and x.to("cpu") is x and x.to(x) is x and x.to() is x
    assert x.float() is x and x.to(device=None, dtype=None) is x
    y = x.to(ft.float32, copy=True)
    assert y is not x and y.data_ptr() != x.data_ptr() and y.tolist() == x.tolist()
    assert x.to(ft.int64).dtype is ft.int64 and x.to(ft.ones(1, dtype=ft.int8)).dtype is ft.int8
    z = x.to("cuda", ft.float16, non_blocking=True)
    assert z.is_cuda and z.dtype is ft.float16
    assert x.to(device="cuda", dtype=ft.bfloat16).dtype is ft.bfloat16
    assert x.to(ft.float16, True, True).dtype is ft.float16
    assert x.cuda().cuda() is not None and x.cuda().device == ft.device("cuda", 0)
    assert x.type() == "torch.FloatTensor" and x.cuda().type() == "torch.cuda.FloatTensor"
    assert x.type(ft.int8).type() == "torch.CharTensor"
    assert x.type("torch.cuda.HalfTensor").is_cuda
    for method, dt in [("half", ft.float16), ("bfloat16", ft.bfloat16), ("double", ft.float64),
                       ("long", ft.int64), ("int", ft.int32), ("short", ft.int16),
                       ("char", ft.int8), ("byte", ft.uint8), ("bool", ft.bool)]:
        assert getattr(x, method)().dtype is dt
    with pytest.raises(TypeError, match=r"to\(\) received an invalid combination"):
        x.to(memory_format="torch.channels_last")


def test_copy_fill_zero_semantics() -> None:
    dst = ft.zeros(2, 3, dtype=ft.int32)
    assert dst.copy_(ft.tensor([1.7, -1.7, 2.5])).tolist() == [[1, -1, 2]] * 2  # truncates
    assert dst.fill_(2.9).tolist() == [[2] * 3] * 2
    assert dst.fill_(ft.tensor(5)).tolist() == [[5] * 3] * 2
    assert dst.zero_().tolist() == [[0] * 3] * 2
    base = ft.zeros(4, 4)
    column = base[:, 1]
    assert column.copy_(ft.arange(4.0, device="cuda")) is column  # device to host, into a view
    assert base[:, 1].tolist() == [0.0, 1.0, 2.0, 3.0] and base.sum().item() == 6.0
    assert ft.zeros(3).expand(2, 3).fill_(1).tolist() == [[1.0] * 3] * 2  # torch allows it
    assert ft.ones(2).copy_(3).tolist() == [3.0, 3.0]


# --- capture: kernels read their buffers at replay ------------------------------------------------

def test_pointwise_kernels_replay_in_a_cuda_graph() -> None:
    cuda = pytest.importorskip("fake_torch.cuda")
    if not hasattr(cuda, "CUDAGraph"):
        pytest.skip("fake_torch.cuda.CUDAGraph not built yet")
    static_x = ft.zeros(4, device="cuda")
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        y = ft.where(static_x > 1, static_x * 2 - 1, 0.5).half().float().clamp_(max=6)
    static_x.copy_(ft.tensor([0.0, 1.0, 2.0, 5.0]))
    ft.LaunchCounter.reset()
    g.replay()
    assert ft.LaunchCounter.n == 1
    assert y.tolist() == [0.5, 0.5, 3.0, 6.0]


# --- torch.testing --------------------------------------------------------------------------------

def _assert_close_cases(lib: Any) -> list[tuple[Any, Any, dict[str, Any]]]:
    t = lib.tensor
    return [
        (1, 1.0, {}), (1, 2, {}), (1.0, 1.1, {}), ([1, 2], [1], {}), (lib.ones(2), [1.0, 1.0], {}),
        (lib.ones(2), lib.ones(2).double(), {}), (lib.ones(2), lib.ones(2), {"rtol": 1}),
        ([lib.ones(2), lib.zeros(2)], [lib.zeros(2), lib.zeros(3)], {}),
        (t(1.0), t(2.0), {}), (t([1, 2, 3]), t([1, 5, 3]), {}),
        (t([1.0, math.nan]), t([1.0, math.nan]), {}),
        (t([1.0, math.nan]), t([1.0, math.nan]), {"equal_nan": True}),
        ({"a": 1}, {"b": 1}, {}), (None, 1, {}), (True, False, {}),
        (t([1.0, 2.0]), t([1.0, 2.5]), {"msg": "boom"}),
        (t([1.0, 2.0]), t([1.0, 2.5]), {"msg": lambda m: "X" + m[:10]}),
        (lib.ones(3).half(), lib.ones(3).half() * 1.001, {}), (t([0.0, 1.0]), t([1e-6, 1.0]), {}),
        (t([1, 2]), t([1.0, 2.0]), {"check_dtype": False}),
        (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 4.1]]), {}),
        (t([1.0, 2.0]).bfloat16(), t([1.01, 2.0]).bfloat16(), {}),
        (t([1.0, 2.0]).bfloat16(), t([1.1, 2.0]).bfloat16(), {}),
        (t([1, 2], dtype=lib.uint8), t([3, 2], dtype=lib.uint8), {}),
        (t([True, False]), t([True, True]), {}),
        (t([1.0, 2.0]), t([1.0, 2.000001]), {"rtol": 0, "atol": 0}),
        ([1, [2, t([1.0])]], [1, [2, t([2.0])]], {}),
        (t([math.inf]), t([-math.inf]), {}), (np.float32(1.0), 1.0, {}),
        (t([1.0, 2.0]), t([1.0, 2.0]).reshape(2, 1), {}),
        (lib.ones(2, 3), lib.ones(3, 2).t(), {"check_stride": True}),
        (t([1.0, 2.0]), t([1.0, 2.0]), {"check_stride": True}),
    ]


def test_assert_close_messages_equal_torchs(torch: Any) -> None:
    for (at, et, kt), (af, ef, kf) in zip(_assert_close_cases(torch), _assert_close_cases(ft),
                                          strict=True):
        _, want = outcome(lambda: torch.testing.assert_close(at, et, **kt))  # noqa: B023
        _, got = outcome(lambda: ft.testing.assert_close(af, ef, **kf))  # noqa: B023
        if want is None:
            assert got is None, got
            continue
        assert type(got) is type(want), (got, want)
        text = str(want).replace("torch.Tensor", "fake_torch._tensor.Tensor")
        assert str(got) == text


def test_assert_close_default_tolerances() -> None:
    close = ft.testing.assert_close
    close(ft.tensor([1.0]), ft.tensor([1.0 + 1e-6]))
    with pytest.raises(AssertionError, match=r"^Tensor-likes are not close!"):
        close(ft.tensor([1.0]), ft.tensor([1.0 + 1e-4]))
    close(ft.tensor([1.0], dtype=ft.float16), ft.tensor([1.0009765625], dtype=ft.float16))
    close(ft.tensor([1.0], dtype=ft.bfloat16), ft.tensor([1.0078125], dtype=ft.bfloat16))
    with pytest.raises(AssertionError, match=r"^Tensor-likes are not equal!"):
        close(ft.tensor([1]), ft.tensor([2]))
    with pytest.raises(AssertionError, match="'device' do not match"):
        close(ft.ones(2), ft.ones(2, device="cuda"))
    close(ft.ones(2), ft.ones(2, device="cuda"), check_device=False)


# --- queries -------------------------------------------------------------------------------------

def test_dtype_queries() -> None:
    assert ft.is_tensor(ft.ones(1)) and not ft.is_tensor(1.0)
    assert ft.is_floating_point(ft.ones(1)) and not ft.is_floating_point(ft.arange(2))
    assert ft.numel(ft.ones(2, 3)) == 6
    assert ft.can_cast(ft.int32, ft.float16) and not ft.can_cast(ft.float32, ft.int64)
    assert not ft.can_cast(ft.int8, ft.bool)
    assert ft.scalar_tensor(1).dtype is ft.float32 and ft.scalar_tensor(1).dim() == 0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("scalar", [1e40, -1e300, 1e5, float("inf")])
def test_a_scalar_past_the_dtype_range_warns_nothing(dtype: str, device: str,
                                                     scalar: float) -> None:
    """`x * 1e40` on float32 (or 1e5 on float16) is inf, as torch gives it, and prints no
    numpy overflow warning (torch says nothing): both through `x * s` and torch.mul."""
    import warnings
    x = ft.ones(3, dtype=getattr(ft, dtype), device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [x * scalar, ft.mul(x, scalar), x + scalar, ft.sub(x, scalar)]
    expected = [np.float64(scalar), np.float64(scalar), np.float64(scalar) + 1,
                1 - np.float64(scalar)]
    for g, e in zip(got, expected, strict=True):
        with np.errstate(over="ignore"):
            want = np.full(3, e).astype(NP_DTYPE[dtype]).astype(np.float64)
        assert g.dtype == getattr(ft, dtype)
        np.testing.assert_array_equal(g.double().cpu().numpy(), want)
