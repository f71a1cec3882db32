"""the demo's modes (eager, cuda graph runner, compile, reduce-overhead) and the
vLLM-style runner in all modes, on real CUDA, launches of the last decode step."""
import collections
import gc
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import torch

FAKE = hasattr(torch, "LaunchCounter")
OUT = os.environ.get("OUT", "/tmp")
T0 = time.time()
res = {"torch": getattr(torch, "__version__", "fake")}
LAUNCH_API = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
              "cudaGraphLaunch", "cudaMemcpyAsync", "cudaMemsetAsync")


def count(fn):
    if FAKE:
        torch.LaunchCounter.reset()
        r = fn()
        return r, {"n": torch.LaunchCounter.n, "by_op": dict(torch.LaunchCounter.by_op)}
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        r = fn()
        torch.cuda.synchronize()
    ev = p.events()
    api = collections.Counter(e.name for e in ev if e.name in LAUNCH_API)
    kernels = [e.name[:60] for e in ev if str(e.device_type).endswith("CUDA")]
    return r, {"n": sum(api.values()), "api": dict(api), "kernels": kernels}


def demo():
    from cuda_graph_runner import CudaGraphRunner
    from llama import Llama, LlamaConfig, prefill
    out = {}
    cfg = LlamaConfig()
    torch.manual_seed(0)
    model = Llama(cfg).to("cuda").eval()
    model.allocate_kv_cache(8)
    prompts = {bs: torch.randint(0, cfg.vocab_size, (bs, 5), device="cuda") for bs in (1, 3, 8)}
    ref = {}
    with torch.inference_mode():
        for mode in ("eager", "cuda graph", "compile", "reduce-overhead"):
            t = time.time()
            try:
                torch._dynamo.reset()
                torch.cuda.empty_cache()
                reserved = torch.cuda.memory_reserved()
                if mode == "eager":
                    def step(ids, pos):
                        return model(ids[:, None], pos[:, None])
                elif mode == "cuda graph":
                    runner = CudaGraphRunner(model, 8)
                    runner.capture_cudagraph()
                    step = runner.run_model
                else:
                    compiled = torch.compile(
                        model, mode="reduce-overhead" if mode == "reduce-overhead" else None)

                    def step(ids, pos, compiled=compiled):
                        torch.compiler.cudagraph_mark_step_begin()
                        return compiled(ids[:, None], pos[:, None])
                for bs in (1, 3, 8):
                    _, tokens, positions = prefill(model, prompts[bs])
                    positions = positions[:, 0]
                    toks = []
                    for i in range(3):
                        if i == 2:
                            logits, c = count(lambda: step(tokens, positions))
                        else:
                            logits = step(tokens, positions)
                        tokens = logits.argmax(dim=-1)
                        toks.append(tokens.tolist())
                        positions = positions + 1
                    ref.setdefault(bs, toks)
                    torch.cuda.empty_cache()
                    kernels = c.get("kernels", list(c.get("by_op", {}).items()))
                    out[f"{mode}/{bs}"] = {"n": c["n"], "api": c.get("api"),
                                           "kernels": kernels[:80],
                                           "same": toks == ref[bs],
                                           "pool": torch.cuda.memory_reserved() - reserved,
                                           "s": round(time.time() - t, 1)}
                    row = out[f"{mode}/{bs}"]
                    print(mode, bs, row["n"], row["same"], flush=True)
            except Exception:
                out[mode] = {"error": traceback.format_exc()[-2500:]}
                print(mode, "ERROR", out[mode]["error"][-800:], flush=True)
            gc.collect()
    return out


def vllm():
    from llama import LlamaConfig
    from vllm_runner import runner as runner_mod
    from vllm_runner import serve as serve_mod
    from vllm_runner.model import FlatLlama
    from vllm_runner.scheduler import make_requests
    orig = runner_mod.ModelRunner.execute_model
    steps = []

    def execute(self, batch):
        box = {}
        _, c = count(lambda: box.setdefault("r", orig(self, batch)))
        steps.append((batch.num_tokens, self.records[-1].runtime_mode.name,
                      self.records[-1].padded_tokens, c["n"]))
        return box["r"]

    runner_mod.ModelRunner.execute_model = execute
    torch.manual_seed(0)
    model = FlatLlama(LlamaConfig()).cuda().eval()
    requests = make_requests(8, 256, seed=1)
    with torch.inference_mode():
        eager, results = serve_mod.run_all_modes(model, requests, 4)
    n = len(eager.records)
    out = {}
    for i, r in enumerate([eager, *results]):
        out[r.label] = {"steps": steps[i * n:(i + 1) * n], "same": r.outputs == eager.outputs,
                        "graphs": r.num_graphs, "pool": r.graph_pool_bytes,
                        "peak": r.graph_peak_bytes}
    return out


for name, fn in (("vllm", vllm), ("demo", demo)):
    try:
        res[name] = fn()
    except Exception:
        res[name] = {"error": traceback.format_exc()[-3000:]}
        print(name, "ERROR", res[name]["error"][-1500:], flush=True)
    res[name + "_s"] = round(time.time() - T0, 1)
    print(name, "done", res[name + "_s"], flush=True)
    with open(os.path.join(OUT, "fake3.json" if FAKE else "gpu3.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
