"""torch.backends.cudnn: cuDNN's flags (module attributes, settable and read back) and version.

    torch.backends.cudnn.benchmark = True
    with torch.backends.cudnn.flags(enabled=False): ...
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["allow_tf32", "benchmark", "benchmark_limit", "depthwise_kernel", "deterministic",
           "enabled", "flags", "fp32_precision", "is_available", "set_flags", "version"]

# cuDNN 9.13.0, as torch encodes it (major * 10000 + minor * 100 + patch): a plausible cuDNN
# for torch 2.13's CUDA 13 wheels; no fake_torch kernel depends on it
_VERSION = 91300

enabled: bool = True
benchmark: bool = False
deterministic: bool = False
allow_tf32: bool = True
benchmark_limit: int = 10
fp32_precision: str = "none"
depthwise_kernel: str = "auto"

# the flags torch checks to be bools, and the setter its error names
# (allow_tf32's names cuBLAS's setter, as torch's does)
_BOOL_FLAGS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
               "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cublas"}


def version() -> int:
    """cuDNN's version as one int (91300 is 9.13.0)."""
    return _VERSION


def is_available() -> bool:
    """True: the simulated CUDA build has cuDNN."""
    return True


def set_flags(_enabled: bool | None = None, _benchmark: bool | None = None,
              _benchmark_limit: int | None = None, _deterministic: bool | None = None,
              _allow_tf32: bool | None = None, _fp32_precision: str = "none",
              _depthwise_kernel: str | None = None) -> tuple[Any, ...]:
    """Set the flags given (not None); return all of them as they were."""
    module = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32",
             "fp32_precision", "depthwise_kernel")
    before = tuple(getattr(module, n) for n in names)
    given = (_enabled, _benchmark, _benchmark_limit, _deterministic, _allow_tf32,
             _fp32_precision, _depthwise_kernel)
    for name, value in zip(names, given, strict=True):
        if value is not None:
            setattr(module, name, value)
    return before


@contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, fp32_precision: str = "none",
          depthwise_kernel: str = "auto") -> Iterator[None]:
    """The flags given, inside the block; back as they were after it."""
    before = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                       fp32_precision, depthwise_kernel)
    try:
        yield
    finally:
        set_flags(*before)


class _CudnnModule(types.ModuleType):
    """This module, checking that its bool flags are set to bools (torch's RuntimeError)."""

    def __setattr__(self, name: str, value: Any) -> None:
        setter = _BOOL_FLAGS.get(name)
        if setter is not None and not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _CudnnModule
