"""Replay equals eager: a small MLP from fake_torch.nn (Linear, SiLU, Linear, RMSNorm) behind a
nano-vllm-style graph runner — persistent input buffer for the largest batch, capture sizes
[1, 2, 4, 8] captured largest first into one shared pool, a warmup before each capture, replay
on the smallest captured size that holds the batch — against eager and against numpy, for fresh
random inputs at every batch size; and the launch counts that make graphs worth it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fake_torch as torch
from fake_torch import LaunchCounter, nn
from fake_torch._simulated._dispatch import record_ops
from fake_torch.cuda import CUDAGraph

HIDDEN, EPS = 16, 1e-6
CAPTURE_SIZES = [1, 2, 4, 8]
MAX_BS = max(CAPTURE_SIZES)


class GraphRunner:
    """One CUDA graph per capture size, all reading `static_x` and sharing one memory pool."""

    def __init__(self, model: nn.Sequential) -> None:
        self.model = model
        self.static_x = torch.zeros(MAX_BS, HIDDEN, device="cuda")
        self.pool = torch.cuda.graph_pool_handle()
        self.graphs: dict[int, tuple[CUDAGraph, torch.Tensor]] = {}
        for bs in sorted(CAPTURE_SIZES, reverse=True):  # largest first: the pool fits the rest
            model(self.static_x[:bs])  # warmup
            g = CUDAGraph()
            with torch.cuda.graph(g, pool=self.pool):  # capture
                out = model(self.static_x[:bs])
            self.graphs[bs] = (g, out)

    def padded_size(self, bs: int) -> int:
        return min(s for s in CAPTURE_SIZES if s >= bs)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        bs = x.shape[0]
        g, out = self.graphs[self.padded_size(bs)]
        self.static_x[:bs].copy_(x)  # replay: the rows past bs hold stale values, ignored
        g.replay()
        return out[:bs]


@pytest.fixture(scope="module")
def mlp() -> nn.Sequential:
    torch.manual_seed(0)
    up, down = nn.Linear(HIDDEN, 4 * HIDDEN), nn.Linear(4 * HIDDEN, HIDDEN)
    norm = nn.RMSNorm(HIDDEN, eps=EPS)
    assert norm.weight is not None
    with torch.no_grad():  # a non-trivial gain, so the oracle checks it is applied
        norm.weight.copy_(torch.linspace(0.5, 2.0, HIDDEN))
    return nn.Sequential(up, nn.SiLU(), down, norm).to("cuda")


@pytest.fixture(scope="module")
def runner(mlp: nn.Sequential) -> Iterator[GraphRunner]:
    yield GraphRunner(mlp)


def _numpy_mlp(model: nn.Sequential, x: np.ndarray) -> np.ndarray:
    """The same MLP in float64 numpy, from the model's weights."""
    w1, b1, w2, b2, g = (p.numpy(force=True).astype(np.float64) for p in model.parameters())
    h = x.astype(np.float64) @ w1.T + b1
    h = h / (1 + np.exp(-h))
    h = h @ w2.T + b2
    out: np.ndarray = h / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + EPS) * g
    return out


def _fresh_input(bs: int, seed: int) -> tuple[torch.Tensor, np.ndarray]:
    x = np.random.default_rng(seed).standard_normal((bs, HIDDEN)).astype(np.float32)
    return torch.tensor(x, device="cuda"), x


def _check(runner: GraphRunner, mlp: nn.Sequential, bs: int, seed: int) -> None:
    x, x_np = _fresh_input(bs, seed)
    eager = mlp(x).numpy(force=True)
    replayed = runner(x).numpy(force=True)
    if bs in CAPTURE_SIZES:  # the very same kernels on the very same shapes: bit for bit
        np.testing.assert_array_equal(replayed, eager)
    else:  # padded: the matmuls ran over more rows; rows are independent up to rounding
        np.testing.assert_allclose(replayed, eager, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(replayed, _numpy_mlp(mlp, x_np), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bs", range(1, MAX_BS + 1))
def test_replay_equals_eager_at_every_batch_size(runner: GraphRunner, mlp: nn.Sequential,
                                                  bs: int) -> None:
    for seed in range(3):  # fresh inputs each call, through the same static buffer
        _check(runner, mlp, bs, seed + 100 * bs)


@settings(max_examples=40, deadline=None)
@given(bs=st.integers(1, MAX_BS), seed=st.integers(0, 2**32 - 1))
def test_replay_equals_eager_for_random_inputs(runner: GraphRunner, mlp: nn.Sequential, bs: int,
                                               seed: int) -> None:
    _check(runner, mlp, bs, seed)


def test_launch_counts_eager_n_replay_one_padded_one_plus_the_copy(runner: GraphRunner,
                                                                    mlp: nn.Sequential) -> None:
    x, _ = _fresh_input(3, 0)
    with record_ops() as eager_ops:
        mlp(x)
    num_kernels = len(eager_ops)
    assert num_kernels >= 4  # at least one per layer
    for bs, (g, _) in runner.graphs.items():  # every graph holds exactly the eager step
        assert g.kernel_names == eager_ops, bs
    with LaunchCounter.expect(num_kernels):  # eager step: N launches
        mlp(x)
    for bs in CAPTURE_SIZES:  # the input already in the static buffer: one launch
        g, _ = runner.graphs[bs]
        with LaunchCounter.expect(1, cudaGraphLaunch=1):
            g.replay()
    for bs in range(1, MAX_BS + 1):  # a fresh input (padded or not): one copy, one replay
        x, _ = _fresh_input(bs, bs)
        LaunchCounter.reset()
        runner(x)
        assert dict(LaunchCounter.by_kind) == {"memcpy_d2d": 1, "graph": 1}, bs
