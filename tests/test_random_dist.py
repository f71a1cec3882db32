"""cauchy_, log_normal_, geometric_, torch.poisson and rrelu in training: distributions (within
statistical tolerance: the numbers cannot be torch's bit for bit), generator state and Philox
offsets, CUDA-graph replays that draw what the next eager draws would, launch counts and op
names against real torch, errors against real torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft
import fake_torch.cuda
from fake_torch.nn import functional as F

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

N = 200_000  # samples for the distribution tests


def _np(t: ft.Tensor) -> np.ndarray:
    return np.asarray(t.numpy(force=True), dtype=np.float64)


# --- distributions -----------------------------------------------------------------------------

def test_cauchy_quartiles() -> None:
    ft.manual_seed(0)
    x = _np(ft.empty(N).cauchy_(2.0, 0.5))
    q1, q2, q3 = np.quantile(x, [0.25, 0.5, 0.75])
    assert abs(q2 - 2.0) < 0.01 and abs(q1 - 1.5) < 0.01 and abs(q3 - 2.5) < 0.01
    assert np.isfinite(x).all()


def test_log_normal_moments_of_the_log() -> None:
    ft.manual_seed(1)
    x = _np(ft.empty(N, dtype=ft.float64).log_normal_(0.5, 0.25))
    assert x.min() > 0
    assert abs(np.log(x).mean() - 0.5) < 0.005 and abs(np.log(x).std() - 0.25) < 0.005
    assert ft.empty(3, dtype=ft.bfloat16).log_normal_().dtype is ft.bfloat16


@pytest.mark.parametrize("dtype", ["float32", "int64", "int16"])
def test_geometric_counts_trials(dtype: str) -> None:
    ft.manual_seed(2)
    p = 0.2
    x = _np(ft.empty(N, dtype=getattr(ft, dtype)).geometric_(p))
    assert x.min() == 1 and (x == np.round(x)).all()
    assert abs(x.mean() - 1 / p) < 0.05 and abs(x.var() - (1 - p) / p**2) < 0.5
    assert abs((x == 1).mean() - p) < 0.005  # P(first trial succeeds) = p


def test_geometric_in_uint8_wraps_as_a_c_cast() -> None:
    ft.manual_seed(3)
    x = _np(ft.empty(N, dtype=ft.uint8).geometric_(0.001))  # values far beyond 255 wrap
    assert x.min() >= 0 and x.max() <= 255 and len(np.unique(x)) > 200


def test_poisson_moments_zero_rates_and_dtype() -> None:
    ft.manual_seed(4)
    rates = ft.tensor([0.0, 0.5, 3.0, 40.0]).repeat(N // 4, 1)
    x = _np(ft.poisson(rates))
    assert (x[:, 0] == 0).all() and (x == np.round(x)).all()
    np.testing.assert_allclose(x.mean(0)[1:], [0.5, 3.0, 40.0], rtol=0.02)
    np.testing.assert_allclose(x.var(0)[1:], [0.5, 3.0, 40.0], rtol=0.05)
    assert ft.poisson(ft.ones(2, dtype=ft.float16)).dtype is ft.float16
    assert _np(ft.poisson(ft.tensor([1e9])))[0] == pytest.approx(1e9, rel=1e-3)


def test_rrelu_training_draws_slopes_in_range_and_eval_uses_their_mean() -> None:
    ft.manual_seed(5)
    x = -ft.rand(N) - 0.5  # all negative
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = _np(y) / _np(x)
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.002 and abs(slopes.var() - 0.2**2 / 12) < 0.0005
    pos = ft.tensor([0.5, 2.0, 0.0])
    np.testing.assert_array_equal(_np(F.rrelu(pos, training=True)), [0.5, 2.0, 0.0])
    np.testing.assert_allclose(_np(F.rrelu(ft.tensor([-2.0]), 0.1, 0.3)), [-0.4], rtol=1e-6)
    m = ft.nn.RReLU(0.1, 0.3)
    assert not np.array_equal(_np(m(x[:100])), _np(m(x[:100])))  # training: fresh draws
    m.eval()
    np.testing.assert_allclose(_np(m(x[:100])), _np(x[:100]) * 0.2, rtol=1e-6)


def test_rrelu_inplace_writes_the_input() -> None:
    x = ft.tensor([-1.0, 1.0], device="cuda")
    assert ft.rrelu_(x, 0.5, 0.5, True) is x
    np.testing.assert_allclose(_np(x), [-0.5, 1.0])
    assert F.rrelu(x, 0.5, 0.5, True, inplace=True) is x


# --- generator state ---------------------------------------------------------------------------

DRAWS: dict[str, Callable[[str, ft.Generator | None], ft.Tensor]] = {
    "cauchy_": lambda d, g: ft.empty(5, device=d).cauchy_(generator=g),
    "log_normal_": lambda d, g: ft.empty(5, device=d).log_normal_(generator=g),
    "geometric_": lambda d, g: ft.empty(5, device=d).geometric_(0.3, generator=g),
    "poisson": lambda d, g: ft.poisson(ft.full((5,), 4.0, device=d), generator=g),
    "rrelu": lambda d, g: ft.rrelu(-ft.ones(5, device=d), training=True, generator=g),
}


@pytest.mark.parametrize("name", list(DRAWS))
@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_same_seed_same_numbers_and_explicit_generators(name: str, dev: str) -> None:
    draw = DRAWS[name]
    ft.manual_seed(7)
    first, second = _np(draw(dev, None)), _np(draw(dev, None))
    ft.manual_seed(7)
    np.testing.assert_array_equal(_np(draw(dev, None)), first)
    if name != "geometric_":  # a small p can repeat 1, 1, ... by chance
        assert not np.array_equal(first, second)
    g = ft.Generator(dev).manual_seed(7)
    np.testing.assert_array_equal(_np(draw(dev, g)), first)
    np.testing.assert_array_equal(_np(draw(dev, g)), second)


@pytest.mark.parametrize("name, increment", [("cauchy_", 4), ("log_normal_", 4),
                                             ("geometric_", 4), ("rrelu", 4), ("poisson", 20)])
def test_cuda_philox_offset_advances_as_torchs_kernels_ask(name: str, increment: int) -> None:
    """Small draws advance torch's CUDA offset by 4; its poisson kernel always asks for 20."""
    gen = fake_torch.cuda.default_generators[0]
    ft.manual_seed(11)
    DRAWS[name]("cuda", None)
    assert gen.get_offset() == increment
    x = ft.empty(0, device="cuda")
    ft.rrelu(x, training=True)  # nothing to draw: torch returns before asking the generator
    assert gen.get_offset() == increment


