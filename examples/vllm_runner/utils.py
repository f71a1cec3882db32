"""weak_ref_tensors: tensors that alias memory without keeping it allocated.

vLLM has a C++ op for this; torch's own route (inductor's CUDA graph trees take it) is a storage
built from a bare data pointer, which owns nothing: when the last real owner goes, the caching
allocator takes the block back and may hand it out again, and the weak tensor sees whatever is
written there next. That is what a CUDA graph output is anyway: the next replay overwrites it.
"""

from __future__ import annotations

from typing import Any

import torch


def weak_ref_tensor(t: torch.Tensor) -> torch.Tensor:
    storage = t.untyped_storage()
    weak = torch._C._construct_storage_from_data_pointer(storage.data_ptr(), t.device,
                                                          storage.nbytes())
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(
        weak, t.storage_offset(), t.size(), t.stride())


def weak_ref_tensors(value: Any) -> Any:
    """`value` with each tensor (alone, or in a tuple or list) replaced by a weak reference."""
    if isinstance(value, torch.Tensor):
        return weak_ref_tensor(value)
    if isinstance(value, (tuple, list)):
        return type(value)(weak_ref_tensors(v) for v in value)
    return value
