"""torch.backends.cuda: whether CUDA was built, cuBLAS's precision flags (`matmul`) and the
preferred BLAS library.

    torch.backends.cuda.matmul.allow_tf32 = True   # the same switch as
    torch.set_float32_matmul_precision("high")     # (either reads back through the other)
"""

from __future__ import annotations

import enum
import os
import warnings
from contextlib import AbstractContextManager
from typing import Any

from fake_torch.backends._sdp import (
    SDPBackend,
    cudnn_sdp_enabled,
    enable_cudnn_sdp,
    enable_flash_sdp,
    enable_math_sdp,
    enable_mem_efficient_sdp,
    flash_sdp_enabled,
    math_sdp_enabled,
    mem_efficient_sdp_enabled,
    sdpa_kernel,
)

__all__ = ["cuBLASModule", "cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp",
           "enable_math_sdp", "enable_mem_efficient_sdp", "flash_sdp_enabled", "is_built",
           "math_sdp_enabled", "matmul", "mem_efficient_sdp_enabled", "preferred_blas_library",
           "sdp_kernel"]

_PRECISIONS = ("highest", "high", "medium")


class _State:
    """cuBLAS's flags, with torch's defaults."""

    float32_matmul_precision = "highest"
    fp32_precision = "none"  # "none" until set: then "ieee" or "tf32"
    fp16_reduction = (True, True)  # (allow reduced precision, allow split-k)
    bf16_reduction = (True, True)
    fp16_accumulation = False


class _BlasBackend(enum.Enum):
    """torch._C._BlasBackend: the BLAS library matmuls prefer."""

    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)


_state = _State()
# ATen's Context: cuBLASLt when TORCH_BLAS_PREFER_CUBLASLT (or ..._HIPBLASLT) is set, else Default
_blas_backend = (_BlasBackend.Cublaslt if "1" in (os.environ.get("TORCH_BLAS_PREFER_CUBLASLT"),
                                                 os.environ.get("TORCH_BLAS_PREFER_HIPBLASLT"))
                 else _BlasBackend.Default)
_BLAS_BACKENDS = {"default": _BlasBackend.Default, "cublas": _BlasBackend.Cublas,
                  "hipblas": _BlasBackend.Cublas, "cublaslt": _BlasBackend.Cublaslt,
                  "hipblaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}


def is_built() -> bool:
    """True: fake_torch stands in for a CUDA build (torch.version.cuda)."""
    return True


def get_float32_matmul_precision() -> str:
    """"highest" (float32 matmuls in IEEE float32), "high" or "medium" (TF32 allowed)."""
    return _state.float32_matmul_precision


def set_float32_matmul_precision(precision: str) -> None:
    """Allow TF32 ("high", "medium") for float32 matmuls, or not ("highest")."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _state.float32_matmul_precision = precision
    _state.fp32_precision = "ieee" if precision == "highest" else "tf32"


def preferred_blas_library(backend: str | _BlasBackend | None = None) -> _BlasBackend:
    """Set (by name or torch._C._BlasBackend) and return the BLAS library matmuls prefer;
    "default" reads back as cuBLAS, as ATen resolves it. fake_torch runs every matmul the
    same way whichever is preferred."""
    global _blas_backend
    if backend is None:
        pass
    elif isinstance(backend, str):
        if backend not in _BLAS_BACKENDS:
            raise RuntimeError("Unknown input value. Choose from: "
                               f"{', '.join(_BLAS_BACKENDS)}.")
        _blas_backend = _BLAS_BACKENDS[backend]
    elif isinstance(backend, _BlasBackend):
        _blas_backend = backend
    else:
        raise RuntimeError("Unknown input value type.")
    if _blas_backend is _BlasBackend.Default:  # Context::blasPreferredBackend
        _blas_backend = _BlasBackend.Cublas
    return _blas_backend


def _bool(value: object, setter: str) -> bool:
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
    return value


def _reduction(value: object, name: str) -> tuple[bool, bool]:
    """A flag, or (flag,) / (flag, allow_split_k), as torch parses them."""
    if isinstance(value, bool):
        return value, True
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{name} expects at most two boolean arguments")
        for flag, which in zip(value, ("allow_reduced_precision", "allow_splitk"), strict=False):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} expects a bool for {which}, but got {type(flag)!r}")
        return value[0], value[1] if len(value) == 2 else True
    raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


class cuBLASModule:
    """`torch.backends.cuda.matmul`: cuBLAS's flags as attributes, settable and read back."""

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return _state.float32_matmul_precision != "highest"
        if name == "allow_fp16_reduced_precision_reduction":
            return _state.fp16_reduction[0]
        if name == "allow_fp16_reduced_precision_reduction_split_k":
            return _state.fp16_reduction[1]
        if name == "allow_bf16_reduced_precision_reduction":
            return _state.bf16_reduction[0]
        if name == "allow_bf16_reduced_precision_reduction_split_k":
            return _state.bf16_reduction[1]
        if name == "allow_fp16_accumulation":
            return _state.fp16_accumulation
        if name == "fp32_precision":
            return _state.fp32_precision
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            tf32 = _bool(value, "set_allow_tf32_cublas")
            _state.float32_matmul_precision = "high" if tf32 else "highest"
            _state.fp32_precision = "tf32" if tf32 else "ieee"
        elif name == "allow_fp16_reduced_precision_reduction":
            _state.fp16_reduction = _reduction(value, name)
        elif name == "allow_bf16_reduced_precision_reduction":
            _state.bf16_reduction = _reduction(value, name)
        elif name == "allow_fp16_accumulation":
            _state.fp16_accumulation = _bool(value, "set_allow_fp16_accumulation_cublas")
        elif name == "fp32_precision":
            if value not in ("none", "ieee", "tf32"):
                raise RuntimeError(f"Unknown precision: {value}")
            _state.fp32_precision = value
            _state.float32_matmul_precision = "high" if value == "tf32" else "highest"
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()


def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> AbstractContextManager[dict[str, Any]]:
    """Deprecated in torch (a FutureWarning when called): torch.nn.attention.sdpa_kernel with
    the backends enabled here (the overrideable one off), the flags before restored after."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` "
                  "for the new context manager, with updated signature.", FutureWarning,
                  stacklevel=2)
    flags = ((enable_flash, SDPBackend.FLASH_ATTENTION),
             (enable_mem_efficient, SDPBackend.EFFICIENT_ATTENTION),
             (enable_math, SDPBackend.MATH), (enable_cudnn, SDPBackend.CUDNN_ATTENTION))
    return sdpa_kernel([backend for on, backend in flags if on])
