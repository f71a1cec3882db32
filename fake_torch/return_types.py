"""torch.return_types: the named pairs that max/min/mode/sort/topk (values, indices) and aminmax
(min, max) return.

Each is a tuple subclass, so `values, indices = x.max(1)` unpacks and `r.values` reads by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Self

from fake_torch._tensor import Tensor


class _Pair(tuple[Tensor, Tensor]):
    """A structseq of two tensors; subclasses carry torch's name and the fields' names."""

    __slots__ = ()
    _names: ClassVar[tuple[str, str]]  # not `_fields`: that marks a namedtuple
    n_fields = 2
    n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, sequence: Iterable[Tensor]) -> Self:
        items = tuple(sequence)
        if len(items) != 2:
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a 2-sequence "
                            f"({len(items)}-sequence given)")
        return super().__new__(cls, items)

    def __repr__(self) -> str:
        first, second = self._names
        return (f"torch.return_types.{type(self).__name__}(\n{first}={self[0]!r},\n"
                f"{second}={self[1]!r})")


class _ValuesIndices(_Pair):
    """A (values, indices) structseq."""

    __slots__ = ()
    _names = ("values", "indices")

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]


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


class aminmax(_Pair):
    """(min, max), as torch.aminmax returns them."""

    __slots__ = ()
    _names = ("min", "max")

    @property
    def min(self) -> Tensor:
        return self[0]

    @property
    def max(self) -> Tensor:
        return self[1]


__all__ = ["aminmax", "max", "min", "mode", "sort", "topk"]
