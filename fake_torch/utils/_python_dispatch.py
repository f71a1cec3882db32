"""torch.utils._python_dispatch: the base class of torch's dispatch modes, and the test for
traceable wrapper tensor subclasses.

A TorchDispatchMode sees every aten operator call below autograd as
`__torch_dispatch__(func, types, args, kwargs)`, func an aten OpOverload. fake_torch's ops are
not aten overloads called through a dispatcher, so that protocol is not emulated: a mode can be
defined (vLLM subclasses one at import) but entering one raises NotImplementedError. Its own
modes are at the API level (torch.overrides.TorchFunctionMode).
"""

from __future__ import annotations

from typing import Any

from fake_torch._tensor import Tensor

__all__ = ["TorchDispatchMode", "is_traceable_wrapper_subclass",
           "is_traceable_wrapper_subclass_type"]


class TorchDispatchMode:
    """A context manager that would intercept every aten call in its scope with
    `__torch_dispatch__`. Subclassing works; entering raises NotImplementedError."""

    supports_higher_order_operators = False

    def __init__(self, _dispatch_key: Any = None) -> None:
        if _dispatch_key is not None:
            raise AssertionError("_dispatch_key must be a torch._C.DispatchKey")

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchDispatchMode:
        raise NotImplementedError(
            "torch.utils._python_dispatch.TorchDispatchMode is not emulated by fake_torch: its "
            "ops are not aten overloads called through a dispatcher, so no mode can see them "
            f"(entering {type(self).__name__}); torch.overrides.TorchFunctionMode is supported")

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        """Nothing to undo: entering never succeeds."""

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        """Whether Dynamo may trace through the mode (torch: only for infra modes)."""
        return cls.is_infra_mode()


def _get_current_dispatch_mode() -> TorchDispatchMode | None:
    """The innermost entered dispatch mode: none ever is."""
    return None


def _has_traceable_wrapper_subclass_protocol(t: object) -> bool:
    return hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")


def is_traceable_wrapper_subclass(t: object) -> bool:
    """Whether `t` is an instance of a Tensor subclass (not Tensor itself) with
    `__tensor_flatten__` and `__tensor_unflatten__`."""
    return (isinstance(t, Tensor) and type(t) is not Tensor
            and _has_traceable_wrapper_subclass_protocol(t))


def is_traceable_wrapper_subclass_type(t: type) -> bool:
    """is_traceable_wrapper_subclass for a type."""
    return (issubclass(t, Tensor) and t is not Tensor
            and _has_traceable_wrapper_subclass_protocol(t))
