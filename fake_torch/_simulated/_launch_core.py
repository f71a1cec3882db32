"""Which door runs the eager cuda launches: the native one (fake_torch._simulated._native_launch,
its source _native_launch.c here) when it was built, else the pure Python `_dispatch.launch`.

The native door takes only the commonest launch (an eager kernel on the simulated cuda device,
nobody watching, nothing queued) and hands every other case to the pure-Python door, which stays
the oracle: tests/test_native_launch.py runs the same launch sequences through both.
`NATIVE` is the module to use: None when it is absent or FAKE_TORCH_PURE=1 (`CORE` names the
door in use, `CORE_WHY` says why).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any


def built_native() -> tuple[ModuleType | None, str]:
    """The native door's module if it was built (whatever FAKE_TORCH_PURE says), or None and
    why not."""
    try:
        from fake_torch._simulated import _native_launch as native
    except ImportError:
        return None, ("fake_torch._simulated._native_launch was not built (no C compiler at "
                      "install)")
    from fake_torch._simulated import _counter
    if native.FOLD_AT != _counter._FOLD_AT:
        return None, "fake_torch._simulated._native_launch is stale (its constants differ)"
    return native, "built at install"


def _native() -> tuple[ModuleType | None, str]:
    if os.environ.get("FAKE_TORCH_PURE", "") not in ("", "0"):
        return None, "FAKE_TORCH_PURE is set"
    return built_native()


NATIVE, CORE_WHY = _native()
CORE = "native" if NATIVE is not None else "pure Python"
# the timeline's lock: the native core's (threading.RLock's methods, no system call while
# nobody waits; the native door takes it inline) or threading.RLock
new_lock: Callable[[], Any] = NATIVE.Lock if NATIVE is not None else threading.RLock
