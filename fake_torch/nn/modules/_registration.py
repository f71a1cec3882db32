"""How a Module files what it is given: name checks for register_buffer / register_parameter,
the attribute assignment that sorts values into parameters, submodules and buffers, and the
global registration hooks (`register_module_*_registration_hook`) that see each one filed."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fake_torch._tensor import Tensor
from fake_torch.nn._names import typename
from fake_torch.nn.parameter import Buffer, Parameter

if TYPE_CHECKING:
    from fake_torch.nn.modules.module import Module


# torch.nn.modules.module's global hooks, by handle id: hook(module, name, value) -> None or a
# replacement value, called (in registration order) each time a Module files a value
buffer_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
module_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
parameter_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()


def run_hooks(hooks: OrderedDict[int, Callable[..., Any]], module: Module, name: str,
              value: Any) -> Any:
    """`value` after each hook in `hooks` has seen it (a hook's non-None result replaces it)."""
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def check_name(module: Module, kind: str, name: object) -> None:
    """torch's checks on a new buffer or parameter name (kind: "buffer" or "parameter")."""
    store = module.__dict__.get(f"_{kind}s")
    if store is None:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")


def set_attribute(module: Module, name: str, value: Any) -> None:
    """Module.__setattr__: a Parameter becomes a parameter, a Module a child, a Buffer (or a
    tensor assigned to an existing buffer name) a buffer; anything else a plain attribute.
    A name moves out of the other stores when it changes kind."""
    from fake_torch.nn.modules.module import Module

    d = module.__dict__
    params, modules, buffers = d.get("_parameters"), d.get("_modules"), d.get("_buffers")

    def remove_from(*stores: dict[str, Any] | set[str]) -> None:
        for store in stores:
            if name in store:
                if isinstance(store, dict):
                    del store[name]
                else:
                    store.discard(name)

    if isinstance(value, Parameter):
        if params is None:
            raise AttributeError("cannot assign parameters before Module.__init__() call")
        remove_from(d, module._buffers, module._modules, module._non_persistent_buffers_set)
        module.register_parameter(name, value)
    elif params is not None and name in params:
        if value is not None:
            raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                            "(torch.nn.Parameter or None expected)")
        module.register_parameter(name, value)
    elif isinstance(value, Module):
        if modules is None:
            raise AttributeError("cannot assign module before Module.__init__() call")
        remove_from(d, module._parameters, module._buffers, module._non_persistent_buffers_set)
        modules[name] = run_hooks(module_hooks, module, name, value)
    elif modules is not None and name in modules:
        if value is not None:
            raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                            "(torch.nn.Module or None expected)")
        modules[name] = run_hooks(module_hooks, module, name, value)
    elif isinstance(value, Buffer) or (buffers is not None and name in buffers):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)")
        persistent = (getattr(value, "persistent", True) if isinstance(value, Buffer)
                      else name not in module._non_persistent_buffers_set)
        module.register_buffer(name, value, persistent)
    else:
        object.__setattr__(module, name, value)
