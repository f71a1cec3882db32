"""What the random op modules share: the one-launch `draw`, output buffers, and the range and
dtype checks whose errors match torch's."""

from __future__ import annotations

from typing import Any

from fake_torch import _factories
from fake_torch._dtype import SCALAR_NAME, bool_, dtype, finfo, get_default_dtype, iinfo
from fake_torch._generator import Generator, generator_for
from fake_torch._kernels import _common
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike, canonical, device


def draw(op: str, kernel: Any, out: Tensor, generator: Generator | None,
         inputs: tuple[Any, ...] = (), params: dict[str, Any] | None = None) -> Tensor:
    """One random launch into `out`. The kernel is called as
    kernel(out, philox, *inputs, intra=..., **params): philox is the generator's (seed, offset)
    buffer, read when the kernel runs."""
    philox, intra = generator_for(generator, out.device).philox_args()
    _common.launch(op, kernel, out, (philox, *inputs), {"intra": intra, **(params or {})})
    return out


def new(size: tuple[Any, ...], dt: dtype | None, dev: DeviceLike | None, fn: str) -> Tensor:
    """An output for a factory: `rand(2, 3)` and `rand((2, 3))` alike."""
    shape = _factories._sizes(size, fn)
    return _common.new_tensor(shape, dt or get_default_dtype(), canonical(dev))


def no_out(out: Tensor | None, fn: str) -> None:
    if out is not None:
        raise NotImplementedError(f"torch.{fn}(out=...) is not emulated by fake_torch")


def finish(t: Tensor, requires_grad: bool) -> Tensor:
    """Apply a factory's requires_grad, which torch allows on floating tensors only."""
    if requires_grad and not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return t.requires_grad_(requires_grad)


def fmt(x: float) -> str:
    """A number as torch's C++ messages print it (ostream: 6 significant digits)."""
    return f"{x:g}"


def type_range(dt: dtype) -> tuple[float, float]:
    """(lowest, max) of a dtype, as torch's bounds checks read them."""
    if dt is bool_:
        return 0, 1
    info: finfo | iinfo = finfo(dt) if dt.is_floating_point else iinfo(dt)
    return info.min, info.max


def require_float(dt: dtype, kernel_name: str) -> None:
    """torch's dispatch error for a float-only kernel given an integral dtype."""
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{SCALAR_NAME[dt]}'")


def device_kernel(name: str, dev: device) -> str:
    """A kernel name that names its device, as torch's do ("normal_kernel_cpu")."""
    return name.replace("{dev}", dev.type)
