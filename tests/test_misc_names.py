"""Names the corpus scan found missing (/work/notes/corpus_missing.md), each against real torch
CPU: values, layouts, errors and, on cuda, the launches CUDA torch makes."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_same_error, launches, outcome, torch_launches

import fake_torch as ft
from fake_torch._kernels import shape as _shape

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def _same(program: Callable[[Any], Any]) -> None:
    """program(torch) and program(fake_torch) give the same result or the same error."""
    theirs, their_error = outcome(lambda: program(torch))
    ours, our_error = outcome(lambda: program(ft))
    assert_same_error(our_error, their_error)
    if their_error is None:
        assert _plain(ours) == _plain(theirs)


def _plain(value: Any) -> Any:
    if isinstance(value, (torch.Tensor, ft.Tensor)):
        return (str(value.dtype), tuple(value.shape), value.stride(), value.tolist())
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_plain(v) for v in value]
    return value


def _m(lib: Any, *shape: int) -> Any:
    return lib.arange(float(np.prod(shape) if shape else 1)).reshape(shape)


# --- Tensor.H, mH (and mT, adjoint, T on 0-D) ---------------------------------------------------

@pytest.mark.parametrize("program", [
    lambda lib: _m(lib, 2, 3).H, lambda lib: _m(lib, 2, 3).t().H, lambda lib: _m(lib, 3).H,
    lambda lib: _m(lib, 2, 3, 4).H, lambda lib: _m(lib, 2, 3, 4).mH, lambda lib: _m(lib, 3).mH,
    lambda lib: _m(lib, 3).mT, lambda lib: _m(lib, 3).adjoint(), lambda lib: _m(lib).H,
    lambda lib: _m(lib).mH, lambda lib: _m(lib).mT, lambda lib: _m(lib).adjoint(),
])
def test_conjugate_transposes_like_torch(program: Callable[[Any], Any]) -> None:
    _same(program)


def test_zero_dim_forms_warn_once_and_return_the_tensor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_shape, "_WARNED", set())
    x = ft.ones(())
    for name, get, text in [
            ("H", lambda: x.H, "Tensor.H is deprecated on 0-D tensors. Consider using x.conj()."),
            ("mH", lambda: x.mH, "Tensor.mH is deprecated on 0-D tensors. Consider using "
                                 "x.conj()."),
            ("mT", lambda: x.mT, "Tensor.mT is deprecated on 0-D tensors. This function is the "
                                 "identity in these cases."),
            ("adjoint", lambda: x.adjoint(), "adjoint() is deprecated on 0-D tensors. Consider "
                                             "using x.conj()."),
            ("T", lambda: x.T, "Tensor.T is deprecated on 0-D tensors. This function is the "
                               "identity in these cases.")]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = get()
            assert (got is x and get() is x) if name != "T" else got.shape == () == get().shape
        assert [str(w.message) for w in caught] == [text], name  # once, as TORCH_WARN_ONCE


def test_h_is_a_view_and_launches_nothing() -> None:
    x = ft.ones(2, 3, device="cuda")
    with launches() as names:
        h = x.H
    assert names == [] and h.data_ptr() == x.data_ptr() and h.stride() == (1, 3)


# --- put, put_ ------------------------------------------------------------------------------------

def _x(lib: Any) -> Any:
    return lib.arange(6.0).reshape(2, 3)


PUT: list[tuple[str, Callable[[Any], Any]]] = [
    ("negative wraps", lambda lib: _x(lib).put_(lib.tensor([1, -1]), lib.tensor([9.0, 8.0]))),
    ("accumulate duplicates",
     lambda lib: _x(lib).put(lib.tensor([1, 1]), lib.tensor([9.0, 8.0]), accumulate=True)),
    ("index of any shape", lambda lib: lib.put(_x(lib), lib.tensor([[0], [5]]),
                                               lib.tensor([9.0, 8.0]))),
    ("positional accumulate",
     lambda lib: lib.put(_x(lib), lib.tensor([1, 2]), lib.tensor([9.0, 8.0]), True)),
    ("logical order of a transpose",
     lambda lib: _x(lib).t().put(lib.tensor([1]), lib.tensor([9.0]))),
    ("transposed in place",
     lambda lib: _x(lib).t().put_(lib.tensor([1, 4, 1]), lib.tensor([1.0, 2, 3]), True)),
    ("nothing to put", lambda lib: _x(lib).put(lib.tensor([], dtype=lib.long), lib.tensor([]))),
    ("out of range", lambda lib: _x(lib).put(lib.tensor([10]), lib.tensor([9.0]))),
    ("out of range below", lambda lib: _x(lib).put(lib.tensor([-7]), lib.tensor([9.0]))),
    ("sizes differ", lambda lib: _x(lib).put(lib.tensor([1]), lib.tensor([9.0, 2]))),
    ("float index", lambda lib: _x(lib).put(lib.tensor([1.0]), lib.tensor([9.0]))),
    ("int32 index", lambda lib: _x(lib).put(lib.tensor([1], dtype=lib.int32),
                                            lib.tensor([9.0]))),
    ("dtypes differ", lambda lib: _x(lib).put(lib.tensor([1]),
                                              lib.tensor([9], dtype=lib.float64))),
    ("into empty", lambda lib: lib.empty(0).put(lib.tensor([0]), lib.tensor([1.0]))),
    ("expanded self", lambda lib: _x(lib).expand(2, 2, 3).put_(lib.tensor([1]),
                                                               lib.tensor([9.0]))),
    ("a number source", lambda lib: _x(lib).put(lib.tensor([1]), 3.0)),
]


@pytest.mark.parametrize("program", [p for _, p in PUT], ids=[n for n, _ in PUT])
def test_put_like_torch(program: Callable[[Any], Any]) -> None:
    _same(program)


def test_put_launches_on_cuda() -> None:
    """put_ is one kernel; put a clone (preserve_format) and then put_."""
    x, idx, src = ft.ones(2, 3, device="cuda"), ft.tensor([1], device="cuda"), ft.ones(1,
                                                                                     device="cuda")
    tx, tidx, tsrc = torch.ones(2, 3), torch.tensor([1]), torch.ones(1)
    with launches() as ours:
        x.put_(idx, src)
    with torch_launches() as theirs:
        tx.put_(tidx, tsrc)
    assert ours == theirs == ["put_"]
    with launches() as ours:
        x.put(idx, src)
    assert ours == ["clone", "put_"]  # (the CPU dispatcher shows one `put`)


# --- to_sparse, get_device_module, torch.cpu ------------------------------------------------

def test_to_sparse_is_refused() -> None:
    for call in (lambda: ft.ones(2).to_sparse(), lambda: ft.ones(2, 2).to_sparse(1),
                 lambda: ft.ones(2, 2).to_sparse(layout=None)):
        with pytest.raises(NotImplementedError, match=r"torch\.Tensor\.to_sparse"):
            call()
    assert torch.ones(2).to_sparse().is_sparse  # (torch has it: a refusal, not a typo)


def test_get_device_module_like_torch() -> None:
    assert ft.get_device_module("cpu") is ft.cpu and torch.get_device_module("cpu") is torch.cpu
    assert ft.get_device_module("cuda:1") is ft.cuda and ft.get_device_module() is ft.cuda
    assert ft.get_device_module(ft.device("cuda", 0)) is ft.cuda
    _same(lambda lib: lib.get_device_module(5))


def test_torch_cpu_like_torch() -> None:
    for lib in (torch, ft):
        cpu = lib.cpu
        assert (cpu.is_available(), cpu.is_initialized(), cpu.device_count(),
                cpu.current_device(), cpu.synchronize(), cpu.set_device("cpu")) == (
            True, True, 1, "cpu", None, None)
        default = cpu.current_stream()
        side = cpu.Stream()
        with cpu.stream(side):
            assert cpu.current_stream() is side
        assert cpu.current_stream() is default
        event = cpu.Event()
        assert (event.query(), event.record(), event.synchronize(), event.wait()) == (
            True, None, None, None)
    assert sorted(ft.cpu.__all__) == sorted(torch.cpu.__all__)
    with pytest.raises(NotImplementedError, match=r"torch\.cpu\.get_capabilities"):
        ft.cpu.get_capabilities()


# --- masked_scatter, masked_scatter_ ----------------------------------------------------------

def _z(lib: Any) -> Any:
    return lib.zeros(2, 3)


def _mask(lib: Any) -> Any:
    return lib.tensor([[True, False, True], [False, True, False]])


SCATTER: list[tuple[str, Callable[[Any], Any]]] = [
    ("out of place", lambda lib: _z(lib).masked_scatter(_mask(lib), lib.arange(10.0))),
    ("in place", lambda lib: _z(lib).masked_scatter_(_mask(lib), lib.arange(10.0))),
    ("torch.", lambda lib: lib.masked_scatter(_z(lib), _mask(lib), lib.arange(10.0))),
    ("broadcast mask", lambda lib: _z(lib).masked_scatter(_mask(lib)[0], lib.arange(10.0))),
    ("0-dim mask", lambda lib: _z(lib).masked_scatter(lib.tensor(True), lib.arange(10.0))),
    ("2-D source", lambda lib: _z(lib).masked_scatter(_mask(lib),
                                                      lib.arange(10.0).reshape(2, 5))),
    ("broadcast self", lambda lib: _z(lib)[:1].masked_scatter(_mask(lib), lib.arange(10.0))),
    ("transposed", lambda lib: _z(lib).t().masked_scatter(_mask(lib).t(), lib.arange(10.0))),
    ("transposed in place",
     lambda lib: _z(lib).t().masked_scatter_(_mask(lib).t(), lib.arange(10.0))),
    ("empty", lambda lib: lib.zeros(0, 3).masked_scatter_(lib.zeros(0, 3, dtype=lib.bool),
                                                          lib.arange(10.0))),
    ("float mask", lambda lib: _z(lib).masked_scatter(_mask(lib).float(), lib.arange(10.0))),
    ("short source", lambda lib: _z(lib).masked_scatter(_mask(lib), lib.arange(2.0))),
    ("dtypes", lambda lib: _z(lib).masked_scatter(_mask(lib), lib.arange(10.0).double())),
    ("dtypes in place", lambda lib: _z(lib).masked_scatter_(_mask(lib),
                                                            lib.arange(10.0).double())),
    ("mask does not broadcast", lambda lib: _z(lib)[0].masked_scatter_(_mask(lib),
                                                                       lib.arange(10.0))),
    ("expanded self", lambda lib: _z(lib).expand(2, 2, 3).masked_scatter_(_mask(lib),
                                                                          lib.arange(10.0))),
]


@pytest.mark.parametrize("program", [p for _, p in SCATTER], ids=[n for n, _ in SCATTER])
def test_masked_scatter_like_torch(program: Callable[[Any], Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(program)


def test_masked_scatter_launches_on_cuda() -> None:
    """ATen's masked_scatter: a contiguous clone, then masked_scatter_, which copies a strided
    (or broadcast) mask or source first."""
    x, m = ft.zeros(2, 3, device="cuda"), _mask(ft).cuda()
    s = ft.arange(10.0, device="cuda")
    for call, expected in [(lambda: x.masked_scatter_(m, s), ["masked_scatter_"]),
                           (lambda: x.masked_scatter(m, s), ["clone", "masked_scatter_"]),
                           (lambda: x.masked_scatter_(m[0], s), ["clone", "masked_scatter_"]),
                           (lambda: x.masked_scatter_(m, s[::2]), ["clone", "masked_scatter_"])]:
        with launches() as names:
            call()
        assert names == expected


# --- mode ---------------------------------------------------------------------------------------

def _ints(lib: Any) -> Any:
    return lib.tensor([[1, 2, 2, 3, 3], [5, 5, 1, 1, 0]])


MODE: list[tuple[str, Callable[[Any], Any]]] = [
    ("last dim", lambda lib: lib.mode(_ints(lib))),
    ("dim 0", lambda lib: _ints(lib).mode(0)),
    ("keepdim", lambda lib: _ints(lib).mode(dim=1, keepdim=True)),
    ("ties: smallest value, last index", lambda lib: lib.mode(lib.tensor([3.0, 1.0, 3.0, 1.0]))),
    ("0-dim", lambda lib: lib.mode(lib.tensor(5))),
    ("0-dim keepdim", lambda lib: lib.mode(lib.tensor(5), keepdim=True)),
    ("bool", lambda lib: lib.mode(lib.tensor([True, False, True]))),
    ("half", lambda lib: lib.mode(_ints(lib).half())),
    ("bfloat16", lambda lib: lib.mode(_ints(lib).bfloat16())),
    ("strided", lambda lib: lib.mode(_ints(lib).t())),
    ("random 3-D", lambda lib: lib.mode(lib.tensor(
        np.random.default_rng(0).integers(0, 4, (3, 4, 5))), 1)),
    ("empty reduced dim", lambda lib: lib.mode(lib.zeros(2, 0), 1)),
    ("empty kept dim", lambda lib: lib.mode(lib.zeros(2, 0), 0)),
    ("empty 1-D", lambda lib: lib.mode(lib.tensor([]))),
    ("dim out of range", lambda lib: lib.mode(_ints(lib), 2)),
]


@pytest.mark.parametrize("program", [p for _, p in MODE], ids=[n for n, _ in MODE])
def test_mode_like_torch(program: Callable[[Any], Any]) -> None:
    theirs, their_error = outcome(lambda: program(torch))
    ours, our_error = outcome(lambda: program(ft))
    assert_same_error(our_error, their_error)
    if their_error is None:
        assert type(ours).__name__ == type(theirs).__name__ == "mode"
        assert _plain(ours.values) == _plain(theirs.values)
        assert _plain(ours.indices) == _plain(theirs.indices)


def test_mode_is_one_launch() -> None:
    x = _ints(ft).cuda()
    with launches() as ours:
        x.mode(1)
    with torch_launches() as theirs:
        _ints(torch).mode(1)
    assert ours == theirs == ["mode"]


def test_masked_scatter_dtype_error_is_cuda_torchs_on_cuda() -> None:
    """masked_scatter__cuda words it as masked_scatter_ (as users of CUDA torch report it); the
    CPU kernel, which the oracle above checks, as masked_scatter, without the space."""
    with pytest.raises(RuntimeError, match=r"^masked_scatter_: expected self and source to have "
                                           r"same dtypes but got Float and Double$"):
        ft.zeros(2, device="cuda").masked_scatter(ft.ones(2, dtype=ft.bool, device="cuda"),
                                                  ft.ones(2, dtype=ft.float64, device="cuda"))


# --- torch.linalg.cholesky, torch.cholesky_inverse ---------------------------------------------

def _spd(lib: Any, dtype: str = "float64") -> Any:
    m = np.random.default_rng(0).standard_normal((3, 4, 4))
    return lib.tensor(m @ m.transpose(0, 2, 1) + 4 * np.eye(4)).to(getattr(lib, dtype))


def _a(lib: Any) -> Any:
    return lib.tensor([[4.0, 2.0], [2.0, 3.0]])


CHOLESKY: list[tuple[str, Callable[[Any], Any]]] = [
    ("lower", lambda lib: lib.linalg.cholesky(_a(lib))),
    ("upper", lambda lib: lib.linalg.cholesky(_a(lib), upper=True)),
    ("broadcast batch", lambda lib: lib.linalg.cholesky(_a(lib).expand(3, 2, 2))),
    ("batch float64", lambda lib: lib.linalg.cholesky(_spd(lib))),
    ("batch float32 upper", lambda lib: lib.linalg.cholesky(_spd(lib, "float32"), upper=True)),
    ("reads the lower triangle",
     lambda lib: lib.linalg.cholesky(lib.tensor([[4.0, 100.0], [2.0, 3.0]]))),
    ("upper reads the upper triangle",
     lambda lib: lib.linalg.cholesky(lib.tensor([[4.0, 2.0], [100.0, 3.0]]), upper=True)),
    ("0 x 0", lambda lib: lib.linalg.cholesky(lib.zeros(0, 0))),
    ("batch of 0 x 0", lambda lib: lib.linalg.cholesky(lib.zeros(2, 0, 0))),
    ("transposed input", lambda lib: lib.linalg.cholesky(lib.eye(3).t())),
    ("inverse", lambda lib: lib.cholesky_inverse(lib.linalg.cholesky(_a(lib)))),
    ("inverse upper", lambda lib: lib.cholesky_inverse(_a(lib), upper=True)),
    ("inverse batch", lambda lib: lib.linalg.cholesky(_spd(lib)).cholesky_inverse()),
    ("inverse empty batch", lambda lib: lib.cholesky_inverse(lib.eye(2).expand(0, 2, 2))),
]

CHOLESKY_REFUSED: list[tuple[str, Callable[[Any], Any]]] = [
    ("not square", lambda lib: lib.linalg.cholesky(lib.ones(2, 3))),
    ("1-D", lambda lib: lib.linalg.cholesky(lib.ones(2))),
    ("int64", lambda lib: lib.linalg.cholesky(lib.ones(2, 2, dtype=lib.int64))),
    ("half", lambda lib: lib.linalg.cholesky(_a(lib).half())),
    ("bfloat16", lambda lib: lib.linalg.cholesky(_a(lib).bfloat16())),
    ("upper not a bool", lambda lib: lib.linalg.cholesky(lib.eye(2), upper=1)),
    ("inverse not square", lambda lib: lib.cholesky_inverse(lib.ones(2, 3))),
    ("inverse 1-D", lambda lib: lib.cholesky_inverse(lib.ones(2))),
    ("inverse int64", lambda lib: lib.cholesky_inverse(lib.ones(2, 2, dtype=lib.int64))),
    ("inverse half", lambda lib: lib.cholesky_inverse(lib.eye(2).half())),
]

LINALG_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("not positive-definite", lambda lib: lib.linalg.cholesky(
        lib.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("batch element", lambda lib: lib.linalg.cholesky(
        lib.tensor([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]]))),
    ("NaN", lambda lib: lib.linalg.cholesky(lib.tensor([[float("nan"), 0.0], [0.0, 1.0]]))),
    ("singular factor", lambda lib: lib.cholesky_inverse(lib.zeros(2, 2))),
]


@pytest.mark.parametrize("program", [p for _, p in CHOLESKY], ids=[n for n, _ in CHOLESKY])
def test_cholesky_like_torch(program: Callable[[Any], Any]) -> None:
    theirs, ours = program(torch), program(ft)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert str(ours.dtype) == str(theirs.dtype)
    rtol = 1e-5 if theirs.dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("program", [p for _, p in CHOLESKY_REFUSED],
                         ids=[n for n, _ in CHOLESKY_REFUSED])
def test_cholesky_refused_as_torch_refuses(program: Callable[[Any], Any]) -> None:
    _same(program)


@pytest.mark.parametrize("program", [p for _, p in LINALG_ERRORS],
                         ids=[n for n, _ in LINALG_ERRORS])
def test_failed_factorizations_raise_linalg_error(program: Callable[[Any], Any]) -> None:
    _, theirs = outcome(lambda: program(torch))
    _, ours = outcome(lambda: program(ft))
    assert isinstance(theirs, torch.linalg.LinAlgError)
    assert isinstance(ours, ft.linalg.LinAlgError) and isinstance(ours, RuntimeError)
    assert type(ours).__name__ == type(theirs).__name__ == "_LinAlgError"
    assert str(ours) == str(theirs)


def test_cholesky_launches_and_reads_info_on_the_host() -> None:
    """linalg_cholesky_ex, then _linalg_check_errors: `infos.any().item()`, a host sync."""
    a = _a(ft).cuda()
    with launches() as names:
        ft.linalg.cholesky(a)
    assert names == ["linalg_cholesky_ex", "any", "_local_scalar_dense"]
    with launches() as names:
        ft.cholesky_inverse(a)
    assert names == ["cholesky_inverse", "any", "_local_scalar_dense"]
    with torch_launches() as theirs:
        torch.linalg.cholesky(_a(torch))
    assert theirs == ["linalg_cholesky_ex", "_linalg_check_errors"]
