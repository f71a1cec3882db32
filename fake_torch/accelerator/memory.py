"""torch.accelerator's memory API, over the simulated caching allocator (torch.cuda's figures)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from fake_torch._torch_device import DeviceLike
from fake_torch.cuda import memory as cuda_memory

# what the device-generic statistics leave out of torch.cuda's (c10's accelerator binding)
_CUDA_ONLY = ("num_oom_rejections", "reserved_bytes_by_private_pools")


def empty_cache() -> None:
    """Give the cached, unused segments back to the device."""
    cuda_memory.empty_cache()


def empty_host_cache() -> None:
    """Give the pinned host allocator's cached, unused blocks back."""
    cuda_memory._host_empty_cache()


def memory_stats(device_index: DeviceLike | None = None, /) -> OrderedDict[str, Any]:
    """The allocator's statistics, flattened and sorted as torch.cuda.memory_stats (without
    its CUDA-only entries)."""
    stats = cuda_memory.memory_stats_as_nested_dict(device_index)
    flat: list[tuple[str, Any]] = []

    def flatten(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                flatten(f"{prefix}.{key}" if prefix else key, inner)
        else:
            flat.append((prefix, value))

    flatten("", {k: v for k, v in stats.items() if k not in _CUDA_ONLY})
    return OrderedDict(sorted(flat))


def memory_allocated(device_index: DeviceLike | None = None, /) -> int:
    return int(memory_stats(device_index).get("allocated_bytes.all.current", 0))


def max_memory_allocated(device_index: DeviceLike | None = None, /) -> int:
    return int(memory_stats(device_index).get("allocated_bytes.all.peak", 0))


def memory_reserved(device_index: DeviceLike | None = None, /) -> int:
    return int(memory_stats(device_index).get("reserved_bytes.all.current", 0))


def max_memory_reserved(device_index: DeviceLike | None = None, /) -> int:
    return int(memory_stats(device_index).get("reserved_bytes.all.peak", 0))


def reset_accumulated_memory_stats(device_index: DeviceLike | None = None, /) -> None:
    cuda_memory.reset_accumulated_memory_stats(device_index)


def reset_peak_memory_stats(device_index: DeviceLike | None = None, /) -> None:
    cuda_memory.reset_peak_memory_stats(device_index)


def get_memory_info(device_index: DeviceLike | None = None, /) -> tuple[int, int]:
    """(free, total) bytes of the device."""
    return cuda_memory.mem_get_info(device_index)


__all__ = ["empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats"]
