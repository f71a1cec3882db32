"""How torch spells tensor types and classes (`torch.typename`), for texts that match torch's."""

from __future__ import annotations

from typing import Any

from fake_torch._tensor import Tensor


def typename(obj: Any) -> str:
    """torch.typename: 'torch.FloatTensor', 'torch.cuda.HalfTensor', 'int', 'pkg.mod.Class'."""
    if isinstance(obj, Tensor):
        return str(obj.type())
    if hasattr(obj, "__qualname__"):
        module, qualname = getattr(obj, "__module__", "") or "", obj.__qualname__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
