"""Spawned children get the parent's `import torch`: while fake_torch is installed as torch
(`python -m fake_torch run`), every child Python's spawn start method starts (plain
multiprocessing, `mp.get_context("spawn")`, torch.multiprocessing.spawn) installs fake_torch
before it re-imports the parent's main module and unpickles its target, which may import torch
(nano-vllm's `ctx.Process(target=ModelRunner, ...)`). Without this the child's `import torch`
would find the real torch, or none.

multiprocessing.spawn builds the child's command line as `python -c PROGRAM`; the wrapper puts
the install in front of PROGRAM, only when the parent has fake_torch installed at that moment.
"""

from __future__ import annotations

import multiprocessing.spawn
import os
from typing import Any

from fake_torch._install import is_installed

__all__ = ["hook_spawn"]

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_original = multiprocessing.spawn.get_command_line


def _command_line(**kwds: Any) -> list[Any]:
    line = list(_original(**kwds))
    if is_installed() and "-c" in line:
        at = line.index("-c") + 1
        line[at] = (f"import sys; sys.path.insert(0, {_ROOT!r}); import fake_torch; "
                    f"fake_torch.install(); {line[at]}")
    return line


def hook_spawn() -> None:
    """Wrap multiprocessing.spawn.get_command_line (once)."""
    if multiprocessing.spawn.get_command_line is _original:
        multiprocessing.spawn.get_command_line = _command_line
