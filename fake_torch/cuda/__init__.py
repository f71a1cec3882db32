"""torch.cuda for the one simulated GPU: device queries and the random generator state.
Streams and events (streams.py), memory statistics (memory.py) and CUDA graphs (graphs.py,
graphed_callables.py, _sanitizer.py) live in their own modules."""

from fake_torch._allocator import OutOfMemoryError
from fake_torch._generator import cuda_default_generators as default_generators
from fake_torch.cuda import _sanitizer
from fake_torch.cuda._device_queries import (
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
    empty_cache,
    fresh_simulated_device,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_peak_memory_stats,
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
    current_stream,
    default_stream,
    set_stream,
    stream,
)

__all__ = [
    "CUDAGraph", "Event", "OutOfMemoryError", "Stream", "StreamContext", "_sanitizer",
    "current_device", "current_stream", "default_generators", "default_stream", "device",
    "device_count", "device_of", "empty_cache", "fresh_simulated_device",
    "get_device_capability", "get_device_name",
    "get_device_properties", "get_rng_state", "get_rng_state_all", "graph", "graph_pool_handle",
    "init", "initial_seed", "is_available", "is_bf16_supported", "is_current_stream_capturing",
    "is_initialized", "make_graphed_callables", "manual_seed", "manual_seed_all",
    "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
    "memory_reserved", "memory_stats", "reset_peak_memory_stats", "seed", "seed_all", "set_device",
    "set_rng_state", "set_rng_state_all", "set_simulated_device_memory", "set_stream", "stream",
    "synchronize",
]
