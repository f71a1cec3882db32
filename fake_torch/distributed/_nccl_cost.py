"""What one NCCL collective costs on the simulated GPUs' interconnect, and the name its kernel
has in torch's profiler.

NCCL's tuner (src/graph/tuning.cc, enqueue.cc's cost table) predicts each (algorithm, protocol)'s
time as latency + bytes / bandwidth and runs the fastest; we model its ring algorithm with its
three protocols the same way and pick the fastest:

    time = BASE_LAT[proto] + steps * HW_LAT[proto] + bus_bytes / (link_bw * EFFICIENCY[proto])

  - steps and bus bytes per rank of the ring algorithm, as nccl-tests' doc/PERFORMANCE.md
    derives its "bus bandwidth": all_reduce 2(n-1) steps moving 2(n-1)/n of the buffer;
    all_gather and reduce_scatter n-1 steps moving (n-1)/n of the whole (gathered) buffer;
    broadcast and reduce n-1 pipelined steps moving the buffer once; send/recv (and what
    c10d builds from it: all_to_all, gather, scatter) one step moving what this rank sends
    or receives, whichever is more.
  - BASE_LAT and HW_LAT (NVLink, ring): NCCL's tuning.cc tables, in microseconds:
    baseLat ring {LL 3.6, LL128 10.0, Simple 8.4}, hwLat[NVLINK] ring {.47, 1.9, 3.4}.
  - EFFICIENCY: the payload fraction of each protocol's wire format (NCCL's protocol design:
    LL sends 4 bytes of data with a 4-byte flag in each 8, LL128 120 of every 128 bytes,
    Simple whole buffers). LL's bandwidth is capped besides, at tuning.cc's llMaxBws for one
    node: 141 GB/s on Hopper, 87.7 GB/s on Ampere (and Ada, which has no row of its own).
  - link_bw, one direction per GPU: NVLink 4 on H100/H200, 900 GB/s both directions together
    (NVIDIA H100 and H200 datasheets); NVLink 3 on A100, 600 GB/s (A100 datasheet); the L4 has
    no NVLink, so its peers talk over PCIe (fake_torch._gpus's figure). The NVLS (NVSwitch
    multicast) and tree algorithms are not modelled: the ring is NCCL's default within a node
    without NVSwitch multicast and its bandwidth-optimal choice for large buffers.
The model is an ideal: nccl-tests on real machines reach about 80% of the link bandwidth, so
simulated times are a lower bound for large messages.
"""

from __future__ import annotations

from typing import Any

from fake_torch._simulated import _gpus

__all__ = ["collective_ns", "kernel_name"]

_PROTOCOLS = ("LL", "LL128", "SIMPLE")
BASE_LAT_US = {"LL": 3.6, "LL128": 10.0, "SIMPLE": 8.4}  # tuning.cc baseLat, ring
HW_LAT_US = {"LL": 0.47, "LL128": 1.9, "SIMPLE": 3.4}  # tuning.cc hwLat[NVLINK], ring
EFFICIENCY = {"LL": 0.5, "LL128": 120 / 128, "SIMPLE": 1.0}
_NVLINK_BYTES_PER_S = {"H200": 450e9, "H100": 450e9, "A100": 300e9}  # one direction
_LL_MAX_BYTES_PER_S = {"H200": 141e9, "H100": 141e9}  # tuning.cc llMaxBws, one node
_LL_MAX_DEFAULT = 87.7e9  # (the Ampere row)

# the collective -> (ring steps, bus bytes) for n ranks and `nbytes` (see the docstring)
_RING: dict[str, Any] = {
    "AllReduce": lambda n, b: (2 * (n - 1), 2 * (n - 1) / n * b),
    "AllGather": lambda n, b: (n - 1, (n - 1) / n * b),
    "ReduceScatter": lambda n, b: (n - 1, (n - 1) / n * b),
    "Broadcast": lambda n, b: (n - 1, float(b)),
    "Reduce": lambda n, b: (n - 1, float(b)),
    "SendRecv": lambda n, b: (1, float(b)),
}

# NCCL's datatype short names in its kernels' names (bool goes as uint8, as c10d sends it)
_TYPES = {"int8": "i8", "uint8": "u8", "bool": "u8", "int32": "i32", "uint32": "u32",
          "int64": "i64", "uint64": "u64", "float16": "f16", "float32": "f32", "float64": "f64",
          "bfloat16": "bf16", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2"}
# the reduction in a kernel's name: NCCL's device functions (MIN and MAX share MinMax; AVG is
# a pre-multiplied sum on floats, a sum divided afterwards on integers)
_OPS = {"SUM": "Sum", "PRODUCT": "Prod", "MIN": "MinMax", "MAX": "MinMax"}


def link_bytes_per_s() -> float:
    """One GPU's bandwidth to its peers, one direction."""
    spec = _gpus.current()
    return _NVLINK_BYTES_PER_S.get(spec.key, spec.pcie_bytes_per_s)


def _best(coll: str, n: int, nbytes: int) -> tuple[str, float]:
    steps, bus = _RING[coll](n, nbytes)
    bw = link_bytes_per_s()
    ll_max = _LL_MAX_BYTES_PER_S.get(_gpus.current().key, _LL_MAX_DEFAULT)
    times = {}
    for p in _PROTOCOLS:
        proto_bw = bw * EFFICIENCY[p] if p != "LL" else min(bw * EFFICIENCY[p], ll_max)
        times[p] = (BASE_LAT_US[p] + steps * HW_LAT_US[p]) * 1e3 + bus / proto_bw * 1e9
    proto = min(_PROTOCOLS, key=lambda p: times[p])
    return proto, times[proto]


def collective_ns(coll: str, n: int, nbytes: int) -> float:
    """Nanoseconds one `coll` ("AllReduce", "SendRecv", ...) of `nbytes` takes among `n`
    ranks, once every rank has reached it."""
    return _best(coll, n, nbytes)[1]


def kernel_name(coll: str, n: int, nbytes: int, dtype_name: str = "",
                op: str = "", floating: bool = True) -> str:
    """The kernel torch's profiler shows: ncclDevKernel_AllReduce_Sum_f32_RING_LL,
    ncclDevKernel_AllGather_RING_SIMPLE, ncclDevKernel_SendRecv."""
    if coll == "SendRecv":
        return "ncclDevKernel_SendRecv"
    proto = _best(coll, n, nbytes)[0]
    if coll in ("AllGather", "Broadcast"):
        return f"ncclDevKernel_{coll}_RING_{proto}"
    red = _OPS.get(op) or ("PreMulSum" if floating else "SumPostDiv")
    return f"ncclDevKernel_{coll}_{red}_{_TYPES.get(dtype_name, dtype_name)}_RING_{proto}"
