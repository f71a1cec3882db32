"""Small gaps that third-party codebases hit (tests/test_thirdparty.py), each against real torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _fresh(code: str, fake: bool) -> str:
    """Run code in a fresh interpreter (import side effects), fake_torch installed or not."""
    prelude = "import fake_torch; fake_torch.install()\n" if fake else ""
    proc = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, check=True)
    return proc.stdout.strip()


def test_importing_dynamo_makes_functorch_config_an_attribute() -> None:
    # gpt-fast imports torch._dynamo.config and torch._inductor.config, then sets
    # torch._functorch.config.enable_autograd_cache: it is there because torch._dynamo loads it
    pytest.importorskip("torch")
    code = ("import torch\n"
            "import torch._dynamo.config\n"
            "print(torch._functorch.config.enable_autograd_cache)")
    assert _fresh(code, fake=True) == _fresh(code, fake=False) == "True"
