"""The scaled-dot-product-attention backends torch.backends.cuda lets a program switch off
(enable_flash_sdp, enable_mem_efficient_sdp, enable_math_sdp, enable_cudnn_sdp), all on by
default as in torch. fake_torch's SDPA (fake_torch/nn/_attention.py) picks the first enabled
backend whose constraints hold."""

from __future__ import annotations

_enabled = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


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
