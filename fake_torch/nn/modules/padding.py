"""The padding modules: ConstantPad, ZeroPad, ReflectionPad, ReplicationPad and CircularPad,
1-D to 3-D. Each keeps its padding as torch does ((left, right) pairs from the last dim back,
an int repeated) and forwards to F.pad (see fake_torch/nn/_pad.py for the launches)."""

from __future__ import annotations

from collections.abc import Sequence

from fake_torch._tensor import Tensor
from fake_torch.nn import functional as F
from fake_torch.nn.modules.module import Module

IntOrTuple = int | Sequence[int]


def _ntuple(value: IntOrTuple, n: int) -> tuple[int, ...]:
    """torch's _ntuple: a sequence as a tuple (any length), an int repeated n times."""
    return tuple(value) if isinstance(value, Sequence) else (value,) * n


class _CircularPadNd(Module):
    """Pads by wrapping around: F.pad(mode='circular')."""

    padding: tuple[int, ...]
    _dims: tuple[int, int]  # the input dims accepted: unbatched, batched

    def __init__(self, padding: IntOrTuple) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * (self._dims[0] - 1))

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in self._dims:
            raise ValueError(f"expected {self._dims[0]}D or {self._dims[1]}D input (got "
                             f"{input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class CircularPad1d(_CircularPadNd):
    """Circular padding of the last dim of (N, C, W) or (C, W)."""

    _dims = (2, 3)


class CircularPad2d(_CircularPadNd):
    """Circular padding of the last two dims of (N, C, H, W) or (C, H, W)."""

    _dims = (3, 4)


class CircularPad3d(_CircularPadNd):
    """Circular padding of the last three dims of (N, C, D, H, W) or (C, D, H, W)."""

    _dims = (4, 5)


class _ConstantPadNd(Module):
    """Pads with a constant: F.pad(mode='constant', value)."""

    padding: tuple[int, ...]
    value: float
    _pairs: int

    def __init__(self, padding: IntOrTuple, value: float) -> None:
        super().__init__()
        self.value = value
        self.padding = _ntuple(padding, 2 * self._pairs)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Constant padding of the last dim."""

    _pairs = 1


class ConstantPad2d(_ConstantPadNd):
    """Constant padding of the last two dims."""

    _pairs = 2


class ConstantPad3d(_ConstantPadNd):
    """Constant padding of the last three dims."""

    _pairs = 3


class ZeroPad1d(ConstantPad1d):
    """Zero padding of the last dim."""

    def __init__(self, padding: IntOrTuple) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Zero padding of the last two dims."""

    def __init__(self, padding: IntOrTuple) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Zero padding of the last three dims."""

    def __init__(self, padding: IntOrTuple) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ModePadNd(Module):
    """Reflection or replication padding: F.pad with the class's mode."""

    padding: tuple[int, ...]
    _mode: str
    _pairs: int

    def __init__(self, padding: IntOrTuple) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._pairs)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    """Pads the last dim with its reflection (the edge not repeated)."""

    _mode, _pairs = "reflect", 1


class ReflectionPad2d(_ModePadNd):
    """Pads the last two dims with their reflection."""

    _mode, _pairs = "reflect", 2


class ReflectionPad3d(_ModePadNd):
    """Pads the last three dims with their reflection."""

    _mode, _pairs = "reflect", 3


class ReplicationPad1d(_ModePadNd):
    """Pads the last dim by repeating its edge."""

    _mode, _pairs = "replicate", 1


class ReplicationPad2d(_ModePadNd):
    """Pads the last two dims by repeating their edges."""

    _mode, _pairs = "replicate", 2


class ReplicationPad3d(_ModePadNd):
    """Pads the last three dims by repeating their edges."""

    _mode, _pairs = "replicate", 3


__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]
