"""torch.xpu: Intel GPUs. fake_torch simulates a CUDA device only, so it answers as torch's
build without XPU support does: no XPU is available, none is counted or initialized."""

from __future__ import annotations

__all__ = ["device_count", "empty_cache", "is_available", "is_initialized", "synchronize"]


def is_available() -> bool:
    """Whether an XPU can be used: never, in fake_torch."""
    return False


def device_count() -> int:
    """The number of XPUs: 0."""
    return 0


def is_initialized() -> bool:
    """Whether the XPU state has been initialized: never."""
    return False


def synchronize(device: object = None) -> None:
    """Wait for an XPU: there is none, so torch's lazy initialisation refuses, as in its build
    without XPU support."""
    raise AssertionError("Torch not compiled with XPU enabled")


def empty_cache() -> None:
    """Release the XPU caching allocator's unused memory: none was ever allocated (torch does
    nothing either while the XPU is uninitialized)."""


def _is_compiled() -> bool:
    """Whether torch was built with XPU support: no."""
    return False
