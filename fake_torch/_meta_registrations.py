"""Every op's output rule: what it returns (shape, dtype, strides, storage offset, and for a view
the input it aliases), worked out from its inputs' metadata alone, without running a kernel.

    @register_meta("torch.add", "Tensor.add_")
    def _add(input, other, *, alpha=1, out=None) -> TensorMeta: ...

A rule takes the op's own arguments (as its implementation does) and reads only metadata of
the tensors among them: `shape`, `size()`, `dim()`, `stride()`, `dtype`, `storage_offset()`.
Sizes are combined with plain Python arithmetic and comparisons, never numpy, so the same rule
runs on concrete ints (the meta device, a dry run at real sizes) and on symbolic sizes (the
tracer, torch's SymInt): one rule per op, shared. A rule is found by the op's qualified name
(`torch.add`, `torch.nn.functional.relu`, `Tensor.view` for a method-only op), else by its kind
(`register_kind`: pointwise ops broadcast, ...). tests/test_meta_rules.py runs every op
definition both ways (its kernel on the cpu, its rule) and compares.

Where rules live: beside the op they describe, in the module that defines the op (its
kernel), after the op or in an `# --- output rules` section at the module's end; the pointwise
kind's rule is in fake_torch/_kernels/_elementwise.py, beside the engine whose layout
(TensorIterator's dim order) it shares. A rule calls the helpers its kernel calls for checks,
shapes and strides (`_cat_out`, `_max_pool_plan`, `output_perm`, `format_strides`, ...): where
the kernel computed those inline, that code moved into a helper both call, so there is one
rule, not two copies. Registering is a dict insert per name at import; eager ops never call a
rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fake_torch import _opdef
from fake_torch._dtype import dtype
from fake_torch._memory_format import contiguous_strides as contiguous_strides

F = TypeVar("F", bound=Callable[..., Any])
Size = Any  # an int, or a torch.SymInt while tracing with symbolic sizes


@dataclass(frozen=True)
class TensorMeta:
    """One output tensor, described: what a kernel would allocate (or a view would take)."""

    shape: tuple[Size, ...]
    dtype: dtype
    stride: tuple[Size, ...]
    storage_offset: Size = 0
    alias: int | None = None  # a view: the position of the input (among the call's tensors,
    # in argument order, lists flattened) whose storage it shares; None: a new buffer


Output = Any  # a TensorMeta, a tuple or list of outputs, or a plain value (None, a number)
Rule = Callable[..., Output]

_by_name: dict[str, Rule] = {}
_by_kind: dict[str, Rule] = {}


def qualified_name(opdef: _opdef.OpDef) -> str:
    """`torch.add`, `torch.nn.functional.relu`, `Tensor.view`: what rules are registered as."""
    if opdef.namespace is not None:
        return f"{opdef.namespace}.{opdef.name}"
    return f"Tensor.{opdef.name}"


def register_meta(*names: str) -> Callable[[F], F]:
    """Register the decorated function as the output rule of the ops `names` (qualified)."""
    def register(rule: F) -> F:
        for name in names:
            if name in _by_name:
                raise ValueError(f"{name} has an output rule already "
                                 f"({_by_name[name].__module__}.{_by_name[name].__qualname__})")
            _by_name[name] = rule
        return rule
    return register


def register_kind(kind: str) -> Callable[[F], F]:
    """Register the decorated function as the output rule of every op of `kind` that has no
    rule of its own (one rule for all pointwise ops: broadcasting and type promotion)."""
    def register(rule: F) -> F:
        if kind in _by_kind:
            raise ValueError(f"ops of kind {kind!r} have a rule already")
        _by_kind[kind] = rule
        return rule
    return register


def rule_for(opdef: _opdef.OpDef) -> Rule | None:
    """The op's output rule: its own, else its kind's, else None."""
    found = _by_name.get(qualified_name(opdef))
    return found if found is not None else _by_kind.get(opdef.kind)


def registered_names() -> frozenset[str]:
    """The qualified names that have an output rule of their own (not their kind's)."""
    return frozenset(_by_name)


def run_rule(opdef: _opdef.OpDef, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Output:
    """The op's outputs, described by its rule; an op without one refuses by name."""
    rule = rule_for(opdef)
    if rule is None:
        raise NotImplementedError(f"{qualified_name(opdef)}: fake_torch has no output rule for "
                                  "this op yet (needed for symbolic sizes and dry runs)")
    return rule(*args, **kwargs)


__all__ = ["Output", "Rule", "TensorMeta", "contiguous_strides", "qualified_name",
           "register_kind", "register_meta", "registered_names", "rule_for", "run_rule"]
