"""`python -m fake_torch run --report`: the whole run's launches, whatever the script resets.

Oracle: the script's own LaunchCounter readings, added up before each of its resets. Each run is
a fresh subprocess (`run` installs fake_torch as torch for the whole process).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from fake_torch import LaunchCounter
from fake_torch._simulated import _gpus
from fake_torch._tools._run_report import format_report, whole_run

REPO_ROOT = Path(__file__).resolve().parents[1]
# what a `run` subprocess simulates from its start: FAKE_TORCH_GPU's GPU, else the one default
STARTING_GPU = _gpus.lookup(os.environ.get("FAKE_TORCH_GPU", _gpus.DEFAULT)).name

RESETTING_SCRIPT = """
import json
from collections import Counter

import torch

carried = {"n": 0, "by_op": Counter(), "by_kind": Counter()}


def read_and_reset():  # what a decode loop does to read each step's launches
    carried["n"] += torch.LaunchCounter.n
    carried["by_op"].update(torch.LaunchCounter.by_op)
    carried["by_kind"].update(torch.LaunchCounter.by_kind)
    torch.LaunchCounter.reset()


x = torch.ones(4, device="cuda")
read_and_reset()
y = (x * 2).relu()
read_and_reset()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    z = y + 1
g.replay()
g.replay()
z.cpu()  # left on the counter: the report adds what the last reset did not clear
carried["n"] += torch.LaunchCounter.n
carried["by_op"].update(torch.LaunchCounter.by_op)
carried["by_kind"].update(torch.LaunchCounter.by_kind)
print(json.dumps(carried))
"""

REPORT = re.compile(r"fake_torch launch report \(simulated ([^)]*)\): (\d+) launches over the "
                    r"whole run \(([^)]*)\)"
                    r"(?:, across the script's (\d+) LaunchCounter\.reset\(\) calls?)?$")


def _run(script: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fake_torch", "run", *options, str(script)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
                          check=False)


def _parse(stdout: str) -> tuple[int, dict[str, int], dict[str, int], int]:
    """(launches, by kind, by op, resets) from the report at the end of `stdout`."""
    lines = stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("fake_torch launch report"))
    found = REPORT.match(lines[head])
    assert found is not None, lines[head]
    assert found[1] == STARTING_GPU, found[1]  # the report names the GPU the run simulated
    kinds = dict((k, int(n)) for k, n in (part.rsplit(" ", 1) for part in found[3].split(", ")))
    ops = {op: int(n) for op, n in (line.split() for line in lines[head + 1:])}
    return int(found[2]), kinds, ops, int(found[4] or 0)


def test_report_totals_equal_the_counters_for_a_script_that_resets_midway(
        tmp_path: Path) -> None:
    script = tmp_path / "resets.py"
    script.write_text(RESETTING_SCRIPT)
    done = _run(script, "--report")
    assert done.returncode == 0, done.stderr
    oracle = json.loads(done.stdout.splitlines()[0])
    n, kinds, ops, resets = _parse(done.stdout)
    assert (n, kinds, ops) == (oracle["n"], oracle["by_kind"], oracle["by_op"])
    assert resets == 2
    assert ops["cudaGraphLaunch"] == 2 and ops["mul"] == ops["relu"] == 1  # after each reset


def test_a_script_that_never_resets_is_reported_as_before(tmp_path: Path) -> None:
    script = tmp_path / "two_adds.py"
    script.write_text("import torch\nx = torch.ones(4, device='cuda')\ny = x + x + x\n")
    done = _run(script, "--report")
    assert done.returncode == 0, done.stderr
    assert (f"fake_torch launch report (simulated {STARTING_GPU}): 3 launches over "
            "the whole run (kernel 3)\n") in done.stdout
    assert _parse(done.stdout) == (3, {"kernel": 3}, {"ones": 1, "add": 2}, 0)


def test_a_script_that_exits_is_reported_and_keeps_its_exit_status(tmp_path: Path) -> None:
    script = tmp_path / "exits.py"
    script.write_text("import sys\nimport torch\nx = torch.ones(4, device='cuda')\n"
                      "torch.LaunchCounter.reset()\nx + x\nsys.exit(3)\n")
    done = _run(script, "--report")
    assert done.returncode == 3, done.stderr
    assert _parse(done.stdout) == (2, {"kernel": 2}, {"ones": 1, "add": 1}, 1)


def test_the_report_names_the_gpu_the_script_switched_to(tmp_path: Path) -> None:
    script = tmp_path / "switches.py"
    script.write_text("import torch\ntorch.cuda.set_simulated_gpu('L4')\n"
                      "x = torch.ones(4, device='cuda')\n")
    done = _run(script, "--report")
    assert done.returncode == 0, done.stderr
    assert (f"fake_torch launch report (simulated {STARTING_GPU}, then NVIDIA L4): 1 launches "
            "over the whole run (kernel 1)\n") in done.stdout


def test_whole_run_carries_every_reset_and_puts_reset_back() -> None:
    original = LaunchCounter.reset
    LaunchCounter.reset()
    with whole_run() as tally:
        LaunchCounter.bump(2, op="mm")
        LaunchCounter.reset()
        LaunchCounter.bump(1, op="add", kind="memset")
        LaunchCounter.reset()
        LaunchCounter.bump(3, op="mm")
        assert LaunchCounter.n == 3  # the script still reads its own counts
        assert tally.totals() == (6, Counter(mm=5, add=1), Counter(kernel=5, memset=1))
        assert format_report(tally).splitlines() == [
            f"fake_torch launch report (simulated {_gpus.current().name}): 6 launches over the "
            "whole run (kernel 5, memset 1), "
            "across the script's 2 LaunchCounter.reset() calls",
            f"  {'mm':<40}{5:>8}", f"  {'add':<40}{1:>8}"]
    assert LaunchCounter.reset == original
    LaunchCounter.reset()
    assert tally.resets == 2  # resets after the block are not the run's
