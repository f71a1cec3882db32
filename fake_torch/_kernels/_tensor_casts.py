"""Tensor's casts named after builtin types: float(), int(), bool(), type().

They live in a base class of Tensor, not in its body: a method named `float` inside the class
body would shadow the builtin in every annotation of the class (`-> bool` would mean the
method), which mypy rejects. Nothing here imports Tensor at run time (Tensor subclasses this).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from fake_torch._dtype import dtype
    from fake_torch._tensor import Tensor


def _casts() -> Any:
    from fake_torch._kernels import cast as casts  # imported on first use: it imports Tensor

    return casts


class TensorCasts:
    """dtype shorthands: `x.float()` is `x.to(torch.float32)` (self when already float32)."""

    __slots__ = ()

    def float(self, memory_format: object = None) -> Tensor:
        return cast("Tensor", _casts().float_(self, memory_format))

    def int(self, memory_format: object = None) -> Tensor:
        return cast("Tensor", _casts().int_(self, memory_format))

    def bool(self, memory_format: object = None) -> Tensor:
        return cast("Tensor", _casts().bool_cast(self, memory_format))

    def type(self, dtype: dtype | builtins.str | None = None,
             non_blocking: builtins.bool = False, **kwargs: Any) -> Any:
        """The legacy type name ('torch.cuda.FloatTensor') without an argument, else a cast."""
        return _casts().tensor_type(self, dtype, non_blocking, **kwargs)
