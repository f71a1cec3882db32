"""torch.device: "cpu", the simulated "cuda" devices (cuda:0 .. cuda:n-1) and "meta"
(tensors with shape, dtype and strides but no data: fake_torch/_meta.py); a context manager that
sets the default device of a block."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch import _torch_function
from fake_torch._simulated import _machine

_KNOWN = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
          "vulkan, mps, meta, hpu, mtia, privateuseone")


# torch.utils._device.DeviceContext, the mode `with torch.device(d):` pushes: fake_torch/utils/
# _device.py registers it when imported (it sits above torch.device: fake_torch/_tools/_layers.py)
device_context: Callable[[device], Any] | None = None


class device:
    """`torch.device("cuda")`, `torch.device("cuda:0")`, `torch.device("cpu")`."""

    __slots__ = ("index", "type")
    index: int | None
    type: str

    def __init__(self, type: str | device | int, index: int | None = None) -> None:
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            self.type, self.index = "cuda", type  # torch.device(0) is cuda:0
            return
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({type.__class__.__name__})")
        kind, colon, idx = type.partition(":")
        # c10's grammar: a name of letters and '_', then optionally ':' and an index (digits,
        # no leading zero)
        if not type:
            raise RuntimeError("Device string must not be empty")
        if not (kind and kind.isascii() and kind.replace("_", "a").isalpha()) or (
                colon and not idx) or (len(idx) > 1 and idx.startswith("0")):
            raise RuntimeError(f"Invalid device string: '{type}'")
        if kind not in ("cpu", "cuda", "meta"):
            if kind in _KNOWN.split(", "):
                raise NotImplementedError(f"torch.device({type!r}): fake_torch simulates only "
                                          "'cpu', 'cuda' and 'meta'")
            raise RuntimeError(f"Expected one of {_KNOWN} device type at start of device "
                               f"string: {kind}")
        if idx:
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            index = int(idx)
        self.type, self.index = kind, index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple[Any, tuple[str | int, ...]]:
        """Pickled as torch pickles it: device('cuda', 0), device('cpu')."""
        return (device, (self.type,) if self.index is None else (self.type, self.index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __enter__(self) -> device:
        """`with torch.device("cuda"):` factories called without `device=` in the block use
        this device (a DeviceContext pushed on this thread's mode stack; see
        fake_torch.utils._device)."""
        assert device_context is not None, "fake_torch/utils/_device.py registers it"
        _torch_function.push_mode(device_context(self))
        return self

    def __exit__(self, exc_type: object, exc_val: object, exc_tb: object) -> None:
        _torch_function.pop_mode()


DeviceLike = device | str | int

CPU = device("cpu")
CUDA0 = device("cuda", 0)
META = device("meta")
_CUDA = [CUDA0]  # the one device object of each cuda:i (tensors compare devices by identity)


def cuda(index: int) -> device:
    """The device object of cuda:`index` (one per index, as CPU and META are one)."""
    while len(_CUDA) <= index:
        _CUDA.append(device("cuda", len(_CUDA)))
    return _CUDA[index]


def canonical(d: DeviceLike | None) -> device:
    """The device a tensor lives on: 'cuda' means the current device (cuda:0 unless
    torch.cuda.set_device chose another); an index past the simulated devices is CUDA's
    invalid device ordinal."""
    dev = CPU if d is None else device(d)
    if dev.type == "cuda":
        machine = _machine.MACHINE
        index = dev.index
        if index is None:
            index = machine.thread.index
        elif index >= len(machine.devices):
            raise _machine.invalid_ordinal(len(machine.devices))
        return _CUDA[index] if index < len(_CUDA) else cuda(index)
    if dev.type == "meta":  # torch's meta tensors report "meta" whatever index was asked
        return META
    return CPU
