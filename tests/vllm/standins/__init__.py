"""Stand-ins for the three pieces of vLLM that need a real GPU stack (issue 14), installed into
`sys.modules` before vLLM is imported. Each keeps the contract vLLM's code relies on, written
here from that contract, and nothing more:

  - the CUDA platform's compiled kernels (`vllm._C_stable_libtorch`): of its ops, the CUDA-graph
    path calls `torch.ops._C.weak_ref_tensor`, a tensor that aliases another's memory without
    keeping it allocated; registered here with torch.library on top of
    `torch._C._construct_storage_from_data_pointer` (which fake_torch emulates). Its CUTLASS
    capability queries (`cutlass_scaled_mm_supports_fp8` and kin, asked when vLLM's quantization
    utilities are imported) answer that the kernels are not there. Its compiled
    flash-attention (`vllm.vllm_flash_attn`) is imported on CUDA platforms by the compilation
    passes; its functions raise when called (no test here calls them);
  - NCCL's graph-pool registration (`...device_communicators.pynccl_allocator`): with one GPU and
    no NCCL there is no symmetric-memory pool to point at the capture's graph pool; the stand-in
    records the id it is given, so a test can see that capture passed it on;
  - the LoRA utilities (`vllm.lora.utils`), whose import pulls vLLM's quantization kernels: the
    dispatcher needs only `get_captured_lora_counts` (powers of two up to max_loras plus
    max_loras + 1 when specializing, else just max_loras + 1).
The platform object itself is vLLM's own NonNvmlCudaPlatform (it asks torch.cuda, not NVML).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from . import kernels

GRAPH_POOL_IDS: list[Any] = []  # what capture handed to NCCL's allocator, in order


def _weak_ref_tensor(t: Any) -> Any:
    import torch

    storage = t.untyped_storage()
    weak = torch._C._construct_storage_from_data_pointer(storage.data_ptr(), t.device,
                                                          storage.nbytes())
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(
        weak, t.storage_offset(), t.size(), t.stride())


# vLLM's questions to its compiled CUTLASS kernels ("does this GPU's capability have kernel X?"),
# asked when its quantization utilities are imported: none of those kernels exist here, so no
_CAPABILITY_QUERIES = ("cutlass_group_gemm_supported", "cutlass_scaled_mm_supports_block_fp8",
                       "cutlass_scaled_mm_supports_fp4", "cutlass_scaled_mm_supports_fp8")


def _not_supported(cuda_device_capability: int) -> bool:
    return False


def _compiled_kernels() -> types.ModuleType:
    import torch

    mod = types.ModuleType("vllm._C_stable_libtorch")
    lib = torch.library.Library("_C", "FRAGMENT")
    lib.define("weak_ref_tensor(Tensor input) -> Tensor")
    lib.impl("weak_ref_tensor", _weak_ref_tensor, "CUDA")
    # the fused kernels vLLM's compilation passes match patterns against: vLLM's schemas,
    # plain-torch bodies (see kernels.py)
    kernels.register(lib)
    for name in _CAPABILITY_QUERIES:
        lib.define(f"{name}(int cuda_device_capability) -> bool")
        lib.impl(name, _not_supported, "CompositeExplicitAutograd")
    mod.__dict__["_lib"] = lib  # the registrations live as long as the module
    return mod


def _flash_attention() -> types.ModuleType:
    mod = types.ModuleType("vllm.vllm_flash_attn")

    def refused(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError(f"vllm.vllm_flash_attn.{name}: vLLM's compiled "
                                      "flash-attention kernels are not part of this check")
        return call

    names = ("compile_flash_attn_varlen_func_from_specs", "flash_attn_varlen_func",
             "get_scheduler_metadata", "fa_version_unsupported_reason",
             "is_fa_version_supported", "flash_attn_with_kvcache")
    mod.__dict__.update({name: refused(name) for name in names})
    mod.__dict__.update(FA2_AVAILABLE=False, FA3_AVAILABLE=False)
    return mod


def _nccl_pool_registration() -> types.ModuleType:
    mod = types.ModuleType("vllm.distributed.device_communicators.pynccl_allocator")

    def set_graph_pool_id(graph_pool_id: Any) -> None:
        GRAPH_POOL_IDS.append(graph_pool_id)

    def is_symmetric_memory_enabled() -> bool:
        return False

    mod.__dict__.update(set_graph_pool_id=set_graph_pool_id,
                        is_symmetric_memory_enabled=is_symmetric_memory_enabled)
    return mod


def _lora_utils() -> types.ModuleType:
    mod = types.ModuleType("vllm.lora.utils")

    def get_captured_lora_counts(max_loras: int, specialize: bool) -> list[int]:
        if not specialize:
            return [max_loras + 1]
        return [n for n in range(1, max_loras + 2)
                if n & (n - 1) == 0 or n == max_loras + 1]

    mod.__dict__["get_captured_lora_counts"] = get_captured_lora_counts
    return mod


def install() -> None:
    """Put the three stand-ins in place; call after fake_torch.install(), before vLLM."""
    for module in (_compiled_kernels(), _flash_attention(), _nccl_pool_registration(),
                   _lora_utils()):
        sys.modules[module.__name__] = module


def use_cuda_platform() -> Any:
    """Make vLLM's current_platform its NonNvmlCudaPlatform (vLLM's own class)."""
    import vllm.platforms
    from vllm.platforms.cuda import NonNvmlCudaPlatform

    vllm.platforms._current_platform = NonNvmlCudaPlatform()
    return vllm.platforms._current_platform
