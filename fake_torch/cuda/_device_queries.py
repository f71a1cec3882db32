"""torch.cuda device queries for the one simulated GPU, cuda:0.

The device reports itself as the simulated GPU (fake_torch/_simulated/_gpus.py: an H100 80GB unless
FAKE_TORCH_GPU or `set_simulated_gpu` names another): its name, compute capability, SMs and L2;
its memory size is the simulated allocator's (the GPU's, unless FAKE_TORCH_DEVICE_MEMORY or
`set_simulated_device_memory` says otherwise).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fake_torch import _torch_stream
from fake_torch._simulated import _dispatch, _gpus
from fake_torch._simulated._allocator import DEVICE
from fake_torch._torch_device import device as torch_device
from fake_torch.utils import _device as _default_device

_INVALID_ORDINAL = ("CUDA error: invalid device ordinal\n"
                    "CUDA kernel errors might be asynchronously reported at some other API call, "
                    "so the stacktrace below might be incorrect.\n"
                    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")

_initialized = False


@dataclass(frozen=True)
class _CudaDeviceProperties:
    """What torch.cuda.get_device_properties reports (the commonly read fields)."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int
    max_threads_per_multi_processor: int = 2048
    max_threads_per_block: int = 1024
    warp_size: int = 32
    regs_per_multiprocessor: int = 65536
    shared_memory_per_block: int = 49152
    shared_memory_per_block_optin: int = 232448
    shared_memory_per_multiprocessor: int = 233472
    L2_cache_size: int = 50 * 1024 * 1024
    is_integrated: int = 0
    is_multi_gpu_board: int = 0

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    """Whether CUDA state was initialised: by `init()` or a query that needs the device."""
    return _initialized


def _lazy_call(callable: Callable[[], Any], **kwargs: Any) -> None:
    """Run `callable` once CUDA is initialised (torch queues it until then). fake_torch's
    simulated device exists from import on, so there is nothing to wait for: it runs now
    (fairscale seeds its model-parallel generators this way)."""
    callable()


def init() -> None:
    """Initialise CUDA state (a no-op beyond `is_initialized()` turning True)."""
    global _initialized
    _initialized = True


def device_count() -> int:
    return 1


def current_device() -> int:
    init()
    return 0


_default_device.current_device = current_device  # torch.device("cuda") as a default


def _device_index(dev: Any, optional: bool = False) -> int:
    """torch.cuda._utils._get_device_index: an int, 'cuda:N', torch.device or (optional) None."""
    if isinstance(dev, device):
        return dev.idx
    if isinstance(dev, str):
        dev = torch_device(dev)
    index = dev
    if isinstance(dev, torch_device):
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        index = dev.index
    if isinstance(index, int) and not isinstance(index, bool):
        return index
    if index is None and optional:
        return current_device()
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:"
                     f"{dev}")


def _exchange_device(idx: int) -> int:
    """Make `idx` current (negative: no change); return the previous device index."""
    init()
    if idx >= device_count():
        raise RuntimeError(_INVALID_ORDINAL)
    return 0 if idx >= 0 else -1


def set_device(device: Any) -> None:
    """Select the current device: only cuda:0 exists (negative indices are a no-op)."""
    _exchange_device(_device_index(device))


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    init()
    idx = _device_index(device, optional=True)
    if idx < 0 or idx >= device_count():
        raise AssertionError("Invalid device id")
    spec = _gpus.current()
    return _CudaDeviceProperties(name=f"{spec.name} (fake_torch simulated)", major=spec.major,
                                 minor=spec.minor, total_memory=DEVICE.total_bytes,
                                 multi_processor_count=spec.sm_count, L2_cache_size=spec.l2_bytes)


def set_simulated_gpu(name: str) -> None:
    """fake_torch only: simulate the GPU `name` (one of H200, H100, A100, L4) from now on: its
    name, properties and memory size (unless FAKE_TORCH_DEVICE_MEMORY fixes the size), and the
    bandwidth and peaks that kernel times are modelled from. The FAKE_TORCH_GPU environment
    variable chooses the same at start-up."""
    spec = _gpus.select(name)
    if "FAKE_TORCH_DEVICE_MEMORY" not in os.environ:
        DEVICE.total_bytes = spec.total_memory


def get_device_name(device: Any = None) -> str:
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple[int, int]:
    props = get_device_properties(device)
    return props.major, props.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


def synchronize(device: Any = None) -> None:
    """The host waits for all queued device work: a host sync (illegal while capturing)."""
    init()
    with _DeviceGuard(device):
        _dispatch.host_sync("synchronize", device=True)
    if _torch_stream.sync_observer is not None:
        _torch_stream.sync_observer.synchronize()


class device:
    """Context manager that selects a device (None or a negative index: no change)."""

    def __init__(self, device: Any) -> None:
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        self.prev_idx = _exchange_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        self.idx = self.prev_idx


_DeviceGuard = device  # for functions whose `device` parameter hides the class


class device_of(device):
    """Context manager that selects the device of a tensor (a cpu tensor: no change)."""

    def __init__(self, obj: Any) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)
