"""torch.distributed.tensor.placement_types: how a DTensor lies on a mesh dimension. These are
plain values (compared, hashed and printed as torch's); nothing here shards data.

    Shard(0)                    # repr "Shard(dim=0)", str "S(0)"
    Replicate()                 # "Replicate()", "R"
    Partial("max")              # "Partial(max)", "P(max)"
    _StridedShard(0, split_factor=2)  # "_StridedShard(dim=0, sf=2)", "_S(0, 2)"
"""

from __future__ import annotations

import operator

__all__ = ["Partial", "Placement", "Replicate", "Shard"]


class Placement:
    """The base of the placement types."""

    def is_shard(self, dim: int | None = None) -> bool:
        """Whether this is `Shard` (on `dim`, when given)."""
        return False

    def is_replicate(self) -> bool:
        """Whether this is `Replicate`."""
        return False

    def is_partial(self, reduce_op: str | None = None) -> bool:
        """Whether this is `Partial` (reducing with `reduce_op`, when given)."""
        return False


def _index(value: object, cls: str, args: str) -> int:
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"__init__(): incompatible constructor arguments. The following "
                        f"argument types are supported:\n    1. torch._C._distributed.{cls}"
                        f"({args})\n\nInvoked with: {value!r}") from None


class Shard(Placement):
    """Sharded on tensor dimension `dim` across a mesh dimension."""

    def __init__(self, dim: int) -> None:
        self.dim = _index(dim, "Shard", "dim: typing.SupportsInt | typing.SupportsIndex")

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shard) and type(other) is type(self) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash(("Shard", self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"


class _StridedShard(Placement):
    """Shard(dim) of a tensor already sharded `split_factor` ways on the same dim (FSDP2 over
    tensor parallelism); not a Shard: `is_shard()` is False."""

    def __init__(self, dim: int, *, split_factor: int = 1, sf: int | None = None) -> None:
        if sf is not None:
            if split_factor != 1:
                raise TypeError("_StridedShard received both split_factor and sf")
            split_factor = sf
        self.dim = _index(dim, "StridedShard", "dim: int, split_factor: int")
        self.split_factor = int(split_factor)

    def __eq__(self, other: object) -> bool:
        return (type(other) is _StridedShard and other.dim == self.dim
                and other.split_factor == self.split_factor)

    def __hash__(self) -> int:
        return hash(("_StridedShard", self.dim, self.split_factor))

    def __repr__(self) -> str:
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self) -> str:
        return f"_S({self.dim}, {self.split_factor})"


class Replicate(Placement):
    """The whole tensor on every rank of the mesh dimension."""

    def is_replicate(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return type(other) is Replicate

    def __hash__(self) -> int:
        return hash("Replicate")

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


class Partial(Placement):
    """Each rank holds a partial value; the tensor is their reduction with `reduce_op`."""

    def __init__(self, reduce_op: str | None = "sum") -> None:
        self.reduce_op = "sum" if reduce_op is None else reduce_op

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other: object) -> bool:
        return type(other) is Partial and other.reduce_op == self.reduce_op

    def __hash__(self) -> int:
        return hash(("Partial", self.reduce_op))

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"
