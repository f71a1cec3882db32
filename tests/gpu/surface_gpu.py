"""Launches of the torch surface that issue 23 added, on a real GPU and on fake_torch.

    python3 tests/gpu/surface_gpu.py                       # real torch + CUDA: torch.profiler
    python -m fake_torch run tests/gpu/surface_gpu.py      # fake_torch: torch.LaunchCounter

Writes $OUT/surface_gpu.json (surface_gpu_fake.json under fake_torch): for each case the number
of launch calls (kernels, memcpys, memsets, graph launches) one call makes after a warm-up, and
on the GPU the kernels' names. Cases: complex rotary embeddings (Meta's llama reference),
complex pointwise ops, isin, softplus/expm1/index_add_/one_hot, the conv/norm family
(Conv3d, ConvTranspose1d/2d/3d, GroupNorm, BatchNorm3d), MultiheadAttention on and off its
fast path, memory formats, torch.load onto the device, all_to_all_single on one rank, and a
static KV cache mutated inside a reduce-overhead step.
"""
import io
import json
import os
import time
import traceback

import torch

FAKE = hasattr(torch, "LaunchCounter")
OUT = os.environ.get("OUT", "/tmp")
F = torch.nn.functional
LAUNCH_API = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
              "cudaGraphLaunch", "cudaMemcpyAsync", "cudaMemsetAsync")
res = {"torch": torch.__version__}


def count(fn, warm=1):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    if FAKE:
        torch.LaunchCounter.reset()
        fn()
        torch.cuda.synchronize()
        return {"n": torch.LaunchCounter.n, "ops": dict(sorted(torch.LaunchCounter.by_op.items()))}
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    ev = p.events()
    api = [e.name for e in ev if e.name in LAUNCH_API]
    ks = [e.name[:80] for e in ev if str(e.device_type).endswith("CUDA")]
    return {"n": len(api), "api": api, "kernels": ks}


def section(name, fn):
    t = time.time()
    try:
        res[name] = fn()
    except Exception:
        res[name] = {"error": traceback.format_exc()[-1200:]}
    print(name, round(time.time() - t, 1), json.dumps(res[name])[:700], flush=True)


dev = "cuda"
torch.manual_seed(0)


# --- complex rotary (Meta's llama reference, written here in its shape) ---------------------
def freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=dev)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=dev, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)


def rotary(xq, fc):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    fc = fc.view(1, xq_.shape[1], 1, xq_.shape[-1])
    return torch.view_as_real(xq_ * fc).flatten(3).type_as(xq)


