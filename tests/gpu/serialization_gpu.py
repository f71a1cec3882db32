"""What torch.save / torch.load launch on a GPU (not a test: CI has no GPU).

Run with real torch on a CUDA machine: `python3 tests/gpu/serialization_gpu.py` prints, per
scenario, the GPU activities torch.profiler saw, the CUDA runtime calls, and the aten ops.
Recorded on an NVIDIA H200 with torch 2.11.0+cu130 on 2026-12-04, for a state dict of four
tensors over two cuda storages (`x`, `x.t()`, `x[1]`, and a bfloat16 `y`):
  save                                  2 x Memcpy DtoH (one aten::copy_ per storage)
  load (saved location cuda:0)          2 x Memcpy HtoD
  load map_location="cpu"               nothing
  load a cpu file, map_location="cuda"  2 x Memcpy HtoD (3 tensors over 2 storages)
  ... map_location=lambda s, l: s.cuda()  2 x Memcpy HtoD
  load mmap=True onto cuda              2 x Memcpy HtoD
  load the pre-zip format onto cuda     4 x Memcpy HtoD (the storage is made on the device
                                        first, then filled from the file: two copies each)
No kernel ran in any of them. tests/test_serialization.py asserts fake_torch's counts equal.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile


def run(f: Callable[[], Any]) -> dict[str, dict[str, int]]:
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        f()
        torch.cuda.synchronize()
    gpu: dict[str, int] = {}
    runtime: dict[str, int] = {}
    aten: dict[str, int] = {}
    for e in p.events():
        if e.device_type.name == "CUDA":
            gpu[e.name] = gpu.get(e.name, 0) + 1
        elif e.name.startswith("cuda") and any(k in e.name for k in ("Memcpy", "Launch",
                                                                      "Memset")):
            runtime[e.name] = runtime.get(e.name, 0) + 1
        elif e.name.startswith("aten::"):
            aten[e.name] = aten.get(e.name, 0) + 1
    return {"gpu": gpu, "runtime": runtime, "aten": aten}


def main() -> None:
    x = torch.arange(12.0, device="cuda").reshape(3, 4)
    sd = {"x": x, "xt": x.t(), "row": x[1],
          "y": torch.ones(2, device="cuda", dtype=torch.bfloat16)}
    out: dict[str, Any] = {"version": torch.__version__}
    b = io.BytesIO()
    out["save"] = run(lambda: torch.save(sd, b))
    out["load"] = run(lambda: (b.seek(0), torch.load(b)))
    out["load_map_cpu"] = run(lambda: (b.seek(0), torch.load(b, map_location="cpu")))
    c = io.BytesIO()
    z = torch.arange(6.0)
    torch.save({"z": z, "r": z[2:], "i": torch.ones(2, dtype=torch.int64)}, c)
    out["load_cpu_file_map_cuda"] = run(lambda: (c.seek(0), torch.load(c, map_location="cuda")))
    out["load_cpu_file_map_lambda"] = run(
        lambda: (c.seek(0), torch.load(c, map_location=lambda s, loc: s.cuda())))
    torch.save(sd, "/tmp/serialization_gpu.pt")
    out["load_mmap"] = run(lambda: torch.load("/tmp/serialization_gpu.pt", mmap=True))
    d = io.BytesIO()
    torch.save(sd, d, _use_new_zipfile_serialization=False)
    out["load_legacy"] = run(lambda: (d.seek(0), torch.load(d)))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
