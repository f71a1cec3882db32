"""torch.return_types: the named (values, indices) pairs max/min/mode/sort/topk return.

Each is a tuple subclass, so `values, indices = x.max(1)` unpacks and `r.values` reads by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Self

from fake_torch._tensor import Tensor


class _ValuesIndices(tuple[Tensor, Tensor]):
    """A (values, indices) structseq; subclasses only carry torch's name."""

    __slots__ = ()
    n_fields = 2
    n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, sequence: Iterable[Tensor]) -> Self:
        items = tuple(sequence)
        if len(items) != 2:
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a 2-sequence "
                            f"({len(items)}-sequence given)")
        return super().__new__(cls, items)

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return (f"torch.return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")


class max(_ValuesIndices):
    __slots__ = ()


class min(_ValuesIndices):
    __slots__ = ()


class sort(_ValuesIndices):
    __slots__ = ()


class mode(_ValuesIndices):
    __slots__ = ()


class topk(_ValuesIndices):
    __slots__ = ()


__all__ = ["max", "min", "mode", "sort", "topk"]
