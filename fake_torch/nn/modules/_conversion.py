"""Module.to / cuda / half ...: parse `to`'s overloads, and convert one module's own tensors.

Each tensor goes through Tensor.to, so the launches are torch's: one copy per tensor that moves
or changes dtype, none for a tensor already where and what it should be. A Parameter keeps its
identity (torch's `param.data = converted`), so optimisers and views of the module stay valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fake_torch._dtype import dtype, dtype_arg
from fake_torch._memory_format import memory_format
from fake_torch._tensor import Tensor
from fake_torch._torch_device import canonical, device
from fake_torch.nn.parameter import Parameter

if TYPE_CHECKING:
    from fake_torch.nn.modules.module import Module


def apply_to_tensors(module: Module, fn: Callable[[Tensor], Tensor]) -> None:
    """Replace this module's own parameters' data and buffers by `fn` of them. A parameter
    moved onto or off the meta device is a new Parameter (torch cannot shallow-copy a meta
    tensor into a dense one, so `param.data = ...` is not an option there either)."""
    for key, param in module._parameters.items():
        if param is None:
            continue
        applied = fn(param)
        if (applied._device.type == "meta") != (param._device.type == "meta"):
            grad = param.grad
            param = module._parameters[key] = Parameter(applied, param.requires_grad)
            param.grad = None if grad is None else fn(grad)
            continue
        if applied is not param:
            requires_grad = param.requires_grad
            if requires_grad and not (applied.dtype.is_floating_point
                                      or applied.dtype.is_complex):  # torch's `param.data =`
                raise RuntimeError("data set to a tensor that requires gradients must be "
                                   "floating point or complex dtype")
            param._set(applied._a, applied._device, applied._storage)
            param.requires_grad = requires_grad
        if param.grad is not None:
            param.grad = fn(param.grad)
    for key, buf in module._buffers.items():
        if buf is not None:
            module._buffers[key] = fn(buf)


def parse_to(*args: Any, **kwargs: Any
             ) -> tuple[device | None, dtype | None, bool, memory_format | None]:
    """torch._C._nn._parse_to: (device, dtype, non_blocking, memory_format) from
    `to(device, dtype, non_blocking)`, `to(dtype, non_blocking)` or `to(tensor,
    non_blocking)`, each with an optional `memory_format=`."""
    dev: Any = kwargs.pop("device", None)
    dt: Any = dtype_arg(kwargs.pop("dtype", None))
    non_blocking = bool(kwargs.pop("non_blocking", False))
    fmt = kwargs.pop("memory_format", None)
    if fmt is not None and not isinstance(fmt, memory_format):
        raise TypeError("to() received an invalid combination of arguments - got "
                        f"(memory_format={type(fmt).__name__}, ), but expected one of:")
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = [dtype_arg(a) for a in args[:2]] + list(args[2:])  # `to(float)`: float64
    if rest and isinstance(rest[0], Tensor):
        t = rest.pop(0)
        dev, dt = t.device, t.dtype
    elif rest and isinstance(rest[0], dtype):
        dt = rest.pop(0)
    elif rest and (rest[0] is None or (isinstance(rest[0], (str, device, int))
                                       and not isinstance(rest[0], bool))):
        dev = rest.pop(0)
        if rest and (rest[0] is None or isinstance(rest[0], dtype)):
            dt = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError("to() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)})")
    return (None if dev is None else canonical(dev)), dt, non_blocking, fmt
