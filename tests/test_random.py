"""Random sampling: reproducibility, generator state, the graph-capture protocol, distributions
(within statistical tolerance), launch counts and op names against real torch, errors against
real torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import NoHostSync, assert_raises_like_torch, launches, torch_launches

import fake_torch as ft
import fake_torch.cuda
from fake_torch._simulated import _dispatch

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

N = 200_000  # samples for the distribution tests: standard errors ~ 0.002


def _np(t: ft.Tensor) -> np.ndarray:
    return np.asarray(t.numpy(force=True), dtype=np.float64)


# --- reproducibility and generator state -----------------------------------------------------

@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_same_seed_same_numbers_and_draws_advance(dev: str) -> None:
    ft.manual_seed(123)
    first = [_np(ft.randn(5, device=dev)), _np(ft.rand(5, device=dev)),
             _np(ft.randint(0, 100, (5,), device=dev))]
    ft.manual_seed(123)
    again = [_np(ft.randn(5, device=dev)), _np(ft.rand(5, device=dev)),
             _np(ft.randint(0, 100, (5,), device=dev))]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    ft.manual_seed(123)
    x, y = _np(ft.randn(5, device=dev)), _np(ft.randn(5, device=dev))
    assert not np.array_equal(x, y)  # the second draw continues the stream
    ft.manual_seed(124)
    assert not np.array_equal(x, _np(ft.randn(5, device=dev)))


def test_explicit_generator_matches_a_default_seeded_the_same() -> None:
    g = ft.Generator().manual_seed(99)
    ft.manual_seed(99)
    np.testing.assert_array_equal(_np(ft.rand(4, generator=g)), _np(ft.rand(4)))
    np.testing.assert_array_equal(_np(ft.rand(4, generator=g)), _np(ft.rand(4)))


def test_manual_seed_also_seeds_cuda_and_streams_are_per_device() -> None:
    ft.manual_seed(5)
    a = _np(ft.rand(3, device="cuda"))
    ft.manual_seed(5)
    ft.rand(10)  # a cpu draw does not move the cuda stream
    np.testing.assert_array_equal(_np(ft.rand(3, device="cuda")), a)
    fake_torch.cuda.manual_seed(5)  # only the cuda generator
    np.testing.assert_array_equal(_np(ft.rand(3, device="cuda")), a)
    fake_torch.cuda.manual_seed_all(5)
    np.testing.assert_array_equal(_np(ft.rand(3, device="cuda")), a)
    assert fake_torch.cuda.initial_seed() == 5


def test_generator_state_roundtrip_and_seeds() -> None:
    g = ft.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()  # torch's default seed
    assert g.device == ft.device("cpu")
    assert g.manual_seed(-1).initial_seed() == torch.Generator().manual_seed(-1).initial_seed()
    assert ft.manual_seed(7) is ft.default_generator
    assert ft.initial_seed() == 7
    state = ft.get_rng_state()
    assert state.dtype is ft.uint8 and state.numel() == 16
    a = _np(ft.rand(4))
    ft.set_rng_state(state)
    np.testing.assert_array_equal(_np(ft.rand(4)), a)
    s = ft.seed()
    assert isinstance(s, int) and ft.initial_seed() == s
    assert fake_torch.cuda.initial_seed() == s
    twin = g.manual_seed(3).clone_state()
    np.testing.assert_array_equal(_np(ft.rand(3, generator=twin)), _np(ft.rand(3, generator=g)))


def test_cuda_generator_offset_and_rng_state() -> None:
    g = fake_torch.cuda.default_generators[0]
    ft.manual_seed(11)
    assert g.get_offset() == 0
    ft.randn(100, device="cuda")
    assert g.get_offset() == 4  # torch's CUDA Philox advances by 4 for a small draw
    state = fake_torch.cuda.get_rng_state()
    a = _np(ft.rand(3, device="cuda"))
    fake_torch.cuda.set_rng_state(state)
    np.testing.assert_array_equal(_np(ft.rand(3, device="cuda")), a)
    g.set_offset(4)
    np.testing.assert_array_equal(_np(ft.rand(3, device="cuda")), a)
    assert len(fake_torch.cuda.get_rng_state_all()) == 1


class _Recorder(_dispatch.Mode):
    """A stand-in for graph capture: launches are recorded, not run."""

    name = "capture"

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def run(self, op: str, kernel: Any, outs: Any, inputs: Any, params: Any, *rest: Any,
            **kw: Any) -> None:
        self.calls.append((kernel, outs, inputs, params))

    def replay(self) -> None:
        for kernel, outs, inputs, params in self.calls:
            kernel(*outs, *inputs, **params)


def test_replayed_draws_equal_the_next_eager_draws() -> None:
    """The contract the CUDA-graph issue relies on: replaying a graph that holds two draws
    gives the values the next two eager draws would give from the same seed."""
    g = fake_torch.cuda.default_generators[0]
    ft.manual_seed(2024)
    eager = [_np(ft.randn(6, device="cuda")), _np(ft.rand(6, device="cuda")),
             _np(ft.randn(6, device="cuda")), _np(ft.rand(6, device="cuda")),
             _np(ft.randn(6, device="cuda"))]

    ft.manual_seed(2024)
    rec = _Recorder()
    state = g._state  # what a CUDAGraph drives: the generator's state, registered with it
    state.register_graph(0)
    state.capture_prologue()  # capture
    with _dispatch.push_mode(rec):
        a = ft.randn(6, device="cuda")
        b = ft.rand(6, device="cuda")
    increment = state.capture_epilogue()
    assert increment == 8 and g.get_offset() == 0  # capture does not move the eager stream

    state.replay_prologue(increment)  # replay 1: the first two draws
    rec.replay()
    np.testing.assert_array_equal(_np(a), eager[0])
    np.testing.assert_array_equal(_np(b), eager[1])
    state.replay_prologue(increment)  # replay 2: fresh numbers, the next two draws
    rec.replay()
    np.testing.assert_array_equal(_np(a), eager[2])
    np.testing.assert_array_equal(_np(b), eager[3])
    np.testing.assert_array_equal(_np(ft.randn(6, device="cuda")), eager[4])  # eager follows
    state.unregister_graph(0)


def test_capture_requires_the_generator_in_capture_mode() -> None:
    """torch's guards: a cuda draw inside a capture needs its generator registered with the
    graph (else replays would repeat one baked snapshot), and no eager draw may happen while
    a generator is still in capture mode."""
    g = fake_torch.cuda.default_generators[0]
    with _dispatch.push_mode(_Recorder()):
        with pytest.raises(RuntimeError, match="Attempt to increase offset for a CUDA generator "
                                               "not in capture mode"):
            ft.rand(2, device="cuda")
        ft.rand(2)  # the cpu generator is not part of a CUDA graph
    g._state.register_graph(0)
    g._state.capture_prologue()
    try:
        with pytest.raises(RuntimeError, match="Offset increment outside graph capture"):
            ft.rand(2, device="cuda")
    finally:
        g._state.capture_epilogue()
        g._state.unregister_graph(0)


# --- distributions -----------------------------------------------------------------------------

def test_rand_uniform_moments_and_range() -> None:
    ft.manual_seed(0)
    x = _np(ft.rand(N))
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 0.005 and abs(x.var() - 1 / 12) < 0.002
    y = _np(ft.empty(N).uniform_(2, 5))
    assert y.min() >= 2 and y.max() < 5 and abs(y.mean() - 3.5) < 0.02
    for dt in (ft.float16, ft.bfloat16):
        assert _np(ft.rand(N, dtype=dt)).max() < 1  # never rounds up to 1


def test_normal_moments() -> None:
    ft.manual_seed(1)
    z = _np(ft.randn(N))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    w = _np(ft.normal(2.0, 3.0, (N,)))
    assert abs(w.mean() - 2) < 0.03 and abs(w.std() - 3) < 0.03
    v = _np(ft.empty(N, dtype=ft.float64).normal_(-1, 0.5))
    assert abs(v.mean() + 1) < 0.01 and abs(v.std() - 0.5) < 0.01
    mean = ft.tensor([[0.0], [10.0]])
    std = ft.tensor([1.0, 2.0, 3.0])
    m = _np(ft.normal(mean, std))
    assert m.shape == (2, 3)
    big = _np(ft.normal(ft.full((N,), 5.0), ft.full((N,), 2.0)))
    assert abs(big.mean() - 5) < 0.03 and abs(big.std() - 2) < 0.03


def test_exponential_moments_and_positive() -> None:
    ft.manual_seed(2)
    for lambd in (1.0, 4.0):
        e = _np(ft.empty(N).exponential_(lambd))
        assert e.min() > 0
        assert abs(e.mean() - 1 / lambd) < 0.02 / lambd and abs(e.std() - 1 / lambd) < 0.03 / lambd


def test_bernoulli_frequencies() -> None:
    ft.manual_seed(3)
    b = _np(ft.zeros(N).bernoulli_(0.3))
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.005
    p = ft.tensor([0.0, 0.5, 1.0])
    rows = _np(ft.zeros(N // 10, 3).bernoulli_(p))
    np.testing.assert_allclose(rows.mean(0), [0.0, 0.5, 1.0], atol=0.015)
    assert abs(_np(ft.bernoulli(ft.full((N,), 0.8))).mean() - 0.8) < 0.005
    assert ft.bernoulli(ft.full((3,), 0.5, dtype=ft.float16)).dtype is ft.float16


def test_randint_bounds_and_coverage() -> None:
    ft.manual_seed(4)
    r = ft.randint(3, 9, (N,))
    assert r.dtype is ft.int64
    vals = _np(r)
    assert set(np.unique(vals)) == set(range(3, 9))
    counts = np.bincount(vals.astype(int) - 3) / N
    np.testing.assert_allclose(counts, 1 / 6, atol=0.01)
    assert set(np.unique(_np(ft.randint(2, (1000,), dtype=ft.bool)))) == {0, 1}
    assert ft.randint(10, (3,), dtype=ft.float32).dtype is ft.float32
    u8 = _np(ft.zeros(N, dtype=ft.uint8).random_())
    assert u8.min() == 0 and u8.max() == 255
    f16 = _np(ft.zeros(N, dtype=ft.float16).random_())
    assert f16.min() >= 0 and f16.max() <= 2048
    ranged = _np(ft.zeros(1000, dtype=ft.int8).random_(-5, 5))
    assert ranged.min() == -5 and ranged.max() == 4
    like = ft.randint_like(ft.zeros(2, 3), 2, 10)
    assert like.shape == (2, 3) and like.dtype is ft.float32
    assert 2 <= _np(like).min() and _np(like).max() < 10


def test_randperm_is_a_permutation() -> None:
    ft.manual_seed(5)
    for n, dt in ((0, ft.int64), (1, ft.int64), (50, ft.int64), (129, ft.uint8), (7, ft.float32)):
        p = ft.randperm(n, dtype=dt)
        assert p.dtype is dt
        np.testing.assert_array_equal(np.sort(_np(p)), np.arange(n))


def test_multinomial_with_replacement_frequencies() -> None:
    ft.manual_seed(6)
    p = ft.tensor([[0.1, 0.0, 0.6, 0.3], [1.0, 1.0, 0.0, 2.0]])  # unnormalised rows are fine
    s = ft.multinomial(p, N // 4, replacement=True)
    assert s.shape == (2, N // 4) and s.dtype is ft.int64
    a = _np(s).astype(int)
    np.testing.assert_allclose(np.bincount(a[0], minlength=4) / a.shape[1],
                               [0.1, 0.0, 0.6, 0.3], atol=0.01)
    np.testing.assert_allclose(np.bincount(a[1], minlength=4) / a.shape[1],
                               [0.25, 0.25, 0.0, 0.5], atol=0.01)


def test_multinomial_without_replacement() -> None:
    ft.manual_seed(7)
    p = ft.from_numpy(np.tile(np.array([0.5, 0.0, 0.3, 0.2, 0.0], np.float32), (20000, 1)))
    rows = _np(ft.multinomial(p, 3))
    rows = rows.astype(int)
    assert all(len(set(r)) == 3 for r in rows[:500])  # no category twice
    assert set(np.unique(rows)) == {0, 2, 3}  # zero-probability categories never chosen
    first = np.bincount(rows[:, 0], minlength=5) / rows.shape[0]
    np.testing.assert_allclose(first, [0.5, 0, 0.3, 0.2, 0], atol=0.015)  # first draw ~ p
    one = _np(ft.multinomial(ft.tensor([0.2, 0.8]), 1))
    assert one.shape == (1,) and one[0] in (0, 1)
    assert ft.multinomial(ft.ones(0, 3), 2).shape == (0, 2)


def test_inplace_draws_write_only_the_view() -> None:
    ft.manual_seed(8)
    base = ft.zeros(3, 4)
    row = ft.from_numpy(base.numpy()[1])  # a view of row 1
    row.exponential_()
    b = _np(base)
    assert (b[[0, 2]] == 0).all() and (b[1] > 0).all()
    col = ft.from_numpy(base.numpy()[:, 2])  # a strided view
    col.uniform_(5, 6)
    assert ((_np(base)[:, 2] >= 5) & (_np(base)[:, 2] < 6)).all()


def test_dtypes_devices_and_requires_grad() -> None:
    assert ft.rand(2, dtype=ft.float16).dtype is ft.float16
    assert ft.randn(2, 3, dtype=ft.bfloat16).shape == (2, 3)
    assert ft.rand((2, 3)).shape == (2, 3)
    assert ft.randn_like(ft.zeros(2, dtype=ft.float64)).dtype is ft.float64
    assert ft.rand_like(ft.zeros(2), device="cuda").is_cuda
    assert ft.rand(2, requires_grad=True).requires_grad
    assert ft.normal(ft.zeros(2, dtype=ft.float64), ft.ones(2)).dtype is ft.float64
    assert ft.normal(0.0, ft.ones(2, dtype=ft.float64)).dtype is ft.float64


# --- launch counts and op names against real torch --------------------------------------------

PROGRAMS: dict[str, Callable[[Any, str], Any]] = {
    "rand": lambda T, d: T.rand(3, device=d),
    "randn": lambda T, d: T.randn(2, 3, device=d),
    "randn_gen": lambda T, d: T.randn(3, device=d, generator=T.Generator(d)),
    "randint": lambda T, d: T.randint(10, (3,), device=d),
    "randint_low": lambda T, d: T.randint(2, 10, (3,), device=d),
    "randperm": lambda T, d: T.randperm(5, device=d),
    "rand_like": lambda T, d: T.rand_like(T.ones(3, device=d)),
    "randn_like": lambda T, d: T.randn_like(T.ones(3, device=d)),
    "randint_like": lambda T, d: T.randint_like(T.ones(3, device=d), 2, 10),
    "normal_ff": lambda T, d: T.normal(0.0, 1.0, (3,), device=d),
    "normal_tf": lambda T, d: T.normal(T.zeros(3, device=d), 1.0),
    "normal_tt": lambda T, d: T.normal(T.zeros(3, device=d), T.ones(3, device=d)),
    "multinomial": lambda T, d: T.multinomial(T.ones(2, 5, device=d), 2),
    "multinomial_r": lambda T, d: T.multinomial(T.ones(5, device=d), 4, True),
    "exponential_": lambda T, d: T.ones(4, device=d).exponential_(),
    "uniform_": lambda T, d: T.ones(4, device=d).uniform_(1, 2),
    "normal_": lambda T, d: T.ones(4, device=d).normal_(),
    "bernoulli_": lambda T, d: T.ones(4, device=d).bernoulli_(0.5),
    "bernoulli_t": lambda T, d: T.ones(4, device=d).bernoulli_(T.ones(4, device=d)),
    "bernoulli": lambda T, d: T.bernoulli(T.ones(4, device=d)),
    "bernoulli_p": lambda T, d: T.ones(4, device=d).bernoulli(0.5),
    "random_": lambda T, d: T.ones(4, device=d).random_(),
    "random_to": lambda T, d: T.ones(4, device=d).random_(10),
    "random_from_to": lambda T, d: T.ones(4, device=d).random_(2, 10),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_launches_match_torch_dispatch(name: str) -> None:
    program = PROGRAMS[name]
    with torch_launches() as expected:
        program(torch, "cpu")
    with launches() as ours:
        program(ft, "cuda")
    assert ours == expected


def test_each_draw_is_one_launch_by_op() -> None:
    x = ft.zeros(8, device="cuda")
    ft.LaunchCounter.reset()
    x.exponential_()
    ft.randn(4, device="cuda")
    ft.multinomial(x.exponential_(), 2)
    assert ft.LaunchCounter.n == 4
    assert dict(ft.LaunchCounter.by_op) == {"exponential_": 2, "randn": 1, "multinomial": 1}


def test_multinomial_fast_path_syncs_on_cuda() -> None:
    """torch's multinomial (no replacement, or one sample) checks the probabilities with an
    .item(): a host sync that a CUDA graph capture rejects. The with-replacement path does not."""
    p = ft.ones(4, device="cuda")
    with _dispatch.push_mode(NoHostSync()):
        with pytest.raises(RuntimeError, match="host sync: multinomial"):
            ft.multinomial(p, 2)
        with pytest.raises(RuntimeError, match="host sync: multinomial"):
            ft.multinomial(p, 1, replacement=True)
        ft.multinomial(p, 2, replacement=True)
        ft.multinomial(ft.ones(4), 2)  # cpu: nothing to wait for


# --- errors against real torch -----------------------------------------------------------------

ERRORS: dict[str, Callable[[Any], Any]] = {
    "mn_3d": lambda T: T.multinomial(T.ones(2, 2, 2), 1),
    "mn_0d": lambda T: T.multinomial(T.tensor(1.0), 1),
    "mn_int": lambda T: T.multinomial(T.ones(3, dtype=T.int64), 1),
    "mn_zero_samples": lambda T: T.multinomial(T.ones(3), 0),
    "mn_too_many": lambda T: T.multinomial(T.ones(3), 4),
    "mn_no_categories": lambda T: T.multinomial(T.ones(2, 0), 1),
    "mn_nan": lambda T: T.multinomial(T.tensor([float("nan"), 1.0]), 1),
    "mn_inf": lambda T: T.multinomial(T.tensor([float("inf"), 1.0]), 1),
    "mn_negative": lambda T: T.multinomial(T.tensor([-1.0, 1.0]), 1),
    "mn_zero_row": lambda T: T.multinomial(T.tensor([[1.0, 0.0], [0.0, 0.0]]), 1),
    "mn_r_zero": lambda T: T.multinomial(T.tensor([0.0, 0.0]), 2, True),
    "mn_r_nan": lambda T: T.multinomial(T.tensor([float("nan"), 1.0]), 2, True),
    "mn_r_inf": lambda T: T.multinomial(T.tensor([float("inf"), 1.0]), 2, True),
    "mn_r_negative": lambda T: T.multinomial(T.tensor([1.0, -1.0]), 2, True),
    "mn_float_n": lambda T: T.multinomial(T.ones(3), 1.0),
    "exp_zero": lambda T: T.ones(3).exponential_(0),
    "exp_negative": lambda T: T.ones(3).exponential_(-1.5),
    "exp_int": lambda T: T.ones(3, dtype=T.int64).exponential_(),
    "rand_int": lambda T: T.rand(3, dtype=T.int64),
    "rand_like_bool": lambda T: T.rand_like(T.ones(3, dtype=T.bool)),
    "randn_int": lambda T: T.randn(3, dtype=T.int32),
    "randint_empty_range": lambda T: T.randint(5, 5, (3,)),
    "randint_zero_high": lambda T: T.randint(0, (3,)),
    "randint_bool_range": lambda T: T.randint(3, (3,), dtype=T.bool),
    "randint_u8_range": lambda T: T.randint(300, (3,), dtype=T.uint8),
    "randint_i8_low": lambda T: T.randint(-200, 0, (3,), dtype=T.int8),
    "randint_i16": lambda T: T.randint(2**40, (2,), dtype=T.int16),
    "randint_half": lambda T: T.randint(2**40, (2,), dtype=T.float16),
    "randint_float_high": lambda T: T.randint(10.5, (3,)),
    "randint_requires_grad": lambda T: T.randint(3, (2,), requires_grad=True),
    "randint_like_zero": lambda T: T.randint_like(T.zeros(3), 0),
    "randperm_negative": lambda T: T.randperm(-1),
    "randperm_i8": lambda T: T.randperm(129, dtype=T.int8),
    "randperm_u8": lambda T: T.randperm(257, dtype=T.uint8),
    "randperm_half": lambda T: T.randperm(2050, dtype=T.float16),
    "randperm_float": lambda T: T.randperm(2**24 + 2, dtype=T.float32),
    "randperm_bool": lambda T: T.randperm(2, dtype=T.bool),
    "rand_negative": lambda T: T.rand(-1),
    "normal_negative_std": lambda T: T.normal(0.0, -1.0, (3,)),
    "normal_tensor_negative_std": lambda T: T.normal(T.zeros(3), T.tensor([-1.0, 1.0, 1.0])),
    "normal_bad_broadcast": lambda T: T.normal(T.zeros(3), T.ones(2)),
    "normal_int": lambda T: T.normal(T.zeros(3, dtype=T.int64), 1.0),
    "normal__negative": lambda T: T.ones(3).normal_(0, -1),
    "uniform_reversed": lambda T: T.ones(3).uniform_(2, 1),
    "uniform_int": lambda T: T.ones(3, dtype=T.int64).uniform_(),
    "uniform_inf": lambda T: T.zeros(3).uniform_(0, float("inf")),
    "bernoulli__p": lambda T: T.ones(3).bernoulli_(1.5),
    "bernoulli_bad_p": lambda T: T.bernoulli(T.tensor([1.5])),
    "bernoulli_int_input": lambda T: T.bernoulli(T.zeros(3, dtype=T.int64)),
    "bernoulli__int_p": lambda T: T.zeros(3).bernoulli_(T.tensor([0, 1, 1])),
    "bernoulli__bad_tensor_p": lambda T: T.zeros(3).bernoulli_(T.tensor([0.0, 2.0, 1.0])),
    "random_reversed": lambda T: T.ones(3).random_(5, 2),
    "random_i8_to": lambda T: T.zeros(5, dtype=T.int8).random_(300),
    "gen_seed_float": lambda T: T.Generator().manual_seed(1.5),
    "gen_seed_str": lambda T: T.Generator().manual_seed("1"),
    "gen_seed_overflow": lambda T: T.Generator().manual_seed(2**64),
    "gen_seed_underflow": lambda T: T.Generator().manual_seed(-(2**63) - 1),
    "gen_offset_cpu": lambda T: T.Generator().get_offset(),
    "gen_set_offset_cpu": lambda T: T.Generator().set_offset(4),
    "gen_state_dtype": lambda T: T.Generator().set_state(T.zeros(16)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert_raises_like_torch(ERRORS[name])


def test_float_randint_bounds_warn_like_torch() -> None:
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        ft.randint(2**30, (2,), dtype=ft.float32)


def test_generator_device_must_match() -> None:
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but "
                                           "found 'cpu'"):
        ft.rand(3, device="cuda", generator=ft.Generator())
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but "
                                           "found 'cuda'"):
        ft.randn(3, generator=ft.Generator("cuda"))
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        ft.Generator().set_state(ft.zeros(3, dtype=ft.uint8))


def test_out_is_not_emulated() -> None:
    with pytest.raises(NotImplementedError, match=r"torch.rand\(out=...\)"):
        ft.rand(3, out=ft.empty(3))
