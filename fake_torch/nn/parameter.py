"""torch.nn.Parameter and torch.nn.Buffer: markers that tell a Module what a tensor is.

A Parameter is a Tensor subclass over the SAME numpy view as the tensor it wraps (no copy, no
launch); ops on it return plain Tensors, as in torch: its `__torch_function__` is torch's
`_disabled_torch_function_impl`, so it takes no part in dispatch. A Buffer is a plain Tensor
carrying a `persistent` flag that `Module.__setattr__` reads. An UninitializedParameter /
UninitializedBuffer (lazy modules') holds no data until `materialize(shape)`, which turns it
into a Parameter / Tensor; torch functions on it before that raise ValueError.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from fake_torch import _torch_function as _tf
from fake_torch._dtype import dtype as DType
from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._tensor import _GETTERS, Tensor, _convert
from fake_torch._tensor_base import TensorBase
from fake_torch._torch_device import DeviceLike
from fake_torch._torch_function import _disabled_torch_function_impl
from fake_torch._utils import _set_obj_state, tensor_state


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
        if requires_grad and not (p.dtype.is_floating_point or p.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")  # (_make_subclass's text)
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

    def __reduce_ex__(self, proto: Any) -> tuple[Any, tuple[Any, ...]]:
        """torch's: `torch._utils._rebuild_parameter(data, requires_grad, hooks)`, or
        `_rebuild_parameter_with_state` when it carries Python attributes."""
        state = tensor_state(self)
        data = Tensor._make(self._a, self._device, self._storage, self._dtype)
        if not state:
            return (_rebuild_parameter, (data, self.requires_grad, OrderedDict()))
        return (_rebuild_parameter_with_state, (data, self.requires_grad, OrderedDict(), state))


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Parameter:
    """torch._utils._rebuild_parameter: a Parameter over `data` (hooks are never restored)."""
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any,
                                  state: Any) -> Parameter:
    """torch._utils._rebuild_parameter_with_state: a Parameter with its Python attributes."""
    return _set_obj_state(Parameter(data, requires_grad), state)  # type: ignore[no-any-return]



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


class UninitializedTensorMixin(TensorBase):
    """What an uninitialized parameter or buffer does: only the methods below (casts, moves,
    `size`, `copy_`) and attribute reads pass; `materialize` gives it data and its final
    class. It derives from TensorBase, as Tensor does, so that its instance layout matches
    Tensor's and `materialize` can reassign `__class__` (CPython checks the common base)."""

    cls_to_become: type
    _torch_function_on_first_instance = True  # (its __torch_function__ costs nothing before)
    # torch's list, by name: the Tensor methods exist once the ops module has attached them
    _allowed_names = ("__hash__", "size", "copy_", "is_complex", "is_floating_point", "half",
                      "float", "double", "char", "short", "int", "long", "cuda", "cpu", "to",
                      "get_device")

    def materialize(self, shape: Any, device: DeviceLike | None = None,
                    dtype: DType | None = None) -> None:
        """Give it `shape` (uninitialized memory, as torch.empty) on `device` with `dtype`
        (default: its own) and make it a `cls_to_become` (Parameter, or Tensor for a buffer)."""
        me: Any = self
        new = empty(shape, device=me._device if device is None else device,
                    dtype=me._dtype if dtype is None else dtype)
        me.data = new
        me.__class__ = self.cls_to_become

    @property
    def data(self) -> Tensor:
        """Its (empty) data, read without a torch function (torch's is an attribute read)."""
        me: Any = self
        return Tensor._make(me._a, me._device, me._storage)

    @data.setter
    def data(self, new: Tensor) -> None:
        Tensor.data.fset(self, new)  # type: ignore[attr-defined]

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto: Any) -> Any:
        me: Any = self
        return (self.__class__, (me.requires_grad,))

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        allowed = [getattr(Tensor, n, None) for n in cls._allowed_names]
        if func in allowed or func in _GETTERS.values():
            # run on plain views (the kernels read shapes); a no-op (cpu() of a cpu one) gives
            # back the object itself, and a buffer's results stay its class, as in torch
            plain = {id(a): Tensor._make(a._a, a._device, a._storage) for a in args
                     if isinstance(a, Tensor) and isinstance(a, UninitializedTensorMixin)}
            result = func(*(plain.get(id(a), a) for a in args), **(kwargs or {}))
            for a in args:
                if result is plain.get(id(a)):
                    return a
            return result if cls.cls_to_become is not Tensor else _convert(result, cls)
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {func}. This error happens when "
            "you are using a `LazyModule` or explicitly manipulating "
            f"`torch.nn.parameter.{cls.__name__}` objects. When using LazyModules Call `forward` "
            "with a dummy batch to initialize the parameters before calling torch functions")


def is_lazy(param: Any) -> bool:
    """Whether `param` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


def _uninitialized(cls: type, requires_grad: bool, device: DeviceLike | None,
                   dtype: DType | None) -> Any:
    _tf.enable_subclasses()  # from the first one on, ops check their args for it
    data = empty(0, device=device, dtype=dtype)
    t: Any = object.__new__(cls)
    t._set(data._a, data._device, data._storage)
    t.requires_grad = requires_grad
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):  # type: ignore[misc]
    """A Parameter whose shape is not known yet (a lazy module's); `materialize(shape)` makes
    it a Parameter. The device and dtype it will have can be given now."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: DeviceLike | None = None,
                dtype: DType | None = None) -> UninitializedParameter:
        return _uninitialized(cls, requires_grad, device, dtype)  # type: ignore[no-any-return]

    def __init__(self, requires_grad: bool = True, device: DeviceLike | None = None,
                 dtype: DType | None = None) -> None:
        """All the work is in __new__."""

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        result = type(self)(self.requires_grad, self._device, self._dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; `materialize(shape)` makes it a Tensor."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: DeviceLike | None = None,
                dtype: DType | None = None, persistent: bool = True) -> UninitializedBuffer:
        t = _uninitialized(cls, requires_grad, device, dtype)
        t.persistent = persistent
        t._is_buffer = True
        return t  # type: ignore[no-any-return]

    def __init__(self, requires_grad: bool = False, device: DeviceLike | None = None,
                 dtype: DType | None = None, persistent: bool = True) -> None:
        """All the work is in __new__."""


__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter",
           "UninitializedTensorMixin", "is_lazy"]
