"""The plain-torch bodies of our stand-ins for vLLM's fused CUDA kernels
(tests/vllm/standins/kernels.py), run on fake_torch against numpy's arithmetic of what each
kernel computes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import fake_torch as ft

_PATH = Path(__file__).resolve().parent / "vllm" / "standins" / "kernels.py"


@pytest.fixture(autouse=True)
def _fake_torch_as_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bodies `import torch` when called, as vLLM's process gives them fake_torch."""
    monkeypatch.setitem(sys.modules, "torch", ft)


def _kernels() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_vllm_standin_kernels", _PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rms(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def test_rms_norm_and_fused_add() -> None:
    k, rng = _kernels(), np.random.default_rng(0)
    x, r, w = (rng.standard_normal(s).astype(np.float32) for s in ((3, 8), (3, 8), (8,)))
    out = ft.empty(3, 8)
    k.rms_norm(out, ft.tensor(x), ft.tensor(w), 1e-6)
    np.testing.assert_allclose(np.asarray(out.tolist()), _rms(x, w, 1e-6), rtol=1e-5)
    xt, rt = ft.tensor(x), ft.tensor(r)
    k.fused_add_rms_norm(xt, rt, ft.tensor(w), 1e-6)  # residual <- x + r; x <- rms(x + r)
    np.testing.assert_allclose(np.asarray(rt.tolist()), x + r, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(xt.tolist()), _rms(x + r, w, 1e-6), rtol=1e-5)


def test_silu_and_mul_and_static_fp8_quant() -> None:
    k, rng = _kernels(), np.random.default_rng(1)
    x = rng.standard_normal((2, 6)).astype(np.float32)
    out = ft.empty(2, 3)
    k.silu_and_mul(out, ft.tensor(x))
    a, b = x[:, :3], x[:, 3:]
    np.testing.assert_allclose(np.asarray(out.tolist()), a / (1 + np.exp(-a)) * b, rtol=1e-5)
    big = np.array([[1000.0, -1000.0, 2.0, 0.5]], np.float32)
    q = ft.empty(1, 4, dtype=ft.float8_e4m3fn)
    k.static_scaled_fp8_quant(q, ft.tensor(big), ft.tensor([0.5]))  # x / 0.5, clamped to 448
    assert q.float().tolist() == [[448.0, -448.0, 4.0, 1.0]]
    grouped = ft.empty(2, 4, dtype=ft.float8_e4m3fn)  # one scale per (1 x 2) group
    k.static_scaled_fp8_quant(grouped, ft.ones(2, 4), ft.tensor([[1.0, 2.0], [4.0, 8.0]]),
                              (1, 2))
    assert grouped.float().tolist() == [[1.0, 1.0, 0.5, 0.5], [0.25, 0.25, 0.125, 0.125]]


def test_dynamic_quant_scales() -> None:
    k = _kernels()
    x = ft.tensor([[1.0, -4.0], [0.5, 2.0]])
    q, s = ft.empty(2, 2, dtype=ft.float8_e4m3fn), ft.empty(1)
    k.dynamic_scaled_fp8_quant(q, x, s)  # scale = max|x| / 448
    assert np.isclose(s.item(), 4.0 / 448.0) and q.float().tolist()[0][1] == -448.0
    per_token = ft.empty(2, 1)
    k.dynamic_per_token_scaled_fp8_quant(q, x, per_token, None)
    np.testing.assert_allclose(np.asarray(per_token.tolist()), [[4 / 448], [2 / 448]],
                               rtol=1e-6)
