"""The scaled-dot-product-attention backends torch.backends.cuda lets a program switch off
(enable_flash_sdp, enable_mem_efficient_sdp, enable_math_sdp, enable_cudnn_sdp), all on by
default as in torch, and their priority order. fake_torch's SDPA (fake_torch/nn/_attention.py)
picks, in that order, the first enabled backend whose constraints hold (never cuDNN's nor the
overrideable one, as torch's CUDA build on an H200 does with the default order).

`SDPBackend` and `sdpa_kernel` (torch.nn.attention's, which re-exports them) live here, below
nn, so that torch.backends.cuda.sdp_kernel can use them."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_enabled = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True,
            "overrideable": True}


class SDPBackend(enum.Enum):
    """torch.nn.attention.SDPBackend: the backends of scaled_dot_product_attention (a pybind
    enum in torch: int() of one is its value, yet it does not equal that int)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)

    def __hash__(self) -> int:
        return hash(self.value)


# flag name -> backend, in the order torch's sdpa_kernel sets them
_BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
             "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
             "overrideable": SDPBackend.OVERRIDEABLE}
# ATen's default priority: flash, efficient, math, cudnn, overrideable (torch._C.
# _get_sdp_priority_order)
_priority = [1, 2, 0, 3, 4]


def priority_order() -> list[SDPBackend]:
    """The backends in the order SDPA tries them."""
    return [SDPBackend(v) for v in _priority]


def _backends_now(with_priority: bool) -> list[SDPBackend]:
    found = [b for name, b in _BACKENDS.items() if _enabled[name]]
    if with_priority:
        found.sort(key=lambda b: _priority.index(int(b)))
    return found


def _select(backends: list[SDPBackend], set_priority: bool) -> None:
    global _priority
    for name, backend in _BACKENDS.items():
        _enabled[name] = backend in backends
    if set_priority:
        given = [int(b) for b in backends]
        _priority = given + [v for v in _priority if v not in given]


@contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend,
                set_priority: bool = False) -> Iterator[dict[str, Any]]:
    """torch.nn.attention.sdpa_kernel: inside the block only `backends` are enabled (and,
    with set_priority, tried in their order); the flags (and order) before come back after."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    chosen = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    before = _backends_now(with_priority=set_priority)
    try:
        _select(chosen, set_priority)
        yield {}
    finally:
        _select(before, set_priority)


def _set(name: str, enabled: bool) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"enable_{name}_sdp(): argument 'enabled' must be bool, not "
                        f"{type(enabled).__name__}")
    _enabled[name] = enabled


def enabled(name: str) -> bool:
    return _enabled[name]


def enable_flash_sdp(enabled: bool) -> None:
    """Turn the flash attention backend of SDPA on or off."""
    _set("flash", enabled)


def flash_sdp_enabled() -> bool:
    return _enabled["flash"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Turn the memory-efficient attention backend of SDPA on or off."""
    _set("mem_efficient", enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _enabled["mem_efficient"]


def enable_math_sdp(enabled: bool) -> None:
    """Turn the math (composite) backend of SDPA on or off."""
    _set("math", enabled)


def math_sdp_enabled() -> bool:
    return _enabled["math"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Turn the cuDNN attention backend of SDPA on or off (fake_torch never picks it)."""
    _set("cudnn", enabled)


def cudnn_sdp_enabled() -> bool:
    return _enabled["cudnn"]
