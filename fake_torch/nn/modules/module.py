"""torch.nn.Module: parameters, buffers and submodules kept by name, as torch keeps them.

Attribute assignment sorts values into `_parameters` (Parameter), `_buffers` (registered
tensors) and `_modules` (Module); `__getattr__` finds them again. Everything that moves or casts
tensors (`to`, `cuda`, `half`, `load_state_dict`) goes through Tensor ops, so it launches
exactly what torch launches (one copy per parameter moved to cuda, none for a no-op `to`).
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, Self

from fake_torch._dtype import bfloat16, dtype, float16, float32, float64
from fake_torch._factories import empty_like
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike, canonical
from fake_torch.nn._names import typename
from fake_torch.nn.modules._conversion import apply_to_tensors, parse_to
from fake_torch.nn.modules._hooks import RemovableHandle, WrappedHook, call_with_hooks
from fake_torch.nn.modules._registration import (
    buffer_hooks,
    check_name,
    module_hooks,
    parameter_hooks,
    run_hooks,
    set_attribute,
)
from fake_torch.nn.modules._state_dict import (
    _IncompatibleKeys,
    load_own,
    load_state_dict,
    save_to_state_dict,
)
from fake_torch.nn.parameter import Parameter

_Hooks = OrderedDict[int, Callable[..., Any]]
# the state-dict key a module's get_extra_state() would save under (torch's name; fake_torch
# modules keep no extra state, but loaders such as transformers' compare keys with it)
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"  # a module's extra state, saved beside its tensors

# torch.compile's in-place form (Module.compile): compile sits above nn, so fake_torch/_compile.py
# registers it here when it is imported (imports point down: fake_torch/_tools/_layers.py)
_compile_module: Callable[..., None] | None = None


def set_compile_source(compile_module: Callable[..., None]) -> None:
    global _compile_module
    _compile_module = compile_module


def register_module_buffer_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """Call hook(module, name, buffer) whenever any Module registers a buffer; a non-None
    result is registered instead. Global state: remove it with the returned handle."""
    handle = RemovableHandle(buffer_hooks)
    buffer_hooks[handle.id] = hook
    return handle


def register_module_module_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """Call hook(module, name, submodule) whenever any Module registers a submodule (attribute
    assignment, add_module); a non-None result is registered instead."""
    handle = RemovableHandle(module_hooks)
    module_hooks[handle.id] = hook
    return handle


def register_module_parameter_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """Call hook(module, name, param) whenever any Module registers a parameter; a non-None
    result is registered instead."""
    handle = RemovableHandle(parameter_hooks)
    parameter_hooks[handle.id] = hook
    return handle


def _forward_unimplemented(self: Module, *input: Any) -> None:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              '"forward" function')


def _addindent(s: str, num_spaces: int) -> str:
    """Indent every line but the first (torch's helper for nested module reprs)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first, rest = lines[0], lines[1:]
    return "\n".join([first] + [(" " * num_spaces + ln) if ln.strip() else "" for ln in rest])


class Module:
    """Base class for all neural network modules (torch.nn.Module)."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Module | None]
    _forward_pre_hooks: _Hooks
    _forward_pre_hooks_with_kwargs: dict[int, bool]
    _forward_hooks: _Hooks
    _forward_hooks_with_kwargs: dict[int, bool]
    _forward_hooks_always_called: dict[int, bool]
    _load_state_dict_pre_hooks: _Hooks
    _load_state_dict_post_hooks: _Hooks
    _version: int = 1
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", {})
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", {})
        setattr_("_forward_hooks_always_called", {})
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})

    forward: Callable[..., Any] = _forward_unimplemented

    # --- registration -------------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer; non-persistent buffers stay out of `state_dict`."""
        check_name(self, "buffer", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = run_hooks(buffer_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (a Parameter, or None to reserve the name)."""
        check_name(self, "parameter", name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = run_hooks(parameter_hooks, self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as an attribute."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = run_hooks(module_hooks, self, name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for `add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path `target` ("" is self)."""
        mod = self
        for item in target.split(".") if target else []:
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        buf: Tensor = getattr(mod, name)
        return buf

    # --- attribute bookkeeping ----------------------------------------------------------------

    def __getattr__(self, name: str) -> Tensor | Module:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                value: Tensor | Module = d[store][name]
                return value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        set_attribute(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules,
                *self._buffers]
        return sorted(k for k in keys if not k[0].isdigit())

    # --- iteration ----------------------------------------------------------------------------

    def _named_members(self, get_members: Callable[[Module], Any], prefix: str = "",
                       recurse: bool = True, remove_duplicate: bool = True
                       ) -> Iterator[tuple[str, Any]]:
        memo: set[Any] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo: set[Module] = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set[Module] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                sub_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # --- modes and gradients ------------------------------------------------------------------

    def train(self, mode: bool = True) -> Self:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Self:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Self:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset gradients. fake_torch has no autograd, so grads are only ever set by hand."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Self:
        """Call `fn` on every submodule (children first), then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- moving and casting: each tensor through Tensor.to, so launches are torch's ----------

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Self:
        if recurse:
            for module in self.children():
                module._apply(fn)
        apply_to_tensors(self, fn)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Self:
        """`to(device=None, dtype=None, non_blocking=False)`, `to(dtype)`, `to(tensor)`:
        floating and complex tensors take `dtype` (a complex buffer cast to a real dtype loses
        its imaginary parts, as in torch), every tensor takes `device`; with `memory_format=`
        (torch.channels_last) the 4-D and 5-D tensors take that layout too."""
        dev, dt, non_blocking, fmt = parse_to(*args, **kwargs)
        if dt is not None and not (dt.is_floating_point or dt.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dt}")
        if dt is not None and dt.is_complex:
            warnings.warn("Complex modules are a new feature under active development whose "
                          "design may change, and some modules might not work as expected when "
                          "using complex tensors as parameters or buffers. Please file an issue "
                          "at https://github.com/pytorch/pytorch/issues/new?template=bug-report"
                          ".yml if a complex module does not work as expected.", stacklevel=2)

        def convert(t: Tensor) -> Tensor:
            target = dt if t.is_floating_point() or t.dtype.is_complex else None
            options: dict[str, Any] = {"device": dev, "dtype": target}
            if fmt is not None and t.dim() in (4, 5):
                options["memory_format"] = fmt
            options = {k: v for k, v in options.items() if v is not None}
            if not options:
                return t
            return t.to(non_blocking=non_blocking, **options)

        return self._apply(convert)

    def to_empty(self, *, device: DeviceLike | None, recurse: bool = True) -> Self:
        """Every parameter and buffer as a new uninitialised tensor of its shape, dtype and
        layout on `device` (nothing copied, no launch): a model built on meta gets memory
        so, then its values from an init or a checkpoint."""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cuda(self, device: DeviceLike | None = None) -> Self:
        dev = canonical("cuda" if device is None else device)
        if dev.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {dev}")
        return self._apply(lambda t: t.to(device=dev))

    def cpu(self) -> Self:
        return self._apply(lambda t: t.to(device=canonical("cpu")))

    def type(self, dst_type: dtype | str) -> Self:
        """Every parameter and buffer through Tensor.type(dst_type), floating or not."""
        return self._apply(lambda t: t.type(dst_type))

    def _cast_floats(self, dt: dtype) -> Self:
        return self._apply(lambda t: t.to(dtype=dt) if t.is_floating_point() else t)

    def float(self) -> Self:
        return self._cast_floats(float32)

    def double(self) -> Self:
        return self._cast_floats(float64)

    def half(self) -> Self:
        return self._cast_floats(float16)

    def bfloat16(self) -> Self:
        return self._cast_floats(bfloat16)

    # --- state_dict ---------------------------------------------------------------------------

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        save_to_state_dict(self, destination, prefix, keep_vars)
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """What a subclass saves in its state_dict beside its tensors (under the key
        `_extra_state`); only a subclass that overrides it has any."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Take back what get_extra_state saved (a subclass that has extra state overrides
        both)."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def state_dict(self, *, destination: dict[str, Any] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """Parameters and persistent buffers by dotted name (detached views: no copy)."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Load this module's own tensors and extra state, after its load_state_dict
        pre-hooks; `load_state_dict` calls it on every submodule."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        load_own(self, state_dict, prefix, local_metadata.get("assign_to_params_buffers", False),
                 missing_keys, unexpected_keys, error_msgs, extra_key if has_extra else None)
        if has_extra:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)

    def load_state_dict(self, state_dict: Any, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy tensors from `state_dict` into this module's parameters and buffers (one
        `copy_` each); torch's RuntimeError lists missing, unexpected and mis-sized keys."""
        return load_state_dict(self, state_dict, strict, assign)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., None],
                                           with_module: bool = False) -> RemovableHandle:
        """`hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)` (the module first when `with_module`) runs before this module loads."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = WrappedHook(
            hook, self if with_module else None)
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` runs before this module loads its own tensors."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable[..., None]) -> RemovableHandle:
        """`hook(module, incompatible_keys)` runs after this module and its children loaded;
        it may edit the keys' lists in place (strict then judges what is left)."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # --- calling ------------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """`hook(module, args)` (or `(module, args, kwargs)`) runs before forward."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """`hook(module, args, output)` (or `(module, args, kwargs, output)`) runs after."""
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks):
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    __call__: Callable[..., Any] = _call_impl

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's forward in place with torch.compile's keyword arguments."""
        assert _compile_module is not None, "fake_torch/_compile.py registers it at import"
        _compile_module(self, *args, **kwargs)

    # --- printing -----------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module's own settings, for its repr (override in subclasses)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


__all__ = ["Module", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]
