"""torch._logging._internal: `trace_structured`, the structured trace log, and `LazyString`.

Torch writes structured trace records (one JSON line each, for tlparse) to the logger
"torch.__trace" when TORCH_TRACE names a directory; otherwise the logger has no handler and a
record costs nothing: neither `metadata_fn` nor `payload_fn` runs. fake_torch keeps that logger
and that rule: attach a handler at DEBUG to "torch.__trace" to receive the records.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

trace_log = logging.getLogger("torch.__trace")


class LazyString:
    """A string computed when first printed: `str(LazyString(fn, *args))` is `fn(*args)`."""

    def __init__(self, func: Callable[..., str], *args: Any, **kwargs: Any) -> None:
        self.func = func
        self.args = args
        self.kwargs = kwargs

    def __str__(self) -> str:
        return self.func(*self.args, **self.kwargs)


def trace_structured(name: str,
                     metadata_fn: Callable[[], dict[str, Any] | tuple[str, int]] = dict, *,
                     payload_fn: Callable[[], str | object | None] = lambda: None,
                     suppress_context: bool = False, expect_trace_id: bool = True,
                     record_logging_overhead: bool = True, compile_id: Any = None) -> None:
    """Write one structured record `{name: metadata_fn()}` with `payload_fn()`'s text as its
    payload to the "torch.__trace" logger, if anything listens to it."""
    assert callable(metadata_fn), (
        f"metadata_fn should be callable, but got {type(metadata_fn)}")
    assert callable(payload_fn), f"payload_fn should be callable, but got {type(payload_fn)}"
    if not (trace_log.isEnabledFor(logging.DEBUG) and trace_log.hasHandlers()):
        return
    record: dict[str, Any] = {name: metadata_fn()}
    if compile_id is not None and not suppress_context:
        record["compile_id"] = str(compile_id)
    payload = payload_fn()
    if payload is not None and not isinstance(payload, str):
        payload = json.dumps(payload, indent=0)
    trace_log.debug("%s", json.dumps(record), extra={"metadata": record, "payload": payload})


__all__ = ["LazyString", "trace_log", "trace_structured"]
