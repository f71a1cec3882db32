"""Complex tensors on a real GPU: the CUDA kernels each op runs (torch.profiler), for the launch
counts tests/test_complex.py asserts. These cases ran (as one inline script of the same
calls) on an NVIDIA H200, torch 2.11.0+cu130, 2026-12-04: each ran the kernels fake_torch
counts, except
  x.abs(), x.angle()   2 kernels: the op complex -> complex, then a copy of the real parts
                       (fake_torch launches both since then)
  x.var()              3 kernels: var of the real parts, of the imaginary parts, an add (same)
  x @ x.T, einsum      2 kernels: cuBLAS's complex GEMM ran a split-K second kernel at these
                       sizes (a float32 GEMM of 64x8 @ 8x64 ran gemm + splitKreduce too);
                       fake_torch counts one launch per GEMM, whatever the dtype
  freqs (the table)    11 kernels, not 10: `10000 ** t` ran a fill of the scalar base before
                       pow (a real-dtype path, not complex)
Run: python3 tests/gpu/complex_gpu.py (writes $OUT/complex_gpu.json)."""
import json
import os

import torch
from torch.profiler import ProfilerActivity, profile

OUT = os.environ.get("OUT", "/tmp")
d = "cuda"
x = torch.randn(64, 8, dtype=torch.cfloat, device=d)
f = torch.randn(64, 8, device=d)
R = torch.randn(64, 8, 2, device=d)


def freqs(dim, end):
    r = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=d)[: dim // 2].float() / dim))
    t = torch.arange(end, device=d, dtype=torch.float32)
    r = torch.outer(t, r)
    return torch.polar(torch.ones_like(r), r)


def rotary(q, table):
    q_ = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
    table = table.view(1, q_.shape[1], 1, q_.shape[-1])
    return torch.view_as_real(q_ * table).flatten(3).type_as(q)


q = torch.randn(2, 5, 4, 16, device=d)
T = freqs(16, 12)
CASES = {
    "mul": lambda: x * f, "mul_scalar": lambda: x * (1 + 2j), "exp": lambda: x.exp(),
    "abs": lambda: x.abs(), "angle": lambda: x.angle(), "sgn": lambda: x.sgn(),
    "polar": lambda: torch.polar(f, f), "complex": lambda: torch.complex(f, f),
    "to": lambda: f.to(torch.cfloat), "real_contiguous": lambda: x.real.contiguous(),
    "conj_physical": lambda: x.conj_physical(), "sum": lambda: x.sum(), "mean": lambda: x.mean(),
    "isfinite": lambda: torch.isfinite(x), "eq": lambda: x == x, "mm": lambda: x @ x.T,
    "cat": lambda: torch.cat([x, x]), "view_as_complex": lambda: torch.view_as_complex(R),
    "view_as_real": lambda: torch.view_as_real(x), "imag": lambda: x.imag,
    "randn": lambda: torch.randn(8, dtype=torch.cfloat, device=d), "var": lambda: x.var(),
    "norm": lambda: x.norm(), "freqs": lambda: freqs(16, 12), "rotary": lambda: rotary(q, T[2:7]),
    "rotary_bf16": lambda: rotary(q.bfloat16(), T[2:7]),
}
result = {"torch": torch.__version__}
for name, fn in CASES.items():
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    result[name] = [e.name[:90] for e in p.events() if str(e.device_type).endswith("CUDA")]
    print(name, len(result[name]), flush=True)
with open(os.path.join(OUT, "complex_gpu.json"), "w") as fh:
    json.dump(result, fh, indent=1)
