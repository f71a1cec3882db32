"""torch.accelerator: the device-generic API over the current accelerator, which in fake_torch
is always the one simulated CUDA device (cuda:0). Each call answers what torch.cuda answers."""

from __future__ import annotations

import warnings
from typing import Any

from fake_torch import _dtype, _torch_stream
from fake_torch._torch_device import DeviceLike, canonical, device
from fake_torch.accelerator.graphs import Graph
from fake_torch.accelerator.memory import (
    empty_cache,
    empty_host_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)
from fake_torch.cuda import _device_queries, streams


def _index(device_arg: DeviceLike | None, optional: bool) -> int:
    """torch.accelerator's _get_device_index: an int as it is; a device of the accelerator's
    type, its index (the current one when it has none and `optional`)."""
    if isinstance(device_arg, int) and not isinstance(device_arg, bool):
        return device_arg
    index = None
    if device_arg is not None:
        dev = canonical(device_arg)
        if dev.type != "cuda":
            raise ValueError(f"{dev.type} doesn't match the current accelerator cuda.")
        index = dev.index
    if index is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, but "
                             f"got:{device_arg}")
        return current_device_index()
    return index


def device_count() -> int:
    """The number of accelerator devices: the one simulated GPU."""
    return _device_queries.device_count()


def is_available() -> bool:
    return _device_queries.is_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """The accelerator's device type, without an index: torch.device("cuda")."""
    return device("cuda")


def current_device_index() -> int:
    return _device_queries.current_device()


def current_device_idx() -> int:
    """Deprecated alias of current_device_index."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device: DeviceLike, /) -> None:
    """Make `device` the current accelerator device (a negative index: no change)."""
    index = _index(device, optional=False)
    if index >= 0:
        _device_queries.set_device(index)


def set_device_idx(device: DeviceLike, /) -> None:
    """Deprecated alias of set_device_index."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:  # lower case: torch's name
    """Context manager: `device` is the current device index inside the block (None: no
    change)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)


def get_device_capability(device: DeviceLike | None = None, /) -> dict[str, Any]:
    """What the device supports: the dtypes tensors on it may have."""
    _index(device, optional=True)
    return {"supported_dtypes": set(_dtype.SCALAR_NAME)}


def current_stream(device: DeviceLike | None = None, /) -> _torch_stream.Stream:
    """The current stream of the accelerator device, as a torch.Stream."""
    _index(device, optional=True)
    cuda = streams.current_stream()
    return _torch_stream.Stream("cuda:0", priority=cuda.priority, stream_id=cuda.stream_id)


def set_stream(stream: _torch_stream.Stream) -> None:
    """Make `stream` (a torch.Stream of the accelerator) the current stream."""
    streams.set_stream(stream)


def synchronize(device: DeviceLike | None = None, /) -> None:
    """Wait for all work on the device (a host sync: illegal while capturing)."""
    _index(device, optional=True)
    _device_queries.synchronize()


__all__ = [
    "Graph", "current_accelerator", "current_device_idx", "current_device_index",
    "current_stream", "device_count", "device_index", "empty_cache", "empty_host_cache",
    "get_device_capability", "get_memory_info", "is_available", "max_memory_allocated",
    "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
    "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
    "set_device_index", "set_stream", "synchronize",
]
