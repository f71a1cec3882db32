"""torch._dynamo.types: the records Dynamo hands to user hooks (here: what a guard filter
sees of each guard)."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class GuardFilterEntry:
    """One guard of a compiled frame, as torch.compile's `guard_filter_fn` receives it.

    name: the guarded expression without the local scope ("x", "xs[0]", "self.eps",
    "G['LIMIT']"; "" for guards on global state); has_value / value: the object it guards
    (value is a sentinel when has_value is False); guard_type: the guard's kind
    ("TENSOR_MATCH", "CONSTANT_MATCH", "TYPE_MATCH", "ID_MATCH", "SHAPE_ENV", ...);
    derived_guard_types: the checks it builds ("EQUALS_MATCH", "NONE_MATCH", ...); is_global:
    it guards a global; orig_guard: the guard itself."""

    name: str
    has_value: bool
    value: object
    guard_type: str
    derived_guard_types: tuple[str, ...]
    is_global: bool
    orig_guard: Any


__all__ = ["GuardFilterEntry"]
