"""Who is tracing right now, on this thread: the active Tracer (None when nothing traces, or
while a graph break runs code eagerly) and how deep inside a recorded call the code is."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fake_torch._dynamo.trace import Tracer


class _State(threading.local):
    def __init__(self) -> None:
        self.tracer: Tracer | None = None  # recording right now (None: not, or suspended)
        self.depth = 0  # >0 inside a recorded call: what it calls is part of it


_state = _State()


def active_tracer() -> Tracer | None:
    return _state.tracer


def is_tracing() -> bool:
    return _state.tracer is not None


__all__ = ["active_tracer", "is_tracing"]
