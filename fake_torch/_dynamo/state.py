"""Who is tracing right now: the active Tracer (None when nothing traces, or while a graph
break runs code eagerly) and how deep inside a recorded call the code is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fake_torch._dynamo.trace import Tracer


class _State:
    tracer: Tracer | None = None  # the tracer recording right now (None: not, or suspended)
    depth: int = 0  # >0 inside a hooked call: nested calls are part of it


_state = _State()


def active_tracer() -> Tracer | None:
    return _state.tracer


def is_tracing() -> bool:
    return _state.tracer is not None


__all__ = ["active_tracer", "is_tracing"]
