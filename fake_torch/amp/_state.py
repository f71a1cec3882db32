"""Autocast's state, as torch keeps it: per thread, whether autocast is on for each device
type and the lower-precision dtype it casts to; whether the weight-cast cache is used; how
deep the `autocast` blocks nest. The cache itself is shared by all threads (as torch's).

These are torch's functions of the same names (`torch.is_autocast_enabled("cuda")`, ...).
Turning autocast on for any device type installs the casting layer (fake_torch.amp._policy)
below this thread's TorchFunctionModes; turning the last one off removes it, so code that
never autocasts pays nothing.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING

from fake_torch import _torch_function
from fake_torch._dtype import bfloat16, dtype, float16
from fake_torch._dtype import dtype as _dtype
from fake_torch._torch_device import _KNOWN

if TYPE_CHECKING:
    from fake_torch._tensor import Tensor

# torch's autocast device types, in its order, with each one's default lower-precision dtype
DEFAULT_DTYPES: dict[str, dtype] = {
    "cpu": bfloat16, "cuda": float16, "mtia": float16, "maia": bfloat16, "xpu": float16,
    "ipu": float16, "hpu": bfloat16, "xla": bfloat16, "privateuseone": float16, "mps": float16,
}


class _Local(threading.local):
    def __init__(self) -> None:
        self.enabled: set[str] = set()  # device types autocast is on for
        self.dtypes: dict[str, dtype] = dict(DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0


_local = _Local()
_cache_lock = threading.Lock()
# id(fp32 leaf weight) -> (the weight, its cast): the weight is held, so its id cannot be
# reused by another tensor while the entry lives (torch holds a weak reference for the same
# reason); emptied when the outermost autocast block exits
_cache: dict[int, tuple[Tensor, Tensor]] = {}


def _device_type(device_type: object) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"is_autocast_enabled(): argument 'device_type' (position 1) must be "
                        f"str, not {type(device_type).__name__}")
    kind = device_type.partition(":")[0]
    if kind not in _KNOWN.split(", "):
        raise RuntimeError(f"Expected one of {_KNOWN} device type at start of device string: "
                           f"{device_type}")
    return kind


def _autocast_type(device_type: object) -> str:
    kind = _device_type(device_type)
    if kind not in DEFAULT_DTYPES:
        raise RuntimeError("unknown device type for autocast in "
                           "get_autocast_dispatch_key_from_device_type")
    return kind


def _sync_layer() -> None:
    from fake_torch.amp import _policy

    _torch_function.set_layer(_policy.run if _local.enabled else None)


def enabled_types() -> set[str]:
    """The device types autocast is on for, on this thread (the layer reads it per call)."""
    return _local.enabled


def is_autocast_available(device_type: str) -> bool:
    """torch._C._is_autocast_available: whether autocast has a dispatch key for the type."""
    return _device_type(device_type) in DEFAULT_DTYPES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Autocast is on for `device_type` on this thread (no argument: "cuda", the legacy form)."""
    return _autocast_type("cuda" if device_type is None else device_type) in _local.enabled


def set_autocast_enabled(device_type: str | bool, enabled: bool | None = None) -> None:
    """Turn autocast on or off for `device_type` on this thread (`set_autocast_enabled(True)`:
    the legacy form, for "cuda")."""
    if isinstance(device_type, bool) and enabled is None:
        return set_autocast_enabled("cuda", device_type)
    if not isinstance(enabled, bool):
        position, got = (1, type(device_type)) if enabled is None else (2, type(enabled))
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' (position {position}) must "
                        f"be bool, not {got.__name__}")
    kind = _autocast_type(device_type)
    if enabled:
        _local.enabled.add(kind)
    else:
        _local.enabled.discard(kind)
    _sync_layer()


def is_any_autocast_enabled() -> bool:
    """torch._C._is_any_autocast_enabled."""
    return bool(_local.enabled)


def get_autocast_dtype(device_type: str) -> dtype:
    kind = _device_type(device_type)
    if kind not in DEFAULT_DTYPES:
        raise RuntimeError("unsupported scalarType")
    return _local.dtypes[kind]


def set_autocast_dtype(device_type: str, dtype: dtype) -> None:
    if not isinstance(dtype, _dtype):
        raise TypeError("set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    _local.dtypes[_autocast_type(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    return _local.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _local.cache_enabled = bool(enabled)


def autocast_increment_nesting() -> int:
    _local.nesting += 1
    return _local.nesting


def autocast_decrement_nesting() -> int:
    _local.nesting -= 1
    return _local.nesting


def clear_autocast_cache() -> None:
    with _cache_lock:
        _cache.clear()


def cached(arg: Tensor) -> Tensor | None:
    with _cache_lock:
        hit = _cache.get(id(arg))
    return hit[1] if hit is not None and hit[0] is arg else None


def remember(arg: Tensor, cast: Tensor) -> None:
    with _cache_lock:
        _cache[id(arg)] = (arg, cast)


def is_cached(t: Tensor) -> bool:
    """`t` is a cast the cache holds (torch does not cache a cast of a cached cast)."""
    with _cache_lock:
        return any(cast is t for _, cast in _cache.values())


# --- torch's deprecated per-device forms ------------------------------------------------------

def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return "cpu" in _local.enabled


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> dtype:
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _local.dtypes["cpu"]


def set_autocast_cpu_dtype(dtype: dtype) -> None:
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _local.dtypes["cpu"] = dtype


def get_autocast_gpu_dtype() -> dtype:
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _local.dtypes["cuda"]


def set_autocast_gpu_dtype(dtype: dtype) -> None:
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _local.dtypes["cuda"] = dtype