with torch.no_grad():
    fc = freqs_cis(16, 4)
    xq32 = torch.randn(1, 4, 4, 16, device=dev)
    xq16 = xq32.bfloat16()
    section("freqs_cis", lambda: count(lambda: freqs_cis(16, 4)))
    section("rotary_f32", lambda: count(lambda: rotary(xq32, fc)))
    section("rotary_bf16", lambda: count(lambda: rotary(xq16, fc)))
    section("view_as_complex", lambda: count(
        lambda: torch.view_as_complex(xq32.reshape(1, 4, 4, 8, 2))))
    section("view_as_real", lambda: count(lambda: torch.view_as_real(fc)))
    section("complex_mul", lambda: count(lambda: fc * fc))
    section("complex_abs", lambda: count(lambda: fc.abs()))
    section("complex_sum", lambda: count(lambda: fc.sum()))
    section("complex_from_real", lambda: count(lambda: torch.complex(xq32, xq32)))
    section("float_to_complex", lambda: count(lambda: xq32.to(torch.complex64)))

    # --- small ops the corpus uses ------------------------------------------------------------
    a = torch.randint(0, 50, (64,), device=dev)
    b = torch.randint(0, 50, (8,), device=dev)
    big = torch.randint(0, 5000, (4096,), device=dev)
    section("isin_small", lambda: count(lambda: torch.isin(a, b)))
    section("isin_big_test", lambda: count(lambda: torch.isin(a, big)))
    section("isin_scalar", lambda: count(lambda: torch.isin(a, 3)))
    section("softplus", lambda: count(lambda: F.softplus(xq32)))
    section("expm1", lambda: count(lambda: torch.expm1(xq32)))
    acc = torch.zeros(10, 16, device=dev)
    idx = torch.tensor([0, 2, 2, 9], device=dev)
    src = torch.randn(4, 16, device=dev)
    section("index_add_", lambda: count(lambda: acc.index_add_(0, idx, src)))
    section("one_hot_n", lambda: count(lambda: F.one_hot(idx, 10)))
    section("one_hot_infer", lambda: count(lambda: F.one_hot(idx)))
    section("aminmax", lambda: count(lambda: torch.aminmax(xq32)))
    section("logsumexp", lambda: count(lambda: torch.logsumexp(xq32, -1)))
    x4 = torch.randn(2, 3, 8, 8, device=dev)
    section("channels_last", lambda: count(
        lambda: x4.contiguous(memory_format=torch.channels_last)))
    section("clone_preserve", lambda: count(
        lambda: x4.to(memory_format=torch.channels_last).clone()))

    # --- the conv / norm family -----------------------------------------------------------------
    def module(m, x):
        m = m.to(dev).eval()
        return count(lambda: m(x))

    v = torch.randn(2, 4, 6, 6, 6, device=dev)
    section("Conv3d", lambda: module(torch.nn.Conv3d(4, 8, 3, padding=1), v))
    section("ConvTranspose1d", lambda: module(torch.nn.ConvTranspose1d(4, 8, 3, stride=2),
                                              torch.randn(2, 4, 10, device=dev)))
    section("ConvTranspose2d", lambda: module(torch.nn.ConvTranspose2d(3, 8, 3, stride=2), x4))
    section("ConvTranspose3d", lambda: module(torch.nn.ConvTranspose3d(4, 8, 3), v))
    section("GroupNorm", lambda: module(torch.nn.GroupNorm(2, 4), v))
    section("BatchNorm3d", lambda: module(torch.nn.BatchNorm3d(4), v))
    q = torch.randn(2, 5, 16, device=dev)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True).to(dev).eval()
    section("mha_fast_path", lambda: count(lambda: mha(q, q, q, need_weights=False)))
    section("mha_weights", lambda: count(lambda: mha(q, q, q)))
    mha_seq = torch.nn.MultiheadAttention(16, 4).to(dev).eval()
    section("mha_seq_first", lambda: count(lambda: mha_seq(q, q, q, need_weights=False)))

    # --- torch.load onto the device ---------------------------------------------------------------
    buf = io.BytesIO()
    torch.save({"w": torch.randn(8, 8), "b": torch.randn(8), "i": torch.arange(4)}, buf)

    def load(where):
        buf.seek(0)
        return torch.load(buf, map_location=where)

    section("load_map_cuda", lambda: count(lambda: load("cuda")))
    section("load_map_cpu", lambda: count(lambda: load("cpu")))


# --- one rank: all_to_all_single -----------------------------------------------------------------
def one_rank():
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29533", rank=0,
                                world_size=1)
    t = torch.arange(8, device=dev, dtype=torch.float32)
    o = torch.empty_like(t)
    return {"all_to_all_single": count(lambda: dist.all_to_all_single(o, t)),
            "all_reduce": count(lambda: dist.all_reduce(t))}


section("dist_one_rank", one_rank)


# --- a static KV cache written inside a reduce-overhead step (gpt-fast's shape) ------------------
class Cache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(1, 2, 16, 8, device=dev))

    def forward(self, pos, x):
        self.k.index_copy_(2, pos, x)
        return self.k.sum(2)


def reduce_overhead_kv():
    torch._dynamo.reset()
    c = Cache()
    step = torch.compile(c, mode="reduce-overhead", fullgraph=True)
    x = torch.randn(1, 2, 1, 8, device=dev)
    runs = {}
    with torch.no_grad():
        for i in range(4):
            pos = torch.tensor([i], device=dev)
            runs[f"step{i}"] = count(lambda pos=pos: step(pos, x), warm=0)
    return runs


section("reduce_overhead_kv", reduce_overhead_kv)
name = "surface_gpu_fake.json" if FAKE else "surface_gpu.json"
with open(os.path.join(OUT, name), "w") as f:
    json.dump(res, f, indent=1)
