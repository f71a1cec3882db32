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
    """Compile `t`'s dim(s) `index` as dynamic from the first compile on. torch makes them
    unbacked symbols (no 0/1 specialization); fake_torch re-specialises every dynamic dim per
    concrete size, so an unbacked dim is a dynamic one."""
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_unbacked expects a tensor, got {type(t).__name__}")
    indices = [index] if isinstance(index, int) else list(index)
    dims: set[int] = getattr(t, "_dynamo_dynamic_indices", set())
    dims.update(indices)
    t._dynamo_dynamic_indices = dims  # type: ignore[attr-defined]
    unbacked: set[int] = getattr(t, "_dynamo_unbacked_indices", set())
    unbacked.update(indices)
    t._dynamo_unbacked_indices = unbacked  # type: ignore[attr-defined]


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
