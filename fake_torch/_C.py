"""torch._C: the few private bindings that user code (vLLM, inductor) calls directly."""

from __future__ import annotations

import types

import numpy as np

from fake_torch import _torch_device
from fake_torch._simulated._allocator import DEVICE
from fake_torch._storage import UntypedStorage
from fake_torch._tensor_base import TensorBase as TensorBase
from fake_torch._torch_function import DisableTorchFunction as DisableTorchFunction
from fake_torch._torch_function import (
    DisableTorchFunctionSubclass as DisableTorchFunctionSubclass,
)
from fake_torch._torch_function import (
    _disabled_torch_function_impl as _disabled_torch_function_impl,
)
from fake_torch._torch_function import is_enabled as _is_torch_function_enabled
from fake_torch._torch_function import is_mode_enabled as _is_torch_function_mode_enabled
from fake_torch.amp._state import is_any_autocast_enabled as _is_any_autocast_enabled
from fake_torch.amp._state import is_autocast_available as _is_autocast_available
from fake_torch.backends.cuda import _BlasBackend as _BlasBackend

# the C++ ABI torch 2.13's Linux wheels were built with (torch.compiled_with_cxx11_abi())
_GLIBCXX_USE_CXX11_ABI = True

# torch._C._nn: the bindings of torch.nn.functional's native ops. User code probes it with
# getattr(torch._C._nn, name, None); fake_torch binds none of them there (its ops are Python)
_nn = types.ModuleType("torch._C._nn")

__all__ = ["_GLIBCXX_USE_CXX11_ABI", "DisableTorchFunction", "DisableTorchFunctionSubclass",
           "TensorBase", "_BlasBackend", "_accelerator_getAllocatorSettings",
           "_accelerator_setAllocatorSettings", "_construct_storage_from_data_pointer",
           "_disabled_torch_function_impl", "_host_emptyCache", "_is_any_autocast_enabled",
           "_is_autocast_available", "_is_torch_function_enabled",
           "_is_torch_function_mode_enabled"]


def _construct_storage_from_data_pointer(data_ptr: int, device: _torch_device.device,
                                         size_bytes: int, /) -> UntypedStorage:
    """A storage over `size_bytes` bytes of cuda memory at `data_ptr` that does NOT own them:
    tensors set_ onto it keep no block allocated, so the caching allocator may free the block
    and hand it to a later allocation, which they then see (vLLM's weak_ref_tensor)."""
    if not isinstance(device, _torch_device.device):
        raise TypeError(f"_construct_storage_from_data_pointer(): incompatible function "
                        f"arguments: arg1 must be a torch.device, got {type(device).__name__}")
    dev = _torch_device.canonical(device)
    if dev.type != "cuda":
        raise NotImplementedError(
            "torch._C._construct_storage_from_data_pointer on cpu is not emulated by fake_torch: "
            "it keeps no registry of host buffers to alias safely; cuda memory is supported")
    end = data_ptr + size_bytes
    for pool in DEVICE.pools.values():
        for seg in pool.segments:
            if seg.base <= data_ptr and end <= seg.base + seg.size:
                data = np.frombuffer(seg.mem, np.uint8, size_bytes, data_ptr - seg.base)
                return UntypedStorage._wrap(data, dev, None, resizable=False)
    if size_bytes == 0:  # torch's null pointer of an empty storage: nothing to alias
        return UntypedStorage._wrap(np.empty(0, np.uint8), dev, None, resizable=False)
    spans = sorted((s.base, s.base + s.size) for p in DEVICE.pools.values() for s in p.segments)
    seen = ", ".join(f"[{lo:#x}, {hi:#x})" for lo, hi in spans[:8]) or "none"
    raise RuntimeError(
        f"_construct_storage_from_data_pointer: [{data_ptr:#x}, {end:#x}) is not memory of the "
        f"simulated cuda device; fake_torch aliases only segments its caching allocator reserved "
        f"(segments: {seen}{', ...' if len(spans) > 8 else ''}). Pass a live cuda storage's "
        "data_ptr() and nbytes()")


def _accelerator_setAllocatorSettings(env: str) -> None:
    """Parse `env` as PYTORCH_CUDA_ALLOC_CONF and apply it to the caching allocator."""
    from fake_torch.cuda.memory import set_allocator_settings

    set_allocator_settings(env)


def _accelerator_getAllocatorSettings() -> str:
    """The last allocator setting string parsed ("" when none was)."""
    from fake_torch.cuda.memory import get_allocator_settings

    return get_allocator_settings()


def _host_emptyCache() -> None:
    """Give the pinned host allocator's cached, unused blocks back (torch.cuda.graph calls it
    before each capture)."""
    from fake_torch.cuda.memory import _host_empty_cache

    _host_empty_cache()
