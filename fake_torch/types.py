"""torch.types: the type aliases torch code annotates with (`Device`, `Number`, `_size`, ...).

Runtime values, as in torch, so they work in `isinstance` (the tuple `_Number`) and in
annotations alike.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, TypeAlias

from fake_torch._dtype import dtype as _dtype
from fake_torch._tensor import Size, Tensor
from fake_torch._torch_device import device as _device

__all__ = ["Device", "FileLike", "Number", "Storage"]

# the builtins under the names torch's own annotations use
_bool = bool
_bytes = bytes
_complex = complex
_float = float
_int = int
_str = str

_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
_symsize: TypeAlias = Size | Sequence[int]
Number: TypeAlias = int | float | bool
_Number = (int, float, bool)
FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]
Device: TypeAlias = _device | str | int | None


class Storage:
    """The type torch annotates storages with (fake_torch's is torch.UntypedStorage)."""

    device: _device
    dtype: _dtype
