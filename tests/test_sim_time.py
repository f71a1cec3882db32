"""Simulated time: Event.elapsed_time from the cost model's own constants, stream ordering and
the hazards CUDA's ordering rules leave open, as PyTorch's CUDA semantics notes describe them.

Oracles: the cost model's constants and the GPU's published specs (fake_torch/_simulated/_cost.py,
fake_torch/_simulated/_gpus.py), the eager path's values, and torch's documented behaviour (event
errors, a side stream that does not wait reads stale data, concurrent replays of graphs sharing a
pool corrupt each other).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from oracles import cuda_event_time

import fake_torch as torch
from fake_torch._simulated import _cost, _gpus
from fake_torch.cuda import CUDAGraph

US = 1e-3  # one microsecond in milliseconds


@pytest.fixture(autouse=True)
def _idle_device() -> Iterator[None]:
    torch.cuda.synchronize()  # each test starts with the simulated device idle
    yield
    torch.cuda.synchronize()


def timed(fn: Callable[[], object]) -> float:
    """The tutorial's timing loop: milliseconds between two events around `fn`."""
    return cuda_event_time(fn)[0]


# --- events -------------------------------------------------------------------------------------

def test_elapsed_time_errors_are_torchs() -> None:
    plain, timing = torch.cuda.Event(), torch.cuda.Event(enable_timing=True)
    plain.record()
    timing.record()
    with pytest.raises(ValueError, match=r"^Both events must be created with argument "
                                         r"'enable_timing=True'\.$"):
        plain.elapsed_time(timing)
    with pytest.raises(ValueError, match=r"^Both events must be recorded before calculating "
                                         r"elapsed time\.$"):
        timing.elapsed_time(torch.cuda.Event(enable_timing=True))
    # recorded, but the device has not got there yet: torch's RuntimeError
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1_000_000)
    end.record()
    assert not end.query()
    with pytest.raises(RuntimeError, match=r"^Both events must be completed before calculating "
                                           r"elapsed time\.$"):
        timing.elapsed_time(end)
    end.synchronize()
    assert end.query()
    # the sleep's launch call, then its million cycles at the GPU's clock
    assert timing.elapsed_time(end) == pytest.approx(
        _cost.EAGER_LAUNCH_NS * 1e-6 + 1_000_000 / _gpus.current().clock_hz * 1e3, rel=1e-6)


def test_unrecorded_event_error_matches_real_torch() -> None:
    real = pytest.importorskip("torch")
    with pytest.raises(ValueError) as ours:
        torch.Event(enable_timing=True).elapsed_time(torch.Event(enable_timing=True))
    with pytest.raises(ValueError) as theirs:
        real.Event(enable_timing=True).elapsed_time(real.Event(enable_timing=True))
    assert str(ours.value) == str(theirs.value)


# --- what a launch costs --------------------------------------------------------------------------

def test_small_eager_kernels_are_bound_by_the_host() -> None:
    x = torch.ones(64, device="cuda")
    assert _cost.MIN_KERNEL_NS < _cost.EAGER_LAUNCH_NS  # the GPU keeps up, the CPU does not
    ms = timed(lambda: [x.mul_(1.0) for _ in range(10)])
    # each kernel starts when its launch call ends and is done before the next call ends
    assert ms == pytest.approx((10 * _cost.EAGER_LAUNCH_NS + _cost.MIN_KERNEL_NS) * 1e-6,
                               rel=1e-6)


def test_a_large_kernel_runs_at_memory_bandwidth() -> None:
    n = 1 << 24  # 64 MiB each of input and output
    x = torch.ones(n, device="cuda")
    y = torch.empty_like(x)
    ms = timed(lambda: torch.mul(x, 2.0, out=y))
    bandwidth = _gpus.current().hbm_bytes_per_s
    assert ms == pytest.approx(_cost.EAGER_LAUNCH_NS * 1e-6 + 2 * 4 * n / bandwidth * 1e3,
                               rel=1e-4)


def test_a_matmul_is_bound_by_flops_at_the_dtypes_peak() -> None:
    a = torch.ones(4096, 4096, device="cuda", dtype=torch.bfloat16)
    ms = timed(lambda: torch.mm(a, a))
    peak = _gpus.current().bf16_flops
    assert ms == pytest.approx(_cost.EAGER_LAUNCH_NS * 1e-6 + 2 * 4096 ** 3 / peak * 1e3,
                               rel=1e-4)


