"""The cost model: what each launch costs the host, and how long its work runs on the device.

Host side (nanoseconds of CPU time per call; published figures, calibration pending on a lent
GPU, see tests/gpu/time_gpu.py):
  - EAGER_LAUNCH_NS: one eager op on a CUDA tensor = PyTorch's Python/dispatcher overhead plus
    cudaLaunchKernel. NVIDIA's "Getting Started with CUDA Graphs" blog shows launch-bound
    kernels costing a few microseconds each; issue 15 states 2.5-8 us per eager kernel. 5 us
    here, the middle of that range, until tests/gpu/time_gpu.py measures it.
  - SYNC_NS, MEMCPY_CALL_NS, MIN_KERNEL_NS and the two gaps below are assumptions of the same
    order (a few microseconds or less), not measurements; calibration replaces them.
  - GRAPH_LAUNCH_NS + GRAPH_NODE_NS per node: cudaGraphLaunch of a straight-line graph, NVIDIA's
    "Constant Time Launch for Straight-Line CUDA Graphs" (CUDA 12.6): about 2.5 us, plus about a
    nanosecond per node.
  - SYNC_NS: a host wait on an idle stream (cudaStreamSynchronize/cudaEventSynchronize latency).
  - MEMCPY_CALL_NS: torch's copy_ between host and device (dispatch plus cudaMemcpyAsync).
Device side: a kernel's duration is a roofline, max(bytes moved / HBM bandwidth, FLOPs / the
dtype's peak), never below MIN_KERNEL_NS (the shortest kernels a profiler shows on Hopper);
a kernel queued on a stream behind another starts STREAM_QUEUE_GAP_NS after it ends (the
device's own launch latency), inside a graph GRAPH_NODE_GAP_NS after (graphs shorten it); both
are assumptions until tests/gpu/time_gpu.py measures them. A host<->device copy is
MEMCPY_LATENCY_NS plus bytes over PCIe; a copy between two GPUs, plus bytes over NVLink. The
roofline is an ideal: real kernels reach 70-90% of bandwidth, so simulated times are a lower
bound for large, memory-bound work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from fake_torch._simulated import _gpus

EAGER_LAUNCH_NS = 5_000.0
GRAPH_LAUNCH_NS = 2_500.0
GRAPH_NODE_NS = 1.0
SYNC_NS = 2_000.0
MEMCPY_CALL_NS = 5_000.0
MIN_KERNEL_NS = 2_000.0
GRAPH_NODE_GAP_NS = 500.0
STREAM_QUEUE_GAP_NS = 1_000.0
MEMCPY_LATENCY_NS = 2_000.0

_MATMUL = frozenset({"mm", "bmm", "dot", "mv", "matmul", "linear", "vdot", "inner"})
_ADDMM = frozenset({"addmm", "baddbmm", "addmv", "addbmm", "_addmm_activation", "addr"})
_ATTENTION = frozenset({"_scaled_dot_product_flash_attention",
                        "_scaled_dot_product_efficient_attention",
                        "_scaled_dot_product_cudnn_attention"})
_CONV = frozenset({"convolution", "_conv_depthwise2d", "cudnn_convolution",
                   "cudnn_convolution_transpose", "_convolution"})
_HEAVY = _MATMUL | _ADDMM | _ATTENTION | _CONV  # FLOPs at the dtype's matmul peak


def host_ns(kind: str, nodes: int = 0) -> float:
    """CPU time of one launch of `kind` ("kernel", "memcpy_*", "memset", "graph")."""
    if kind == "graph":
        return GRAPH_LAUNCH_NS + GRAPH_NODE_NS * nodes
    if kind in ("memcpy_h2d", "memcpy_d2h", "memcpy_p2p"):
        return MEMCPY_CALL_NS
    return EAGER_LAUNCH_NS


def _arrays(items: Iterable[Any]) -> Iterable[np.ndarray]:
    for x in items:
        if isinstance(x, np.ndarray):
            yield x
        elif isinstance(x, (list, tuple)):
            yield from (a for a in x if isinstance(a, np.ndarray))


def moved_bytes(outs: Sequence[np.ndarray], inputs: Sequence[Any]) -> int:
    """Bytes a kernel reads and writes: every input and output buffer once."""
    return sum(a.nbytes for a in _arrays(outs)) + sum(a.nbytes for a in _arrays(inputs))


def flops(op: str, outs: Sequence[np.ndarray], inputs: Sequence[Any],
          params: dict[str, Any]) -> float:
    """Floating-point operations: 2*M*N*K for the matmul family, attention's two matmuls,
    a convolution's MACs; one per output element for everything else."""
    out = outs[0] if outs else None
    n_out = out.size if out is not None else 0
    first = inputs[0] if inputs else None
    if op in _MATMUL and isinstance(first, np.ndarray):  # the common case: no list to build
        return 2.0 * max(n_out, 1) * int(first.shape[-1])
    arrays = list(_arrays(inputs))
    if op in _MATMUL and arrays:
        return 2.0 * max(n_out, 1) * int(arrays[0].shape[-1])
    if op in _ADDMM and len(arrays) >= 3:
        return 2.0 * n_out * int(arrays[1].shape[-1])
    if op in _ATTENTION and len(arrays) >= 3:
        q, k, v = arrays[:3]  # (B, H, Lq, E), (B, Hk, Lk, E), (B, Hk, Lk, Ev)
        batch_heads = int(np.prod(q.shape[:-2]))
        work = 2.0 * batch_heads * int(q.shape[-2]) * int(k.shape[-2]) * int(
            q.shape[-1] + v.shape[-1])
        return work / 2 if params.get("is_causal") else work
    if op in _CONV and len(arrays) >= 2:
        return 2.0 * n_out * int(np.prod(arrays[1].shape[1:]))
    return float(n_out)


