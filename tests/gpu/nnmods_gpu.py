"""Launches of the nn surface helper nnmods added (MultiheadAttention's fast path by head dim,
dtype and mask; 3-D and transposed convolutions by backend; group and instance norm;
interpolate; pixel_shuffle), on a real GPU: per case the top-level aten ops (a
TorchDispatchMode) and the kernels (torch.profiler).

    python3 tests/gpu/nnmods_gpu.py      # writes $OUT/nn.json

Measured on an NVIDIA H200, torch 2.11.0+cu130, 2026-12-04 (this code, sent compressed as one
command line): results/nnmods_gpu_h200.json.
"""
import json
import os
import traceback

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode

F = torch.nn.functional
LAUNCH_API = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
              "cudaMemcpyAsync", "cudaMemsetAsync")
R = {"torch": torch.__version__}


class Ops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.n = []

    def __torch_dispatch__(self, f, t, a=(), k=None):
        self.n.append(f.overloadpacket.__name__)
        return f(*a, **(k or {}))


def case(name, fn):
    try:
        fn()
        torch.cuda.synchronize()
        with Ops() as rec:
            fn()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            fn()
            torch.cuda.synchronize()
        ev = p.events()
        R[name] = {"ops": rec.n, "n": len([x for x in ev if x.name in LAUNCH_API]),
                   "k": [x.name[:50] for x in ev if str(x.device_type).endswith("CUDA")]}
    except Exception:
        R[name] = {"err": traceback.format_exc()[-300:]}


d = "cuda"


def T(*s, **k):
    return torch.randn(*s, device=d, **k)


with torch.no_grad():
    for e, h, dt, label in [(16, 4, torch.float32, "4f"), (32, 4, torch.float32, "8f"),
                            (64, 4, torch.float16, "16h")]:
        m = torch.nn.MultiheadAttention(e, h, batch_first=True, device=d, dtype=dt).eval()
        x = T(2, 5, e, dtype=dt)
        kp = torch.zeros(2, 5, dtype=torch.bool, device=d)
        kp[0, 3:] = True
        case(f"mha{label}_nw", lambda: m(x, x, x, need_weights=False))
        case(f"mha{label}_w", lambda: m(x, x, x))
        case(f"mha{label}_kpm_nw", lambda: m(x, x, x, key_padding_mask=kp, need_weights=False))
    v, w, b, x4, wt = T(2, 4, 6, 6, 6), T(8, 4, 3, 3, 3), T(8), T(2, 4, 8, 8), T(4, 3, 3, 3)
    case("c3", lambda: F.conv3d(v, w, b, padding=1))
    case("c3dw", lambda: F.conv3d(v, T(8, 1, 3, 3, 3), b, groups=4))
    case("ct2g", lambda: F.conv_transpose2d(x4, wt, T(6), groups=2, stride=2))
    case("ct2op", lambda: F.conv_transpose2d(x4, wt, None, dilation=2, output_padding=1))
    with torch.backends.cudnn.flags(enabled=False):
        case("c3nc", lambda: F.conv3d(v, w, b, padding=1))
        case("ct2nc", lambda: F.conv_transpose2d(x4, wt, T(6), groups=2, stride=2))
    case("gn", lambda: F.group_norm(v, 2))
    case("gncl", lambda: F.group_norm(x4.to(memory_format=torch.channels_last), 2))
    case("gnst", lambda: F.group_norm(x4.transpose(2, 3), 2))
    case("inst", lambda: torch.nn.InstanceNorm2d(4, affine=True, track_running_stats=True,
                                                 device=d)(x4))
    case("near", lambda: F.interpolate(x4, scale_factor=2))
    case("near_st", lambda: F.interpolate(x4.transpose(2, 3), scale_factor=2))
    case("bil", lambda: F.interpolate(x4, size=(13, 11), mode="bilinear"))
    case("bil_st", lambda: F.interpolate(x4.transpose(2, 3), size=(13, 11), mode="bilinear"))
    case("bic", lambda: F.interpolate(x4, size=(13, 11), mode="bicubic"))
    case("ps", lambda: F.pixel_shuffle(x4, 2))
json.dump(R, open(os.environ["OUT"] + "/nn.json", "w"), indent=0)
