"""torch.get_device_module: the `torch.<device type>` module of a device (torch.cuda for
"cuda:1", torch.cpu for "cpu"; the accelerator's, cuda, by default)."""

from __future__ import annotations

import functools
import sys
from types import ModuleType

from fake_torch._torch_device import device as _device_type


@functools.cache
def get_device_module(device: _device_type | str | None = None) -> ModuleType:
    """The module of `device`'s type, looked up on the torch namespace as torch does."""
    if isinstance(device, _device_type):
        name = device.type
    elif isinstance(device, str):
        name = _device_type(device).type
    elif device is None:
        name = "cuda"  # torch._C._get_accelerator(): fake_torch simulates a CUDA device
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    module = getattr(sys.modules[__name__.rpartition(".")[0]], name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.")
    return module  # type: ignore[no-any-return]

