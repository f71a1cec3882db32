"""The lab's fixtures: `lab`, the module being graded (LAB_TARGET, see lab_files.py), and a
launch counter reset before every test.

This folder goes on sys.path so that the test modules, imported by path
(--import-mode=importlib), can `import lab_files`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

_LAB_DIR = str(Path(__file__).resolve().parent)
if _LAB_DIR not in sys.path:
    sys.path.insert(0, _LAB_DIR)

import lab_files  # noqa: E402  (needs the folder on sys.path)

GRADED_NAME, GRADED = lab_files.graded()


@pytest.fixture
def lab() -> ModuleType:
    """The module the graded tests run against."""
    return GRADED


@pytest.fixture(autouse=True)
def _fresh_counter() -> None:
    GRADED.LaunchCounter.reset()
