"""Complex tensors (complex64, complex128) against real torch (CPU build): the rotary embedding of
Llama-style code end to end (values and launches, cpu and cuda), every op the emulation covers
(values, dtypes, shapes, error classes and first lines), printing, views that share memory,
launch counts, and the refusals (complex32, the lazy conjugate, ops not emulated on complex).

Programs are written once as strings over names bound per library (`m` is torch or fake_torch;
`x`, `f`, `M`, ... are the same values in each), so a case reads as the code it checks and
fails with that code as its id.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from oracles import assert_same_error, launches, outcome, torch_launches

import fake_torch as ft
from fake_torch import nn

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

TOL = {"rtol": 1e-5, "atol": 1e-6}  # float32 arithmetic, whose libm calls may differ by an ulp


def env(m: Any, device: str = "cpu") -> dict[str, Any]:
    """The names the programs use, holding the same values in library `m`."""
    def t(v: Any, **kw: Any) -> Any:
        return m.tensor(v, device=device, **kw)

    return {
        "m": m,
        "x": t([1 + 2j, 3 - 1j, -0.5 + 0.25j]),
        "xd": t([1 + 2j, 3 - 1j], dtype=m.complex128),
        "f": t([1.0, 2.0, -3.0]),
        "i": t([1, 2, 3]),
        "M": t([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j]]),
        "R": t([[1.0, 2.0], [3.0, 4.0]]),
        "mask": t([True, False, True]),
        "nan_inf": t([1 + 1j, complex(float("inf"), 0), complex(0, float("nan"))]),
        "inf": float("inf"),
        "nan": float("nan"),
    }


def run(program: str, m: Any, device: str = "cpu") -> tuple[Any, BaseException | None]:
    return outcome(lambda: eval(program, env(m, device)))


def comparable(r: Any) -> Any:
    """A result in a form both libraries' results compare in: tensors as (dtype, shape,
    values), dtypes by name, tuples element by element."""
    if isinstance(r, (torch.Tensor, ft.Tensor)):
        values = r.numpy(force=True) if isinstance(r, ft.Tensor) else r.resolve_conj().numpy()
        return ("tensor", str(r.dtype), tuple(r.shape), values)
    if isinstance(r, (torch.dtype, ft.dtype, torch.Size, ft.Size)):
        return str(r)
    if isinstance(r, (tuple, list)):
        return [comparable(v) for v in r]
    return r


def assert_same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, tuple) and theirs and theirs[0] == "tensor":
        assert ours[:3] == theirs[:3]
        np.testing.assert_allclose(ours[3], theirs[3], equal_nan=True, **TOL)
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            assert_same(o, t)
    elif isinstance(theirs, complex | float):
        np.testing.assert_allclose(ours, theirs, equal_nan=True, **TOL)
    else:
        assert ours == theirs


def assert_like_torch(program: str, device: str = "cpu") -> None:
    """The program's result (or error: class and first line) is torch's (CPU build)."""
    theirs, their_error = run(program, torch)
    ours, our_error = run(program, ft, device)
    assert_same_error(our_error, their_error)
    if their_error is None:
        if isinstance(ours, ft.Tensor) and "cpu()" not in program and "m.zeros" not in program:
            assert ours.device.type == device
        assert_same(comparable(ours), comparable(theirs))


# --- creation, casts, promotion ----------------------------------------------------------------

CREATION = [
    "m.tensor([1 + 2j, 3])", "m.tensor(1j)", "m.tensor([[1j, 2], [3, 4.5]])",
    "m.tensor([1, 2j], dtype=m.complex128)", "m.tensor([1j], dtype=m.float32)",
    "m.tensor([1j, 2], dtype=m.int32)", "m.tensor([1j], dtype=m.bool)",
    "m.tensor([1 + 2j, complex(inf, 0), complex(nan, 1)])",
    "m.zeros(2, dtype=m.cfloat)", "m.ones(2, 2, dtype=m.cdouble)",
    "m.empty(2, dtype=m.complex64).dtype", "m.full((2,), 1 + 1j)",
    "m.full((2,), 2, dtype=m.cdouble)", "m.full((2,), 1j, dtype=m.float32)", "m.zeros_like(x)",
    "m.ones_like(x)", "m.full_like(x, 2 - 1j)",
    "m.empty_like(x).dtype", "x.new_zeros(2)", "x.new_full((2,), 1j)", "x.new_tensor([1, 2])",
    "m.zeros(2).fill_(1j)", "m.zeros(2).fill_(1 + 0j)", "m.zeros(2, dtype=m.bool).fill_(1j)",
    "m.zeros(2, dtype=m.int64).fill_(1j)", "m.zeros(2, dtype=m.float64).fill_(1j)",
    "m.zeros(2, dtype=m.cfloat).fill_(1e300)", "m.zeros(2, dtype=m.cfloat).fill_(1 + 1j)",
    "m.arange(3, dtype=m.cfloat)", "m.complex(f, f)", "m.complex(f.double(), f)",
    "m.complex(i, i)", "m.complex(m.ones(2), m.ones(3))",
    "m.complex(f, f, out=m.empty(3, dtype=m.cdouble))", "m.polar(f.abs(), f)",
    "m.polar(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64))",
    "x.tolist()", "m.tensor(1j).item()", "float(m.tensor(1 + 0j))", "float(m.tensor(1 + 1j))",
    "int(m.tensor(2 + 0j))", "int(m.tensor(2 + 1j))", "complex(m.tensor(2 + 1j))",
    "complex(m.tensor(2.5))", "bool(m.tensor(0j))",
]

CASTS = [
    "x.to(m.float64)", "x.float()", "x.double()", "x.int()", "x.long()", "x.bool()", "x.half()",
    "x.to(m.complex128)", "xd.to(m.complex64)", "f.to(m.complex64)", "i.to(m.complex64)",
    "x.cfloat()", "x.cdouble()", "f.cfloat()", "x.type_as(f)", "m.ones(3).copy_(x)",
    "m.zeros(3, dtype=m.cfloat).copy_(f)", "m.zeros(3, dtype=m.cdouble).copy_(x)",
]

PROMOTION = [
    "m.promote_types(m.float32, m.complex64)", "m.promote_types(m.float64, m.complex64)",
    "m.promote_types(m.int64, m.complex64)", "m.promote_types(m.bfloat16, m.complex64)",
    "m.promote_types(m.complex64, m.complex128)", "m.promote_types(m.bool, m.complex128)",
    "m.result_type(f, 1j)", "m.result_type(i, 1j)", "m.result_type(f.double(), 1j)",
    "m.result_type(f.half(), 1j)", "m.result_type(f.bfloat16(), 1j)",
    "m.result_type(f, m.tensor(1j, dtype=m.complex128))",
    "m.result_type(i, m.tensor(1j, dtype=m.complex128))", "m.result_type(x, 1.5)",
    "m.result_type(x, f.double())", "m.can_cast(m.complex64, m.float32)",
    "m.can_cast(m.float32, m.complex64)", "m.can_cast(m.complex128, m.complex64)",
    "m.can_cast(m.complex64, m.int64)", "m.can_cast(m.int64, m.complex64)",
    "m.can_cast(m.complex64, m.bool)", "m.can_cast(m.bool, m.complex64)",
    "m.is_complex(x)", "m.is_complex(f)", "x.is_complex()", "f.is_complex()",
    "x.is_floating_point()", "m.is_complex(3)", "m.finfo(m.complex64).eps",
]


@pytest.mark.parametrize("program", CREATION + CASTS + PROMOTION)
def test_creation_casts_promotion_like_torch(program: str) -> None:
    assert_like_torch(program)


# --- views: no launch, shared memory -----------------------------------------------------------

VIEWS = [
    "m.view_as_real(x)", "m.view_as_real(x[1:]).storage_offset()", "m.view_as_real(x[::2])",
    "m.view_as_real(x).stride()", "m.view_as_real(f)", "m.view_as_real(3)",
    "m.view_as_complex(R)", "m.view_as_complex(R.double())",
    "m.view_as_complex(R.view(4, 1, 1, 1)[:2].view(2, 2))",
    "m.view_as_complex(m.arange(12.0).view(3, 2, 2)[1:])",
    "m.view_as_complex(m.arange(12.0).view(3, 2, 2).transpose(0, 1))",
    "m.view_as_complex(m.zeros(3, 2, dtype=m.bfloat16))",
    "m.view_as_complex(m.zeros(3, 2, dtype=m.int32))", "m.view_as_complex(m.zeros(3, 3))",
    "m.view_as_complex(m.zeros(()))", "m.view_as_complex(m.zeros(2, 3).t())",
    "m.view_as_complex(m.zeros(3, 2)[:, :1])", "m.view_as_complex(m.zeros(7)[1:].view(3, 2))",
    "m.view_as_complex(m.zeros(3, 4)[:, 1:3])", "m.view_as_complex(m.zeros(2, 2, 3)[..., :2])",
    "m.view_as_complex(m.zeros(4).as_strided((2, 2), (0, 1)))",
    "x.real", "x.imag", "x[1:].imag.storage_offset()", "x.imag.stride()", "f.real", "f.imag",
    "m.real(x)", "m.imag(x)", "M.t().real", "x.unsqueeze(0).expand(2, 3).imag",
    "x.view(m.float32)", "x.view(m.float64)", "x.view(m.complex128)", "x.view(m.int32)",
    "x[1:].view(m.float32)", "R.view(m.complex64)", "R.view(m.complex128)",
    "m.zeros(3).view(m.complex64)", "m.arange(12.0).view(3, 4)[:, 1:3].view(m.complex64)",
    "m.arange(12.0).view(3, 4).t().view(m.complex64)", "m.zeros(2, dtype=m.int64).view(m.cfloat)",
]


@pytest.mark.parametrize("program", VIEWS)
def test_views_like_torch(program: str) -> None:
    assert_like_torch(program)


def test_views_share_memory_and_setters_copy() -> None:
    for m in (torch, ft):
        x = m.tensor([1 + 2j, 3 - 1j])
        m.view_as_real(x)[1, 0] = 7.0  # the real part of x[1]
        x.imag[0] = -5.0
        x.real = m.tensor([10.0, 20.0])
        x.imag = 0.5  # a number, as torch's setter takes
        assert x.tolist() == [10 + 0.5j, 20 + 0.5j]
        r = m.zeros(2, 2)
        m.view_as_complex(r)[1] = 3 - 4j
        assert r.tolist() == [[0.0, 0.0], [3.0, -4.0]]


def test_views_launch_nothing_on_cuda() -> None:
    x = ft.tensor([1 + 2j, 3 - 1j], device="cuda")
    r = ft.zeros(4, 2, device="cuda")
    with launches() as ops:
        ft.view_as_real(x), ft.view_as_complex(r), x.real, x.imag, x.view(ft.float32)
        r.view(ft.complex64), x.resolve_conj(), x.resolve_neg(), x.is_conj(), x.is_complex()
    assert ops == []


# --- pointwise ops and reductions --------------------------------------------------------------

OPS = [
    # arithmetic and promotion
    "x * f", "f * x", "x + 1", "x + 1.5", "x - 1j", "1 - x", "x / f", "x / 2", "f / x", "i * x",
    "i + 1j", "f + 1j", "x * (1 + 2j)", "x.add(x, alpha=2.5)", "x.add(x, alpha=1j)",
    "m.ones(2).add(m.ones(2), alpha=1j)", "m.zeros(2).add_(1j)",
    "m.zeros(2).mul_(m.tensor([1j, 2]))",
    "x.clone().add_(f)", "x.clone().mul_(2)", "xd * x", "x ** 2", "x ** 0.5", "x ** 3",
    "x.pow(2.5)", "x.pow(x)", "2 ** x", "x.square()", "-x", "x.neg()",
    # unary math
    "x.exp()", "x.log()", "x.log1p()", "x.sqrt()", "x.rsqrt()", "x.reciprocal()", "x.sin()",
    "x.cos()", "x.tanh()", "x.sigmoid()", "m.nn.functional.silu(x)", "x.clone().exp_()",
    "x.abs()", "xd.abs()", "x.clone().abs_()", "x.angle()", "f.angle()", "i.angle()",
    "m.angle(m.tensor([-0.0, nan, -1.0]))", "m.sgn(x)", "m.sgn(f)", "m.sgn(m.tensor([0j]))",
    "x.conj_physical()", "m.lerp(x, x * 2, 0.5)",
    # comparisons and tests
    "x == x", "x != f", "m.equal(x, x)", "m.equal(x, f)", "m.isnan(nan_inf)", "m.isinf(nan_inf)",
    "m.isfinite(nan_inf)", "m.isclose(x, x + 1e-6j)", "m.isclose(x, x + 1e-3j)",
    "m.allclose(x, x + 1e-6j)", "m.allclose(x, x + 1e-2j)",
    "m.isclose(m.tensor([complex(nan, 0)]), m.tensor([complex(nan, 0)]), equal_nan=True)",
    "m.logical_not(x)", "m.logical_and(x, f)",
    "m.where(mask, x, 0)", "m.where(mask, x, f)", "m.where(mask, f, 1j)",
    "x.masked_fill(mask, 1j)", "x.masked_fill(mask, 2)", "m.zeros(3).masked_fill(mask, 1j)",
    # reductions
    "x.sum()", "x.mean()", "x.prod()", "M.sum(0)", "M.mean(1)", "M.sum(dtype=m.complex128)",
    "f.sum(dtype=m.cfloat)", "x.sum(dtype=m.float32)", "x.mean(dtype=m.float32)", "x.cumsum(0)",
    "x.var()", "M.std(1)", "M.var(0, keepdim=True)", "x.norm()", "M.norm(dim=1)",
    "m.linalg.vector_norm(M, ord=1, dim=0)", "m.linalg.vector_norm(M, ord=inf)",
    "m.nn.functional.normalize(x, dim=0)", "x.any()", "x.all()",
    # matmul
    "x @ x", "M @ M", "M @ x[:2]", "m.mm(M, M)", "m.bmm(M.unsqueeze(0), M.unsqueeze(0))",
    "m.einsum('ij,jk->ik', M, M)", "m.nn.functional.linear(M, M)", "m.outer(f, x)",
    "m.dot(x, x)",
    # shape ops and copies
    "m.cat([x, x])", "m.cat([x, f])", "m.stack([x, x])", "x[1:]", "x[[0, 2]]", "x[mask]",
    "M.t()", "M.transpose(0, 1).contiguous()", "M.permute(1, 0).reshape(4)", "M.flatten()",
    "M.unsqueeze(0)", "x.clone()", "x.contiguous()", "m.flip(x, [0])", "m.roll(x, 1)",
    "x.repeat(2)", "x.expand(2, 3)", "x.index_select(0, m.tensor([0, 2]))",
    "m.gather(x, 0, m.tensor([2, 0]))", "x.masked_select(mask)", "m.tril(M)",
    "m.stack([x.real, x.imag], dim=-1)", "m.view_as_complex(m.stack([x.real, x.imag], dim=-1))",
    "x.unsqueeze(0).expand(2, 3).contiguous()", "x.clone().zero_()", "x.clone().fill_(2 - 1j)",
    "m.einsum('i,i->', x, x)", "m.outer(x, x)", "x.to(m.complex64) is x",
    # from and to the host
    "m.tensor([m.tensor(1j), m.tensor(2 + 0j)])", "m.tensor([m.tensor(1j), m.tensor(2.0)])",
    "m.tensor([m.tensor(1, dtype=m.int32), m.tensor(2)])",
    "m.tensor([m.tensor(1.0, dtype=m.float64), m.tensor(2.0)])",
    "m.tensor(x.numpy())", "m.from_numpy(x.numpy() * 2)", "m.as_tensor(x, dtype=m.complex128)",
    "x.numpy().dtype",
]

REFUSED = [
    "x < x", "x > 1", "x <= f", "x >= 0", "x.max()", "x.min()", "x.amax()", "x.amin()",
    "x.max(0)", "x.min(0)", "x.argmax()", "x.argmin()", "m.maximum(x, x)", "m.minimum(x, x)",
    "m.clamp(x, 0, 1)", "x.clamp(min=0)", "m.relu(x)", "m.nn.functional.gelu(x)",
    "m.floor(x)", "m.ceil(x)", "m.round(x)", "m.trunc(x)", "m.sign(x)", "x // 2", "x % 2",
    "m.remainder(x, 2)", "x & x", "m.erfinv(x)", "m.sort(x)", "x.argsort()", "m.topk(x, 1)",
    "m.softmax(x, 0)", "x.clone().bernoulli_(0.5)", "x.clone().random_()",
    # complex scalars given to ops over real tensors
    "f.clamp(min=1 + 0j)", "f.clamp(max=2j)", "m.lerp(f, f, 0.5 + 0j)", "m.lerp(f, f, 1j)",
    "f.clone().index_fill_(0, m.tensor([0]), 1j)", "x.clone().index_fill_(0, m.tensor([0]), 1j)",
    "f == 1j", "f < 1j", "f.pow(1j)", "f // 1j", "i * 1j", "m.tensor(True) + 1j",
    "f.sub(1j, alpha=2)", "m.where(mask, x, f.double())", "x.clamp(min=1j)",
    "x.index_put_((m.tensor([0]),), m.tensor([5j]))", "x.scatter(0, m.tensor([0]), m.tensor([5j]))",
    "m.nn.functional.pad(x, (1, 1))", "m.nn.functional.embedding(m.tensor([0, 1]), M)",
]


@pytest.mark.parametrize("program", OPS + REFUSED)
def test_ops_like_torch(program: str) -> None:
    assert_like_torch(program)


@pytest.mark.parametrize("program", ["x * f", "x.exp()", "x.abs()", "x.sum()", "M @ M",
                                     "m.view_as_real(x)", "x.real", "m.cat([x, x])",
                                     "m.polar(f.abs(), f)", "m.sort(x)", "x.max(0)",
                                     "x.cpu()", "m.zeros(3, dtype=m.cfloat).copy_(x)",
                                     "x[m.tensor([0, 2])]", "x.tolist()", "x[1].item()"])
def test_ops_on_cuda_like_torch(program: str) -> None:
    assert_like_torch(program, device="cuda")


def test_orderings_on_cuda_name_cudas_compare_kernel() -> None:
    """CUDA dispatches lt/le/gt/ge in one "compare_cuda" (aten/src/ATen/native/cuda/
    CompareKernels.cu); the CPU build names "lt_cpu", ..."""
    x = ft.tensor([1j], device="cuda")
    with pytest.raises(NotImplementedError,
                       match=r"^\"compare_cuda\" not implemented for 'ComplexFloat'$"):
        x < x  # noqa: B015


# --- launches: what torch's dispatcher runs -----------------------------------------------------

LAUNCHES = [
    "x * f", "x * (1 + 2j)", "x - 1j", "1 - x", "x / 2", "x.exp()", "x ** 2", "x.square()",
    "x.sgn()", "m.polar(f, f)", "m.complex(f, f)", "f.to(m.cfloat)",
    "x.real.contiguous()", "x.conj_physical()", "m.conj_physical(f)", "x.sum()", "x.mean()",
    "m.equal(x, x)", "m.allclose(x, x)", "m.isfinite(x)", "m.isnan(x)", "m.isinf(x)", "x == x",
    "M @ M", "m.cat([x, x])", "m.ones_like(x)", "m.zeros_like(M)", "m.view_as_complex(R)",
    "m.view_as_real(x)", "x.imag", "x.view(m.float32)", "m.view_as_complex(R.t().contiguous())",
]


# Where one aten op that torch's dispatcher shows runs more kernels inside it, what an NVIDIA
# H200 ran (torch 2.11.0+cu130, torch.profiler's CUDA kernels, 2026-12-04): complex abs and
# angle compute complex -> complex into a temporary and copy its real parts out (ATen's
# unary_op_impl_with_complex_to_float_out: abs_kernel, then direct_copy_kernel); complex var
# adds the variances of the real and imaginary parts (two Welford reductions and an add; std
# takes a square root of that sum in place, read from ATen's std_var_out, not measured).
CUDA_RAN = {"x.abs()": ["abs", "copy_"], "x.angle()": ["angle", "copy_"],
            "x.var()": ["var", "var", "add"], "x.std()": ["var", "var", "add", "sqrt_"]}


@pytest.mark.parametrize("program", LAUNCHES + list(CUDA_RAN))
def test_launches_like_torch(program: str) -> None:
    their_env, our_env = env(torch), env(ft, "cuda")
    with torch_launches() as expected:
        eval(program, their_env)
    with launches() as ops:
        eval(program, our_env)
    if program in CUDA_RAN:
        assert len(expected) == 1  # (the dispatcher sees the one op only)
        expected = CUDA_RAN[program]
    assert ops == expected


def test_setting_real_is_one_copy() -> None:
    x = ft.tensor([1 + 2j, 3 - 1j], device="cuda")
    f = ft.tensor([5.0, 6.0], device="cuda")
    with launches() as ops:
        x.real = f
    assert ops == ["copy_"]
    assert x.tolist() == [5 + 2j, 6 - 1j]


# --- the rotary embedding of Llama-style code ---------------------------------------------------

def precompute_freqs_cis(m: Any, dim: int, end: int, theta: float = 10000.0,
                         device: Any = None) -> Any:
    freqs = 1.0 / (theta ** (m.arange(0, dim, 2, device=device)[: (dim // 2)].float() / dim))
    t = m.arange(end, device=freqs.device, dtype=m.float32)
    freqs = m.outer(t, freqs)
    return m.polar(m.ones_like(freqs), freqs)  # complex64


def reshape_for_broadcast(freqs_cis: Any, x: Any) -> Any:
    shape = [d if i == 1 or i == x.ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(m: Any, xq: Any, xk: Any, freqs_cis: Any) -> tuple[Any, Any]:
    xq_ = m.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = m.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = m.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = m.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_rotary_embedding_end_to_end(device: str, dtype: str) -> None:
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((2, 5, 4, 16)).astype(np.float32) for _ in range(2))
    tq, tk = (torch.tensor(a).to(getattr(torch, dtype)) for a in (q, k))
    fq, fk = (ft.tensor(a, device=device).to(getattr(ft, dtype)) for a in (q, k))
    start_pos, seqlen = 2, 5
    with torch_launches() as expected:
        table = precompute_freqs_cis(torch, 16, 12)
        theirs = apply_rotary_emb(torch, tq, tk, table[start_pos: start_pos + seqlen])
    with launches() as ops:
        ours_table = precompute_freqs_cis(ft, 16, 12, device=device)
        ours = apply_rotary_emb(ft, fq, fk, ours_table[start_pos: start_pos + seqlen])
    assert str(ours_table.dtype) == "torch.complex64"
    np.testing.assert_allclose(ours_table.numpy(force=True), table.numpy(), **TOL)
    for o, t in zip(ours, theirs, strict=True):
        assert str(o.dtype) == str(t.dtype) and o.shape == t.shape
        np.testing.assert_allclose(o.float().numpy(force=True), t.float().numpy(),
                                   rtol=1e-2 if dtype == "bfloat16" else 1e-5, atol=1e-5)
    # cpu tensors launch nothing (no GPU); on cuda each kernel torch's dispatcher runs, once
    assert ops == (expected if device == "cuda" else [])


def rotary_module(m: Any) -> Any:
    """A module of library `m` holding a rotary table as a buffer, beside a Linear."""
    module = m.nn.Module()
    module.register_buffer("freqs_cis", precompute_freqs_cis(m, 8, 6))
    module.lin = m.nn.Linear(2, 2)
    return module


def test_rotary_table_as_a_buffer() -> None:
    """freqs_cis registered as a buffer: state_dict, .to("cuda"), copy_, indexing by
    positions, and a module cast (which casts complex buffers too, as torch's does)."""
    results = []
    for m in (torch, ft):
        r = rotary_module(m)
        copy = rotary_module(m)
        copy.load_state_dict(r.state_dict())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            as_double = rotary_module(m).to(m.float64).freqs_cis.dtype  # (imaginary parts go)
            as_cdouble = rotary_module(m).to(m.complex128)
        picked = copy.freqs_cis[m.tensor([0, 3])]
        results.append((sorted(r.state_dict()), str(r.half().freqs_cis.dtype), str(as_double),
                        str(as_cdouble.lin.weight.dtype), str(as_cdouble.freqs_cis.dtype),
                        picked.tolist(), copy.freqs_cis[1:3].tolist()))
    assert_same(comparable(list(results[1])), comparable(list(results[0])))
    on_cuda = nn.Module()
    on_cuda.register_buffer("freqs_cis", precompute_freqs_cis(ft, 8, 6))
    on_cuda.to("cuda")
    assert on_cuda.freqs_cis.is_cuda and on_cuda.freqs_cis.dtype is ft.complex64


# --- printing -------------------------------------------------------------------------------------

REPRS = [
    "m.tensor([1 + 2j, 3 - 1j])", "m.tensor([1.5 + 2j, 3 - 1e-5j])",
    "m.tensor([[1 + 2j, 3 - 1j], [0j, -0.0 - 0.0j]])", "m.tensor(1j)",
    "m.tensor([1e10 + 1j, 1])",
    "m.tensor([complex(nan, inf), 1 - 1j])", "m.zeros(0, dtype=m.cfloat)",
    "m.zeros(2, 0, dtype=m.cdouble)", "m.tensor([1 + 2j], dtype=m.complex128)",
    "m.view_as_complex(m.arange(2000, dtype=m.float32).view(1000, 2) / 7)",
    "m.view_as_complex(m.arange(40, dtype=m.float64).view(4, 5, 2) / 3)",
    "m.tensor([0.1 + 0.2j, 123456.5 - 0.001j])", "m.tensor([-1 - 1j, 1 + 1j]) * 1e-7",
    "m.tensor([2 + 0j, -3 + 0j])",
]


@pytest.mark.parametrize("program", REPRS)
def test_repr_like_torch(program: str) -> None:
    assert repr(eval(program, env(ft))) == repr(eval(program, env(torch)))


def test_repr_of_a_cuda_complex_tensor() -> None:
    assert repr(ft.tensor([1 + 2j], device="cuda")) == "tensor([1.+2.j], device='cuda:0')"


# --- warnings and refusals ------------------------------------------------------------------------

def test_complex_to_real_cast_warns_as_torch_at_the_callers_line() -> None:
    x = ft.tensor([1 + 2j])
    for cast in (lambda: x.float(), lambda: ft.ones(1).copy_(x), lambda: x.type_as(ft.ones(1))):
        with pytest.warns(UserWarning, match="^Casting complex values to real discards the "
                                             "imaginary part$") as caught:
            cast()
        assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.bool()  # (no warning: a complex number's truth is exact)
        x.cdouble()


def test_complex32_is_refused_by_name() -> None:
    for make in (lambda: ft.zeros(2, dtype=ft.chalf), lambda: ft.tensor([1.0]).chalf(),
                 lambda: ft.view_as_complex(ft.zeros(3, 2, dtype=ft.float16)),
                 lambda: ft.tensor([1.0], dtype=ft.float16) + 1j):
        with pytest.raises(NotImplementedError, match="complex32"):
            make()


def test_lazy_conjugate_is_refused_and_real_conj_is_the_tensor() -> None:
    f = ft.tensor([1.0, 2.0])
    assert ft.conj(f) is f and f.conj() is f and f.resolve_conj() is f
    assert torch.conj(torch.tensor([1.0])).is_conj() is False
    with pytest.raises(NotImplementedError, match="conj_physical"):
        ft.tensor([1j]).conj()
    with pytest.raises(NotImplementedError, match="conjugate"):
        ft.tensor([[1j]]).adjoint()


def test_ops_not_emulated_on_complex_refuse_by_name() -> None:
    """torch computes these on complex; fake_torch refuses rather than returning numpy's
    answer, naming the op."""
    with pytest.raises(NotImplementedError, match=r"torch\.normal .* not emulated"):
        ft.normal(ft.tensor([1j]), 1.0)


def test_randn_and_rand_draw_complex() -> None:
    ft.manual_seed(0)
    z = ft.randn(20000, dtype=ft.cfloat)
    assert z.dtype is ft.complex64
    # torch draws both parts with std 1/sqrt(2), so E|z|^2 = 1
    assert abs((z.abs() ** 2).mean().item() - 1.0) < 0.05
    assert abs(z.real.std().item() - 0.5 ** 0.5) < 0.02
    u = ft.rand(1000, dtype=ft.cdouble)
    assert u.dtype is ft.complex128
    assert 0 <= u.real.min().item() and u.imag.max().item() < 1
    with launches() as ops:
        ft.randn(4, dtype=ft.cfloat, device="cuda")
    with torch_launches() as expected:
        torch.randn(4, dtype=torch.cfloat)
    assert ops == expected


# --- promotion over every pair of dtypes ---------------------------------------------------------

HELD = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
        "float64", "complex64", "complex128"]


