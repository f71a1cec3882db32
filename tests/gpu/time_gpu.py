"""Calibration of simulated time (fake_torch/_simulated/_cost.py, _gpus.py) against a real GPU.

    python3 tests/gpu/time_gpu.py                          # real torch + CUDA: measured
    python -m fake_torch run tests/gpu/time_gpu.py         # fake_torch: simulated
    FAKE_TORCH_GPU=H200 python -m fake_torch run tests/gpu/time_gpu.py

Writes $OUT/time_gpu.json (default /tmp; time_gpu_fake.json under fake_torch) with:
  - launch: the cost model's host and device constants, measured: an eager launch's host cost
    (events around many tiny launches, and the host's own clock), the shortest kernel, a graph
    replay's launch and its per-node cost (graphs of 1 and 200 tiny kernels);
  - kernels: a few ops' device durations (torch.profiler's kernel times on a real GPU, the
    timeline's kernel spans on fake_torch) and the CUDA-event time of back-to-back calls;
  - decode: examples/llama.py's decode step (the demo's model) at batch 1, 8 and 64, eager, as a
    CUDA graph, torch.compile and mode="reduce-overhead": the median CUDA-event milliseconds of
    a step timed from an idle device, and the fraction some kernel ran (GPU busy).
Compare the two files key by key: every number is in the same units (ms, us, fractions).
"""
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
import torch

FAKE = hasattr(torch, "LaunchCounter")
OUT = os.environ.get("OUT", "/tmp")
# timed repetitions, the median kept: a real GPU varies; fake_torch's times do not, and numpy
# computes every call for real, so once is enough there
REPEAT = 1 if FAKE else 20
WARMUP = 1 if FAKE else 3
BACK_TO_BACK = 2 if FAKE else 10  # calls per timing of an op
BATCHES = (1, 8, 64)
POSITION = 5  # the decode step's position (a 5-token prompt came before it)


def sync_time(fn):
    """Milliseconds between two CUDA events around fn(), the device idle before it."""
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def median_ms(fn, repeat=REPEAT, warmup=WARMUP):
    for _ in range(warmup):
        fn()
    return statistics.median(sync_time(fn) for _ in range(repeat))


def kernel_spans(fn):
    """[(kernel name, device microseconds)] of what fn() ran on the device."""
    torch.cuda.synchronize()
    if FAKE:
        from fake_torch._simulated._timeline import add_listener

        spans = []
        remove = add_listener(lambda s: spans.append(s) if s.track == "gpu" else None)
        try:
            fn()
            torch.cuda.synchronize()
        finally:
            remove()
        return [(s.name, (s.end_ns - s.start_ns) / 1e3) for s in spans]
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    out = []
    for e in prof.events():
        if str(e.device_type).endswith("CUDA"):
            out.append((e.name[:80], float(e.time_range.elapsed_us())))  # the kernel's span
    return out


def busy_fraction(fn, ms):
    """The fraction of a `ms` step some kernel ran (one step, profiled apart)."""
    return round(sum(us for _, us in kernel_spans(fn)) / 1e3 / ms, 4)


def graph_of(fn):
    """A CUDA graph of fn(), captured as torch's docs do (warm-up on a side stream)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    torch.cuda.synchronize()
    return graph


def launch_costs():
    """The cost model's constants, measured (us)."""
    x = torch.ones(64, device="cuda")
    n = 1000
    res = {}
    ms = median_ms(lambda: [x.add_(1.0) for _ in range(n)], repeat=min(REPEAT, 5))
    res["eager_launch_us_events"] = ms * 1e3 / n  # host-bound: events see the host's pace
    if not FAKE:  # the host's own clock (fake_torch's host clock is simulated: events above)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            x.add_(1.0)
        res["eager_launch_us_host"] = (time.perf_counter() - t) * 1e6 / n
        torch.cuda.synchronize()
    tiny = [us for name, us in kernel_spans(lambda: [x.add_(1.0) for _ in range(100)])]
    res["min_kernel_us"] = statistics.median(tiny) if tiny else None
    one = graph_of(lambda: x.add_(1.0))
    many = graph_of(lambda: [x.add_(1.0) for _ in range(200)])
    res["graph_1_node_ms"] = median_ms(one.replay)
    res["graph_200_nodes_ms"] = median_ms(many.replay)
    # per node beyond the first: the node's kernel plus the gap between nodes
    res["graph_per_node_us"] = (res["graph_200_nodes_ms"] - res["graph_1_node_ms"]) * 1e3 / 199
    if res["min_kernel_us"] is not None:
        res["graph_node_gap_us"] = res["graph_per_node_us"] - res["min_kernel_us"]
    pinned = torch.empty(1 << 24, pin_memory=True)  # 64 MiB
    dev = torch.empty(1 << 24, device="cuda")
    res["h2d_64MiB_ms"] = median_ms(lambda: dev.copy_(pinned, non_blocking=True),
                                    repeat=min(REPEAT, 5))
    return res


