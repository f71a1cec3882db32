"""README's "Type-check your code as torch code": mypy checks a runner against fake_torch's stubs
from a folder outside the repository.

The environment is what README's install makes: a virtual environment whose site-packages holds
a .pth line naming the repository root (pip's `--config-settings editable_mode=compat` writes
that; a plain install copies the package instead). The command is README's, run in a temporary
folder. The same command without that line (as the default editable install, an import hook,
leaves mypy) fails: that is what the install mode is for.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import ml_dtypes
import numpy
import pytest
import typing_extensions

REPO_ROOT = Path(__file__).resolve().parents[1]

RUNNER = textwrap.dedent("""
    import torch


    def decode_step(graph: torch.cuda.CUDAGraph, static_ids: torch.Tensor,
                    ids: torch.Tensor) -> torch.Tensor:
        static_ids.copy_(ids)
        graph.replay()
        return static_ids


    launches: int = torch.LaunchCounter.n
    stream: torch.cuda.Stream = torch.cuda.current_stream()
    wrong: str = torch.zeros(2)
""")


def _environment(root: Path, with_fake_torch: bool) -> Path:
    """A virtual environment without pip whose site-packages reaches numpy & co. (and, when
    asked, the repository root, as a compat editable install does); its python."""
    venv.create(root, with_pip=False)
    python = root / "bin" / "python"
    site = next((root / "lib").glob("python3*/site-packages"))
    deps = {str(Path(m.__file__).resolve().parents[1]) for m in (numpy, ml_dtypes)}
    deps.add(str(Path(typing_extensions.__file__).resolve().parent))
    lines = sorted(deps) + ([str(REPO_ROOT)] if with_fake_torch else [])
    (site / "fake_torch_and_deps.pth").write_text("\n".join(lines) + "\n")
    return python


def _readme_mypy(tmp_path: Path, with_fake_torch: bool) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed; pip install -e '.[test]' to run this check")
    if sys.platform == "win32":
        pytest.skip("the environment below is laid out as on POSIX")
    python = _environment(tmp_path / "env", with_fake_torch)
    work = tmp_path / "my_project"
    work.mkdir()
    (work / "my_runner.py").write_text(RUNNER)
    # the environment is the venv's alone: a PYTHONPATH naming the repository (as a developer
    # running the suite from a worktree sets) would let mypy follow the stubs without it
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
           "MYPYPATH": str(REPO_ROOT / "stubs")}
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--python-executable",
                           str(python), "my_runner.py"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_readme_command_type_checks_a_runner_outside_the_repository(tmp_path: Path) -> None:
    done = _readme_mypy(tmp_path, with_fake_torch=True)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert errors == ['my_runner.py:14: error: Incompatible types in assignment (expression has '
                      'type "Tensor", variable has type "str")  [assignment]'], done.stdout


def test_without_a_readable_install_mypy_cannot_follow_the_stubs(tmp_path: Path) -> None:
    done = _readme_mypy(tmp_path, with_fake_torch=False)
    assert done.returncode == 1
    assert 'Cannot find implementation or library stub for module named "fake_torch"' in (
        done.stdout)