@pytest.mark.usefixtures("fresh_device")
def test_graph_replays_draw_what_the_next_eager_draws_would() -> None:
    x, y = ft.empty(6, device="cuda"), ft.empty(6, device="cuda")
    rates, neg = ft.full((6,), 5.0, device="cuda"), -ft.ones(6, device="cuda")

    def step() -> list[ft.Tensor]:
        return [x.cauchy_(), ft.poisson(rates), F.rrelu(neg, training=True), y.log_normal_()]

    ft.manual_seed(99)
    eager = [[_np(t) for t in step()] for _ in range(3)]
    ft.manual_seed(99)
    g = fake_torch.cuda.CUDAGraph()
    with fake_torch.cuda.graph(g):
        outs = step()
    for expected in eager[:2]:
        g.replay()
        for out, e in zip(outs, expected, strict=True):
            np.testing.assert_array_equal(_np(out), e)
    np.testing.assert_array_equal(_np(x.cauchy_()), eager[2][0])  # eager goes on after them


# --- launch counts and op names against real torch ---------------------------------------------

PROGRAMS: dict[str, Callable[[Any, str], Any]] = {
    "cauchy_": lambda T, d: T.ones(4, device=d).cauchy_(1.0, 2.0),
    "log_normal_": lambda T, d: T.ones(4, device=d).log_normal_(),
    "geometric_": lambda T, d: T.ones(4, device=d).geometric_(0.5),
    "geometric_long": lambda T, d: T.ones(4, dtype=T.int64, device=d).geometric_(0.5),
    "poisson": lambda T, d: T.poisson(T.ones(4, device=d)),
    "rrelu_train": lambda T, d: T.rrelu(-T.ones(4, device=d), training=True),
    "rrelu_eval": lambda T, d: T.rrelu(-T.ones(4, device=d)),
    "rrelu_": lambda T, d: T.rrelu_(-T.ones(4, device=d), training=True),
    "F.rrelu_inplace": lambda T, d: T.nn.functional.rrelu(-T.ones(4, device=d), training=True,
                                                          inplace=True),
    "RReLU": lambda T, d: T.nn.RReLU()(-T.ones(4, device=d)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_launches_match_torch_dispatch(name: str) -> None:
    with torch_launches(cuda=True) as expected:
        PROGRAMS[name](torch, "cpu")
    with launches() as ours:
        PROGRAMS[name](ft, "cuda")
    assert ours == expected


# --- errors against real torch -----------------------------------------------------------------

ERRORS: dict[str, Callable[[Any], Any]] = {
    "cauchy_sigma_zero": lambda T: T.ones(3).cauchy_(0, 0),
    "cauchy_sigma_negative_long": lambda T: T.ones(3, dtype=T.int64).cauchy_(0, -1),
    "cauchy_long": lambda T: T.ones(3, dtype=T.int64).cauchy_(),
    "log_normal_std_zero": lambda T: T.ones(3).log_normal_(1, 0),
    "log_normal_long": lambda T: T.ones(3, dtype=T.int64).log_normal_(),
    "geometric_p_zero": lambda T: T.ones(3).geometric_(0),
    "geometric_p_one": lambda T: T.ones(3).geometric_(1),
    "geometric_p_negative": lambda T: T.ones(3).geometric_(-0.1),
    "geometric_bool": lambda T: T.ones(3, dtype=T.bool).geometric_(0.5),
    "poisson_negative": lambda T: T.poisson(T.tensor([-1.0])),
    "poisson_nan": lambda T: T.poisson(T.tensor([float("nan")])),
    "poisson_long": lambda T: T.poisson(T.tensor([1])),
    "rrelu_train_long": lambda T: T.rrelu(T.tensor([1]), training=True),
    "rrelu_train_half_cpu": lambda T: T.rrelu(T.ones(2, dtype=T.float16), training=True),
    "rrelu_bounds_train": lambda T: T.rrelu(T.ones(2), 0.5, 0.2, True),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert_raises_like_torch(ERRORS[name])