def op_kernels():
    """A few ops' device durations: small and launch-bound, large and bandwidth- or
    FLOP-bound."""
    big = torch.ones(1 << 24, device="cuda")  # 64 MiB
    out = torch.empty_like(big)
    a16 = torch.ones(2048, 2048, device="cuda", dtype=torch.bfloat16)
    a32 = torch.ones(2048, 2048, device="cuda")
    small = torch.ones(64, 128, device="cuda")
    w = torch.ones(128, 128, device="cuda")
    ops = {
        "add_64": lambda: small.add_(1.0),
        "mm_64x128x128_fp32": lambda: torch.mm(small, w),
        "mul_16M_fp32": lambda: torch.mul(big, 2.0, out=out),
        "sum_16M_fp32": lambda: big.sum(),
        "mm_2048_bf16": lambda: torch.mm(a16, a16),
        "mm_2048_fp32": lambda: torch.mm(a32, a32),
        "softmax_2048x2048_fp32": lambda: torch.softmax(a32, dim=-1),
    }
    res = {}
    for name, fn in ops.items():
        per_call = median_ms(lambda fn=fn: [fn() for _ in range(BACK_TO_BACK)],
                             repeat=min(REPEAT, 5)) / BACK_TO_BACK
        res[name] = {"events_ms_per_call": per_call,
                     "kernels_us": kernel_spans(fn)}
    return res


def decode_steps():
    """The demo's decode step at each batch, four ways."""
    from llama import Llama, LlamaConfig

    res = {}
    cfg = LlamaConfig()
    with torch.inference_mode():
        for bs in BATCHES:
            torch.manual_seed(0)
            model = Llama(cfg).to("cuda").eval()
            model.allocate_kv_cache(bs)
            ids = torch.zeros(bs, 1, dtype=torch.long, device="cuda")
            pos = torch.full((bs, 1), POSITION, dtype=torch.long, device="cuda")
            graph = graph_of(lambda: model(ids, pos))
            steps = {"eager": lambda: model(ids, pos), "cuda graph": graph.replay}
            for mode in ("default", "reduce-overhead"):
                torch._dynamo.reset()
                compiled = torch.compile(model, mode=mode)

                def step(compiled=compiled):
                    torch.compiler.cudagraph_mark_step_begin()
                    return compiled(ids, pos)

                steps[mode] = step
                try:
                    res[f"{mode}/{bs}"] = measure(step)
                except Exception:
                    res[f"{mode}/{bs}"] = {"error": traceback.format_exc()[-2000:]}
            for mode in ("eager", "cuda graph"):
                res[f"{mode}/{bs}"] = measure(steps[mode])
            for key in (k for k in res if k.endswith(f"/{bs}")):
                print(key, res[key].get("ms"), res[key].get("busy"), flush=True)
            torch._dynamo.reset()
    return res


def measure(step):
    ms = median_ms(step)
    return {"ms": ms, "busy": busy_fraction(step, ms)}


def main():
    res = {"torch": torch.__version__, "fake": FAKE, "gpu": torch.cuda.get_device_name()}
    if FAKE:
        from fake_torch._simulated import _cost

        res["cost_model"] = {k: v for k, v in vars(_cost).items()
                             if k.isupper() and isinstance(v, float)}
    for name, fn in (("launch", launch_costs), ("kernels", op_kernels),
                     ("decode", decode_steps)):
        t = time.time()
        try:
            res[name] = fn()
        except Exception:
            res[name] = {"error": traceback.format_exc()[-2500:]}
            print(name, "ERROR", res[name]["error"][-800:], flush=True)
        print(name, f"{time.time() - t:.1f}s", flush=True)
    path = os.path.join(OUT, "time_gpu_fake.json" if FAKE else "time_gpu.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
