"""Simulated time on the example Llama (examples/llama.py): the torch.compile tutorial's timing
loop shows what `mode="reduce-overhead"` (and a plain CUDA graph) buys a decode step, and
where that stops.

At batch 1 the eager step is bound by the host launching its kernels one by one; a replay
launches once, so it is faster. At a batch large enough for the device's work to outlast the
host's launches, the eager step's launches hide under the device time, and a replay is no
longer faster (within 1.15x, the figure PyTorch's CUDA Graphs blog gives for GPU-bound work).

Oracles: the cost model's constants (fake_torch/_simulated/_cost.py), the simulated GPU's published
bandwidth (fake_torch/_simulated/_gpus.py) and the model's own config. No time is hard-coded: the
large batch is where the bytes the attention must move (a lower bound on the step's device work)
take twice the host time of the eager step's launches. It runs on the simulated L4, the part
with the least memory bandwidth: there that batch is smallest, so numpy computes it quickly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest
from oracles import cuda_event_time

import fake_torch as torch
from fake_torch._simulated import _cost, _gpus
from fake_torch._tools._bench_graphs import load_example_llama
from fake_torch._tools._demo_time import gpu_bound_batch  # shared with the demo's time plot

POSITION = 5  # the decode step's position: a prompt of 5 tokens came before it
WARMUP = 3  # calls before the timed one: compile, record a graph, replay it
GPU_BOUND_GPU = "L4"
SLACK = 1.15  # "not faster": a GPU-bound replay gains at most this much


@pytest.fixture(scope="module")
def llama() -> ModuleType:
    return load_example_llama()


@pytest.fixture
def gpu() -> Iterator[Callable[[str], _gpus.GPUSpec]]:
    """Choose the simulated GPU for one test; the previous one comes back afterwards."""
    saved = _gpus.current().key

    def choose(key: str) -> _gpus.GPUSpec:
        torch.cuda.set_simulated_gpu(key)
        return _gpus.current()

    try:
        yield choose
    finally:
        torch.cuda.set_simulated_gpu(saved)
        torch._dynamo.reset()


def decode_steps(llama: ModuleType, bs: int) -> dict[str, tuple[float, float]]:
    """One decode step of `bs` rows timed four ways: eager, a CUDA graph of the eager step
    (captured as the tutorial does), torch.compile, and mode="reduce-overhead"."""
    torch.manual_seed(0)
    model = llama.Llama(llama.LlamaConfig()).to("cuda").eval()
    model.allocate_kv_cache(bs)
    ids = torch.zeros(bs, 1, dtype=torch.long, device="cuda")
    pos = torch.full((bs, 1), POSITION, dtype=torch.long, device="cuda")
    times = {}
    with torch.inference_mode():
        graph = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            model(ids, pos)  # warmup on a side stream, as torch's docs capture
        torch.cuda.current_stream().wait_stream(side)
        with torch.cuda.graph(graph):
            model(ids, pos)
        steps: dict[str, Callable[[], Any]] = {"eager": lambda: model(ids, pos),
                                               "cuda graph": graph.replay}
        for mode in ("default", "reduce-overhead"):
            torch._dynamo.reset()
            compiled = torch.compile(model, mode=mode)

            def step(compiled: Any = compiled) -> Any:
                torch.compiler.cudagraph_mark_step_begin()
                return compiled(ids, pos)

            steps[mode] = step
            for _ in range(WARMUP):
                cuda_event_time(step)
            times[mode] = cuda_event_time(step)
        for mode in ("eager", "cuda graph"):
            for _ in range(WARMUP):
                cuda_event_time(steps[mode])
            times[mode] = cuda_event_time(steps[mode])
    return times


def eager_launches(llama: ModuleType) -> int:
    """Launches of one eager decode step (they do not depend on the batch size)."""
    torch.manual_seed(0)
    model = llama.Llama(llama.LlamaConfig()).to("cuda").eval()
    model.allocate_kv_cache(1)
    ids = torch.zeros(1, 1, dtype=torch.long, device="cuda")
    pos = torch.full((1, 1), POSITION, dtype=torch.long, device="cuda")
    with torch.inference_mode():
        torch.LaunchCounter.reset()
        model(ids, pos)
    return int(torch.LaunchCounter.n)


@pytest.mark.parametrize("key", list(_gpus.GPUS))
def test_at_batch_1_a_replay_beats_eager(key: str, llama: ModuleType,
                                         gpu: Callable[[str], _gpus.GPUSpec]) -> None:
    gpu(key)
    launches = eager_launches(llama)
    times = decode_steps(llama, 1)
    eager_ms, eager_busy = times["eager"]
    # launch-bound: the host's launches take longer than the device's work
    assert eager_ms >= launches * _cost.EAGER_LAUNCH_NS * 1e-6
    assert eager_busy < 0.5
    assert times["reduce-overhead"][0] < times["default"][0] < eager_ms
    assert times["cuda graph"][0] < eager_ms
    # a replay is one host launch: its step is the kernels back to back, the device busy
    # most of it
    assert times["cuda graph"][1] > 0.7


def test_at_a_gpu_bound_batch_a_replay_does_not_pay(llama: ModuleType,
                                                    gpu: Callable[[str], _gpus.GPUSpec]) -> None:
    spec = gpu(GPU_BOUND_GPU)
    bs = gpu_bound_batch(llama.LlamaConfig(), eager_launches(llama), spec)
    assert bs > 8  # the demo's batches (1, 3, 8) are all launch-bound
    times = decode_steps(llama, bs)
    eager_ms, eager_busy = times["eager"]
    assert eager_busy > 0.9  # GPU-bound: the device is busy almost all of the step
    assert 1 / SLACK <= eager_ms / times["cuda graph"][0] <= SLACK
    assert 1 / SLACK <= eager_ms / times["reduce-overhead"][0] <= SLACK
    # compile's fused kernels still save device time; its graph saves no more than SLACK
    assert 1 / SLACK <= times["default"][0] / times["reduce-overhead"][0] <= SLACK
    # and below that batch, at the tutorial's batch 1, the same replay paid off
    small = decode_steps(llama, 1)
    assert small["eager"][0] / small["reduce-overhead"][0] > 2 * SLACK
