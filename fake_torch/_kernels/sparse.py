"""The sparse-tensor accessors on the dense (strided) tensors fake_torch has: torch raises for
them too, with these texts, so model code that probes a tensor's layout this way behaves the
same (fake_torch has no sparse layouts)."""

from __future__ import annotations

from fake_torch._opdef import COMPOSITE, method
from fake_torch._tensor import Tensor


@method(COMPOSITE, aten=())
def indices(self: Tensor) -> Tensor:
    """A sparse COO tensor's indices; every fake_torch tensor is strided: torch's error."""
    raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")


@method(COMPOSITE, aten=())
def values(self: Tensor) -> Tensor:
    """A sparse tensor's values; every fake_torch tensor is strided: torch's error."""
    raise RuntimeError("values expected sparse tensor layout but got Strided")
