"""The plain pointwise path calls a ufunc through a kernel made once per (ufunc, arity), with
numpy's floating-point warnings silenced as torch has none (oracle: numpy's own ufunc, and real
torch's silence where it is installed)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fake_torch as torch
from fake_torch._kernels._elementwise import ufunc_kernel_of


@pytest.mark.parametrize("fn, n", [(np.negative, 1), (np.add, 2), (np.fmax, 2), (np.add, 3)])
def test_kernel_writes_what_numpy_computes(fn: np.ufunc, n: int) -> None:
    xs = [np.array([1e38, -2.0, 0.0], np.float32) for _ in range(min(n, fn.nin))]
    out = np.empty(3, np.float32)
    kernel = ufunc_kernel_of(fn, len(xs))
    assert ufunc_kernel_of(fn, len(xs)) is kernel  # made once
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warns in numpy, never in torch
        kernel(out, *xs)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, fn(*xs))


def test_wrong_arity_keeps_numpys_error() -> None:
    kernel = ufunc_kernel_of(np.add, 1)  # one input to a binary ufunc: numpy's own TypeError
    with pytest.raises(TypeError):
        kernel(np.empty(3), np.ones(3))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_plain_pointwise_is_quiet_and_exact(device: str) -> None:
    a = torch.tensor([1e38, 0.0, -1.0], device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [(a * a).cpu().numpy(), (a + a).cpu().numpy(), torch.neg(a).cpu().numpy()]
    x = np.array([1e38, 0.0, -1.0], np.float32)
    with np.errstate(all="ignore"):
        want = [x * x, x + x, -x]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
