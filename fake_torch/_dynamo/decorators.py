"""torch._dynamo.decorators: the compiler's stance, and marks put on functions and tensors.

Stances (what a compiled function does when called), as torch 2.13:
  default             compile, recompile when guards fail
  force_eager         run the Python eagerly, ignore torch.compile
  eager_on_recompile  cached entries still run; where one would compile, run eagerly
  fail_on_recompile   cached entries still run; where one would compile, RuntimeError
`skip_guard_eval_unsafe=True` lets torch skip guards it assumes pass; fake_torch still checks
them all (a superset, same results). "eager_then_compile" / "aot_eager_then_compile" and
`force_backend` are not emulated and raise NotImplementedError when a compiled function runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fake_torch._grad_mode import _DecoratorContextManager
from fake_torch._tensor import Tensor

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class DynamoStance:
    stance: str = "default"
    skip_guard_eval_unsafe: bool = False
    backend: str | Callable[..., Any] | None = None


_stance = DynamoStance()


def current_stance() -> DynamoStance:
    """The stance compiled functions follow now (read by convert_frame at each call)."""
    return _stance


def _set_stance(stance: DynamoStance) -> DynamoStance:
    global _stance
    from fake_torch._dynamo.state import is_tracing

    if is_tracing():
        raise RuntimeError("attempted to set_stance in a torch.compile region")
    prior = _stance
    _stance = stance
    return prior


class set_stance(_DecoratorContextManager):
    """Set the compiler's stance: at once (a call), for a block (`with`), or for a function's
    calls (a decorator)."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend: str | Callable[..., Any] | None = None) -> None:
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = DynamoStance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set_stance(self.stance)

    def __call__(self, fn: F) -> F:
        _set_stance(self.prev)
        return super().__call__(fn)

    def __enter__(self) -> None:
        _set_stance(self.stance)

    def __exit__(self, *exc: object) -> None:
        _set_stance(self.prev)

    def clone(self) -> set_stance:
        return self.__class__(self.stance.stance, force_backend=self.stance.backend)


def assume_constant_result(fn: F) -> F:
    """Mark `fn` as returning a constant: traced code calls it once and bakes in its result
    (fake_torch's tracer runs Python, so a non-tensor result is baked in by construction)."""
    fn._dynamo_marked_constant = True  # type: ignore[attr-defined]
    return fn


def allow_in_graph(fn: F) -> F:
    """Mark `fn` to be put in the graph as one call rather than traced into. fake_torch's
    tracer records calls at the API door, so it traces through `fn` (its ops become the
    nodes); values and launches are the same."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise TypeError(f"allow_in_graph expects a callable, but got {type(fn).__name__}")
    fn._dynamo_allow_in_graph = True  # type: ignore[attr-defined]
    return fn


def mark_unbacked(t: Any, index: int | list[Any] | tuple[Any], hint_override: int | None = None,
                  strict: bool = False, specialize_on: list[Any] | None = None,
                  shape_id: str | None = None, min: int | None = None,
                  max: int | None = None) -> None:
    """Compile `t`'s dim(s) `index` as unbacked (data-dependent) from the first compile on.
    The marks are kept on the tensor under torch's attribute names (`_dynamo_unbacked_indices`,
    `_dynamo_hint_overrides`, `_dynamo_shape_ids`, `_dynamo_unbacked_bounds`,
    `_dynamo_strict_unbacked_indices`, `_specialize_on`), with torch's quirks: a list of
    dims passes on only shape_id, min and max, strict=True records the dim as strict only,
    and `_specialize_on` holds the last dim marked.
    fake_torch's tracer compiles each marked dim as a dynamic one (`_dynamo_dynamic_indices`)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_unbacked expects a tensor, got {type(t).__name__}")
    if isinstance(index, (list, tuple)):
        for i in index:
            mark_unbacked(t, i, shape_id=shape_id, min=min, max=max)
        return
    if not isinstance(index, int):
        raise AssertionError(f"Expected index to be int, list, or tuple, got {type(index)}")
    marks = vars(t)
    marks.setdefault("_dynamo_dynamic_indices", set()).add(index)
    marks["_has_dynamo_dim_marking"] = True
    if strict:
        marks.setdefault("_dynamo_strict_unbacked_indices", set()).add(index)
        return
    if "_specialized_on" not in marks:  # torch tests this name, so each call starts afresh
        marks["_specialize_on"] = {}
    marks["_specialize_on"][index] = specialize_on if specialize_on is not None else []
    overrides = marks.setdefault("_dynamo_hint_overrides", {})
    if hint_override:
        overrides[index] = hint_override
    if min is not None or max is not None:
        marks.setdefault("_dynamo_unbacked_bounds", {})[index] = (min, max)
    if shape_id is not None:
        marks.setdefault("_dynamo_shape_ids", {})[index] = shape_id
    marks.setdefault("_dynamo_unbacked_indices", set()).add(index)


def mark_static_address(t: Any, guard: bool = False) -> None:
    """Mark a tensor input whose address stays the same from call to call (a KV cache, a
    static buffer): CUDA graph trees read and write it in place, never copy it, and its
    in-place writes do not skip them. guard=True also guards its identity (another tensor
    recompiles); with guard=False a new address makes the trees record again."""
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"  # type: ignore[attr-defined]


__all__ = ["allow_in_graph", "assume_constant_result", "mark_static_address", "mark_unbacked",
           "set_stance"]
