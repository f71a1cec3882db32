"""`python -m fake_torch api`: it needs real torch and says so; its missing names come most used
first, by the usage table fake_torch/_tools/_api_usage.py counts from real runner code.

Oracles: the table's own counter run on small programs, and real torch (CPU build) for the
report's ranking.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fake_torch._tools import _api, _api_usage
from fake_torch._tools._api_deviations import DEVIATIONS
from fake_torch._tools._api_usage import USAGE, count_torch_names

REPO_ROOT = Path(__file__).resolve().parents[1]


def test_without_torch_it_says_torch_is_needed_and_exits_2() -> None:
    code = ("import sys; sys.modules['torch'] = None  # `import torch` fails, as uninstalled\n"
            "from fake_torch.__main__ import main; sys.exit(main(['api']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == _api.NO_TORCH + "\n"
    assert "needs real torch" in done.stderr and "pip install 'torch==2.13.*'" in done.stderr


def test_the_counter_follows_every_way_of_importing_torch() -> None:
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.cuda import graph as capture, CUDAGraph
        from . import torch as not_torch

        g = CUDAGraph()
        with capture(g):
            y = F.silu(torch.cuda.current_stream().wait_stream(x))
        layer: nn.Linear = nn.Linear(4, 4)
        torch.backends.cuda.matmul.allow_tf32 = True
        not_torch.cuda.graph
        z = torch.zeros(2).cuda()
    """)
    assert count_torch_names(source) == {
        "torch.cuda.CUDAGraph": 1, "torch.cuda.graph": 1, "torch.nn.functional.silu": 1,
        "torch.cuda.current_stream": 1, "torch.nn.Linear": 2,
        "torch.backends.cuda.matmul.allow_tf32": 1, "torch.zeros": 1}


def test_the_table_holds_public_names_of_the_compared_modules_most_used_first() -> None:
    assert len(USAGE) > 100
    for key, n in USAGE.items():
        module, name = key.rsplit(".", 1)
        assert module in _api.MODULES and not name.startswith("_"), key
        assert isinstance(n, int) and n > 0, key
    counts = list(USAGE.values())
    assert counts == sorted(counts, reverse=True)
    # what a CUDA-graph runner reaches for most, in the three sources counted
    assert {"torch.Tensor", "torch.cuda.CUDAGraph", "torch.cuda.graph",
            "torch.cuda.current_stream"} <= set(list(USAGE)[:10])


def test_missing_names_come_most_used_first(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch", reason="real torch (CPU build) is the oracle: pip install torch")
    reports = _api.compare_all()
    if not reports:
        pytest.skip("`torch` is fake_torch here (install() is in effect), not real torch")
    for r in reports:
        ranks = [(-_api_usage.usage(r.torch_name, n), n) for n in r.missing]
        assert ranks == sorted(ranks), r.torch_name
    top = next(r for r in reports if r.torch_name == "torch")
    last = top.missing[-1]  # alphabetically last of the unused: as if runners used it most
    monkeypatch.setitem(USAGE, f"torch.{last}", 999)
    top = _api.compare_module("torch", "fake_torch")
    assert top is not None and top.missing[0] == last
    row = next(line for line in _api.render_report([top], DEVIATIONS).splitlines()
               if line.startswith("| `torch` |"))
    assert f"| {last} (999), " in row