def test_a_graph_replay_costs_one_launch_and_runs_its_nodes_back_to_back() -> None:
    x = torch.ones(64, device="cuda")
    g = CUDAGraph()
    with torch.cuda.stream(torch.cuda.Stream()):
        with torch.cuda.graph(g):
            for _ in range(10):
                x.mul_(1.0)
    torch.cuda.synchronize()
    eager = timed(lambda: [x.mul_(1.0) for _ in range(10)])
    replay = timed(g.replay)
    nodes = 10 * _cost.MIN_KERNEL_NS + 9 * _cost.GRAPH_NODE_GAP_NS
    assert replay == pytest.approx((_cost.GRAPH_LAUNCH_NS + 10 * _cost.GRAPH_NODE_NS + nodes)
                                   * 1e-6, rel=1e-4)
    assert replay < eager


def test_a_graph_replays_at_the_speed_of_the_gpu_it_was_instantiated_on() -> None:
    """The replay's work list is built at the first replay (a graph never replayed costs
    nothing more at capture), but its kernels' durations are those of the GPU simulated when
    capture_end instantiated it: switching GPUs between capture and the first replay changes
    nothing, as a graph built earlier keeps its nodes."""
    saved = _gpus.current().key
    n = 1 << 22

    def capture_on(gpu: str) -> tuple[CUDAGraph, torch.Tensor]:
        torch.cuda.set_simulated_gpu(gpu)
        x = torch.ones(n, device="cuda")
        g = CUDAGraph()
        with torch.cuda.stream(torch.cuda.Stream()):
            with torch.cuda.graph(g):
                x.mul_(2.0)
        torch.cuda.synchronize()
        return g, x

    try:
        l4, _alive_l4 = capture_on("L4")  # (its buffer lives while it replays)
        at_l4 = timed(l4.replay)  # replayed on the GPU it was captured on
        h200, _alive_h200 = capture_on("H200")
        at_h200 = timed(h200.replay)
        later, x_later = capture_on("L4")
        torch.cuda.set_simulated_gpu("H200")  # switched before its first replay
        assert timed(later.replay) == pytest.approx(at_l4, rel=1e-9)
        assert at_l4 > 10 * at_h200
        assert float(x_later[0]) == 2.0  # its kernels ran
    finally:
        torch.cuda.set_simulated_gpu(saved)


def test_the_simulated_gpu_is_chosen_by_name() -> None:
    saved = _gpus.current().key
    try:
        torch.cuda.set_simulated_gpu("L4")
        assert torch.cuda.get_device_name().startswith("NVIDIA L4")
        assert torch.cuda.get_device_properties(0).multi_processor_count == 58
        n = 1 << 22
        x = torch.ones(n, device="cuda")
        slow = timed(lambda: x.mul_(2.0))
        torch.cuda.set_simulated_gpu("H200")
        assert torch.cuda.get_device_name().startswith("NVIDIA H200")
        assert torch.cuda.mem_get_info()[1] == _gpus.GPUS["H200"].total_memory
        fast = timed(lambda: x.mul_(2.0))
        # memory-bound: the ratio of the times is the ratio of the bandwidths
        ratio = (slow - _cost.EAGER_LAUNCH_NS * 1e-6) / (fast - _cost.EAGER_LAUNCH_NS * 1e-6)
        assert ratio == pytest.approx(4.8e12 / 300e9, rel=1e-3)
        with pytest.raises(ValueError, match="unknown simulated GPU 'B300'"):
            torch.cuda.set_simulated_gpu("B300")
    finally:
        torch.cuda.set_simulated_gpu(saved)


# --- streams order work as CUDA does ------------------------------------------------------------

def test_a_side_stream_that_does_not_wait_reads_stale_data() -> None:
    """PyTorch's CUDA semantics notes: work on another stream may start before the current
    stream's work is done. With the default stream busy (_sleep), the side stream's sum reads
    A before normal_ has written it; with wait_stream it reads the new values."""
    a = torch.zeros(1000, device="cuda")
    side = torch.cuda.Stream()
    torch.cuda._sleep(1_000_000)  # the default stream is busy for ~0.5 ms
    a.fill_(1.0)
    with torch.cuda.stream(side):
        racy = a.sum()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        ordered = a.sum()
    torch.cuda.synchronize()
    assert racy.item() == 0.0  # the stale zeros
    assert ordered.item() == 1000.0


def test_events_order_streams_and_query_follows_the_clock() -> None:
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.zeros(4, device="cuda")
    done = torch.cuda.Event()
    s1.wait_stream(torch.cuda.current_stream())  # x was made on the default stream
    with torch.cuda.stream(s1):
        torch.cuda._sleep(1_000_000)
        x.add_(1.0)
        done.record()
    assert not s1.query() and not done.query() and s2.query()
    s2.wait_event(done)
    with torch.cuda.stream(s2):
        y = x * 10
    s2.synchronize()  # waits for s2, which waited for s1
    assert s1.query() and done.query()
    np.testing.assert_array_equal(y.cpu().numpy(), np.full(4, 10.0, np.float32))


