"""torch.xpu: Intel GPUs. fake_torch simulates a CUDA device only, so it answers as torch's
build without XPU support does: no XPU is available, none is counted or initialized."""

from __future__ import annotations

__all__ = ["device_count", "is_available", "is_initialized"]


def is_available() -> bool:
    """Whether an XPU can be used: never, in fake_torch."""
    return False


def device_count() -> int:
    """The number of XPUs: 0."""
    return 0


def is_initialized() -> bool:
    """Whether the XPU state has been initialized: never."""
    return False


def _is_compiled() -> bool:
    """Whether torch was built with XPU support: no."""
    return False
