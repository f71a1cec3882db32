"""Module.state_dict / load_state_dict, with torch's key rules and error texts.

Saving returns detached views of the module's own tensors (no copy, no launch). Loading copies
each tensor in with `param.copy_(input)`: one launch per tensor on cuda (a host-to-device copy
when the checkpoint lives on the cpu), as in torch.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from fake_torch._tensor import Tensor
from fake_torch.nn.parameter import Parameter

if TYPE_CHECKING:
    from fake_torch.nn.modules.module import Module

class _IncompatibleKeys(NamedTuple):
    """What `load_state_dict` returns: the keys it could not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, "
                f"unexpected_keys={self.unexpected_keys!r})")

    def __str__(self) -> str:
        return self.__repr__()


def save_to_state_dict(module: Module, destination: dict[str, Any], prefix: str,
                       keep_vars: bool) -> None:
    """This module's own parameters and persistent buffers, not its children's."""
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()


def load_own(module: Module, state_dict: Mapping[str, Any], prefix: str, assign: bool,
             missing: list[str], unexpected: list[str], errors: list[str],
             extra_key: str | None = None) -> None:
    """Load this module's own tensors (torch's Module._load_from_state_dict, strict);
    `extra_key` names the module's extra state, which the module loads itself."""
    persistent = {k: v for k, v in module._buffers.items()
                  if k not in module._non_persistent_buffers_set}
    local_state: dict[str, Tensor] = {k: v for k, v in [*module._parameters.items(),
                                                        *persistent.items()] if v is not None}
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            missing.append(key)
            continue
        value = state_dict[key]
        if not isinstance(value, Tensor):
            errors.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                          "or Tensor-like object from checkpoint but received "
                          f"{type(value)}")
            continue
        if param.dim() == 0 and value.dim() == 1 and value.shape[0] == 1:
            value = value[0]  # checkpoints from torch 0.3 stored scalars as 1-element tensors
        if value.shape != param.shape:
            errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} "
                          "from checkpoint, the shape in current model is "
                          f"{param.shape}.")
            continue
        if param.is_meta and not value.is_meta and not assign:
            warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a "
                          "meta parameter in the current model, which is a no-op. (Did you mean "
                          "to pass `assign=True` to assign items in the state dictionary to their "
                          "corresponding key in the module instead of copying them in place?)",
                          stacklevel=4)
        try:
            if assign:
                if isinstance(param, Parameter) and not isinstance(value, Parameter):
                    value = Parameter(value, requires_grad=param.requires_grad)
                elif isinstance(param, Parameter):
                    value.requires_grad_(param.requires_grad)
                setattr(module, name, value)
            else:
                param.copy_(value)
        except Exception as ex:
            errors.append(f'While copying the parameter named "{key}", whose dimensions in the '
                          f"model are {param.size()} and whose dimensions in the checkpoint are "
                          f"{value.size()}, an exception occurred : {ex.args}.")
    for key in state_dict:
        if key.startswith(prefix) and key != extra_key:
            head = key[len(prefix):].split(".", 1)
            if (head[0] not in module._modules) if len(head) > 1 else (
                    head[0] not in local_state):
                unexpected.append(key)


def load_state_dict(module: Module, state_dict: Any, strict: bool,
                    assign: bool) -> _IncompatibleKeys:
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing: list[str] = []
    unexpected: list[str] = []
    errors: list[str] = []

    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)  # the hooks may edit it
    if metadata is not None:
        state_dict._metadata = metadata

    def load(mod: Module, local: dict[str, Any], prefix: str) -> None:
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        mod._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected,
                                  errors)
        for name, child in mod._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)},
                     child_prefix)
        incompatible = _IncompatibleKeys(missing, unexpected)  # the hooks edit the lists
        for hook in mod._load_state_dict_post_hooks.values():
            if hook(mod, incompatible) is not None:
                raise AssertionError(
                    "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                    "expected to return new values, if incompatible_keys need to be modified, "
                    "it should be done inplace.")

    load(module, state_dict, "")
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            type(module).__name__, "\n\t".join(errors)))
    return _IncompatibleKeys(missing, unexpected)
