"""torch.autograd.Variable: the pre-0.4 wrapper around a tensor. Today (in torch and here)
`Variable(t)` is a tensor sharing t's data, and every tensor is an instance of Variable."""

from __future__ import annotations

import warnings
from typing import Any

from fake_torch._tensor import Tensor


class VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """Variable(data=None, requires_grad=False, volatile=False) -> a tensor over data's data."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False) -> Any:
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            from fake_torch._factories import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        out = data.detach()
        out.requires_grad_(requires_grad)
        return out
