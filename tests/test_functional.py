"""torch.nn.functional against real torch (CPU build): the same numbers, the same errors, and
launches that match torch's dispatcher op for op.

Launch oracle: the ops real torch dispatches for the same call that a GPU would launch, recorded
live (`oracles.torch_launches`). Where torch's CUDA path differs from its CPU path (fused
dropout, the fused attention kernels), the CUDA ops are written down with a reason; rms_norm's
fused kernel is recorded by the oracle itself (`torch_launches(cuda=True)`).
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import assert_raises_same, launches, torch_launches

import fake_torch as ft
from fake_torch._simulated import _dispatch
from fake_torch.nn import functional as F

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
TF = torch.nn.functional
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

_rng = np.random.default_rng(0)


# --- helpers ----------------------------------------------------------------------------------


def both(a: np.ndarray, dtype: str = "float32", device: str = "cuda") -> tuple[Any, ft.Tensor]:
    """(torch tensor, fake_torch tensor on `device`) holding the same values in `dtype`."""
    t = torch.from_numpy(np.ascontiguousarray(a)).to(getattr(torch, dtype))
    host_values = a.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else a.astype(dtype)
    return t, ft.tensor(host_values, device=device)


def host(t: ft.Tensor) -> np.ndarray:
    return np.asarray(t.numpy(force=True), dtype=np.float64)


def close(ours: ft.Tensor, theirs: Any, tol: float = 1e-5) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert repr(ours.dtype) == repr(theirs.dtype)
    np.testing.assert_allclose(host(ours), theirs.detach().double().numpy(), rtol=tol, atol=tol)


def randn(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


# --- linear -----------------------------------------------------------------------------------


def _linear_cases() -> list[tuple[str, Callable[[Any, Any, Any], Any]]]:
    return [
        ("2-D + bias", lambda x, w, b: (x[0], w, b)),
        ("2-D", lambda x, w, b: (x[0], w, None)),
        ("1-D + bias", lambda x, w, b: (x[0, 0], w, b)),
        ("1-D", lambda x, w, b: (x[0, 0], w, None)),
        ("3-D + bias", lambda x, w, b: (x, w, b)),
        ("3-D", lambda x, w, b: (x, w, None)),
        ("4-D + bias", lambda x, w, b: (x[None], w, b)),
        ("transposed 3-D", lambda x, w, b: (x.transpose(0, 1), w, None)),
        ("transposed weight", lambda x, w, b: (x, w.t().contiguous().t(), b)),
    ]


@pytest.mark.parametrize("case", _linear_cases(), ids=lambda c: c[0])
def test_linear_matches_torch_op_for_op(case: tuple[str, Callable[..., Any]]) -> None:
    (tx, fx), (tw, fw), (tb, fb) = both(randn(2, 3, 8)), both(randn(16, 8)), both(randn(16))
    with torch_launches() as expected_ops:
        expected = TF.linear(*case[1](tx, tw, tb))
    with launches() as ops:
        got = F.linear(*case[1](fx, fw, fb))
    close(got, expected)
    assert ops == expected_ops


def test_linear_bias_on_non_foldable_input_is_added_in_place() -> None:
    # A TorchDispatchMode makes torch treat tensors as subclass-like and use out-of-place
    # `add`; plain eager torch (its profiler shows it) runs bmm then add_ on the GEMM output.
    (tx, fx), (tw, fw), (tb, fb) = both(randn(2, 3, 8)), both(randn(16, 8)), both(randn(16))
    expected = TF.linear(tx.transpose(0, 1), tw, tb)
    with launches() as ops:
        got = F.linear(fx.transpose(0, 1), fw, fb)
    close(got, expected)
    assert ops == ["bmm", "add_"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_linear_half_precision(dtype: str) -> None:
    (tx, fx), (tw, fw), (tb, fb) = (both(randn(4, 3, 32), dtype), both(randn(16, 32), dtype),
                                    both(randn(16), dtype))
    close(F.linear(fx, fw, fb), TF.linear(tx, tw, tb), tol=3e-2)


@pytest.mark.parametrize("args", [
    lambda lib: (lib.ones(2, 5), lib.ones(4, 3), lib.ones(4)),
    lambda lib: (lib.ones(2, 2, 5), lib.ones(4, 3)),
    lambda lib: (lib.ones(2, 3), lib.ones(4, 3), lib.ones(5)),
    lambda lib: (lib.ones(2, 3), lib.ones(3, 3, 3)),
])
def test_linear_errors_match_torch(args: Callable[[Any], tuple[Any, ...]]) -> None:
    assert_raises_same(lambda: TF.linear(*args(torch)), lambda: F.linear(*args(ft)))


# --- embedding --------------------------------------------------------------------------------


@pytest.mark.parametrize("padding_idx", [None, 1, -1])
def test_embedding_matches_torch(padding_idx: int | None) -> None:
    (tw, fw) = both(randn(10, 4))
    idx = np.array([[1, 2, 9], [0, 0, 3]])
    ti, fi = torch.from_numpy(idx), ft.tensor(idx, device="cuda")
    with torch_launches() as expected_ops:
        expected = TF.embedding(ti, tw, padding_idx=padding_idx)
    with launches() as ops:
        got = F.embedding(fi, fw, padding_idx=padding_idx)
    close(got, expected, tol=0)
    assert ops == expected_ops == ["embedding"]


def test_embedding_max_norm_renormalises_rows_in_place() -> None:
    (tw, fw) = both(randn(10, 4) * 3)
    idx = np.array([1, 2, 2, 7])
    ti, fi = torch.from_numpy(idx), ft.tensor(idx, device="cuda")
    with torch_launches() as expected_ops:
        expected = TF.embedding(ti, tw, max_norm=1.5)
    with launches() as ops:
        got = F.embedding(fi, fw, max_norm=1.5)
    close(got, expected)
    close(fw, tw)  # the looked-up rows of the table itself were rescaled
    assert ops == expected_ops == ["embedding_renorm_", "embedding"]


@pytest.mark.parametrize("args", [
    lambda lib: (lib.tensor([4]), lib.ones(4, 3)),
    lambda lib: (lib.tensor([1.0]), lib.ones(4, 3)),
    lambda lib: (lib.tensor([1], dtype=lib.int16), lib.ones(4, 3)),
    lambda lib: (lib.tensor([1]), lib.ones(3)),
    lambda lib: (lib.tensor([1]), lib.ones(4, 3), 4),
    lambda lib: (lib.tensor([1]), lib.ones(4, 3), -5),
])
def test_embedding_errors_match_torch(args: Callable[[Any], tuple[Any, ...]]) -> None:
    assert_raises_same(lambda: TF.embedding(*args(torch)), lambda: F.embedding(*args(ft)))


# --- activations and softmax ------------------------------------------------------------------


@pytest.mark.parametrize("name, kwargs", [
    ("relu", {}), ("relu", {"inplace": True}), ("silu", {}), ("silu", {"inplace": True}),
    ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("tanh", {}), ("sigmoid", {}),
    ("softmax", {"dim": -1}), ("softmax", {"dim": 0}), ("softmax", {"dim": -1, "dtype": "f64"}),
    ("log_softmax", {"dim": 1}), ("log_softmax", {"dim": -1, "dtype": "f64"}),
])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_activations_match_torch_op_for_op(name: str, kwargs: dict[str, Any], dtype: str) -> None:
    (tx, fx) = both(randn(2, 3, 5), dtype)
    t_kwargs = {k: (torch.float64 if v == "f64" else v) for k, v in kwargs.items()}
    f_kwargs = {k: (ft.float64 if v == "f64" else v) for k, v in kwargs.items()}
    with torch_launches() as expected_ops:
        expected = getattr(TF, name)(tx, **t_kwargs)
    with launches() as ops:
        got = getattr(F, name)(fx, **f_kwargs)
    close(got, expected, tol=1e-5 if dtype == "float32" else 2e-3)
    assert ops == expected_ops
    if kwargs.get("inplace"):
        assert got is fx


def test_softmax_implicit_dim_warns_like_torch() -> None:
    (tx, fx) = both(randn(2, 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        got = F.softmax(fx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(got, TF.softmax(tx))


@pytest.mark.parametrize("call", [
    lambda lib, fn: fn.gelu(lib.ones(2), approximate="x"),
    lambda lib, fn: fn.silu(lib.ones(2, dtype=lib.int64)),
    lambda lib, fn: fn.softmax(lib.ones(2, 3), 2),
])
def test_activation_errors_match_torch(call: Callable[[Any, Any], Any]) -> None:
    assert_raises_same(lambda: call(torch, TF), lambda: call(ft, F))


# --- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape, affine", [
    ((8,), "none"), ((8,), "weight"), ((8,), "both"), ((3, 8), "both"), ((2, 3, 8), "bias")])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_layer_norm_matches_torch(shape: tuple[int, ...], affine: str, dtype: str) -> None:
    (tx, fx) = both(randn(2, 3, 8) * 2 + 1, dtype)
    (tw, fw), (tb, fb) = both(randn(*shape), dtype), both(randn(*shape), dtype)
    w = (tw, fw) if affine in ("weight", "both") else (None, None)
    b = (tb, fb) if affine in ("bias", "both") else (None, None)
    with torch_launches() as expected_ops:
        expected = TF.layer_norm(tx, shape, w[0], b[0])
    with launches() as ops:
        got = F.layer_norm(fx, shape, w[1], b[1])
    close(got, expected, tol=1e-5 if dtype == "float32" else 3e-2)
    assert ops == expected_ops == ["native_layer_norm"]


@pytest.mark.parametrize("shape, weighted, eps", [
    ((8,), False, None), ((8,), True, None), ((8,), True, 1e-3), ((3, 8), True, 1e-6)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_rms_norm_is_one_fused_launch_on_cuda(shape: tuple[int, ...], weighted: bool,
                                              eps: float | None, dtype: str) -> None:
    """Weight None or of the input's dtype: torch's CUDA build dispatches one `_fused_rms_norm`
    (oracles.py; float64 runs it as two kernels there, counted once here). Its numbers are
    the composite's to the bit (ours on the cpu) and torch's."""
    x, wa = randn(2, 3, 8), randn(*shape)
    (tx, fx), (tw, fw) = both(x, dtype), both(wa, dtype)
    w = (tw, fw) if weighted else (None, None)
    with torch_launches(cuda=True) as expected_ops:
        expected = TF.rms_norm(tx, shape, w[0], eps)
    with launches() as ops:
        got = F.rms_norm(fx, shape, w[1], eps)
    assert ops == expected_ops == ["_fused_rms_norm"]
    on_cpu = F.rms_norm(fx.cpu(), shape, None if w[1] is None else w[1].cpu(), eps)
    np.testing.assert_array_equal(got.numpy(force=True), on_cpu.numpy())
    close(got, expected, tol=0 if dtype in ("float16", "bfloat16") else 1e-5)


@pytest.mark.parametrize("mode", ["weight requires grad", "input requires grad", "no_grad",
                                  "inference_mode"])
def test_rms_norm_is_fused_in_every_grad_mode(mode: str) -> None:
    """On an H200 every one of these was one kernel (oracles.py)."""
    x = ft.tensor(randn(4, 64), device="cuda", requires_grad=mode == "input requires grad")
    w = ft.tensor(randn(64), device="cuda", requires_grad=mode == "weight requires grad")
    grad_mode = {"no_grad": ft.no_grad, "inference_mode": ft.inference_mode}.get(mode)
    with grad_mode() if grad_mode else contextlib.nullcontext(), launches() as ops:
        F.rms_norm(x, (64,), w, 1e-6)
    assert ops == ["_fused_rms_norm"]


_COMPOSITE = ["pow", "mean", "add_", "rsqrt", "mul", "mul"]


@pytest.mark.parametrize("x_dtype, w_dtype, names, expected_ops", [
    ("bfloat16", "float32", ("c10::BFloat16", "float"), ["_to_copy", *_COMPOSITE, "_to_copy"]),
    ("float16", "float64", ("c10::Half", "double"), ["_to_copy", *_COMPOSITE, "_to_copy"]),
    ("float64", "float16", ("double", "c10::Half"), _COMPOSITE),
    ("float32", "bfloat16", ("float", "c10::BFloat16"), _COMPOSITE),
])
def test_rms_norm_weight_of_another_dtype_warns_and_runs_the_composite(
        x_dtype: str, w_dtype: str, names: tuple[str, str], expected_ops: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's CUDA build has no fused kernel for mixed dtypes: it warns (once per process,
    as torch does) and launches its composite's ops, the very ops its CPU build runs."""
    monkeypatch.setattr(F, "_warned_rms_norm_dtypes", False)
    (tx, fx), (tw, fw) = both(randn(2, 3, 8), x_dtype), both(randn(8), w_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own warning fires once per process
        with torch_launches(cuda=True) as torch_ops:
            expected = TF.rms_norm(tx, (8,), tw, 1e-6)
    text = (f"Mismatch dtype between input and weight: input dtype = {names[0]}, weight dtype "
            f"= {names[1]}, Cannot dispatch to fused implementation.")
    with pytest.warns(UserWarning) as caught, launches() as ops:
        got = F.rms_norm(fx, (8,), fw, 1e-6)
    assert [str(w.message) for w in caught] == [text]
    assert ops == torch_ops == expected_ops
    close(got, expected, tol=0 if x_dtype in ("float16", "bfloat16") else 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second call is silent
        F.rms_norm(fx, (8,), fw, 1e-6)


@contextlib.contextmanager
def every_launch() -> Iterator[list[str]]:
    """The op names of every launch through the door, cpu ones too (the counter skips those):
    the door calls its per-launch hooks for each."""
    names: list[str] = []

    def note(op: str, outs: Any, inputs: Any, kind: str) -> None:
        names.append(op)

    registration = _dispatch.add_input_check(note)
    try:
        yield names
    finally:
        registration.remove()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("weighted", [True, False])
def test_rms_norm_on_cpu_runs_torchs_cpu_composite(dtype: str, weighted: bool) -> None:
    """torch's CPU build has no fused rms_norm kernel: on cpu we run its composite's ops."""
    (tx, fx), (tw, fw) = both(randn(2, 3, 8), dtype, "cpu"), both(randn(8), dtype, "cpu")
    with torch_launches() as expected_ops:
        expected = TF.rms_norm(tx, (8,), tw if weighted else None, 1e-6)
    with launches() as counted, every_launch() as ops:
        got = F.rms_norm(fx, (8,), fw if weighted else None, 1e-6)
    assert counted == []
    assert ops == expected_ops and "pow" in ops
    close(got, expected, tol=0 if dtype == "bfloat16" else 1e-5)


@pytest.mark.parametrize("call", [
    lambda lib, fn: fn.layer_norm(lib.ones(2, 5), (3, 4)),
    lambda lib, fn: fn.layer_norm(lib.ones(2, 5), (4,)),
    lambda lib, fn: fn.layer_norm(lib.ones(2, 5), (5,), lib.ones(4)),
    lambda lib, fn: fn.layer_norm(lib.ones(2, 5), (5,), None, lib.ones(4)),
    lambda lib, fn: fn.layer_norm(lib.ones(5), (2, 5)),
    lambda lib, fn: fn.layer_norm(lib.ones(5), ()),
    lambda lib, fn: fn.layer_norm(lib.ones(2, 5, dtype=lib.int64), (5,)),
    lambda lib, fn: fn.rms_norm(lib.ones(2, 5), (3, 4)),
    lambda lib, fn: fn.rms_norm(lib.ones(2, 5), [4]),
    lambda lib, fn: fn.rms_norm(lib.ones(2, 5), (5,), lib.ones(4)),
    lambda lib, fn: fn.rms_norm(lib.ones(5), (2, 5)),
    lambda lib, fn: fn.rms_norm(lib.ones(2, 5, dtype=lib.int64), (5,)),
])
def test_norm_errors_match_torch(call: Callable[[Any, Any], Any]) -> None:
    assert_raises_same(lambda: call(torch, TF), lambda: call(ft, F))


@pytest.mark.parametrize("p, dim", [(2.0, 1), (2.0, -1), (1.0, 0), (3.0, -1)])
def test_normalize_matches_torch_op_for_op(p: float, dim: int) -> None:
    (tx, fx) = both(randn(2, 3, 4))
    with torch_launches() as expected_ops:
        expected = TF.normalize(tx, p, dim)
    with launches() as ops:
        got = F.normalize(fx, p, dim)
    close(got, expected)
    assert ops == expected_ops == ["linalg_vector_norm", "clamp_min", "div"]


# --- dropout ----------------------------------------------------------------------------------


def test_dropout_off_returns_the_input_itself() -> None:
    x = ft.ones(4, device="cuda")
    with launches() as ops:
        assert F.dropout(x, 0.5, training=False) is x
        assert F.dropout(x, 0.0) is x
        assert F.dropout(x, 0.5, training=False, inplace=True) is x
    assert ops == []


def test_dropout_training_is_one_fused_launch_on_cuda() -> None:
    # torch's CUDA dropout is the fused native_dropout kernel; the CPU build runs
    # empty_like, bernoulli_, div_, mul instead.
    x = ft.ones(100, 100, device="cuda")
    with launches() as ops:
        y = F.dropout(x, 0.4)
    assert ops == ["native_dropout"]
    values = host(y)
    kept = values != 0
    assert np.allclose(values[kept], 1 / 0.6) and 0.35 < 1 - kept.mean() < 0.45
    assert host(F.dropout(x, 0.4)).tolist() != values.tolist()  # each call draws afresh


def test_dropout_in_place_and_p_one_run_torchs_unfused_ops() -> None:
    x = ft.ones(50, 50, device="cuda")
    with launches() as ops:
        y = F.dropout(x, 0.5, inplace=True)
    assert y is x and ops == ["bernoulli_", "div_", "mul_"]
    (tx, fx) = both(randn(3, 3))
    with torch_launches() as expected_ops:
        expected = TF.dropout(tx, 1.0)
    with launches() as ops:
        got = F.dropout(fx, 1.0)
    close(got, expected)
    assert ops == expected_ops == ["zeros", "mul"]


def test_dropout_probability_error() -> None:
    assert_raises_same(lambda: TF.dropout(torch.ones(2), 1.5), lambda: F.dropout(ft.ones(2), 1.5))


# --- pad --------------------------------------------------------------------------------------


@pytest.mark.parametrize("pad, value", [
    ((1, 2), None), ((0, 0), None), ((-1, 2), 0.5), ((1, 1, 2, 0), 3.0), ((0, 0, -1, -1), None),
    ((1, 1, 1, 1, 1, 1), -1.0)])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_constant_pad_matches_torch(pad: tuple[int, ...], value: float | None, dtype: str) -> None:
    (tx, fx) = both(randn(2, 3, 4) * 5, dtype)
    with torch_launches() as expected_ops:
        expected = TF.pad(tx, pad, value=value)
    with launches() as ops:
        got = F.pad(fx, pad, value=value)
    close(got, expected, tol=0)
    assert ops == expected_ops == ["constant_pad_nd"]


@pytest.mark.parametrize("mode, pad, shape", [
    ("reflect", (1, 2), (2, 5)), ("reflect", (2, 1, 1, 1), (2, 3, 4)),
    ("replicate", (1, 2), (2, 3, 5)), ("replicate", (1, 1, 2, 2, 1, 0), (1, 2, 3, 4))])
def test_non_constant_pad_matches_torch(mode: str, pad: tuple[int, ...],
                                        shape: tuple[int, ...]) -> None:
    (tx, fx) = both(randn(*shape))
    with torch_launches() as expected_ops:
        expected = TF.pad(tx, pad, mode=mode)
    with launches() as ops:
        got = F.pad(fx, pad, mode=mode)
    close(got, expected, tol=0)
    assert ops == expected_ops


@pytest.mark.parametrize("call", [
    lambda lib, fn: fn.pad(lib.ones(2, 3), (1,)),
    lambda lib, fn: fn.pad(lib.ones(2, 3), (1, 1, 1, 1, 1, 1)),
    lambda lib, fn: fn.pad(lib.ones(2, 3), (-2, -2)),
    lambda lib, fn: fn.pad(lib.ones(2, 3), (1, 1), mode="foo"),
    lambda lib, fn: fn.pad(lib.ones(3), (1, 1), mode="reflect"),
    lambda lib, fn: fn.pad(lib.ones(2, 3), (3, 3), mode="reflect"),
    lambda lib, fn: fn.pad(lib.ones(2, 3), (1, 1), mode="reflect", value=1.0),
    lambda lib, fn: fn.pad(lib.ones(2, 3), (1, 1, 1, 1), mode="replicate"),
])
def test_pad_errors_match_torch(call: Callable[[Any, Any], Any]) -> None:
    assert_raises_same(lambda: call(torch, TF), lambda: call(ft, F))


# --- scaled_dot_product_attention -------------------------------------------------------------

FLASH = "_scaled_dot_product_flash_attention"
EFFICIENT = "_scaled_dot_product_efficient_attention"


def _qkv(dtype: str, q_heads: int = 4, kv_heads: int = 4, seq_q: int = 5, seq_k: int = 7,
         head_dim: int = 8) -> tuple[tuple[Any, ...], tuple[ft.Tensor, ...]]:
    pairs = [both(randn(2, q_heads, seq_q, head_dim), dtype),
             both(randn(2, kv_heads, seq_k, head_dim), dtype),
             both(randn(2, kv_heads, seq_k, head_dim), dtype)]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


@pytest.mark.parametrize("label, dtype, kwargs, expected_ops", [
    ("fp32 no mask -> efficient", "float32", {}, [EFFICIENT]),
    ("fp16 no mask -> flash", "float16", {}, [FLASH]),
    ("bf16 gqa -> flash", "bfloat16", {"kv_heads": 2, "enable_gqa": True}, [FLASH]),
    ("fp16 causal square -> flash", "float16", {"seq_k": 5, "is_causal": True}, [FLASH]),
    ("fp16 causal non-square -> efficient", "float16", {"is_causal": True}, [EFFICIENT]),
    ("fp32 causal", "float32", {"is_causal": True}, [EFFICIENT]),
    ("fp16 head_dim 12 -> padded flash", "float16", {"head_dim": 12},
     ["constant_pad_nd"] * 3 + [FLASH]),
    ("fp32 aligned float mask", "float32", {"seq_k": 16, "mask": "float"}, [EFFICIENT]),
    ("fp32 unaligned float mask", "float32", {"mask": "float"}, ["constant_pad_nd", EFFICIENT]),
    ("fp16 bool mask", "float16", {"seq_k": 8, "mask": "bool"},
     ["scalar_tensor", "scalar_tensor", "where", EFFICIENT]),
    ("scale", "float32", {"scale": 0.3}, [EFFICIENT]),
])
def test_sdpa_fused_paths(label: str, dtype: str, kwargs: dict[str, Any],
                          expected_ops: list[str]) -> None:
    kwargs = dict(kwargs)
    shape_keys = ("q_heads", "kv_heads", "seq_q", "seq_k", "head_dim")
    shape = {k: kwargs.pop(k) for k in shape_keys if k in kwargs}
    (tq, tk, tv), (fq, fk, fv) = _qkv(dtype, **shape)
    mask_kind = kwargs.pop("mask", None)
    t_kwargs, f_kwargs = dict(kwargs), dict(kwargs)
    if mask_kind is not None:
        seq_q, seq_k = tq.shape[-2], tk.shape[-2]
        m = randn(seq_q, seq_k) if mask_kind == "float" else (randn(seq_q, seq_k) > -0.5)
        t_kwargs["attn_mask"], f_kwargs["attn_mask"] = both(m, "float32" if mask_kind ==
                                                            "float" else "bool")
    expected = TF.scaled_dot_product_attention(tq, tk, tv, **t_kwargs)
    with warnings.catch_warnings(), launches() as ops:
        warnings.simplefilter("ignore")  # torch's one-time mask-alignment warning
        got = F.scaled_dot_product_attention(fq, fk, fv, **f_kwargs)
    close(got, expected, tol=1e-5 if dtype == "float32" else 2e-2)
    assert ops == expected_ops, label


def test_sdpa_fused_output_layout_follows_torchs_cuda_kernels() -> None:
    # the efficient kernel writes (B, L, H, E) memory; flash writes the query's layout
    (_, _, _), (fq, fk, fv) = _qkv("float32")
    out = F.scaled_dot_product_attention(fq, fk, fv)
    assert not out.is_contiguous() and out.transpose(1, 2).is_contiguous()
    (_, _, _), (hq, hk, hv) = _qkv("float16")
    assert F.scaled_dot_product_attention(hq, hk, hv).is_contiguous()
    blhe = hq.transpose(1, 2).contiguous().transpose(1, 2)
    assert F.scaled_dot_product_attention(blhe, hk, hv).transpose(1, 2).is_contiguous()


@pytest.mark.parametrize("label, dtype, kwargs", [
    ("gqa + float mask", "float32", {"kv_heads": 2, "enable_gqa": True, "mask": "float"}),
    ("gqa + bool mask fp16", "float16", {"kv_heads": 2, "enable_gqa": True, "mask": "bool"}),
    ("fp64", "float64", {}),
    ("fp64 causal", "float64", {"is_causal": True}),
    ("bf16 gqa causal non-square", "bfloat16", {"kv_heads": 1, "enable_gqa": True,
                                                "is_causal": True}),
    ("3-D", "float32", {"three_d": True}),
])
def test_sdpa_math_path_matches_torchs_math_backend_op_for_op(label: str, dtype: str,
                                                              kwargs: dict[str, Any]) -> None:
    # GQA only runs on flash and math on CUDA (torch's docs), flash takes no mask, fp64 and
    # 3-D inputs only run on math: these calls launch the math composite's ops one by one.
    kwargs = dict(kwargs)
    shape = {k: kwargs.pop(k) for k in ("kv_heads",) if k in kwargs}
    (tq, tk, tv), (fq, fk, fv) = _qkv(dtype, **shape)
    if kwargs.pop("three_d", False):
        (tq, tk, tv), (fq, fk, fv) = (tq[0], tk[0], tv[0]), (fq[0], fk[0], fv[0])
    mask_kind = kwargs.pop("mask", None)
    t_kwargs, f_kwargs = dict(kwargs), dict(kwargs)
    if mask_kind is not None:
        m = randn(5, 7) if mask_kind == "float" else (randn(5, 7) > -0.5)
        t_kwargs["attn_mask"], f_kwargs["attn_mask"] = both(m, "float32" if mask_kind ==
                                                            "float" else "bool")
    with sdpa_kernel(SDPBackend.MATH):  # (cuda: _safe_softmax is its composite's five ops)
        with torch_launches(cuda=True) as expected_ops:
            expected = TF.scaled_dot_product_attention(tq, tk, tv, **t_kwargs)
    with launches() as ops:
        got = F.scaled_dot_product_attention(fq, fk, fv, **f_kwargs)
    close(got, expected, tol=1e-5 if dtype in ("float32", "float64") else 2e-2)
    assert ops == expected_ops, label


def test_sdpa_fully_masked_row_is_zero() -> None:
    (tq, tk, tv), (fq, fk, fv) = _qkv("float32")
    mask = np.ones((5, 7), dtype=bool)
    mask[0] = False
    tm, fm = both(mask, "bool")
    got = F.scaled_dot_product_attention(fq, fk, fv, attn_mask=fm)
    close(got, TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm))
    assert not host(got)[:, :, 0].any()


def test_sdpa_dropout_is_inside_the_fused_kernel() -> None:
    (_, _, _), (fq, fk, fv) = _qkv("float16")
    with launches() as ops:
        a = F.scaled_dot_product_attention(fq, fk, fv, dropout_p=0.5)
    b = F.scaled_dot_product_attention(fq, fk, fv, dropout_p=0.5)
    assert ops == [FLASH] and not np.array_equal(host(a), host(b))


@pytest.mark.parametrize("call", [
    lambda lib, fn: fn.scaled_dot_product_attention(lib.ones(1, 2, 3, 4), lib.ones(1, 2, 3, 4),
                                                    lib.ones(1, 2, 3, 4, dtype=lib.float64)),
    lambda lib, fn: fn.scaled_dot_product_attention(lib.ones(4), lib.ones(4), lib.ones(4)),
    lambda lib, fn: fn.scaled_dot_product_attention(
        lib.ones(1, 2, 3, 4), lib.ones(1, 2, 3, 4), lib.ones(1, 2, 3, 4),
        attn_mask=lib.ones(3, 3, dtype=lib.int64)),
    lambda lib, fn: fn.scaled_dot_product_attention(
        lib.ones(1, 2, 3, 4, dtype=lib.float64), lib.ones(1, 2, 3, 4, dtype=lib.float64),
        lib.ones(1, 2, 3, 4, dtype=lib.float64), attn_mask=lib.ones(3, 3, dtype=lib.bool),
        is_causal=True),
    lambda lib, fn: fn.scaled_dot_product_attention(
        lib.ones(1, 4, 3, 8), lib.ones(1, 3, 3, 8), lib.ones(1, 3, 3, 8), enable_gqa=True),
    lambda lib, fn: fn.scaled_dot_product_attention(
        lib.ones(1, 4, 3, 8), lib.ones(1, 2, 3, 8), lib.ones(1, 2, 3, 8)),
])
def test_sdpa_errors_match_torch(call: Callable[[Any, Any], Any]) -> None:
    # torch's CPU build checks these before picking a backend (causal + mask: in the math
    # path, where fp64 lands on both builds)
    with sdpa_kernel(SDPBackend.MATH):
        assert_raises_same(lambda: call(torch, TF), lambda: call(ft, F))


# --- property tests against numpy -------------------------------------------------------------


def _np_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tri(s.shape[-2], s.shape[-1], dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v  # type: ignore[no-any-return]


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 3), heads=st.integers(1, 4), seq_q=st.integers(1, 9),
       seq_k=st.integers(1, 9), head_dim=st.sampled_from([4, 8, 16]), causal=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]))