def test_host_reads_of_a_non_blocking_copy_need_a_sync() -> None:
    x = torch.arange(4.0, device="cuda")
    host = torch.zeros(4).pin_memory()
    torch.cuda._sleep(1_000_000)
    host.copy_(x, non_blocking=True)
    np.testing.assert_array_equal(host.numpy(), np.zeros(4, np.float32))  # not landed yet
    torch.cuda.current_stream().synchronize()
    np.testing.assert_array_equal(host.numpy(), np.arange(4.0, dtype=np.float32))


@pytest.mark.parametrize("share", [False, True])
def test_concurrent_replays_of_graphs_sharing_a_pool_corrupt_each_other(share: bool) -> None:
    """PyTorch's test_graph_concurrent_replay, in small: two graphs whose temporaries share a
    pool, replayed on two streams at once, overwrite each other's temporaries; private pools
    do not."""
    size = 1000

    def temps(t: torch.Tensor, val: float) -> torch.Tensor:
        return (t.clone() + val) + (t.clone() + val)

    a = torch.ones(size, device="cuda")
    g0, g1 = CUDAGraph(), CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        g0.capture_begin()
        b = a.clone()
        for _ in range(3):
            b = temps(b, 1)
        g0.capture_end()
        g1.capture_begin(*((g0.pool(),) if share else ()))
        c = a.clone()
        for _ in range(3):
            c = temps(c, 2)
        g1.capture_end()
    torch.cuda.synchronize()
    s0, s1 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s0):
        torch.cuda._sleep(1_000_000)
        s1.wait_stream(s0)
        g0.replay()
    with torch.cuda.stream(s1):
        g1.replay()
    torch.cuda.synchronize()
    expect_b, expect_c = 1.0, 1.0
    for _ in range(3):
        expect_b, expect_c = 2 * (expect_b + 1), 2 * (expect_c + 2)
    corrupted = b.sum().item() != size * expect_b or c.sum().item() != size * expect_c
    assert corrupted == share
    g0.replay()  # replayed alone, each graph is right again
    torch.cuda.synchronize()
    assert b.sum().item() == size * expect_b


@pytest.mark.parametrize("record_stream", [False, True])
def test_a_block_used_on_a_side_stream_needs_record_stream(record_stream: bool) -> None:
    """PyTorch's CUDA semantics notes on record_stream: a tensor allocated on one stream and
    used on another may be freed and its memory reused while the other stream still works on
    it, unless record_stream tells the allocator; then the block waits for that stream."""
    side = torch.cuda.Stream()
    x = torch.ones(1024, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(1_000_000)  # the side stream lags
        y = x * 2
    if record_stream:
        x.record_stream(side)
    ptr = x.data_ptr()
    del x
    z = torch.empty(1024, device="cuda")
    assert (z.data_ptr() == ptr) is not record_stream
    z.fill_(7.0)
    torch.cuda.synchronize()
    assert y[0].item() == (2.0 if record_stream else 14.0)


@pytest.mark.parametrize("queued", [False, True])
def test_a_graphs_cached_plan_queues_what_the_node_by_node_loop_queues(queued: bool) -> None:
    """submit_graph's fast path for a graph's nodes (GraphNodes: the running sum of its
    durations by accumulate, its calls in one list) against the node-by-node loop on the same
    Work list as a plain list: the same clocks, stream ends, busy time and kernel order, with
    other work queued on a second stream or not, replayed twice."""
    from fake_torch._simulated._timeline import GraphNodes, Timeline, Work

    def run(cls: type[list[Work]]) -> tuple[Any, ...]:
        ran: list[int] = []
        tl = Timeline()
        nodes = cls([Work(f"k{i}", "kernel", [(lambda i=i: ran.append(i), (), {})],
                          0.1 + 0.37 * i) for i in range(7)])
        for _ in range(2):
            tl.host_ns += 1.3
            if queued:
                tl.submit_call("side", "kernel", lambda: ran.append(-1), (), {}, 2.9, 5,
                               0, 0.3)
            tl.submit_graph(nodes, 0, 0, 0.45)
        ends = (tl.host_ns, tl.busy_ns, dict(tl.ready), len(tl._heap))
        tl.synchronize(None, 0.0)
        return ends, tl.host_ns, tl.busy_ns, ran

    assert run(GraphNodes) == run(list)
