"""Window functions for spectral analysis (whisper's log-mel front end: torch.hann_window), as
ATen's composites build them (aten/src/ATen/native/TensorFactories.cpp): an arange, then
in-place mul_, cos_, mul_, add_ (five launches; one `ones` for a window of 1, none for 0). A
periodic window is the symmetric one of length + 1 without its last element (a view).
"""

from __future__ import annotations

import math
from typing import Any

from fake_torch._dtype import CPP_NAME, dtype, get_default_dtype
from fake_torch._factories import arange, empty, finish, ones
from fake_torch._kernels.arith import add_, mul_
from fake_torch._kernels.pointwise_math import cos_
from fake_torch._kernels.split import narrow
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike, canonical


def _checks(fname: str, window_length: Any, dt: dtype, dev: DeviceLike | None) -> None:
    if isinstance(window_length, bool) or not isinstance(window_length, int):
        raise TypeError(f"{fname}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if not dt.is_floating_point:
        raise RuntimeError(f"{fname} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{CPP_NAME[dt]}, device={canonical(dev)}, layout=Strided (default), "
                           "requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{fname} requires non-negative window_length, got "
                           f"window_length={window_length}")


@op(COMPOSITE)
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: dtype | None = None, layout: Any = None,
                   device: DeviceLike | None = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """alpha - beta * cos(2 pi n / (N - 1)), n = 0 .. N-1 (N = window_length, + 1 when
    periodic, the last point then dropped)."""
    return _hamming("hamming_window", window_length, periodic, alpha, beta, dtype, device,
                    requires_grad)


@op(COMPOSITE)
def hann_window(window_length: int, periodic: bool = True, *, dtype: dtype | None = None,
                layout: Any = None, device: DeviceLike | None = None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    """The Hann window: hamming_window with alpha = beta = 0.5."""
    _checks("hann_window", window_length, dtype or get_default_dtype(), device)
    return _hamming("hamming_window", window_length, periodic, 0.5, 0.5, dtype, device,
                    requires_grad)


@register_meta("torch.hamming_window")
def _hamming_window_rule(window_length: int, periodic: bool = True, alpha: float = 0.54,
                         beta: float = 0.46, *, dtype: dtype | None = None, layout: Any = None,
                         device: DeviceLike | None = None, pin_memory: bool = False,
                         requires_grad: bool = False) -> TensorMeta:
    return _window_meta("hamming_window", window_length, dtype, device)


@register_meta("torch.hann_window")
def _hann_window_rule(window_length: int, periodic: bool = True, *, dtype: dtype | None = None,
                      layout: Any = None, device: DeviceLike | None = None,
                      pin_memory: bool = False, requires_grad: bool = False) -> TensorMeta:
    _checks("hann_window", window_length, dtype or get_default_dtype(), device)
    return _window_meta("hamming_window", window_length, dtype, device)


def _window_meta(fname: str, window_length: int, dt: dtype | None,
                 dev: DeviceLike | None) -> TensorMeta:
    """A window: a fresh 1-D tensor of window_length points (a periodic one's last cut off
    keeps stride 1)."""
    dt = dt or get_default_dtype()
    _checks(fname, window_length, dt, dev)
    return TensorMeta((window_length,), dt, (1,))


def _hamming(fname: str, window_length: int, periodic: bool, alpha: float, beta: float,
             dt: dtype | None, dev: DeviceLike | None, requires_grad: bool) -> Tensor:
    dt = dt or get_default_dtype()
    _checks(fname, window_length, dt, dev)
    if window_length == 0:
        return empty(0, dtype=dt, device=dev, requires_grad=requires_grad)
    if window_length == 1:
        return ones(1, dtype=dt, device=dev, requires_grad=requires_grad)
    n = window_length + 1 if periodic else window_length
    window = arange(n, dtype=dt, device=dev)
    add_(mul_(cos_(mul_(window, math.pi * 2.0 / (n - 1))), -beta), alpha)
    return finish(narrow(window, 0, 0, n - 1) if periodic else window, requires_grad)
