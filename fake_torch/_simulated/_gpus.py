"""The GPUs fake_torch can pretend to be: each one's published specs, and which one is simulated.

Chosen by the FAKE_TORCH_GPU environment variable (a key of GPUS, e.g. "H200") or by
`torch.cuda.set_simulated_gpu(name)` (fake_torch only); the default is the H200, the GPU the
project's recorded measurements (tests/gpu/results/*_h200.json) ran on, and the one `run`, `demo`
and `bench` all simulate unless told otherwise. `torch.cuda.get_device_name`,
`get_device_properties` and `mem_get_info` read the choice; the cost model
(fake_torch/_simulated/_cost.py) reads its bandwidth and peaks.

Every number is the vendor's datasheet figure (dense, i.e. without 2:4 sparsity):
  - H200 SXM: NVIDIA H200 Tensor Core GPU datasheet (141 GB HBM3e at 4.8 TB/s; FP32 67 TFLOPS,
    TF32 494.5, BF16/FP16 989.5, FP8 1979); PCIe Gen5 x16, 64 GB/s each way.
  - H100 SXM5: NVIDIA H100 Tensor Core GPU datasheet (80 GB HBM3 at 3.35 TB/s; FP32 67,
    TF32 494.5, BF16/FP16 989.5, FP8 1979); PCIe Gen5 x16.
  - A100 SXM4 80GB: NVIDIA A100 datasheet (2,039 GB/s; FP32 19.5, TF32 156, BF16/FP16 312;
    no FP8); PCIe Gen4 x16, 32 GB/s each way.
  - L4: NVIDIA L4 datasheet (24 GB GDDR6 at 300 GB/s; FP32 30.3, TF32 60, BF16/FP16 121,
    FP8 242.5); PCIe Gen4 x16.
NVLink (peer copies between GPUs, one direction): H200 and H100 SXM 900 GB/s total (fourth
generation), A100 SXM4 600 GB/s total (third); the L4 has none, its peer copies cross PCIe.
SM counts and boost clocks are the architecture whitepapers' (Hopper: 132 SMs at 1.98 GHz;
A100: 108 at 1.41 GHz; L4: 58 at 2.04 GHz). Memory sizes are what torch reports for the part.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

TB = 1e12
GB = 1e9
MiB = 1024 * 1024


@dataclass(frozen=True)
class GPUSpec:
    """One GPU model: what torch.cuda reports about it and what the cost model needs."""

    key: str
    name: str  # torch.cuda.get_device_name
    major: int
    minor: int
    total_memory: int  # bytes, as torch.cuda.get_device_properties(...).total_memory
    sm_count: int
    l2_bytes: int
    clock_hz: float  # SM boost clock: torch.cuda._sleep(cycles) spins cycles / clock_hz
    hbm_bytes_per_s: float  # device memory bandwidth
    pcie_bytes_per_s: float  # host<->device, one direction
    fp32_flops: float  # non-tensor-core FP32 (elementwise work, fp32 matmul without TF32)
    fp64_flops: float
    tf32_flops: float
    bf16_flops: float  # also FP16 (tensor cores, dense)
    fp8_flops: float  # 0: no FP8 tensor cores (A100); FP8 then runs at the BF16 rate
    # GPU-to-GPU (peer) copies, one direction: NVLink's, or PCIe's on a part without it
    nvlink_bytes_per_s: float = 0.0

    @property
    def peer_bytes_per_s(self) -> float:
        return self.nvlink_bytes_per_s or self.pcie_bytes_per_s

    def matmul_flops(self, dtype_name: str, allow_tf32: bool = False) -> float:
        """Peak FLOP/s of a matmul in `dtype_name` (numpy or torch spelling)."""
        if dtype_name in ("float16", "bfloat16", "half"):
            return self.bf16_flops
        if dtype_name.startswith("float8") or dtype_name in ("int8", "uint8"):
            return self.fp8_flops or self.bf16_flops
        if dtype_name == "float64":
            return self.fp64_flops
        return self.tf32_flops if allow_tf32 else self.fp32_flops


GPUS: dict[str, GPUSpec] = {
    "H200": GPUSpec("H200", "NVIDIA H200", 9, 0, 143771 * MiB, 132, 50 * MiB, 1.98e9,
                    4.8 * TB, 64 * GB, 67e12, 34e12, 494.5e12, 989.5e12, 1979e12,
                    nvlink_bytes_per_s=450 * GB),
    "H100": GPUSpec("H100", "NVIDIA H100 80GB HBM3", 9, 0, 80 * 1024 * MiB, 132, 50 * MiB,
                    1.98e9, 3.35 * TB, 64 * GB, 67e12, 34e12, 494.5e12, 989.5e12, 1979e12,
                    nvlink_bytes_per_s=450 * GB),
    "A100": GPUSpec("A100", "NVIDIA A100-SXM4-80GB", 8, 0, 81051 * MiB, 108, 40 * MiB, 1.41e9,
                    2.039 * TB, 32 * GB, 19.5e12, 9.7e12, 156e12, 312e12, 0.0,
                    nvlink_bytes_per_s=300 * GB),
    "L4": GPUSpec("L4", "NVIDIA L4", 8, 9, 22491 * MiB, 58, 48 * MiB, 2.04e9,
                  300 * GB, 32 * GB, 30.3e12, 0.49e12, 60e12, 121e12, 242.5e12),
}
DEFAULT = "H200"  # the one default: the GPU tests/gpu/results were measured on


def _from_environment() -> GPUSpec:
    key = os.environ.get("FAKE_TORCH_GPU", DEFAULT)
    return lookup(key)


def lookup(key: str) -> GPUSpec:
    """The spec named `key` (case-insensitive), or a ValueError naming the choices."""
    if not isinstance(key, str):
        raise TypeError(f"expected a GPU name (one of {', '.join(GPUS)}), got "
                        f"{type(key).__name__}")
    spec = GPUS.get(key.upper())
    if spec is None:
        raise ValueError(f"unknown simulated GPU {key!r}: expected one of {', '.join(GPUS)} "
                         "(FAKE_TORCH_GPU or torch.cuda.set_simulated_gpu)")
    return spec


_current: GPUSpec | None = None


def current() -> GPUSpec:
    """The simulated GPU (read from FAKE_TORCH_GPU the first time)."""
    global _current
    if _current is None:
        _current = _from_environment()
    return _current


@contextmanager
def simulating(spec: GPUSpec) -> Iterator[None]:
    """`spec` is the simulated GPU inside the block; the one before it, after."""
    global _current
    saved, _current = _current, spec
    try:
        yield
    finally:
        _current = saved


def select(key: str) -> GPUSpec:
    """Simulate the GPU named `key` from now on."""
    global _current
    _current = lookup(key)
    return _current
