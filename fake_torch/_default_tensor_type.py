"""torch.set_default_tensor_type: the legacy way (deprecated since torch 2.1) to pick the dtype
and device that factories use when given none, still called by Meta's Llama reference code
(`torch.set_default_tensor_type(torch.cuda.HalfTensor)`).

A floating legacy type sets the default dtype; a torch.cuda one also makes cuda the default
device (as torch's default backend does), which fake_torch keeps as `set_default_device` keeps
it. A later cpu type puts the device back only if this function had set it: a default device
set with `set_default_device` stays, as in torch, whose device context wins over the legacy
backend.
"""

from __future__ import annotations

import warnings
from typing import Any

import fake_torch
from fake_torch._dtype import set_default_dtype
from fake_torch._legacy_types import tensortype
from fake_torch.utils._device import _GLOBAL_DEVICE_CONTEXT, set_default_device

_INVALID = "only floating-point types are supported as the default type"
_set_here: list[Any] = []  # the device context this function set, while it is the default
_warned: list[bool] = []


def set_default_tensor_type(t: type | str, /) -> None:
    """Make the legacy type `t` (or its name, "torch.cuda.HalfTensor") the default: its dtype
    for factories' floats, and on cuda the default device."""
    if isinstance(t, str):
        t = _named(t)
    if not _warned:  # torch warns once a process (TORCH_WARN_ONCE)
        _warned.append(True)
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=2)
    if not isinstance(t, tensortype):
        raise TypeError(f"invalid type object: {_INVALID}")
    if not t.dtype.is_floating_point:
        raise TypeError(_INVALID)
    set_default_dtype(t.dtype)
    ours = bool(_set_here) and _GLOBAL_DEVICE_CONTEXT.device_context is _set_here[0]
    if t.is_cuda:
        set_default_device("cuda")
        _set_here[:] = [_GLOBAL_DEVICE_CONTEXT.device_context]
    elif ours:
        set_default_device(None)
        _set_here.clear()


def _named(name: str) -> Any:
    """`torch.cuda.HalfTensor` by its dotted name, as torch's _import_dotted_name finds it."""
    parts = name.split(".")
    obj: Any = fake_torch if parts[0] == "torch" else __import__(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        if not hasattr(obj, part):
            owner = ".".join(["torch" if parts[0] == "torch" else parts[0], *parts[1:i]])
            raise AttributeError(f"module '{owner}' has no attribute '{part}'")
        obj = getattr(obj, part)
    return obj
