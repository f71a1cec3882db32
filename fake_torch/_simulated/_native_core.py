"""Which core runs the simulated machine's hot path: the native extension
fake_torch._simulated._native (its sources _native*.c here: the allocator's block book, an op
output's allocation and free, the allocator's and the timeline's lock, the door's eager cuda
launch) when it was built, else the pure Python it mirrors, which stays the oracle
(tests/test_native_core.py and tests/test_native_launch.py run both on the same sequences).

`NATIVE` is the extension module to use: None when it is absent, stale, or FAKE_TORCH_PURE=1
(`CORE` names the core in use, `CORE_WHY` says why).
"""

from __future__ import annotations

import os
import threading
from types import ModuleType
from typing import Any

from fake_torch._simulated._allocator_blocks import MIN_BLOCK, SMALL_SIZE
from fake_torch._simulated._allocator_stats import FOLD_AT
from fake_torch._simulated._counter import _FOLD_AT as COUNT_FOLD_AT


def built_native() -> tuple[ModuleType | None, str]:
    """The native core if it was built (whatever FAKE_TORCH_PURE says), or None and why not."""
    try:
        from fake_torch._simulated import _native as native
    except ImportError:
        return None, "fake_torch._simulated._native was not built (no C compiler at install)"
    if (getattr(native, "FOLD_AT", None), getattr(native, "MIN_BLOCK", None),
            getattr(native, "SMALL_SIZE", None), getattr(native, "COUNT_FOLD_AT", None)) != (
                FOLD_AT, MIN_BLOCK, SMALL_SIZE, COUNT_FOLD_AT):
        return None, "fake_torch._simulated._native is stale (its constants differ): reinstall"
    return native, "built at install"


def _native() -> tuple[ModuleType | None, str]:
    """The native core to use, or None and why not."""
    if os.environ.get("FAKE_TORCH_PURE", "") not in ("", "0"):
        return None, "FAKE_TORCH_PURE is set"
    return built_native()


NATIVE, CORE_WHY = _native()
CORE = "native" if NATIVE is not None else "pure Python"


def new_rlock() -> Any:
    """A reentrant lock: the native core's RLock (threading.RLock's methods, its state
    readable from C, so the native steps take it inline), else threading.RLock."""
    return NATIVE.RLock() if NATIVE is not None else threading.RLock()
