"""torch.layout and its instances (torch.strided, torch.sparse_coo, ...).

fake_torch's tensors are all dense (strided): `Tensor.layout` is `strided`. The other layouts
exist as names so that code comparing against them (safetensors' `v.layout != torch.strided`)
runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["jagged", "layout", "sparse_bsc", "sparse_bsr", "sparse_coo", "sparse_csc",
           "sparse_csr", "strided"]


class layout:
    """A tensor's memory layout; torch.strided is the dense one. Only the module's singletons
    exist: as torch's, the class cannot be instantiated."""

    __slots__ = ("_name",)
    _name: str

    def __new__(cls, *args: Any, **kwargs: Any) -> layout:
        raise TypeError("cannot create 'torch.layout' instances")

    @classmethod
    def _make(cls, name: str) -> layout:
        obj = object.__new__(cls)
        object.__setattr__(obj, "_name", name)
        return obj

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:  # pickled by name, as torch pickles its layouts
        return self._name


strided = layout._make("strided")
sparse_coo = layout._make("sparse_coo")
sparse_csr = layout._make("sparse_csr")
sparse_csc = layout._make("sparse_csc")
sparse_bsr = layout._make("sparse_bsr")
sparse_bsc = layout._make("sparse_bsc")
jagged = layout._make("jagged")

