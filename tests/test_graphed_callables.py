"""torch.cuda.make_graphed_callables, inference only: warmup, one capture per callable into one
shared pool, and calls that copy an input into its static input only when the address differs.
"""

from __future__ import annotations

import numpy as np
import pytest

import fake_torch as torch
import fake_torch.nn.functional as F
from fake_torch import LaunchCounter, nn

pytestmark = pytest.mark.usefixtures("fresh_device")


def _np(t: torch.Tensor) -> np.ndarray:
    return t.numpy(force=True)


def _gate(a: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = F.silu(a) * 2 + a  # three kernels: silu, mul, add
    return out


def _launches_of(fn: object, *args: torch.Tensor) -> int:
    LaunchCounter.reset()
    fn(*args)  # type: ignore[operator]
    return LaunchCounter.n


@pytest.mark.parametrize("num_warmup_iters", [0, 1, 3])
def test_warmup_runs_num_warmup_iters_times_then_one_capture(num_warmup_iters: int) -> None:
    x = torch.randn(4, 8, device="cuda")
    calls: list[int] = []

    def fn(a: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return _gate(a)

    num_kernels = _launches_of(_gate, x)
    assert num_kernels == 3
    LaunchCounter.reset()
    graphed = torch.cuda.make_graphed_callables(fn, (x,), num_warmup_iters=num_warmup_iters)
    assert len(calls) == num_warmup_iters + 1  # eager warmups, then the capture
    # (+ 2: capture_begin fills the default generator's graph-side seed and offset)
    assert LaunchCounter.n == (num_warmup_iters + 1) * num_kernels + 2
    assert graphed.cuda_graph.num_kernels == num_kernels


def test_a_graphed_function_copies_only_inputs_at_a_new_address() -> None:
    x = torch.randn(4, 8, device="cuda")
    graphed = torch.cuda.make_graphed_callables(_gate, (x,))
    expected = _np(_gate(x))
    LaunchCounter.reset()
    out = graphed(x)  # the static input itself: no copy, one launch
    assert (LaunchCounter.n, dict(LaunchCounter.by_kind)) == (1, {"graph": 1})
    np.testing.assert_array_equal(_np(out), expected)
    x2 = torch.randn(4, 8, device="cuda")
    expected2 = _np(_gate(x2))
    LaunchCounter.reset()
    out2 = graphed(x2)  # a new tensor: one copy into the static input, then the replay
    assert dict(LaunchCounter.by_kind) == {"memcpy_d2d": 1, "graph": 1}
    np.testing.assert_array_equal(_np(out2), expected2)
    np.testing.assert_array_equal(_np(x), _np(x2))  # the static input now holds x2's values
    assert out2.data_ptr() == out.data_ptr()  # one static output, overwritten
    np.testing.assert_array_equal(_np(out), expected2)


def test_several_inputs_and_a_tuple_of_outputs() -> None:
    a, b = torch.randn(3, device="cuda"), torch.randn(3, device="cuda")

    def fn(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return p + q, p * q

    graphed = torch.cuda.make_graphed_callables(fn, (a, b), num_warmup_iters=1)
    b2 = torch.randn(3, device="cuda")
    LaunchCounter.reset()
    s, p = graphed(a, b2)  # only b2 is at a new address
    assert dict(LaunchCounter.by_kind) == {"memcpy_d2d": 1, "graph": 1}
    np.testing.assert_array_equal(_np(s), _np(a) + _np(b2))
    np.testing.assert_array_equal(_np(p), _np(a) * _np(b2))


def test_a_graphed_module_replays_in_its_captured_mode_and_runs_eagerly_otherwise() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(8, 8).to("cuda")
    x = torch.randn(2, 8, device="cuda")
    expected = _np(lin(x))
    graphed = torch.cuda.make_graphed_callables(lin, (x,), num_warmup_iters=2)
    assert graphed is lin  # modules come back with a new forward
    LaunchCounter.reset()
    y = lin(x)
    assert (LaunchCounter.n, dict(LaunchCounter.by_kind)) == (1, {"graph": 1})
    np.testing.assert_array_equal(_np(y), expected)
    lin.eval()  # not the training flag it was captured with: the original forward, eagerly
    LaunchCounter.reset()
    y_eager = lin(x)
    assert dict(LaunchCounter.by_op) == {"addmm": 1}
    np.testing.assert_array_equal(_np(y_eager), expected)
    lin.train()
    assert _launches_of(lin, x) == 1


def test_the_tuple_form_graphs_each_callable_into_one_shared_pool() -> None:
    torch.manual_seed(0)
    x, h = torch.randn(2, 4, device="cuda"), torch.randn(2, 4, device="cuda")
    mlp = nn.Sequential(nn.Linear(4, 4), nn.SiLU()).to("cuda")
    expected_f, expected_m = _np(_gate(x)), _np(mlp(h))
    graphed_f, graphed_m = torch.cuda.make_graphed_callables((_gate, mlp), ((x,), (h,)))
    assert graphed_m is mlp
    np.testing.assert_array_equal(_np(graphed_f(x)), expected_f)
    np.testing.assert_array_equal(_np(mlp(h)), expected_m)
    double = torch.cuda.make_graphed_callables(
        (_gate, lambda t: t * 3), ((x,), (h,)), num_warmup_iters=1)
    pools = {f.cuda_graph.pool() for f in double}
    assert len(pools) == 1 and next(iter(pools))[0] == 0  # one graph_pool_handle() pool
    np.testing.assert_array_equal(_np(double[1](h)), _np(h) * 3)


def test_a_pool_can_be_given() -> None:
    x = torch.randn(3, device="cuda")
    pool = torch.cuda.graph_pool_handle()
    graphed = torch.cuda.make_graphed_callables(_gate, (x,), pool=pool)
    assert graphed.cuda_graph.pool() == pool


def test_sample_args_must_be_tensors_and_modules_must_have_no_hooks() -> None:
    with pytest.raises(AssertionError, match=r"^In the beta API, sample_args for each callable "
                                             r"must contain only Tensors\."):
        torch.cuda.make_graphed_callables(_gate, (1.0,))
    lin = nn.Linear(2, 2).to("cuda")
    lin.register_forward_hook(lambda m, i, o: None)
    with pytest.raises(AssertionError, match=r"^Modules must not have hooks registered"):
        torch.cuda.make_graphed_callables(lin, (torch.randn(1, 2, device="cuda"),))
