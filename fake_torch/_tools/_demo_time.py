"""`demo --plot`: simulated ms per decode step of the example Llama against batch size, eager
vs a CUDA graph replay vs `mode="reduce-overhead"`, and the batch where graphs stop paying off.

At small batch an eager step is bound by the host launching its kernels one by one and a replay,
one launch, is faster; as the batch grows the device's work outlasts the launches, hides them,
and the replay's gain falls under SLACK. The curve runs from batch 1 to past the GPU-bound batch
(gpu_bound_batch: derived from the model's bytes and the GPU's bandwidth, not measured), on the
simulated L4, whose low bandwidth makes that batch small enough for numpy (on an H200 it is
35157 rows), or on FAKE_TORCH_GPU's GPU where its GPU-bound batch is no larger than MAX_BATCH.
Where the curve's GPU is not the one the rest of the demo simulates, the table's title and the
figure's say so and why (TimeCurve.why).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from fake_torch._simulated import _cost, _gpus

MODES = ("eager", "cuda graph", "reduce-overhead")
GRAPH_MODES = MODES[1:]
CURVE_GPU = "L4"  # the least bandwidth of the simulated GPUs: the smallest GPU-bound batch
MAX_BATCH = 4096  # a GPU-bound batch above this takes numpy too long to simulate in a demo
SLACK = 1.15  # "not faster": a GPU-bound replay gains at most this (PyTorch's CUDA Graphs blog)
POSITION = 5  # the decode step's position: a prompt of 5 tokens came before it


def gpu_bound_batch(cfg: Any, launches: int, spec: _gpus.GPUSpec) -> int:
    """The smallest batch whose attention alone keeps the device busy twice as long as the
    host takes to launch an eager step of `launches` kernels (cfg: examples/llama.py's
    LlamaConfig). Per row and layer, the step copies the cached keys and values out once per
    query head (repeat_interleave: reads KVH heads, writes H) and attention reads those copies
    again: (2 KVH + 4 H) * S * D elements, every one moved over HBM at least once. The rest of
    the step only adds device time."""
    itemsize = 4  # float32, the example model's dtype
    row_bytes: int = cfg.num_layers * (2 * cfg.num_kv_heads + 4 * cfg.num_heads) * \
        cfg.max_seq_len * cfg.head_dim * itemsize
    host_s = launches * _cost.EAGER_LAUNCH_NS * 1e-9
    return math.ceil(2 * host_s * spec.hbm_bytes_per_s / row_bytes)


def curve_batches(bound: int) -> list[int]:
    """Powers of 4 below the GPU-bound batch, the batch itself and twice it: 1 ... past it."""
    sizes = [1]
    while sizes[-1] * 4 < bound:
        sizes.append(sizes[-1] * 4)
    if bound > 1:
        sizes.append(bound)
    return [*sizes, 2 * bound]


@dataclass
class TimeCurve:
    """Simulated step times of each mode at each batch size, on one simulated GPU."""

    gpu: str  # the GPU's name, as torch.cuda.get_device_name reports it
    launches: int  # of one eager decode step (the same at every batch size)
    gpu_bound: int  # gpu_bound_batch on that GPU
    batch_sizes: list[int]
    ms: dict[str, list[float]] = field(default_factory=dict)  # mode -> ms per step, per bs
    busy: dict[str, list[float]] = field(default_factory=dict)  # mode -> GPU-busy fraction
    why: str = ""  # why this GPU and not the demo's, where they differ (shown in both titles)

    def speedup(self, mode: str) -> list[float]:
        """eager's step time over `mode`'s, per batch size."""
        return [e / m for e, m in zip(self.ms["eager"], self.ms[mode], strict=True)]

    def crossover(self, mode: str) -> int | None:
        """The first batch size where `mode` is no longer SLACK times faster than eager, or
        None where it pays off at every batch size measured."""
        return next((bs for bs, s in zip(self.batch_sizes, self.speedup(mode), strict=True)
                     if s < SLACK), None)


def _eager_launches(llama: ModuleType) -> int:
    """Launches of one eager decode step at batch 1 (they do not depend on the batch)."""
    from fake_torch._simulated._counter import LaunchCounter

    model, ids, pos = _decoder(llama, 1)
    LaunchCounter.reset()
    model(ids, pos)
    return int(LaunchCounter.n)


def curve_gpu(llama: ModuleType, launches: int) -> str:
    """FAKE_TORCH_GPU's GPU where its GPU-bound batch is at most MAX_BATCH, else CURVE_GPU."""
    chosen = os.environ.get("FAKE_TORCH_GPU")
    if chosen and gpu_bound_batch(llama.LlamaConfig(), launches,
                                  _gpus.lookup(chosen)) <= MAX_BATCH:
        return chosen
    return CURVE_GPU


def why_gpu(llama: ModuleType, launches: int, key: str) -> str:
    """Why the curve runs on `key` where the demo's table runs on another GPU (FAKE_TORCH_GPU's,
    else the default), or "" where they are the same."""
    demo_key = os.environ.get("FAKE_TORCH_GPU") or _gpus.DEFAULT
    if _gpus.lookup(key).key == _gpus.lookup(demo_key).key:
        return ""
    bound = gpu_bound_batch(llama.LlamaConfig(), launches, _gpus.lookup(demo_key))
    if bound <= MAX_BATCH:
        return f"chosen by the caller; the demo's table ran on the {demo_key}"
    return (f"not the demo's {demo_key}: there the step turns GPU-bound only at batch {bound}, "
            f"too large to simulate in numpy (over {MAX_BATCH}); the {key}'s low bandwidth "
            "reaches it sooner")


