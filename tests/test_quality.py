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


def test_only_the_door_counts_and_owns_its_registries() -> None:
    """The door (fake_torch/_simulated/_dispatch.py) is the one place that bumps LaunchCounter and
    keeps the observers, input checks and per-thread modes; others register through its
    functions (add_observer, add_input_check, enter_mode). mini_vllm, the seed's hand-counted
    toy, bumps the counter by design and is not scanned."""
    forbidden = ("LaunchCounter.bump(", "LaunchCounter._add(", "_dispatch._observers",
                 "_dispatch._input_checks", "_dispatch._read_checks", "_dispatch._local",
                 "_dispatch._count(")
    offenders = []
    for root in ("fake_torch", "examples"):
        for path in sorted((REPO_ROOT / root).rglob("*.py")):
            if path.name in ("_dispatch.py", "_counter.py"):
                continue
            text = path.read_text()
            offenders += [f"{path.relative_to(REPO_ROOT)}: {f}" for f in forbidden if f in text]
    assert not offenders, "only the door may count:\n" + "\n".join(offenders)
