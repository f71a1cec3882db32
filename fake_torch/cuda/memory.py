"""torch.cuda memory statistics, read off the simulated caching allocator."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fake_torch._allocator import DEVICE, OutOfMemoryError
from fake_torch._device import DeviceLike


def memory_allocated(device: DeviceLike | None = None) -> int:
    """Bytes held by live tensors (block sizes, rounded as the allocator rounds them)."""
    return DEVICE.stats.allocated


def max_memory_allocated(device: DeviceLike | None = None) -> int:
    return DEVICE.stats.allocated_peak


def memory_reserved(device: DeviceLike | None = None) -> int:
    """Bytes of the segments the allocator holds (cached or in use)."""
    return DEVICE.stats.reserved


def max_memory_reserved(device: DeviceLike | None = None) -> int:
    return DEVICE.stats.reserved_peak


def reset_peak_memory_stats(device: DeviceLike | None = None) -> None:
    DEVICE.stats.allocated_peak = DEVICE.stats.allocated
    DEVICE.stats.reserved_peak = DEVICE.stats.reserved


def empty_cache() -> None:
    """Release the cached, unused segments back to the (simulated) device."""
    DEVICE.empty_cache()


def mem_get_info(device: DeviceLike | None = None) -> tuple[int, int]:
    """(free, total) bytes of the simulated device."""
    return DEVICE.total_bytes - DEVICE.stats.reserved, DEVICE.total_bytes


def memory_stats(device: DeviceLike | None = None) -> dict[str, Any]:
    """A subset of torch's memory_stats() keys, with torch's names."""
    s = DEVICE.stats
    stats = {
        "allocated_bytes.all.current": s.allocated,
        "allocated_bytes.all.peak": s.allocated_peak,
        "reserved_bytes.all.current": s.reserved,
        "reserved_bytes.all.peak": s.reserved_peak,
        "requested_bytes.all.current": s.requested,
        "allocation.all.allocated": s.num_allocs,
        "allocation.all.freed": s.num_frees,
        "allocation.all.current": s.num_allocs - s.num_frees,
        "segment.all.current": s.num_segments,
        "num_alloc_retries": s.num_alloc_retries,
        "num_ooms": s.num_ooms,
    }
    return OrderedDict(sorted(stats.items()))


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
    from fake_torch.cuda import graphs, streams

    saved_graphs = dict(graphs._graphs_by_pool)
    saved_debug = graphs._debug_mode
    saved_stream = streams.current_stream()
    graphs._graphs_by_pool.clear()
    streams.set_stream(streams.default_stream())
    try:
        with DEVICE.fresh(total_bytes):
            yield
    finally:
        graphs._graphs_by_pool.clear()
        graphs._graphs_by_pool.update(saved_graphs)
        graphs._debug_mode = saved_debug
        streams.set_stream(saved_stream)


__all__ = ["OutOfMemoryError", "empty_cache", "fresh_simulated_device", "max_memory_allocated",
           "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_peak_memory_stats", "set_simulated_device_memory"]