@pytest.mark.parametrize("first", [*HELD, "complex32"])
def test_promote_types_with_complex_like_torch(first: str) -> None:
    for second in ("complex32", "complex64", "complex128"):
        theirs = torch.promote_types(getattr(torch, first), getattr(torch, second))
        assert str(ft.promote_types(getattr(ft, first), getattr(ft, second))) == str(theirs)
        theirs_cast = torch.can_cast(getattr(torch, second), getattr(torch, first))
        assert ft.can_cast(getattr(ft, second), getattr(ft, first)) == theirs_cast


@pytest.mark.parametrize("first", HELD)
def test_result_type_with_complex_operands_like_torch(first: str) -> None:
    """A dimensioned tensor of `first` with a complex 0-dim tensor or Python complex, and a
    complex tensor with every other kind of operand: torch's tiers and categories."""
    def operands(m: Any) -> list[tuple[Any, Any]]:
        t = m.zeros(2, dtype=getattr(m, first))
        c = m.zeros(2, dtype=m.complex64)
        return [(t, m.tensor(1j, dtype=m.complex128)), (t, 1j), (t, m.tensor(1j)),
                (c, m.zeros((), dtype=getattr(m, first))), (c, 2.5), (c, True),
                (m.zeros((), dtype=getattr(m, first)), 1j)]

    for (a, b), (ta, tb) in zip(operands(ft), operands(torch), strict=True):
        assert str(ft.result_type(a, b)) == str(torch.result_type(ta, tb))