def _decoder(llama: ModuleType, bs: int) -> tuple[Any, Any, Any]:
    """The example model with a KV cache of bs rows, and one decode step's inputs [bs, 1]."""
    import fake_torch as torch
    from fake_torch._factories import full, zeros

    torch.manual_seed(0)
    model = llama.Llama(llama.LlamaConfig()).to("cuda").eval()
    model.allocate_kv_cache(bs)
    ids = zeros(bs, 1, dtype=torch.long, device="cuda")
    pos = full((bs, 1), POSITION, dtype=torch.long, device="cuda")
    return model, ids, pos


def _step_times(llama: ModuleType, bs: int) -> dict[str, tuple[float, float]]:
    """mode -> (simulated ms, GPU-busy fraction) of one decode step of bs rows. Each is timed
    at its first representative call: eager's first, the graph's first replay, and
    reduce-overhead's third (warmup, record, replay)."""
    import fake_torch as torch
    from fake_torch._tools._demo import _timed

    model, ids, pos = _decoder(llama, bs)

    def timed(fn: Callable[[], Any]) -> tuple[float, float]:
        _, ms, busy = _timed(lambda ids, pos: fn(), ids, pos)
        return ms, busy

    times = {}
    with torch.inference_mode():
        times["eager"] = timed(lambda: model(ids, pos))  # also the capture's warmup
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # capture
            model(ids, pos)
        times["cuda graph"] = timed(graph.replay)  # replay
        torch._dynamo.reset()
        compiled = torch.compile(model, mode="reduce-overhead")

        def step() -> Any:
            torch.compiler.cudagraph_mark_step_begin()
            return compiled(ids, pos)

        step()  # warmup
        step()  # record
        times["reduce-overhead"] = timed(step)  # replay
    torch._dynamo.reset()  # its graphs and pools go before the next batch size's
    return times


def time_curve(llama: ModuleType, batch_sizes: Sequence[int] | None = None,
               gpu: str | None = None, progress: Callable[[str], None] | None = None
               ) -> TimeCurve:
    """Every mode's decode step time at each batch size (default: curve_batches of the
    GPU-bound batch) on the simulated `gpu` (default: curve_gpu); `llama` is examples/llama.py
    imported with torch = fake_torch. The GPU simulated before comes back afterwards."""
    from fake_torch.cuda import set_simulated_gpu

    saved = _gpus.current().key
    launches = _eager_launches(llama)
    key = curve_gpu(llama, launches) if gpu is None else gpu
    set_simulated_gpu(key)
    try:
        spec = _gpus.current()
        bound = gpu_bound_batch(llama.LlamaConfig(), launches, spec)
        sizes = curve_batches(bound) if batch_sizes is None else list(batch_sizes)
        curve = TimeCurve(spec.name, launches, bound, sizes,
                          {m: [] for m in MODES}, {m: [] for m in MODES},
                          why_gpu(llama, launches, key))
        for bs in sizes:
            if progress is not None:
                progress(f"step time at batch {bs} on the simulated {spec.name}")
            for mode, (ms, busy) in _step_times(llama, bs).items():
                curve.ms[mode].append(ms)
                curve.busy[mode].append(busy)
        return curve
    finally:
        set_simulated_gpu(saved)


def format_curve(curve: TimeCurve) -> str:
    """The curve as a text table: the plot's numbers, checkable without the image."""
    lines = [f"decode step time vs batch size, simulated {curve.gpu} (GPU-bound from batch "
             f"{curve.gpu_bound}):"]
    if curve.why:
        lines.append(f"why the {curve.gpu}: {curve.why}")
    lines.append(f"{'bs':>6}{'eager ms':>10}{'graph ms':>10}{'r-o ms':>10}{'eager/graph':>14}"
                 f"{'eager/r-o':>12}{'eager GPU busy':>16}")
    graph, ro = curve.speedup("cuda graph"), curve.speedup("reduce-overhead")
    busy = curve.busy["eager"]
    for i, bs in enumerate(curve.batch_sizes):
        lines.append(f"{bs:>6}{curve.ms['eager'][i]:>10.4f}{curve.ms['cuda graph'][i]:>10.4f}"
                     f"{curve.ms['reduce-overhead'][i]:>10.4f}{graph[i]:>13.3f}x"
                     f"{ro[i]:>11.3f}x{f'{100 * busy[i]:.0f}%':>16}")
    stops = [f"{m} from batch {curve.crossover(m)}" if curve.crossover(m) is not None
             else f"{m} not within these batches" for m in GRAPH_MODES]
    lines.append(f"graphs stop paying off (eager/graph under {SLACK}): " + ", ".join(stops))
    lines.append("graph: the eager step captured with torch.cuda.graph and replayed; "
                 "r-o: torch.compile(mode=\"reduce-overhead\"),")
    lines.append("whose fused kernels also save device time; ms: simulated (CUDA events "
                 "around one step, the device idle before it)")
    return "\n".join(lines)
