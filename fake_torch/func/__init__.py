"""torch.func: function transforms. fake_torch has functional_call and functionalize (no grad
or vmap: it emulates no autograd and no batching transforms)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from fake_torch._tensor import Tensor
from fake_torch.nn.modules.module import Module

__all__ = ["functional_call", "functionalize"]


class Functionalized:
    """What functionalize(f) returns: called, it runs `func` (the values and the written
    inputs are those of its functional program); traced by make_fx, the graph has no
    mutation (fake_torch/fx/experimental/_functionalize.py)."""

    def __init__(self, func: Callable[..., Any], remove: str) -> None:
        self.func = func
        self.remove = remove
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """torch.func.functionalize: `func` with its mutations removed (in-place ops become
    functional ops and copies back to the inputs they wrote) when make_fx traces it."""
    if remove == "mutations_and_views":
        raise NotImplementedError("torch.func.functionalize(remove='mutations_and_views') is "
                                  "not emulated by fake_torch")
    if remove != "mutations":
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove}. Valid options are:\n     remove='mutations': "
                           "all inplace and out= operators will be removed from the program, "
                           "and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing "
                           "operators {view} will be replaced with their non-aliasing "
                           "counterparts, {view}_copy.\n")
    return Functionalized(func, remove)


def functional_call(module: Module,
                    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call `module(*args, **kwargs)` with the named parameters and buffers replaced by the
    given tensors for this one call; the module's own are put back after (even on error)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        merged = {}
        for d in parameter_and_buffer_dicts:
            repeated = set(merged) & set(d)
            if repeated:
                raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; "
                                 "behavior of functional call is ambiguous")
            merged.update(d)
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    call_args = args if isinstance(args, tuple) else () if args is None else (args,)
    return _stateless_call(module, merged, call_args, kwargs or {}, tie_weights, strict)


def _stateless_call(module: Module, tensors: dict[str, Tensor], args: tuple[Any, ...],
                    kwargs: dict[str, Any], tie_weights: bool, strict: bool) -> Any:
    own: dict[str, Tensor] = dict(module.named_parameters(remove_duplicate=False))
    own.update(module.named_buffers(remove_duplicate=False))
    if strict:
        missing = sorted(set(own) - set(tensors))
        unexpected = sorted(set(tensors) - set(own))
        if missing or unexpected:
            parts = []
            if unexpected:
                parts.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected)
                             + ".")
            if missing:
                parts.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError("Error(s) in reparametrizing for call():\n\t"
                               + "\n\t".join(parts))
    if tie_weights:  # a tied tensor's other names follow the one given
        by_identity: dict[int, list[str]] = {}
        for name, t in own.items():
            by_identity.setdefault(id(t), []).append(name)
        for names in by_identity.values():
            given = [n for n in names if n in tensors]
            for n in names:
                if given and n not in tensors:
                    tensors = {**tensors, n: tensors[given[0]]}
    saved: list[tuple[Module, str, Any]] = []
    try:
        for name, value in tensors.items():
            owner, _, attr = name.rpartition(".")
            sub = module.get_submodule(owner) if owner else module
            saved.append((sub, attr, _swap(sub, attr, value)))
        return module(*args, **kwargs)
    finally:
        for sub, attr, old in reversed(saved):
            _swap(sub, attr, old)


_ABSENT = object()  # an attribute the module did not have before the call


def _swap(sub: Module, attr: str, value: Any) -> Any:
    """Put `value` where attribute `attr` of `sub` lives (its parameters, buffers or plain
    attributes); returns what was there (_ABSENT: nothing, and putting _ABSENT deletes)."""
    for store in (sub._parameters, sub._buffers):
        if attr in store:
            old = store[attr]
            store[attr] = value
            return old
    old = sub.__dict__.get(attr, _ABSENT)
    if value is _ABSENT:
        sub.__dict__.pop(attr, None)
    else:
        sub.__dict__[attr] = value
    return old
