"""torch.nn.Parameter and torch.nn.Buffer: markers that tell a Module what a tensor is.

A Parameter is a Tensor subclass over the SAME numpy view as the tensor it wraps (no copy, no
launch); ops on it return plain Tensors, as in torch: its `__torch_function__` is torch's
`_disabled_torch_function_impl`, so it takes no part in dispatch. A Buffer is a plain Tensor
carrying a `persistent` flag that `Module.__setattr__` reads.
"""

from __future__ import annotations

from typing import Any

from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._tensor import Tensor
from fake_torch._torch_function import _disabled_torch_function_impl


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as an attribute.
    `requires_grad` defaults to True (it is stored only: fake_torch has no autograd)."""

    __torch_function__ = _disabled_torch_function_impl  # type: ignore[assignment]

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        p = object.__new__(cls)
        p._set(data._a, data._device, data._storage)  # shares data's storage (_make_subclass)
        p.requires_grad = requires_grad
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        """All the work is in __new__ (Tensor.__init__ is the legacy constructor)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()



class _BufferMeta(type):
    """`isinstance(t, Buffer)` is true for the plain tensors `Buffer(...)` returns."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor as a buffer: `self.running = nn.Buffer(t, persistent=False)`.
    Returns a plain Tensor (a view of `data`, no launch) carrying `persistent`."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:  # type: ignore[misc]
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent  # type: ignore[attr-defined]
        t._is_buffer = True  # type: ignore[attr-defined]
        return t


__all__ = ["Buffer", "Parameter"]
