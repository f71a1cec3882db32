"""A composite op's output rule calls the rules of the ops its body calls: `call_rule("torch.
softmax", input, dim)` is what `input.softmax(dim)` would return, described. The op is found
by its qualified name (fake_torch/_meta_registrations.py `qualified_name`) or by its
implementation function, once, when a rule first asks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from fake_torch import _opdef
from fake_torch._meta_registrations import Output, qualified_name, run_rule


@functools.cache
def def_named(name: str) -> _opdef.OpDef:
    """The op definition of qualified name `name` ("torch.softmax", "Tensor.relu_")."""
    for d in _opdef.definitions():
        if qualified_name(d) == name:
            return d
    raise LookupError(f"no op is defined as {name}")


@functools.cache
def def_of(impl: Callable[..., Any]) -> _opdef.OpDef:
    """The op definition whose implementation is `impl` (`arith.add`: torch.add's)."""
    for d in _opdef.definitions():
        if d.impl is impl:
            return d
    raise LookupError(f"{impl.__qualname__} implements no op")


def call_rule(op: str | Callable[..., Any], *args: Any, **kwargs: Any) -> Output:
    """The outputs of the op `op` (a qualified name, or its implementation) on these
    arguments, described by its rule (an op without one refuses by name)."""
    opdef = def_named(op) if isinstance(op, str) else def_of(op)
    return run_rule(opdef, args, kwargs)


__all__ = ["call_rule", "def_named", "def_of"]
