"""Which file the lab grades, and how a file is loaded as a module.

One switch chooses the graded file, the environment variable LAB_TARGET:
  - unset (or empty): the reference, `mini_vllm.cudagraph` (so the suite passes out of the box);
  - `LAB_TARGET=starter`: `starter.py` beside this file (your working copy);
  - `LAB_TARGET=/path/to/your_file.py`: any file of yours with the same public API.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import mini_vllm.cudagraph as reference

LAB_DIR = Path(__file__).resolve().parent
STARTER_PATH = LAB_DIR / "starter.py"
GRADE_COMMAND = ("LAB_TARGET=starter pytest phase-05-cuda-graphs-and-torch-compile/labs -q "
                 "--tb=short")  # README.md's command: every failure's message printed once


def load(path: Path, name: str) -> ModuleType:
    """Import the file at `path` as a module called `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def graded() -> tuple[str, ModuleType]:
    """(what is graded, its module), as LAB_TARGET says."""
    raw = os.environ.get("LAB_TARGET", "").strip()
    if not raw:
        return "reference (mini_vllm.cudagraph)", reference
    path = STARTER_PATH if raw == "starter" else Path(raw).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"LAB_TARGET={raw!r}: expected 'starter' or the path of your .py "
                                f"file, but {path} is not a file")
    return str(path), load(path, "lab01_target")
