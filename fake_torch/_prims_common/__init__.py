"""torch._prims_common: helpers on sizes and strides that work for ints and SymInts alike
(vLLM's piecewise backend sizes a storage with compute_required_storage_length)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import reduce
from typing import Any

__all__ = ["compute_required_storage_length"]


def compute_required_storage_length(shape: Sequence[Any], strides: Sequence[Any],
                                    storage_offset: Any) -> Any:
    """The fewest storage elements that hold a tensor of this geometry: 0 when it has no
    elements (assumed not, unguarded, for a symbolic size), else 1 + offset + the last
    element's offset sum((size - 1) * stride)."""
    from fake_torch.fx.experimental.symbolic_shapes import guard_or_false
    if guard_or_false(reduce(operator.mul, shape, 1) == 0):
        return 0
    max_offset = sum((x - 1) * y for x, y in zip(shape, strides, strict=False))
    return 1 + storage_offset + max_offset
