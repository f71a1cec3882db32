"""torch.cuda memory statistics, snapshots and allocator settings, read off the simulated
caching allocator (fake_torch/_simulated/_allocator.py)."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fake_torch import _torch_stream
from fake_torch._simulated import _allocator_config
from fake_torch._simulated._allocator import DEVICE
from fake_torch._simulated._allocator_blocks import Block, Segment
from fake_torch._simulated._allocator_stats import ALLOCATED_BYTES, RESERVED_BYTES
from fake_torch._simulated._host_allocator import HOST
from fake_torch._torch_device import DeviceLike
from fake_torch.cuda import _device_queries


def memory_allocated(device: DeviceLike | None = None) -> int:
    """Bytes held by live tensors (block sizes, rounded as the allocator rounds them)."""
    return DEVICE.stats.current(ALLOCATED_BYTES)


def max_memory_allocated(device: DeviceLike | None = None) -> int:
    return DEVICE.stats.peak(ALLOCATED_BYTES)


def memory_reserved(device: DeviceLike | None = None) -> int:
    """Bytes of the segments the allocator holds (cached or in use)."""
    return DEVICE.stats.current(RESERVED_BYTES)


def max_memory_reserved(device: DeviceLike | None = None) -> int:
    return DEVICE.stats.peak(RESERVED_BYTES)


def memory_cached(device: DeviceLike | None = None) -> int:
    """Deprecated; see memory_reserved."""
    return memory_reserved(device)


def max_memory_cached(device: DeviceLike | None = None) -> int:
    """Deprecated; see max_memory_reserved."""
    return max_memory_reserved(device)


def reset_peak_memory_stats(device: DeviceLike | None = None) -> None:
    """Every "peak" statistic back to its current value."""
    DEVICE.stats.reset_peak()


def reset_accumulated_memory_stats(device: DeviceLike | None = None) -> None:
    """Every "allocated" and "freed" statistic, and the event counts, back to zero."""
    DEVICE.stats.reset_accumulated()


def reset_max_memory_allocated(device: DeviceLike | None = None) -> None:
    """Deprecated: resets every peak statistic (torch's FutureWarning says so)."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: DeviceLike | None = None) -> None:
    """Deprecated: resets every peak statistic (torch's FutureWarning says so)."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def empty_cache() -> None:
    """Release the cached, unused segments back to the (simulated) device."""
    DEVICE.empty_cache()


def caching_allocator_alloc(size: int, device: DeviceLike | int | None = None,
                            stream: _torch_stream.Stream | int | None = None) -> int:
    """The address of `size` bytes from the caching allocator for `stream` (the current
    stream unless given), held until caching_allocator_delete; 0 for 0 bytes."""
    index = _device_queries._device_index(
        _device_queries.current_device() if device is None else device)
    if stream is None:
        from fake_torch.cuda.streams import current_stream

        stream = current_stream(index)
    if isinstance(stream, _torch_stream.Stream):
        stream = stream.handle
    if not isinstance(stream, int):
        raise TypeError("Invalid type for stream argument, must be `torch.cuda.Stream` or "
                        "`int` representing a pointer to an existing stream")
    with _device_queries.device(index):
        return DEVICE.raw_alloc(size, stream)


def caching_allocator_delete(mem_ptr: int) -> None:
    """Free memory caching_allocator_alloc handed out (torch's error for any other address)."""
    DEVICE.raw_delete(mem_ptr)


def mem_get_info(device: DeviceLike | None = None) -> tuple[int, int]:
    """(free, total) bytes of the simulated device."""
    return DEVICE.total_bytes - memory_reserved(), DEVICE.total_bytes


def set_per_process_memory_fraction(fraction: float, device: DeviceLike | None = None) -> None:
    """Cap this process's reserved memory at `fraction` of the device: an allocation past it
    raises OutOfMemoryError (after freeing the cache), as on a GPU."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    DEVICE.memory_fraction = fraction


def get_per_process_memory_fraction(device: DeviceLike | None = None) -> float:
    fraction = DEVICE.memory_fraction
    return 1.0 if fraction is None else fraction


def memory_stats_as_nested_dict(device: DeviceLike | None = None) -> dict[str, Any]:
    """Every statistic of the caching allocator, nested as c10 reports them."""
    return DEVICE.stats.as_nested_dict(DEVICE.config.max_split_size)


def memory_stats(device: DeviceLike | None = None) -> dict[str, Any]:
    """torch's flat view of memory_stats_as_nested_dict: "allocated_bytes.all.current", ...,
    sorted by key (a private pool's id (1, 0) reads "1_0")."""
    result: list[tuple[str, Any]] = []

    def flatten(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                name = "_".join(map(str, key)) if isinstance(key, tuple) else str(key)
                flatten(f"{prefix}.{name}" if prefix else name, inner)
        else:
            result.append((prefix, value))

    flatten("", memory_stats_as_nested_dict(device))
    return OrderedDict(sorted(result))


# --- pinned host memory (fake_torch/_simulated/_host_allocator.py) --------------------------------

def host_memory_stats_as_nested_dict() -> dict[str, Any]:
    """The pinned host allocator's statistics as torch._C._cuda_hostMemoryStats() nests them
    ({} before CUDA is initialised, as torch)."""
    if not _device_queries.is_initialized():
        return {}
    return HOST.get_stats()


def host_memory_stats() -> dict[str, Any]:
    """The pinned host allocator's statistics, flattened ("allocations.current", ...) and
    sorted by key, as torch.cuda.host_memory_stats."""
    result: list[tuple[str, Any]] = []

    def flatten(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                flatten(f"{prefix}.{key}" if prefix else key, inner)
        else:
            result.append((prefix, value))

    flatten("", host_memory_stats_as_nested_dict())
    return OrderedDict(sorted(result))


def reset_accumulated_host_memory_stats() -> None:
    """The pinned host allocator's "allocated" and "freed" counts (and timing totals) to 0."""
    HOST.reset_accumulated_stats()


def reset_peak_host_memory_stats() -> None:
    """The pinned host allocator's "peak" counts to their current values."""
    HOST.reset_peak_stats()


def _host_empty_cache() -> None:
    """torch._C._host_emptyCache: give the cached, unused pinned blocks back to the host."""
    HOST.empty_cache()


def get_allocator_backend() -> str:
    """The allocator backend: fake_torch simulates c10's "native" caching allocator."""
    return "native"


def _set_allocator_settings(env: str) -> None:
    """Deprecated alias of torch._C._accelerator_setAllocatorSettings (torch warns so)."""
    warnings.warn("torch.cuda._set_allocator_settings is deprecated. Use "
                  "torch._C._accelerator_setAllocatorSettings instead.", FutureWarning,
                  stacklevel=2)
    set_allocator_settings(env)


def set_allocator_settings(env: str) -> None:
    """torch._C._accelerator_setAllocatorSettings: parse `env` as PYTORCH_CUDA_ALLOC_CONF
    and apply it to allocations from now on."""
    _allocator_config.parse(env, DEVICE.config)
    DEVICE.settings_changed()


def get_allocator_settings() -> str:
    """torch._C._accelerator_getAllocatorSettings: the last setting string parsed."""
    return DEVICE.config.last_settings


# --- snapshots ------------------------------------------------------------------------------------

def _blocks(seg: Segment) -> Iterator[Block]:
    block: Block | None = seg.head
    while block is not None:
        yield block
        block = block.next


def _segment_dict(seg: Segment) -> dict[str, Any]:
    blocks, allocated, active, requested = [], 0, 0, 0
    for b in _blocks(seg):
        is_active = b.allocated or b.pending or bool(b.stream_uses)
        state = ("active_allocated" if b.allocated else
                 "active_pending_free" if is_active else "inactive")
        blocks.append({"address": b.address, "size": b.size, "requested_size": b.requested,
                       "state": state, "frames": []})
        allocated += b.size if b.allocated else 0
        if is_active:
            active += b.size
            requested += b.requested
    return {"device": 0, "address": seg.base, "total_size": seg.size, "allocated_size": allocated,
            "active_size": active, "requested_size": requested, "stream": seg.stream,
            "segment_type": "small" if seg.is_small else "large",
            "segment_pool_id": seg.pool.id, "is_expandable": False, "frames": [],
            "blocks": blocks}


def _segments(pool_id: tuple[int, int] | None) -> list[dict[str, Any]]:
    found = [_segment_dict(seg) for pool in DEVICE.pools.values() for seg in pool.segments
             if pool_id is None or pool.id == pool_id]
    return sorted(found, key=lambda s: s["address"])


def memory_snapshot(mempool_id: tuple[int, int] | None = None,
                    include_traces: bool = True) -> list[dict[str, Any]]:
    """Every segment the allocator holds, with its blocks, in c10's dict layout (sorted by
    address; one memory pool's only with `mempool_id`)."""
    return _segments(None if mempool_id is None else (mempool_id[0], mempool_id[1]))


def _snapshot(device: DeviceLike | None = None,
              augment_with_fx_traces: bool = False) -> dict[str, Any]:
    """The allocator's state as torch.cuda.memory._snapshot() has it: segments, (empty)
    device traces (fake_torch records no memory history), settings."""
    config = DEVICE.config
    return {
        "segments": _segments(None),
        "device_traces": [[]],
        "allocator_settings": {
            "PYTORCH_CUDA_ALLOC_CONF": config.last_settings,
            "max_split_size": config.max_split_size if config.max_split_size < 2**63 else -1,
            "garbage_collection_threshold": config.garbage_collection_threshold,
            "expandable_segments": config.expandable_segments,
            "pinned_num_register_threads": config.pinned_num_register_threads,
            "release_lock_on_cudamalloc": config.release_lock_on_cudamalloc,
            "pinned_use_cuda_host_register": config.pinned_use_cuda_host_register,
            "roundup_power2_divisions": {str(1 << i): v for i, v in
                                         enumerate(config.roundup_power2_divisions)},
        },
        "external_annotations": [],
    }


# --- the simulated device itself (fake_torch only) ------------------------------------------------

def set_simulated_device_memory(total_bytes: int) -> None:
    """fake_torch only: the size of the simulated device (default 80 GiB, or the
    FAKE_TORCH_DEVICE_MEMORY environment variable)."""
    if isinstance(total_bytes, bool) or not isinstance(total_bytes, int) or total_bytes <= 0:
        raise ValueError(f"total_bytes must be a positive int, got {total_bytes!r}")
    DEVICE.total_bytes = total_bytes


@contextmanager
def fresh_simulated_device(total_bytes: int | None = None) -> Iterator[None]:
    """fake_torch only: inside the block the simulated GPU is as a new process finds it (empty
    memory, graph pool ids from 1, no graphs, the default stream current on this thread), so
    memory figures and addresses follow from the block alone; the device before it comes back
    after. For tests."""
    from fake_torch._generator import cuda_default_generators
    from fake_torch.cuda import graphs, streams

    saved_graphs = dict(graphs._graphs_by_pool)
    saved_debug = graphs._debug_mode
    saved_stream = streams.current_stream()
    # the default generator's state is registered with no graph in a new process
    states = [g._state for g in cuda_default_generators]
    saved_states = [(s.graphs, s.extragraph) for s in states]
    graphs._graphs_by_pool.clear()
    streams.set_stream(streams.default_stream())
    for state in states:
        state.graphs, state.extragraph = set(), None
    try:
        with DEVICE.fresh(total_bytes), HOST.fresh():
            yield
    finally:
        graphs._graphs_by_pool.clear()
        graphs._graphs_by_pool.update(saved_graphs)
        graphs._debug_mode = saved_debug
        streams.set_stream(saved_stream)
        for state, (registered, extragraph) in zip(states, saved_states, strict=True):
            state.graphs, state.extragraph = registered, extragraph


class CUDAPluggableAllocator:
    """A CUDA allocator loaded from a shared library (`alloc_fn_name` / `free_fn_name` in
    `path_to_so_file`): fake_torch cannot load native allocators, so constructing one raises
    NotImplementedError."""

    def __init__(self, path_to_so_file: str, alloc_fn_name: str, free_fn_name: str) -> None:
        raise NotImplementedError(
            "torch.cuda.memory.CUDAPluggableAllocator is not emulated by fake_torch: it loads "
            f"native allocator functions ({alloc_fn_name}, {free_fn_name}) from "
            f"{path_to_so_file}, and the simulated GPU's memory is fake_torch's own allocator")


__all__ = ["CUDAPluggableAllocator", "caching_allocator_alloc", "caching_allocator_delete",
           "empty_cache",
           "get_allocator_backend", "get_per_process_memory_fraction", "host_memory_stats",
           "host_memory_stats_as_nested_dict", "max_memory_allocated", "max_memory_cached",
           "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_cached",
           "memory_reserved", "memory_snapshot", "memory_stats", "memory_stats_as_nested_dict",
           "reset_accumulated_host_memory_stats", "reset_accumulated_memory_stats",
           "reset_max_memory_allocated", "reset_max_memory_cached",
           "reset_peak_host_memory_stats", "reset_peak_memory_stats",
           "set_per_process_memory_fraction"]  # and, fake_torch only (torch.cuda exports them):
# fresh_simulated_device, set_simulated_device_memory
