"""torch._guards: the tracing context torch.compile runs its backends in, and where to find the
fake mode of a compile (`detect_fake_mode`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fake_torch._subclasses.fake_tensor import FakeTensorMode, active_fake_mode, mode_of
from fake_torch._tensor import Tensor
from fake_torch.utils import _pytree


class TracingContext:
    """What a compile in progress knows; here, its fake mode."""

    def __init__(self, fake_mode: FakeTensorMode | None) -> None:
        self.fake_mode = fake_mode

    @staticmethod
    def try_get() -> TracingContext | None:
        """The context of the compile in progress on this thread, or None."""
        return getattr(_TLS, "tracing_context", None)

    @staticmethod
    def get() -> TracingContext:
        """The context of the compile in progress on this thread."""
        ctx = TracingContext.try_get()
        if ctx is None:
            raise RuntimeError(
                "TracingContext.get() must be called within an ongoing trace.")
        return ctx


_TLS = threading.local()


@contextmanager
def tracing(context: TracingContext | None) -> Iterator[TracingContext | None]:
    """Make `context` this thread's tracing context inside the block (None: none)."""
    old = getattr(_TLS, "tracing_context", None)
    _TLS.tracing_context = context
    try:
        yield context
    finally:
        _TLS.tracing_context = old


def detect_fake_mode(inputs: Any = None) -> FakeTensorMode | None:
    """The fake mode of the compile: the tracing context's, the active one, or the mode of a
    fake tensor among `inputs` (which must all agree); None when there is none."""
    found: list[FakeTensorMode] = []
    ctx = TracingContext.try_get()
    if ctx is not None and ctx.fake_mode is not None:
        found.append(ctx.fake_mode)
    active = active_fake_mode()
    if active is not None:
        found.append(active)
    for leaf in _pytree.tree_leaves(inputs):
        mode = mode_of(leaf) if isinstance(leaf, Tensor) else None
        if mode is not None:
            found.append(mode)
    if not found:
        return None
    for mode in found[1:]:
        if mode is not found[0]:
            raise AssertionError(f"fake mode ({mode}) is not the same as the first one "
                                 f"({found[0]})")
    return found[0]


__all__ = ["TracingContext", "detect_fake_mode", "tracing"]
