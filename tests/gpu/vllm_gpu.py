"""the vLLM-style runner example on real torch + CUDA vs fake_torch.
python3 tests/gpu/vllm_gpu.py (real) | python -m fake_torch run tests/gpu/vllm_gpu.py (fake)"""
import collections
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import torch

FAKE = hasattr(torch, "LaunchCounter")
OUT = os.environ.get("OUT", "/tmp")
res = {"torch": getattr(torch, "__version__", "fake"), "fake": FAKE}
T0 = time.time()
LAUNCH_API = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
              "cudaGraphLaunch", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaMemcpy")


def section(name):
    def deco(fn):
        try:
            res[name] = fn()
        except Exception:
            res[name] = {"error": traceback.format_exc()[-3000:]}
        res[name + "_s"] = round(time.time() - T0, 1)
        print(name, json.dumps(res[name])[:3000], flush=True)
    return deco


def count(fn):
    """Launches of fn(): fake_torch's counter, or the CUDA launch API calls the profiler saw."""
    if FAKE:
        from fake_torch._simulated._dispatch import record_ops
        torch.LaunchCounter.reset()
        with record_ops() as names:
            fn()
        return {"n": torch.LaunchCounter.n, "ops": list(names),
                "by_kind": dict(torch.LaunchCounter.by_kind)}
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    ev = p.events()
    api = collections.Counter(e.name for e in ev if e.name in LAUNCH_API)
    kernels = [e.name[:60] for e in ev if str(e.device_type).endswith("CUDA")]
    aten = [e.name for e in ev if e.name.startswith("aten::")]
    return {"n": sum(v for k, v in api.items() if k != "cudaMemcpy"), "api": dict(api),
            "kernels": kernels, "aten": aten}


from llama import LlamaConfig  # noqa: E402
from vllm_runner import model as model_mod  # noqa: E402
from vllm_runner import runner as runner_mod  # noqa: E402
from vllm_runner import serve as serve_mod  # noqa: E402
from vllm_runner.config import CompilationConfig, CUDAGraphMode  # noqa: E402
from vllm_runner.scheduler import make_requests  # noqa: E402
from vllm_runner.utils import weak_ref_tensor  # noqa: E402


@section("weak_ref")
def _():
    torch.cuda.empty_cache()
    t = torch.arange(4096.0, device="cuda")
    a0 = torch.cuda.memory_allocated()
    w = weak_ref_tensor(t)
    a1 = torch.cuda.memory_allocated()
    same = [w.data_ptr() == t.data_ptr(), bool(torch.equal(w, t))]
    ptr = t.data_ptr()
    del t
    a2 = torch.cuda.memory_allocated()
    u = torch.full((4096,), 7.0, device="cuda")
    return {"alloc_delta_weak": a1 - a0, "alloc_delta_del": a2 - a0, "same": same,
            "reused": u.data_ptr() == ptr, "weak_sees": float(w[0])}


@section("small_ops")
def _():
    m = torch.rand(8, 32, device="cuda") > 0.5
    out = {}
    out["where_scalars"] = count(lambda: torch.where(m, 0.0, float("-inf")))
    ids = torch.zeros(4, dtype=torch.long, device="cuda")
    out["h2d_copy"] = count(lambda: ids.copy_(torch.tensor([1, 2, 3, 4]), non_blocking=True))
    out["tensor_to_cuda"] = count(lambda: torch.tensor([1, 2], device="cuda"))
    out["tolist"] = count(lambda: ids.tolist())
    x = torch.randn(4, 8, 2, 16, device="cuda")
    out["repeat_interleave"] = count(lambda: x.repeat_interleave(2, dim=2))
    return out


def _model(layers=2):
    torch.manual_seed(0)
    return model_mod.FlatLlama(LlamaConfig(num_layers=layers)).cuda().eval()


@section("forward")
def _():
    m = _model()
    m.allocate_kv_cache(5)
    out = {}
    for n in (4, 16):
        ids = torch.zeros(n, dtype=torch.long, device="cuda")
        rows = torch.full_like(ids, 4)
        with torch.inference_mode():
            m(ids, ids, ids, rows)  # warm-up
            out[f"forward_{n}"] = count(lambda: m(ids, ids, ids, rows))
            q = torch.zeros(n, 4, 16, device="cuda")
            o = torch.zeros(n, 4, 16, device="cuda")
            kv = torch.zeros(n, 2, 16, device="cuda")
            cache = m.layers[0].self_attn.kv_cache
            out[f"attention_{n}"] = count(lambda: torch.ops.vllm_runner.attention(
                q, kv, kv, cache, ids, rows, ids, o))
    return out


def _serve(mode, compile, weak=True, steps_profile=True):
    requests = make_requests(8, 256, seed=1)
    config = CompilationConfig(cudagraph_mode=mode, max_num_seqs=4,
                               splitting_ops=["vllm_runner::attention"],
                               weak_ref_outputs=weak)
    per_step = []
    orig = runner_mod.ModelRunner.execute_model
    mem = {}

    def execute(self, batch):
        if "held" not in mem:
            mem["held"] = torch.cuda.memory_allocated() - mem_before[0]
        box = {}
        c = count(lambda: box.setdefault("r", orig(self, batch)))
        per_step.append((batch.num_tokens, batch.uniform_decode, self.records[-1].runtime_mode.name,
                         self.records[-1].padded_tokens, c["n"],
                         c.get("api"), c.get("ops") if batch.step <= 3 else None))
        return box["r"]

    mem_before = [0]
    orig_capture = runner_mod.ModelRunner.capture_model

    def capture(self):
        torch.cuda.synchronize()
        mem_before[0] = torch.cuda.memory_allocated()
        orig_capture(self)
        mem["pool_reserved"] = self.graph_pool_bytes
        mem["graphs"] = self.num_graphs

    runner_mod.ModelRunner.execute_model = execute
    runner_mod.ModelRunner.capture_model = capture
    try:
        with torch.inference_mode():
            r = serve_mod.serve(_model(), requests, config, compile=compile)
    finally:
        runner_mod.ModelRunner.execute_model = orig
        runner_mod.ModelRunner.capture_model = orig_capture
    return r, per_step, mem


@section("serve")
def _():
    out = {}
    ref = None
    for label, mode, compile, weak in (("eager", CUDAGraphMode.NONE, False, True),
                                       ("FULL", CUDAGraphMode.FULL, False, True),
                                       ("FULL_held", CUDAGraphMode.FULL, False, False),
                                       ("FULL_DECODE_ONLY", CUDAGraphMode.FULL_DECODE_ONLY, False,
                                        True),
                                       ("PIECEWISE_compiled", CUDAGraphMode.PIECEWISE, True, True)):
        try:
            r, steps, mem = _serve(mode, compile, weak)
        except Exception:
            out[label] = {"error": traceback.format_exc()[-2500:]}
            continue
        if ref is None:
            ref = r
        diff = max(float((a - b).abs().max()) for a, b in zip(r.logits, ref.logits, strict=False))
        out[label] = {"same_tokens": r.outputs == ref.outputs, "max_dlogits": diff,
                      "mem": mem, "steps": steps}
    return out


with open(os.path.join(OUT, "fake.json" if FAKE else "gpu.json"), "w") as f:
    json.dump(res, f, indent=1, default=str)
print("done", round(time.time() - T0, 1))