def test_sdpa_matches_numpy(batch: int, heads: int, seq_q: int, seq_k: int, head_dim: int,
                            causal: bool, dtype: str) -> None:
    q = _rng.standard_normal((batch, heads, seq_q, head_dim))
    k = _rng.standard_normal((batch, heads, seq_k, head_dim))
    v = _rng.standard_normal((batch, heads, seq_k, head_dim))
    got = F.scaled_dot_product_attention(*(ft.tensor(a.astype(dtype)) for a in (q, k, v)),
                                         is_causal=causal)
    np.testing.assert_allclose(host(got), _np_attention(q, k, v, causal), rtol=1e-4, atol=1e-4)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), norm_dims=st.integers(1, 2),
       dtype=st.sampled_from(["float32", "float64", "float16"]))
def test_layer_and_rms_norm_match_numpy(shape: list[int], norm_dims: int, dtype: str) -> None:
    norm_dims = min(norm_dims, len(shape))
    x = _rng.standard_normal(shape) * 3 + 0.5
    x_low = x.astype(dtype).astype(np.float64)  # the values the fake tensor actually holds
    axes = tuple(range(len(shape) - norm_dims, len(shape)))
    normalized = tuple(shape[len(shape) - norm_dims:])
    tol = 2e-2 if dtype == "float16" else 1e-5
    mean = x_low.mean(axes, keepdims=True)
    var = ((x_low - mean) ** 2).mean(axes, keepdims=True)
    ln = F.layer_norm(ft.tensor(x.astype(dtype)), normalized)
    np.testing.assert_allclose(host(ln), (x_low - mean) / np.sqrt(var + 1e-5), rtol=tol, atol=tol)
    rms = F.rms_norm(ft.tensor(x.astype(dtype)), normalized, eps=1e-6)
    expected = x_low / np.sqrt((x_low**2).mean(axes, keepdims=True) + 1e-6)
    np.testing.assert_allclose(host(rms), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
def test_norms_copy_a_strided_cuda_input_first(norm: str) -> None:
    """An H200 (torch 2.11, 2026-11-29) ran one copy kernel before either norm's kernel for a
    transposed input; the cuda oracle records the same `clone`, and the values are unchanged."""
    x = np.random.default_rng(0).standard_normal((64, 4)).astype(np.float32)
    with torch_launches(cuda=True) as expected:
        want = getattr(TF, norm)(torch.from_numpy(x).t(), (64,))
    strided = ft.tensor(x, device="cuda").t()
    with launches() as names:
        got = getattr(ft.nn.functional, norm)(strided, (64,))
    assert names == expected == ["clone", "native_layer_norm" if norm == "layer_norm"
                                 else "_fused_rms_norm"]
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    dense = strided.contiguous()
    with launches() as names:
        getattr(ft.nn.functional, norm)(dense, (64,))
    assert len(names) == 1
