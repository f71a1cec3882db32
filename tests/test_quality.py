"""Static checks as tests: `mypy --strict` on the packages and `ruff check .` on the repository.

Both read their configuration from pyproject.toml and run from the repository root, exactly as a
contributor would type them. Each skips, with its reason, when the tool is not installed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["fake_torch", "mini_vllm", "examples"]  # examples: `import torch` means stubs/


def _run_tool(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed; pip install -e '.[test]' to run this check")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def test_mypy_strict_is_clean() -> None:
    done = _run_tool("mypy", "--config-file", "pyproject.toml", "--strict", *PACKAGES)
    if done.returncode != 0:
        pytest.fail(f"mypy --strict {' '.join(PACKAGES)} exited {done.returncode}:\n"
                    f"{done.stdout}{done.stderr}", pytrace=False)


def test_ruff_check_is_clean() -> None:
    done = _run_tool("ruff", "check", ".")
    if done.returncode != 0:
        pytest.fail(f"ruff check . exited {done.returncode}:\n{done.stdout}{done.stderr}",
                    pytrace=False)
