"""Launches of examples/llama.py's steps and of rms_norm variants, real CUDA vs fake_torch."""
import collections
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import torch

FAKE = hasattr(torch, "LaunchCounter")
OUT = os.environ.get("OUT", "/tmp")
res = {"torch": getattr(torch, "__version__", "fake"), "fake": FAKE}
LAUNCH_API = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
              "cudaGraphLaunch", "cudaMemcpyAsync", "cudaMemsetAsync")


def count(fn):
    if FAKE:
        from fake_torch._simulated._dispatch import record_ops
        torch.LaunchCounter.reset()
        with record_ops() as names:
            fn()
        return {"n": torch.LaunchCounter.n, "ops": list(names)}
    from torch.profiler import ProfilerActivity, profile
    fn()  # warm-up
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    ev = p.events()
    api = collections.Counter(e.name for e in ev if e.name in LAUNCH_API)
    kernels = [e.name[:50] for e in ev if str(e.device_type).endswith("CUDA")]
    return {"n": sum(api.values()), "api": dict(api), "kernels": kernels}


def section(name, fn):
    try:
        res[name] = fn()
    except Exception:
        res[name] = {"error": traceback.format_exc()[-2000:]}
    print(name, json.dumps(res[name])[:800], flush=True)


def norms():
    out = {}
    x = torch.randn(4, 64, device="cuda")
    w = torch.ones(64, device="cuda", requires_grad=True)
    F = torch.nn.functional
    out["rms_grad"] = count(lambda: F.rms_norm(x, (64,), w, 1e-6))
    xr = torch.randn(4, 64, device="cuda", requires_grad=True)
    out["rms_input_requires_grad"] = count(lambda: F.rms_norm(xr, (64,), w, 1e-6))
    with torch.no_grad():
        out["rms_no_grad"] = count(lambda: F.rms_norm(x, (64,), w, 1e-6))
        out["rms_no_weight"] = count(lambda: F.rms_norm(x, (64,), None, 1e-6))
        out["rms_eps_none"] = count(lambda: F.rms_norm(x, (64,), w))
        xb, wb = x.bfloat16(), w.detach().bfloat16()
        out["rms_bf16"] = count(lambda: F.rms_norm(xb, (64,), wb, 1e-6))
        out["rms_bf16_f32weight"] = count(lambda: F.rms_norm(xb, (64,), w.detach(), 1e-6))
        x16 = x.half()
        out["rms_fp16"] = count(lambda: F.rms_norm(x16, (64,), None, 1e-6))
        out["rms_module"] = count(lambda: torch.nn.RMSNorm(64, eps=1e-6).cuda()(x))
        out["layer_norm"] = count(lambda: F.layer_norm(x, (64,)))
        out["rms_2d_shape"] = count(lambda: F.rms_norm(x.view(2, 2, 64), (2, 64), None, 1e-6))
    return out


def llama():
    from llama import Llama, LlamaConfig, decode_step, prefill
    torch.manual_seed(0)
    out = {}
    with torch.inference_mode():
        model = Llama(LlamaConfig()).cuda().eval()
        model.allocate_kv_cache(2)
        prompt = torch.randint(0, 256, (2, 5), device="cuda")
        out["prefill"] = count(lambda: prefill(model, prompt))
        _, tok, pos = prefill(model, prompt)
        out["decode"] = count(lambda: decode_step(model, tok, pos))
    return out


section("norms", norms)
section("llama", llama)
with open(os.path.join(OUT, "fake2.json" if FAKE else "gpu2.json"), "w") as f:
    json.dump(res, f, indent=1)
