"""Names the corpus scan (docs/corpus_scan.md) found real inference code using and fake_torch
lacking: F.softplus and nn.Softplus (Mamba's dt), expm1, index_add(_) (MoE combine),
F.one_hot, aminmax. Against real torch CPU: values (bit for bit where the kernel is exact),
dtypes, launches as torch's dispatcher records them for cuda, in-place identity, errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft
from fake_torch._dynamo.exc import BackendCompilerFailed
from fake_torch.nn import functional as F

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
TF = torch.nn.functional

VALUES = np.array([-30.0, -4.0, -1.0, -1e-7, -0.0, 0.0, 1e-6, 0.5, 1.0, 4.9, 5.0, 19.99, 20.0,
                   20.5, 40.0, 100.0, np.nan, np.inf, -np.inf, 3.0], dtype=np.float32)


def _pair(dtype: str = "float32") -> tuple[Any, ft.Tensor]:
    t = torch.from_numpy(VALUES.copy()).to(getattr(torch, dtype))
    return t, ft.tensor(VALUES, device="cuda").to(getattr(ft, dtype))


def _host(x: Any) -> np.ndarray:
    if isinstance(x, ft.Tensor):
        return np.asarray(x.numpy(force=True), dtype=np.float64)
    return x.detach().double().numpy()


# --- softplus, expm1 ----------------------------------------------------------------------------

UNARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "softplus": lambda T, F_, x: F_.softplus(x),
    "softplus_beta_threshold": lambda T, F_, x: F_.softplus(x, 2.0, 5),
    "softplus_keywords": lambda T, F_, x: F_.softplus(x, threshold=1.0, beta=0.5),
    "softplus_negative_beta": lambda T, F_, x: F_.softplus(x, beta=-1),
    "softplus_zero_beta": lambda T, F_, x: F_.softplus(x, beta=0),
    "Softplus": lambda T, F_, x: T.nn.Softplus(beta=3, threshold=4.0)(x),
    "torch.expm1": lambda T, F_, x: T.expm1(x),
    "Tensor.expm1": lambda T, F_, x: x.expm1(),
    "torch.expm1_": lambda T, F_, x: T.expm1_(x),
    "Tensor.expm1_": lambda T, F_, x: x.expm1_(),
}
INPLACE = {"torch.expm1_", "Tensor.expm1_"}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_values_and_launches_match_torch(name: str) -> None:
    tx, fx = _pair()
    with torch_launches(cuda=True) as expected:
        theirs = UNARY[name](torch, TF, tx)
    with launches() as got:
        ours = UNARY[name](ft, F, fx)
    # numpy's and torch's exp/log1p may differ in the last bit or two of float32, a subnormal
    # result's too (softplus(-x, beta=-1) of 4: AVX2's kernels and AVX-512's differ there)
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    np.testing.assert_allclose(_host(ours), _host(theirs), rtol=3e-7, atol=2 * tiny)
    number = ~np.isnan(_host(theirs))  # zeros keep their sign (a NaN's sign means nothing)
    np.testing.assert_array_equal(np.signbit(_host(ours))[number],
                                  np.signbit(_host(theirs))[number])
    assert got == expected and len(got) == 1
    assert (ours is fx) == (name in INPLACE) == (theirs is tx)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", ["softplus", "softplus_beta_threshold", "torch.expm1"])
def test_other_float_dtypes_compute_in_float32_and_round_once(name: str, dtype: str) -> None:
    tx, fx = _pair(dtype)
    theirs, ours = UNARY[name](torch, TF, tx), UNARY[name](ft, F, fx)
    assert repr(ours.dtype) == repr(theirs.dtype)
    if dtype == "float64":
        np.testing.assert_allclose(_host(ours), _host(theirs), rtol=1e-15, atol=0)
    else:  # float32 math rounded once: equal, but where float32 results differ by an ulp
        close = np.isclose(_host(ours), _host(theirs), rtol=1e-2, atol=0, equal_nan=True)
        assert close.all()


def test_expm1_of_integers_computes_in_the_default_dtype() -> None:
    a = np.array([-3, 0, 1, 5])
    theirs = torch.expm1(torch.from_numpy(a))
    ours = ft.expm1(ft.tensor(a, device="cuda"))
    assert repr(ours.dtype) == repr(theirs.dtype) == "torch.float32"
    np.testing.assert_allclose(_host(ours), _host(theirs), rtol=3e-7)


def test_softplus_refuses_integers_and_bad_arguments_like_torch() -> None:
    for program in (lambda T: T.nn.functional.softplus(T.tensor([1, 2])),
                    lambda T: T.nn.functional.softplus(T.tensor([True])),
                    lambda T: T.nn.functional.softplus(T.ones(2), "2"),
                    lambda T: T.nn.functional.softplus(T.ones(2), 1, 20, True)):
        assert_raises_like_torch(program)


def test_softplus_module_repr_matches_torch() -> None:
    for make in (lambda nn: nn.Softplus(), lambda nn: nn.Softplus(2, 10),
                 lambda nn: nn.Softplus(beta=0.5, threshold=3.5)):
        assert repr(make(ft.nn)) == repr(make(torch.nn))


# --- index_add ----------------------------------------------------------------------------------

def _index_add_case(T: Any, dev: str) -> dict[str, Callable[[], Any]]:
    """Programs over fresh tensors: repeated indices accumulate; alpha scales."""
    def rows() -> Any:
        return T.arange(15.0, device=dev).view(5, 3)

    def idx(*v: int, dtype: Any = None) -> Any:
        return T.tensor(v, device=dev, dtype=dtype or T.int64)
    return {
        "torch.index_add": lambda: T.index_add(rows(), 0, idx(4, 0, 4), T.ones(3, 3, device=dev)),
        "alpha": lambda: rows().index_add(0, idx(1, 1), T.full((2, 3), 0.5, device=dev),
                                          alpha=-2),
        "dim1": lambda: rows().index_add(1, idx(2, 0, 2, 2), T.ones(5, 4, device=dev)),
        "int32_index": lambda: rows().index_add(-2, idx(3, dtype=T.int32),
                                                T.ones(1, 3, device=dev)),
        "in_place": lambda: rows().index_add_(0, idx(0, 0, 0), T.ones(3, 3, device=dev)),
        "one_dim": lambda: T.zeros(4, device=dev).index_add_(0, idx(1, 1, 3),
                                                             T.tensor([1.0, 2, 3], device=dev)),
        "zero_dim": lambda: T.zeros((), device=dev).index_add(0, idx(0),
                                                              T.tensor(2.0, device=dev)),
        "int64_alpha_truncates": lambda: T.zeros(5, dtype=T.int64, device=dev).index_add(
            0, idx(0, 4, 0), T.full((3,), 3, dtype=T.int64, device=dev), alpha=-1.7),
        "uint8_wraps": lambda: T.zeros(3, dtype=T.uint8, device=dev).index_add(
            0, idx(0, 2), T.ones(2, dtype=T.uint8, device=dev), alpha=-1),
        "bool_or": lambda: T.zeros(3, dtype=T.bool, device=dev).index_add(
            0, idx(0, 2, 2), T.tensor([True, False, True], device=dev), alpha=2),
        "bfloat16_rounds_each_add": lambda: T.ones(4, dtype=T.bfloat16, device=dev).index_add(
            0, idx(0, 0, 0, 0, 0), T.full((5,), 0.005859375, dtype=T.bfloat16, device=dev)),
        "transposed_self": lambda: rows().T.index_add(1, idx(1, 2), T.ones(3, 2, device=dev)),
        "empty_index": lambda: rows().index_add(0, idx(), T.ones(0, 3, device=dev)),
    }


@pytest.mark.parametrize("name", list(_index_add_case(np, "cpu")))
def test_index_add_values_dtype_strides_and_launches_match_torch(name: str) -> None:
    theirs = _index_add_case(torch, "cpu")[name]()
    ours_program = _index_add_case(ft, "cuda")[name]
    with launches() as got:
        ours = ours_program()
    assert repr(ours.dtype) == repr(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    np.testing.assert_array_equal(_host(ours), _host(theirs))
    # the program's own tensors come first (arange, ones, full, ...): index_add is the last
    op = "index_add_" if name in ("in_place", "one_dim") else "index_add"
    assert got[-1] == op and got.count(op) == 1


def test_index_add_launches_exactly_what_torch_dispatches() -> None:
    tx, ti, ts = torch.zeros(4, 2), torch.tensor([3, 3]), torch.ones(2, 2)
    fx, fi, fs = (ft.tensor(t.numpy(), device="cuda") for t in (tx, ti, ts))
    with torch_launches(cuda=True) as expected:
        tx.index_add_(0, ti, ts)
        torch.index_add(tx, 0, ti, ts, alpha=3)
    with launches() as got:
        fx.index_add_(0, fi, fs)
        ft.index_add(fx, 0, fi, fs, alpha=3)
    assert got == expected == ["index_add_", "index_add"]
    np.testing.assert_array_equal(fx.numpy(force=True), tx.numpy())


BAD_INDEX_ADD: dict[str, Callable[[Any], Any]] = {
    "float_index": lambda T: T.zeros(5).index_add(0, T.tensor([0.0]), T.ones(1)),
    "matrix_index": lambda T: T.zeros(5).index_add(0, T.tensor([[0], [1]]), T.ones(2)),
    "matrix_float_index": lambda T: T.zeros(5).index_add(0, T.tensor([[0.0]]), T.ones(1)),
    "dtypes_differ": lambda T: T.zeros(5).index_add(0, T.tensor([0]), T.ones(1).double()),
    "dim_beyond_source": lambda T: T.zeros(5, 3).index_add(1, T.tensor([1]), T.ones(3)),
    "count_differs": lambda T: T.zeros(5, 3).index_add(0, T.tensor([0, 1]), T.ones(3, 3)),
    "shapes_differ": lambda T: T.zeros(5, 3).index_add(0, T.tensor([0]), T.ones(1, 2)),
    "scalar_source": lambda T: T.zeros(5).index_add(0, T.tensor([1]), T.ones(())),
    "dim_out_of_range": lambda T: T.zeros(5, 3).index_add(2, T.tensor([0]), T.ones(1, 3)),
    "index_too_big_1d": lambda T: T.zeros(5).index_add(0, T.tensor([5]), T.ones(1)),
    "negative_index_2d": lambda T: T.zeros(5, 3).index_add(0, T.tensor([-1]), T.ones(1, 3)),
    "index_too_big_dim1": lambda T: T.zeros(1, 5).index_add(1, T.tensor([5]), T.ones(1, 1)),
    "number_source": lambda T: T.zeros(5).index_add(0, T.tensor([1]), 3),
    "string_alpha": lambda T: T.zeros(5).index_add_(0, T.tensor([1]), T.ones(1), alpha="a"),
    "overlapping_source": lambda T: (lambda x: x.index_add_(0, T.tensor([0, 1]), x[:2]))(
        T.zeros(5, 3)),
}


@pytest.mark.parametrize("name", list(BAD_INDEX_ADD))
def test_index_add_errors_match_torch(name: str) -> None:
    assert_raises_like_torch(BAD_INDEX_ADD[name])


# --- one_hot ------------------------------------------------------------------------------------

ONE_HOT: dict[str, Callable[[Any, Any], Any]] = {
    "inferred": lambda F_, T: F_.one_hot(T.tensor([0, 2, 1])),
    "given": lambda F_, T: F_.one_hot(T.tensor([[1, 0], [3, 2]]), 5),
    "keyword": lambda F_, T: F_.one_hot(T.tensor([3]), num_classes=4),
    "zero_dim": lambda F_, T: F_.one_hot(T.tensor(2)),
    "transposed": lambda F_, T: F_.one_hot(T.tensor([[0, 1, 2], [2, 1, 0]]).T, 3),
    "empty_given": lambda F_, T: F_.one_hot(T.zeros(0, 2, dtype=T.int64), 3),
}


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("name", list(ONE_HOT))
def test_one_hot_matches_torch(name: str, device: str) -> None:
    theirs = ONE_HOT[name](TF, torch)
    with ft.device(device):
        ours = ONE_HOT[name](F, ft)
    assert ours.device.type == device and repr(ours.dtype) == repr(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    if ours.numel() or device == "cuda":  # (fake_torch's empty cpu tensors report 0 strides)
        assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy(force=True), theirs.numpy())


def test_one_hot_on_cuda_launches_what_atens_composite_launches_there() -> None:
    # Onehot.cpp on cuda: no range check; max + a read of it only to infer the class count
    x = ft.tensor([0, 2, 1], device="cuda")
    with launches() as inferred:
        F.one_hot(x)
    with launches() as given:
        F.one_hot(x, 7)
    with launches() as empty:
        F.one_hot(ft.zeros(0, dtype=ft.int64, device="cuda"), 7)
    assert inferred == ["max", "_local_scalar_dense", "zeros", "scatter_"]
    assert given == ["zeros", "scatter_"] and empty == []


BAD_ONE_HOT: dict[str, Callable[[Any], Any]] = {
    "int32": lambda T: T.nn.functional.one_hot(T.tensor([0, 1], dtype=T.int32)),
    "float": lambda T: T.nn.functional.one_hot(T.tensor([0.0])),
    "negative": lambda T: T.nn.functional.one_hot(T.tensor([0, -1])),
    "negative_given": lambda T: T.nn.functional.one_hot(T.tensor([0, -1]), 3),
    "too_big": lambda T: T.nn.functional.one_hot(T.tensor([0, 2]), 2),
    "zero_classes": lambda T: T.nn.functional.one_hot(T.tensor([0]), 0),
    "empty_inferred": lambda T: T.nn.functional.one_hot(T.zeros(0, dtype=T.int64)),
    "float_classes": lambda T: T.nn.functional.one_hot(T.tensor([0]), 2.0),
    "list_input": lambda T: T.nn.functional.one_hot([0, 1]),
}


@pytest.mark.parametrize("name", list(BAD_ONE_HOT))
def test_one_hot_errors_match_torch_on_cpu(name: str) -> None:
    assert_raises_like_torch(BAD_ONE_HOT[name])


def test_one_hot_on_cuda_checks_only_the_class_count() -> None:
    x = ft.tensor([0, 1], device="cuda")
    with pytest.raises(RuntimeError, match=r"^num_classes should be positive$"):
        F.one_hot(x, -2)
    with pytest.raises(RuntimeError, match="out of bounds"):  # scatter_'s index check
        F.one_hot(x, 1)


def test_one_hot_without_a_class_count_breaks_the_graph_as_torch_does() -> None:
    from torch._dynamo.utils import counters as torch_counters

    from fake_torch._dynamo.utils import counters as ours

    def programs(T: Any) -> list[Callable[[Any], Any]]:
        return [lambda x: T.nn.functional.one_hot(x) * 2,
                lambda x: T.nn.functional.one_hot(x, 4) * 2]
    for theirs_fn, ours_fn in zip(programs(torch), programs(ft), strict=True):
        seen = []
        for T, counters, fn, dev in ((torch, torch_counters, theirs_fn, "cpu"),
                                     (ft, ours, ours_fn, "cuda")):
            T._dynamo.reset()
            counters.clear()
            out = T.compile(fn, backend="eager")(T.tensor([0, 2, 1], device=dev))
            seen.append((dict(counters["graph_break"]), counters["stats"]["unique_graphs"],
                         out.tolist()))
        assert seen[0] == seen[1]
        breaks = list(seen[0][0])
        assert breaks == [] or "/gb/gb0246.html" in breaks[0]  # the break is the one we mean


# --- aminmax ------------------------------------------------------------------------------------

AMINMAX: dict[str, Callable[[Any, Any], Any]] = {
    "all": lambda T, x: T.aminmax(x),
    "all_keepdim": lambda T, x: T.aminmax(x, keepdim=True),
    "dim": lambda T, x: T.aminmax(x, dim=1),
    "dim_keepdim": lambda T, x: x.aminmax(dim=-2, keepdim=True),
    "method": lambda T, x: x.aminmax(),
    "transposed": lambda T, x: x.T.aminmax(dim=1),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "uint8", "bool"])
@pytest.mark.parametrize("name", list(AMINMAX))
def test_aminmax_matches_torch(name: str, dtype: str) -> None:
    a = np.array([[3.0, -1.0, np.nan, 7.0], [2.0, 5.0, 4.0, 0.0], [9.0, -8.0, 6.0, 1.0]])
    if dtype != "float32" and dtype != "bfloat16":
        a = np.nan_to_num(a, nan=2.0)
    tx = torch.from_numpy(a).to(getattr(torch, dtype))
    fx = ft.tensor(a, device="cuda").to(getattr(ft, dtype))
    with torch_launches(cuda=True) as expected:
        theirs = AMINMAX[name](torch, tx)
    with launches() as got:
        ours = AMINMAX[name](ft, fx)
    assert type(ours).__name__ == "aminmax" and repr(ours).startswith(
        "torch.return_types.aminmax(\nmin=tensor(")
    for mine, real in ((ours.min, theirs.min), (ours.max, theirs.max)):
        assert repr(mine.dtype) == repr(real.dtype) and tuple(mine.shape) == tuple(real.shape)
        np.testing.assert_array_equal(_host(mine), _host(real))
    assert got == expected == ["aminmax"]


BAD_AMINMAX: dict[str, Callable[[Any], Any]] = {
    "empty": lambda T: T.aminmax(T.zeros(0)),
    "empty_dim": lambda T: T.aminmax(T.zeros(0, 3), dim=0),
    "dim_out_of_range": lambda T: T.aminmax(T.zeros(2, 3), dim=2),
    "tuple_dim": lambda T: T.aminmax(T.zeros(2, 3), dim=(0, 1)),
    "positional_dim": lambda T: T.aminmax(T.zeros(2, 3), 1),
}


@pytest.mark.parametrize("name", list(BAD_AMINMAX))
def test_aminmax_errors_match_torch(name: str) -> None:
    assert_raises_like_torch(BAD_AMINMAX[name])


def test_aminmax_over_an_empty_tensor_along_a_nonempty_dim_is_empty() -> None:
    theirs = torch.aminmax(torch.zeros(0, 3), dim=1, keepdim=True)
    ours = ft.aminmax(ft.zeros(0, 3), dim=1, keepdim=True)
    assert tuple(ours.min.shape) == tuple(theirs.min.shape) == (0, 1)


# --- torch._inductor.config.triton.unique_kernel_names ------------------------------------------

def test_unique_kernel_names_has_torchs_default_and_false_is_refused_not_ignored() -> None:
    import torch._inductor.config as real_config

    from fake_torch._inductor import config

    assert config.triton.unique_kernel_names is real_config.triton.unique_kernel_names is True
    assert config.get_config_copy()["triton.unique_kernel_names"] is True
    x = ft.ones(8, device="cuda")
    ft._dynamo.reset()
    config.triton.unique_kernel_names = True  # as gpt-fast and litgpt set it
    with launches() as got:
        ft.compile(lambda t: (t + 1) * 2)(x)
    assert got == ["triton_poi_fused_add_mul_0"]  # named for what it fuses
    ft._dynamo.reset()
    with config.patch({"triton.unique_kernel_names": False}), \
            pytest.raises(BackendCompilerFailed, match="unique_kernel_names=False is not "
                                                       "emulated") as info:
        ft.compile(lambda t: (t + 1) * 3)(x)  # as torch wraps a backend's error
    assert isinstance(info.value.__cause__, NotImplementedError)
    ft._dynamo.reset()


# --- logsumexp, var_mean / std_mean, log10 / log2, pi / e ---------------------------------------

def _grid() -> np.ndarray:
    return np.array([[1.0, 2.0, 3.0, -1.0], [np.inf, 1.0, 2.0, 0.0],
                     [-np.inf, -np.inf, -np.inf, -np.inf], [50.0, 100.0, -3.0, 99.5]],
                    dtype=np.float32)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "int64"])
@pytest.mark.parametrize(("dim", "keepdim"), [(1, False), (-2, True), ((0, 1), False), (0, True)])
def test_logsumexp_matches_torch(dim: Any, keepdim: bool, dtype: str) -> None:
    a = _grid() if dtype != "int64" else np.arange(16).reshape(4, 4) - 8
    theirs = torch.logsumexp(torch.from_numpy(a).to(getattr(torch, dtype)), dim, keepdim)
    ours = ft.tensor(a, device="cuda").to(getattr(ft, dtype)).logsumexp(dim, keepdim=keepdim)
    assert repr(ours.dtype) == repr(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    tol = {"bfloat16": 1e-2}.get(dtype, 1e-6)
    np.testing.assert_allclose(_host(ours), _host(theirs), rtol=tol, atol=0)


def test_logsumexp_launches_atens_composite_one_kernel_at_a_time() -> None:
    x = ft.tensor(_grid(), device="cuda")
    with launches() as got:
        ft.logsumexp(x, 1)
    assert got == ["amax", "abs", "eq", "masked_fill_", "sub", "exp_", "sum", "log_", "add_"]
    with launches() as got:
        ft.logsumexp(ft.ones(0, 3, device="cuda"), 1)  # nothing to take a max of
    assert got == []  # every op's output is empty: no kernel runs
    ints = ft.arange(4, device="cuda")
    with launches() as got:
        ft.logsumexp(ints, 0)
    assert got[0] == "_to_copy" and len(got) == 10  # an integer input: cast first


MOMENTS: dict[str, Callable[[Any, Any], Any]] = {
    "var_mean": lambda T, x: T.var_mean(x),
    "var_mean_dim": lambda T, x: T.var_mean(x, 1),
    "var_mean_unbiased_false": lambda T, x: T.var_mean(x, False),
    "var_mean_correction": lambda T, x: T.var_mean(x, dim=(0, 1), correction=0, keepdim=True),
    "std_mean_whisper": lambda T, x: T.std_mean(x, dim=-2, keepdim=True, unbiased=False),
    "std_mean": lambda T, x: T.std_mean(x),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("name", list(MOMENTS))
def test_var_mean_and_std_mean_match_torch(name: str, dtype: str) -> None:
    a = np.array([[1.0, 2.0, 4.0, 8.5], [3.0, 5.0, 9.0, -2.0], [0.25, 7.0, 1.0, 3.0]])
    tx = torch.from_numpy(a).to(getattr(torch, dtype))
    fx = ft.tensor(a, device="cuda").to(getattr(ft, dtype))
    with torch_launches(cuda=True) as expected:
        theirs = MOMENTS[name](torch, tx)
    with launches() as got:
        ours = MOMENTS[name](ft, fx)
    assert type(ours) is tuple and len(ours) == 2 and got == expected
    for mine, real in zip(ours, theirs, strict=True):
        assert repr(mine.dtype) == repr(real.dtype) and tuple(mine.shape) == tuple(real.shape)
        np.testing.assert_allclose(_host(mine), _host(real), rtol=1e-6 if dtype != "bfloat16"
                                   else 0, atol=0)


def test_var_mean_errors_and_warnings_match_torch() -> None:
    assert_raises_like_torch(lambda T: T.var_mean(T.tensor([1, 2])))
    assert_raises_like_torch(lambda T: T.std_mean(T.tensor([1, 2]), 0))
    for T in (torch, ft):
        with pytest.warns(UserWarning, match=r"^std_mean\(\): degrees of freedom is <= 0"):
            T.std_mean(T.ones(1))


@pytest.mark.parametrize("name", ["log10", "log2"])
def test_log10_and_log2_match_torch(name: str) -> None:
    tx, fx = _pair()
    for form in (lambda T, x: getattr(T, name)(x), lambda T, x: getattr(x, name)(),
                 lambda T, x: getattr(x, name + "_")()):
        before = tx.clone()
        with torch_launches(cuda=True) as expected:
            theirs = form(torch, before)
        fresh = fx.clone()
        with launches() as got:
            ours = form(ft, fresh)
        np.testing.assert_allclose(_host(ours), _host(theirs), rtol=3e-7, atol=0)
        assert got == expected
    ints = np.array([1, 10, 1000, 8])
    theirs = getattr(torch, name)(torch.from_numpy(ints))
    ours = getattr(ft, name)(ft.tensor(ints, device="cuda"))
    assert repr(ours.dtype) == repr(theirs.dtype) == "torch.float32"
    np.testing.assert_allclose(_host(ours), _host(theirs), rtol=3e-7)


def test_pi_and_e_are_torchs_floats() -> None:
    assert (type(ft.pi), ft.pi, type(ft.e), ft.e) == (type(torch.pi), torch.pi, type(torch.e),
                                                      torch.e)


# --- meshgrid, Tensor.unfold: views -------------------------------------------------------------

MESHGRID: dict[str, Callable[[Any], Any]] = {
    "ij": lambda T: T.meshgrid(T.arange(2), T.arange(3), indexing="ij"),
    "xy": lambda T: T.meshgrid(T.arange(2), T.arange(3), T.arange(4), indexing="xy"),
    "list": lambda T: T.meshgrid([T.arange(2.0), T.tensor(7.0)], indexing="ij"),
    "one": lambda T: T.meshgrid(T.arange(5), indexing="xy"),
}


@pytest.mark.parametrize("name", list(MESHGRID))
def test_meshgrid_views_match_torch(name: str) -> None:
    theirs = MESHGRID[name](torch)
    with launches() as got:
        ours = MESHGRID[name](ft)
    assert type(ours) is tuple and len(ours) == len(theirs)
    assert got.count("arange") == len(got)  # the grids themselves launch nothing
    for mine, real in zip(ours, theirs, strict=True):
        assert tuple(mine.shape) == tuple(real.shape) and mine.stride() == real.stride()
        np.testing.assert_array_equal(mine.numpy(), real.numpy())


def test_meshgrid_without_indexing_warns_once_a_process_and_means_ij() -> None:
    import warnings

    from fake_torch._kernels import window_views

    window_views._warned.clear()  # (torch's own warning may have gone already: TORCH_WARN_ONCE)
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        grids = ft.meshgrid(ft.arange(2), ft.arange(3))
    with warnings.catch_warnings():  # torch's own warns once a process: maybe here, maybe gone
        warnings.filterwarnings("ignore", "torch.meshgrid: in an upcoming release")
        oracle = torch.meshgrid(torch.arange(2), torch.arange(3))
    assert tuple(grids[0].shape) == (2, 3) == tuple(oracle[0].shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ft.meshgrid(ft.arange(2), ft.arange(3))


@pytest.mark.parametrize("program", [
    lambda T: T.meshgrid(T.arange(2), T.arange(3.0), indexing="ij"),
    lambda T: T.meshgrid(T.arange(2), T.arange(3), indexing="yx"),
    lambda T: T.meshgrid(indexing="ij"),
])
def test_meshgrid_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


UNFOLD = [(1, 2, 1), (1, 2, 2), (-1, 5, 3), (1, 0, 1), (0, 1, 1), (1, 3, 2)]


@pytest.mark.parametrize("args", UNFOLD)
@pytest.mark.parametrize("base", ["plain", "transposed", "sliced"])
def test_unfold_is_torchs_view(base: str, args: tuple[int, int, int]) -> None:
    def make(T: Any) -> Any:
        x = T.arange(30.0).view(5, 6)
        return {"plain": x[:2, :5], "transposed": x.T[:2, :5], "sliced": x[1:3, 1:]}[base]
    tx, fx = make(torch), make(ft)
    if args[1] > tx.shape[args[0]]:
        return
    theirs, ours = tx.unfold(*args), fx.unfold(*args)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.untyped_storage().data_ptr() == fx.untyped_storage().data_ptr()  # a view


@pytest.mark.parametrize("program", [
    lambda T: T.arange(10.0).view(2, 5).unfold(1, 6, 1),
    lambda T: T.arange(10.0).view(2, 5).unfold(1, 2, 0),
    lambda T: T.arange(10.0).view(2, 5).unfold(1, -1, 1),
    lambda T: T.arange(10.0).view(2, 5).unfold(2, 1, 1),
    lambda T: T.tensor(3.0).unfold(0, 2, 1),
])
def test_unfold_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_unfold_of_a_scalar_is_one_window() -> None:
    theirs, ours = torch.tensor(3.0).unfold(0, 1, 1), ft.tensor(3.0).unfold(0, 1, 1)
    assert (tuple(ours.shape), ours.stride()) == (tuple(theirs.shape), theirs.stride())


# --- torch.jit's markers, the refusals, dense tensors' sparse accessors, xpu, profiler ------------

def test_jit_markers_mark_and_return_the_function_as_torch() -> None:
    import typing
    import warnings

    assert ft.jit.Final is torch.jit.Final is typing.Final

    class Block(ft.nn.Module):  # timm's pattern: evaluated when the class is created
        fused_attn: ft.jit.Final[bool]

        @ft.jit.ignore
        def helper(self) -> int:
            return 1

    assert Block().helper() == 1
    for name in ("ignore", "unused", "export"):
        def f() -> int:
            return 2

        def g() -> int:
            return 2
        ours, theirs = getattr(ft.jit, name)(f), getattr(torch.jit, name)(g)
        assert ours is f and ours._torchscript_modifier == theirs._torchscript_modifier
    prop = ft.jit.unused(property(lambda self: 1, lambda self, v: None))
    assert prop.fget._torchscript_modifier == prop.fset._torchscript_modifier == \
        torch._jit_internal.FunctionModifiers.UNUSED
    for T in (torch, ft):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dropped = T.jit.ignore(True)(lambda: 0)
            old = T.jit.ignore(drop_on_export=True)(lambda: 0)
        assert [(w.category, str(w.message)) for w in caught] == [
            (FutureWarning, "ignore(True) has been deprecated. TorchScript will now drop the "
                            "function call on compilation. Use torch.jit.unused now. {}"),
            (FutureWarning, "ignore(drop_on_export=True) has been deprecated. TorchScript will "
                            "now drop the function call on compilation. Use torch.jit.unused "
                            "now. {}")]
        assert dropped._torchscript_modifier == old._torchscript_modifier == \
            torch._jit_internal.FunctionModifiers.UNUSED
    assert_raises_like_torch(lambda T: T.jit.ignore("x"))


def test_script_method_and_cpp_extension_load_are_refused_by_name() -> None:
    with pytest.raises(NotImplementedError, match=r"^torch\.jit\.script_method is not emulated"):
        ft.jit.script_method(lambda self: 0)
    import fake_torch.utils.cpp_extension as ours
    with pytest.raises(NotImplementedError, match=r"^torch\.utils\.cpp_extension\.load\('wkv'\)"):
        ours.load("wkv", sources=["wkv.cpp", "wkv.cu"], verbose=True)


@pytest.mark.parametrize("program", [lambda T: T.ones(2).indices(), lambda T: T.ones(2).values(),
                                     lambda T: T.tensor(1.0).indices()])
def test_sparse_accessors_of_a_dense_tensor_raise_as_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_xpu_answers_as_torchs_build_without_xpu() -> None:
    assert_raises_like_torch(lambda T: T.xpu.synchronize())
    assert ft.xpu.empty_cache() is None and torch.xpu.empty_cache() is None


def test_init_for_cuda_graphs_runs_an_empty_profile() -> None:
    import fake_torch.profiler._utils as ours

    entered = []
    original = ft.profiler.profile.__enter__

    def spy(self: Any) -> Any:
        entered.append(self)
        return original(self)
    ft.profiler.profile.__enter__ = spy  # type: ignore[method-assign]
    try:
        with launches() as got:
            ours._init_for_cuda_graphs()
    finally:
        ft.profiler.profile.__enter__ = original  # type: ignore[method-assign]
    assert len(entered) == 1 and got == []


# --- hann_window / hamming_window (whisper's log-mel front end) ----------------------------------

WINDOWS: dict[str, Callable[[Any], Any]] = {
    "hann_400": lambda T: T.hann_window(400),
    "hann_symmetric": lambda T: T.hann_window(7, False),
    "hann_float64": lambda T: T.hann_window(16, dtype=T.float64),
    "hann_one": lambda T: T.hann_window(1),
    "hann_empty": lambda T: T.hann_window(0),
    "hamming": lambda T: T.hamming_window(10),
    "hamming_coefficients": lambda T: T.hamming_window(6, False, 0.6, 0.3, dtype=T.float64),
}


@pytest.mark.parametrize("name", list(WINDOWS))
def test_windows_match_torch(name: str) -> None:
    theirs = WINDOWS[name](torch)
    ours = WINDOWS[name](ft)
    assert repr(ours.dtype) == repr(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    if ours.numel():  # (fake_torch's empty cpu tensors report 0 strides)
        assert ours.stride() == theirs.stride()
    tol = 1e-15 if repr(ours.dtype) == "torch.float64" else 1e-6
    np.testing.assert_allclose(_host(ours), _host(theirs), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_16_bit_window_reads_its_coefficients_unrounded_as_cudas_kernels(dtype: str) -> None:
    # torch's CPU composite rounds the mul_ scalars to the 16-bit dtype (a C++ Scalar there is
    # not the kernel's "original scalar"); CUDA's kernels read them unrounded in float32, as
    # Python's own x.mul_(c) does on the CPU: that chain is the oracle
    n, alpha, beta = 12, 0.54, 0.46
    dt = getattr(torch, dtype)
    theirs = torch.arange(n + 1, dtype=dt).mul_(math.pi * 2 / n).cos_().mul_(-beta) \
        .add_(alpha)[:n]
    ours = ft.hamming_window(n, dtype=getattr(ft, dtype), device="cuda")
    np.testing.assert_array_equal(_host(ours), _host(theirs))


def test_a_window_on_cuda_launches_atens_composite() -> None:
    with launches() as got:
        w = ft.hann_window(400, device="cuda")
    assert got == ["arange", "mul_", "cos_", "mul_", "add_"] and w.is_cuda
    with launches() as got:
        ft.hann_window(1, device="cuda")
        ft.hann_window(0, device="cuda")
    assert got == ["ones"]


@pytest.mark.parametrize("program", [lambda T: T.hann_window(4, dtype=T.int64),
                                     lambda T: T.hann_window(-1),
                                     lambda T: T.hann_window(5.0),
                                     lambda T: T.hamming_window(-3)])
def test_window_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


# --- torch.distributions.Categorical (whisper's temperature sampling) ----------------------------

def _categorical(T: Any, kind: str) -> Any:
    logits = T.tensor([[1.0, 2.0, 3.0, -1.0], [0.5, 0.5, -1.0, 8.0]])
    if kind == "logits":
        return T.distributions.Categorical(logits=logits)
    if kind == "probs":
        return T.distributions.Categorical(probs=logits.abs())
    return T.distributions.Categorical(probs=T.tensor([0.1, 0.0, 0.6, 0.3]))


@pytest.mark.parametrize("kind", ["logits", "probs", "one_row"])
def test_categorical_matches_torch(kind: str) -> None:
    ours, theirs = _categorical(ft, kind), _categorical(torch, kind)
    assert repr(ours) == repr(theirs)  # only the given parameter exists yet
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert type(ours.batch_shape).__name__ == "Size"
    for name in ("probs", "logits", "mode", "mean", "variance", "param_shape"):
        mine, real = getattr(ours, name), getattr(theirs, name)
        if name == "param_shape":
            assert tuple(mine) == tuple(real)
            continue
        assert repr(mine.dtype) == repr(real.dtype) and tuple(mine.shape) == tuple(real.shape)
        np.testing.assert_allclose(_host(mine), _host(real), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_host(ours.entropy()), _host(theirs.entropy()), rtol=1e-6)
    value = [[2, 0], [3, 1]] if kind != "one_row" else [2, 3, 0]
    np.testing.assert_allclose(_host(ours.log_prob(ft.tensor(value))),
                               _host(theirs.log_prob(torch.tensor(value))), rtol=1e-6)
    for expand in (True, False):
        np.testing.assert_array_equal(ours.enumerate_support(expand).numpy(),
                                      theirs.enumerate_support(expand).numpy())
    assert repr(ours) == repr(theirs)  # now both parameters
    wide_ours, wide_theirs = ours.expand((3, *ours.batch_shape)), \
        theirs.expand((3, *theirs.batch_shape))
    assert tuple(wide_ours.batch_shape) == tuple(wide_theirs.batch_shape)
    assert repr(wide_ours) == repr(wide_theirs)


def test_categorical_samples_are_multinomial_draws_with_replacement() -> None:
    certain = ft.distributions.Categorical(probs=ft.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]],
                                                           device="cuda"))
    draws = certain.sample((4,))
    assert tuple(draws.shape) == (4, 2) and repr(draws.dtype) == "torch.int64"
    assert draws.cpu().tolist() == [[1, 2]] * 4
    ft.manual_seed(0)
    p = [0.2, 0.3, 0.5]
    many = ft.distributions.Categorical(logits=ft.tensor(p, device="cuda").log()).sample((20000,))
    freq = np.bincount(many.cpu().numpy(), minlength=3) / 20000
    np.testing.assert_allclose(freq, p, atol=0.015)  # 3 sigma of a 20000-draw frequency


def test_categorical_launches_what_its_ops_launch() -> None:
    # the eager oracle: the ops torch's Categorical runs, written out
    x = ft.tensor([[1.0, 2.0, 3.0], [0.0, 0.5, 4.0]], device="cuda")
    with launches() as expected:
        logits = x - x.logsumexp(dim=-1, keepdim=True)
        bool(ft.distributions.constraints.real_vector.check(logits).all())  # validate_args
        ft.multinomial(logits.softmax(-1).reshape(-1, 3), 5, True)
    with launches() as got:
        ft.distributions.Categorical(logits=x).sample((5,))
    assert got == expected and got.count("multinomial") == 1


# validate_args given: real torch's first torch.compile turns validation off process-wide
# (torch/_dynamo/eval_frame.py, TorchPatcher), and another test here compiles
@pytest.mark.parametrize("program", [
    lambda T: T.distributions.Categorical(),
    lambda T: T.distributions.Categorical(probs=T.ones(2), logits=T.ones(2)),
    lambda T: T.distributions.Categorical(probs=T.tensor(1.0)),
    lambda T: T.distributions.Categorical(logits=T.tensor(1.0)),
    lambda T: T.distributions.Categorical(probs=T.tensor([0.5, -0.5, 1.0]), validate_args=True),
    lambda T: T.distributions.Categorical(logits=T.zeros(3), validate_args=True).log_prob(
        T.tensor([3])),
    lambda T: T.distributions.Categorical(logits=T.zeros(2, 3), validate_args=True).log_prob(
        T.tensor([0, 1, 2])),
])
def test_categorical_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


# --- threshold (vLLM's activation layer) ---------------------------------------------------------

THRESHOLD: dict[str, Callable[[Any, Any], Any]] = {
    "F.threshold": lambda T, x: T.nn.functional.threshold(x, 1.0, 0.0),
    "F.threshold_inplace": lambda T, x: T.nn.functional.threshold(x, 1, -5, True),
    "F.threshold_": lambda T, x: T.nn.functional.threshold_(x, 0.5, 9),
    "torch.threshold": lambda T, x: T.threshold(x, -0.0, 3.5),
    "torch.threshold_": lambda T, x: T.threshold_(x, 4.0, 1),
    "Threshold": lambda T, x: T.nn.Threshold(0.5, 20)(x),
}
THRESHOLD_INPLACE = {"F.threshold_inplace", "F.threshold_", "torch.threshold_"}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "uint8"])
@pytest.mark.parametrize("name", list(THRESHOLD))
def test_threshold_matches_torch(name: str, dtype: str) -> None:
    a = np.array([-1.0, 0.5, 1.0, 2.0, 4.0, 25.0, np.nan, -0.0, 0.0])
    if dtype in ("int64", "uint8"):
        a = np.array([0, 1, 2, 3, 4, 5, 250])
    tx = torch.from_numpy(a).to(getattr(torch, dtype))
    fx = ft.tensor(a, device="cuda").to(getattr(ft, dtype))
    with torch_launches(cuda=True) as expected:
        theirs = THRESHOLD[name](torch, tx)
    with launches() as got:
        ours = THRESHOLD[name](ft, fx)
    assert repr(ours.dtype) == repr(theirs.dtype) and got == expected and len(got) == 1
    np.testing.assert_array_equal(_host(ours), _host(theirs))
    assert (ours is fx) == (name in THRESHOLD_INPLACE) == (theirs is tx)


def test_threshold_refuses_bool_and_non_numbers_and_reprs_match() -> None:
    assert_raises_like_torch(lambda T: T.nn.functional.threshold(T.tensor([True]), 0, 0))
    assert_raises_like_torch(lambda T: T.nn.functional.threshold(T.ones(2), "1", 0))
    assert_raises_like_torch(lambda T: T.nn.functional.threshold(  # 300 overflows uint8
        T.tensor([1, 200], dtype=T.uint8), 100, 300))
    for make in (lambda nn: nn.Threshold(0.1, 20), lambda nn: nn.Threshold(0.1, 20, True)):
        assert repr(make(ft.nn)) == repr(make(torch.nn))


def test_jit_load_and_save_are_refused_by_name(tmp_path: Any) -> None:
    with pytest.raises(NotImplementedError, match=r"^torch\.jit\.load is not emulated"):
        ft.jit.load(str(tmp_path / "ViT-B-32.pt"), map_location="cpu")  # CLIP's jit=True path
    with pytest.raises(NotImplementedError, match=r"^torch\.jit\.save is not emulated"):
        ft.jit.save(ft.nn.Linear(2, 2), str(tmp_path / "m.pt"))


# --- F.unfold / nn.Unfold (im2col; mistral-inference's vision encoder) --------------------------

UNFOLD_PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    "plain": lambda T, x: T.nn.functional.unfold(x, 2),
    "all_options": lambda T, x: T.nn.functional.unfold(x, (2, 3), dilation=(1, 2), padding=1,
                                                       stride=(2, 1)),
    "mistral_grid": lambda T, x: T.nn.functional.unfold(x, kernel_size=2, stride=2),
    "unbatched": lambda T, x: T.nn.functional.unfold(x[0], 3, padding=(0, 1)),
    "strided_input": lambda T, x: T.nn.functional.unfold(x.transpose(2, 3), 2),
    "module": lambda T, x: T.nn.Unfold((3, 2), stride=(1, 2))(x),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "bool"])
@pytest.mark.parametrize("name", list(UNFOLD_PROGRAMS))
def test_functional_unfold_matches_torch(name: str, dtype: str) -> None:
    a = np.arange(2 * 3 * 5 * 6, dtype=np.float64).reshape(2, 3, 5, 6) % 7
    tx = torch.from_numpy(a).to(getattr(torch, dtype))
    fx = ft.tensor(a, device="cuda").to(getattr(ft, dtype))
    theirs, ours = UNFOLD_PROGRAMS[name](torch, tx), UNFOLD_PROGRAMS[name](ft, fx)
    assert repr(ours.dtype) == repr(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    np.testing.assert_array_equal(_host(ours), _host(theirs))


def test_unfold_launches_one_im2col_per_image_as_cudas_kernel() -> None:
    x = ft.ones(3, 2, 4, 4, device="cuda")
    with launches() as got:
        F.unfold(x, 2)
    assert got == ["im2col"] * 3  # Im2Col.cu loops over the batch
    with launches() as got:
        F.unfold(x.transpose(2, 3), 2)
    assert got == ["clone"] + ["im2col"] * 3  # its .contiguous() first
    with launches() as got:
        F.unfold(ft.ones(0, 2, 4, 4, device="cuda"), 2)
    assert got == []


@pytest.mark.parametrize("program", [
    lambda T: T.nn.functional.unfold(T.ones(1, 1, 4, 4), 0),
    lambda T: T.nn.functional.unfold(T.ones(1, 1, 4, 4), 2, dilation=0),
    lambda T: T.nn.functional.unfold(T.ones(1, 1, 4, 4), 2, padding=-1),
    lambda T: T.nn.functional.unfold(T.ones(1, 1, 4, 4), 2, stride=0),
    lambda T: T.nn.functional.unfold(T.ones(1, 1, 4, 4), 5),
    lambda T: T.nn.functional.unfold(T.ones(1, 1, 1, 4, 4), 2),
    lambda T: T.nn.functional.unfold(T.ones(2, 0, 4, 4), 2),
    lambda T: T.nn.functional.unfold(T.ones(1, 1, 4, 4), (2, 2, 2)),
    lambda T: T.nn.functional.unfold(T.ones(1, 1, 4, 4, dtype=T.int64), 2),
])
def test_functional_unfold_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_unfold_module_repr_matches_torch() -> None:
    for make in (lambda nn: nn.Unfold(2), lambda nn: nn.Unfold((2, 3), 2, 1, 3)):
        assert repr(make(ft.nn)) == repr(make(torch.nn))


# --- is_complex (Mamba's selective-scan reference) -----------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "bool"])
def test_is_complex_matches_torch(dtype: str) -> None:
    t, f = torch.ones(2, dtype=getattr(torch, dtype)), ft.ones(2, dtype=getattr(ft, dtype))
    assert f.is_complex() is t.is_complex() is False
    assert ft.is_complex(f) is torch.is_complex(t) is False
    assert_raises_like_torch(lambda T: T.is_complex(1))


def test_is_complex_is_shown_to_a_mode_as_torch_shows_it() -> None:
    def seen(T: Any) -> list[str]:
        names: list[str] = []

        class Record(T.overrides.TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                names.append(getattr(func, "__name__", repr(func)))
                return func(*args, **(kwargs or {}))
        x = T.ones(2)
        with Record():
            x.is_complex()
        return names
    assert seen(ft) == seen(torch) == ["is_complex"]