_DTYPE_NAMES: dict[np.dtype[Any], str] = {}  # numpy computes `dtype.name` in Python: ~2 us


def _dtype_name(outs: Sequence[np.ndarray], inputs: Sequence[Any]) -> str:
    first = inputs[0] if inputs else None  # the first input array's, else the first output's
    x = first if isinstance(first, np.ndarray) else next(
        iter((*_arrays(inputs), *_arrays(outs))), None)
    if x is None:
        return "float32"
    dt = x.dtype
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = dt.name
    return name


# The heavy kernels' durations, for the spec they were computed on: (op, kind, then each
# output's and each input array's (shape, dtype), None between the two) -> ns. Exact: nothing
# else decides them (params only for attention, not cached). A light kernel is not cached: its
# roofline costs less than such a key (measured: 7.5k instructions against 9.3k).
_NS: dict[tuple[Any, ...], float] = {}
_ns_spec: list[_gpus.GPUSpec | None] = [None]
_NS_LIMIT = 4096  # distinct launches remembered (a decode loop's growing shapes): then start over
_CACHED = _HEAVY - _ATTENTION


def kernel_ns(op: str, kind: str, outs: Sequence[np.ndarray], inputs: Sequence[Any],
              params: dict[str, Any], lookup: bool = True) -> float:
    """How long one launch's work runs on the simulated GPU, in nanoseconds. (The hot path of
    every eager launch: one pass over the buffers, no generators; a matmul's or convolution's
    looked up by its shapes and dtypes, see `_cached_ns`, unless `lookup` is False.)"""
    spec = _gpus._current or _gpus.current()
    if lookup and op in _CACHED and kind == "kernel":
        return _cached_ns(spec, op, outs, inputs, params)
    if op == "_sleep":
        return float(params.get("cycles", 0)) / spec.clock_hz * 1e9
    if kind == "nccl":  # a collective: its interconnect time (distributed/_nccl_cost.py)
        return float(params["duration_ns"])
    nbytes = 0
    for a in outs:
        nbytes += a.nbytes
    for x in inputs:
        if isinstance(x, np.ndarray):
            nbytes += x.nbytes
        elif isinstance(x, (list, tuple)):
            nbytes += sum(a.nbytes for a in x if isinstance(a, np.ndarray))
    if kind in ("memcpy_h2d", "memcpy_d2h"):
        return MEMCPY_LATENCY_NS + nbytes / 2 / spec.pcie_bytes_per_s * 1e9  # one side's bytes
    if kind == "memcpy_p2p":  # between two GPUs: over NVLink (or PCIe without it)
        return MEMCPY_LATENCY_NS + nbytes / 2 / spec.peer_bytes_per_s * 1e9
    memory_ns = nbytes / spec.hbm_bytes_per_s * 1e9
    if op in _HEAVY:
        work = flops(op, outs, inputs, params)
        return max(memory_ns, work / spec.matmul_flops(_dtype_name(outs, inputs)) * 1e9,
                   MIN_KERNEL_NS)
    n_out = outs[0].size if outs else 0  # one operation per output element
    return max(memory_ns, n_out / spec.fp32_flops * 1e9, MIN_KERNEL_NS)


def _cached_ns(spec: _gpus.GPUSpec, op: str, outs: Sequence[np.ndarray], inputs: Sequence[Any],
               params: dict[str, Any]) -> float:
    """A heavy kernel's `kernel_ns`, computed once per key (see `_NS`)."""
    if spec is not _ns_spec[0]:
        _NS.clear()
        _ns_spec[0] = spec
    key: list[Any] = [op]
    append = key.append
    for a in outs:
        append(a.shape)
        append(a.dtype)
    append(None)
    for x in inputs:
        if isinstance(x, np.ndarray):
            append(x.shape)
            append(x.dtype)
        elif isinstance(x, (list, tuple)):  # (a list of arrays: rare, not cached)
            return kernel_ns(op, "kernel", outs, inputs, params, lookup=False)
    k = tuple(key)
    ns = _NS.get(k)
    if ns is None:
        if len(_NS) >= _NS_LIMIT:
            _NS.clear()
        ns = _NS[k] = kernel_ns(op, "kernel", outs, inputs, params, lookup=False)
    return ns


def fused_ns(name: str, members: Sequence[tuple[str, Sequence[np.ndarray], Sequence[Any],
                                                dict[str, Any]]]) -> float:
    """One fused (compiled) kernel standing for `members` (op, outs, inputs, params): it reads
    each outside input once and writes each result once; a buffer one member writes and a later
    member reads stays on chip (an intermediate), unless a later member writes it again."""
    written: dict[tuple[int, int], int] = {}
    read: dict[tuple[int, int], int] = {}
    consumed: set[tuple[int, int]] = set()
    work = 0.0
    for op, outs, inputs, params in members:
        for a in _arrays(inputs):
            key = _key(a)
            if key in written:
                consumed.add(key)
            else:
                read[key] = a.nbytes
        for a in _arrays(outs):
            written[_key(a)] = a.nbytes
        work += flops(op, outs, inputs, params)
    stored = sum(n for k, n in written.items() if k not in consumed)
    spec = _gpus.current()
    memory_ns = (sum(read.values()) + stored) / spec.hbm_bytes_per_s * 1e9
    return max(memory_ns, work / spec.fp32_flops * 1e9, MIN_KERNEL_NS)


def _key(a: np.ndarray) -> tuple[int, int]:
    """Where a buffer lives: its first byte's address and its size."""
    return int(a.__array_interface__["data"][0]), a.nbytes
