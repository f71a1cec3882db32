"""stubs/ presents fake_torch to mypy as `torch`: it is current, and it is the contract."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from fake_torch._tools._stubgen import render_stubs
from fake_torch._tools._stubgen_tensor import PATH as TENSOR_BASE_PATH
from fake_torch._tools._stubgen_tensor import render_tensor_base

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_stubs_are_current() -> None:
    on_disk = {p.relative_to(REPO_ROOT / "stubs").as_posix(): p.read_text()
               for p in (REPO_ROOT / "stubs").rglob("*.pyi")}
    expected = render_stubs()
    stale = sorted(n for n in expected.keys() | on_disk.keys()
                   if expected.get(n) != on_disk.get(n))
    assert not stale, f"stubs/ is out of date in {stale}: run `python -m fake_torch stubs`"
    on_disk_base = (REPO_ROOT / TENSOR_BASE_PATH).read_text()
    assert on_disk_base == render_tensor_base(), (
        f"{TENSOR_BASE_PATH} is out of date: run `python -m fake_torch stubs`")


def test_stubs_cover_the_torch_modules() -> None:
    files = render_stubs()
    for module in ("torch", "torch/nn", "torch/cuda", "torch/compiler", "torch/_dynamo",
                   "torch/fx", "torch/profiler"):
        assert f"{module}/__init__.pyi" in files
    for module in ("torch/nn/functional", "torch/testing"):
        assert f"{module}.pyi" in files
    assert "import cat as cat\n" in files["torch/__init__.pyi"]  # the ops, from their modules


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed; pip install -e '.[test]' to run this check")
    script = tmp_path / "port.py"
    script.write_text(source)
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml",
                           "--strict", str(script)],  # the repository's cache: fast
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          check=False)


def test_unsupported_torch_api_fails_mypy(tmp_path: Path) -> None:
    done = _mypy(tmp_path, "import torch\n\n"
                           "torch.fft.rfft(torch.zeros(4))\n"
                           "lrn = torch.nn.CrossMapLRN2d(3)\n"
                           "y: torch.Tensor = torch.zeros(2, 3).relu()\n")
    assert done.returncode == 1, done.stdout
    assert 'Module has no attribute "fft"' in done.stdout, done.stdout
    assert 'Module has no attribute "CrossMapLRN2d"' in done.stdout, done.stdout
    assert "port.py:5" not in done.stdout, done.stdout  # the supported line type-checks
    assert "Found 2 errors" in done.stdout, done.stdout
