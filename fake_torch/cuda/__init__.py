"""torch.cuda for the simulated GPUs: device queries and the random generator state.
Streams and events (streams.py), memory statistics (memory.py) and CUDA graphs (graphs.py,
graphed_callables.py, _sanitizer.py) live in their own modules."""

import sys
from typing import Any

from fake_torch import _generator
from fake_torch._legacy_types import cuda_BFloat16Tensor as BFloat16Tensor
from fake_torch._legacy_types import cuda_BoolTensor as BoolTensor
from fake_torch._legacy_types import cuda_ByteTensor as ByteTensor
from fake_torch._legacy_types import cuda_CharTensor as CharTensor
from fake_torch._legacy_types import cuda_DoubleTensor as DoubleTensor
from fake_torch._legacy_types import cuda_FloatTensor as FloatTensor
from fake_torch._legacy_types import cuda_HalfTensor as HalfTensor
from fake_torch._legacy_types import cuda_IntTensor as IntTensor
from fake_torch._legacy_types import cuda_LongTensor as LongTensor
from fake_torch._legacy_types import cuda_ShortTensor as ShortTensor
from fake_torch._missing_names import missing_attribute
from fake_torch._simulated._allocator import OutOfMemoryError
from fake_torch._simulated._machine import AcceleratorError
from fake_torch.cuda import _sanitizer
from fake_torch.cuda import amp as amp
from fake_torch.cuda import nvtx as nvtx
from fake_torch.cuda._device_queries import (
    _lazy_call,
    current_device,
    device,
    device_count,
    device_of,
    get_device_capability,
    get_device_name,
    get_device_properties,
    init,
    is_available,
    is_bf16_supported,
    is_initialized,
    set_device,
    set_simulated_devices,
    set_simulated_gpu,
    synchronize,
)
from fake_torch.cuda.graphed_callables import make_graphed_callables
from fake_torch.cuda.graphs import (
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
)
from fake_torch.cuda.memory import (
    CUDAPluggableAllocator,
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    fresh_simulated_device,
    get_allocator_backend,
    get_per_process_memory_fraction,
    host_memory_stats,
    host_memory_stats_as_nested_dict,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_snapshot,
    memory_stats,
    memory_stats_as_nested_dict,
    reset_accumulated_host_memory_stats,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_host_memory_stats,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
    set_simulated_device_memory,
)
from fake_torch.cuda.random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from fake_torch.cuda.streams import (
    Event,
    Stream,
    StreamContext,
    _sleep,
    current_stream,
    default_stream,
    set_stream,
    stream,
)


def __getattr__(name: str) -> Any:
    """torch.cuda.default_generators: the default generator of each simulated device (the
    machine in use decides how many)."""
    if name == "default_generators":
        return _generator.cuda_default_generators()
    return missing_attribute(sys.modules[__name__], name)


_HAS_PYNVML = False  # torch's flag: pynvml imported (it is not, for a simulated GPU)

__all__ = [  # the *Tensor names: torch's legacy types (fake_torch/_legacy_types.py)
    "AcceleratorError", "BFloat16Tensor", "BoolTensor", "ByteTensor", "CUDAGraph",
    "CUDAPluggableAllocator", "CharTensor", "DoubleTensor",
    "Event", "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "OutOfMemoryError",
    "ShortTensor", "Stream", "StreamContext", "_lazy_call", "_sanitizer", "_sleep",
    "caching_allocator_alloc", "caching_allocator_delete", "current_device",
    "current_stream", "default_generators", "default_stream", "device", "device_count",
    "device_of", "empty_cache", "fresh_simulated_device", "get_allocator_backend",
    "get_device_capability", "get_device_name", "get_device_properties",
    "get_per_process_memory_fraction", "get_rng_state", "get_rng_state_all", "graph",
    "graph_pool_handle", "host_memory_stats", "host_memory_stats_as_nested_dict", "init",
    "initial_seed", "is_available", "is_bf16_supported",
    "is_current_stream_capturing", "is_initialized", "make_graphed_callables", "manual_seed",
    "manual_seed_all", "max_memory_allocated", "max_memory_cached", "max_memory_reserved",
    "mem_get_info", "memory_allocated", "memory_cached", "memory_reserved", "memory_snapshot",
    "memory_stats", "memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats",
    "reset_accumulated_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
    "reset_peak_host_memory_stats", "reset_peak_memory_stats", "seed",
    "seed_all", "set_device", "set_per_process_memory_fraction", "set_rng_state",
    "set_rng_state_all", "set_simulated_device_memory", "set_simulated_devices",
    "set_simulated_gpu", "set_stream",
    "stream", "synchronize",
]
