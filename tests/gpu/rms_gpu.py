"""open questions about rms_norm on a real GPU."""
import json
import os
import time
import traceback

import torch
from torch.profiler import ProfilerActivity, profile

OUT = os.environ.get("OUT", "/tmp")
F = torch.nn.functional
LAUNCH_API = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
              "cudaGraphLaunch", "cudaMemcpyAsync", "cudaMemsetAsync")
res = {"torch": torch.__version__}


def count(fn):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        out = fn()
        torch.cuda.synchronize()
    ev = p.events()
    api = [e.name for e in ev if e.name in LAUNCH_API]
    ks = [e.name[:90] for e in ev if str(e.device_type).endswith("CUDA")]
    r = {"n": len(api), "kernels": ks}
    if isinstance(out, torch.Tensor):
        r["stride"] = list(out.stride())
    return r


def section(name, fn):
    t = time.time()
    try:
        res[name] = fn()
    except Exception:
        res[name] = {"error": traceback.format_exc()[-1500:]}
    print(name, round(time.time() - t, 1), json.dumps(res[name])[:900], flush=True)


x = torch.randn(4, 64, device="cuda")
w = torch.randn(64, device="cuda")
xd, wd = x.double(), w.double()
xt = torch.randn(64, 4, device="cuda").t()
xe = torch.empty(0, 64, device="cuda")
with torch.no_grad():
    section("f64", lambda: count(lambda: F.rms_norm(xd, (64,), wd, 1e-6)))
    section("transposed_rms", lambda: count(lambda: F.rms_norm(xt, (64,), w, 1e-6)))
    section("transposed_layer_norm", lambda: count(lambda: F.layer_norm(xt, (64,), w)))
    section("empty_rms", lambda: count(lambda: F.rms_norm(xe, (64,), w, 1e-6)))
    section("f32_rms_stride", lambda: count(lambda: F.rms_norm(x, (64,), w, 1e-6)))


def compiled(ctx, dtype):
    torch._dynamo.reset()
    a = torch.randn(4, 8, device="cuda", dtype=dtype)
    r = torch.randn(4, 8, device="cuda", dtype=dtype)
    g = torch.randn(8, device="cuda", dtype=dtype)
    f = torch.compile(lambda a, r, g: F.rms_norm(a + r, (8,), g, 1e-6))
    with ctx():
        return count(lambda: f(a, r, g))


section("compile_no_grad_f32", lambda: compiled(torch.no_grad, torch.float32))
section("compile_inference_f32", lambda: compiled(torch.inference_mode, torch.float32))
section("compile_no_grad_bf16", lambda: compiled(torch.no_grad, torch.bfloat16))
json.dump(res, open(os.path.join(OUT, "rms_gpu.json"), "w"), indent=1)
