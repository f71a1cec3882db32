"""The benchmark runs and prints its table of per-op times and ratios (no timing assertions:
timings depend on the machine; the numbers are for people to read)."""

from __future__ import annotations

import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path

from fake_torch._tools._bench import CASES, IMPLS, RATIOS, Row, report, run_bench, time_per_call

REPO = Path(__file__).resolve().parents[1]
HAS_TORCH = importlib.util.find_spec("torch") is not None


def test_time_per_call_is_positive_and_runs_the_function() -> None:
    calls = []
    seconds = time_per_call(lambda: calls.append(1), repeat=2, min_time=0.001)
    assert seconds > 0 and len(calls) > 2


def test_bench_measures_every_case_and_implementation() -> None:
    out = io.StringIO()
    rows = run_bench(repeat=1, min_time=0.001, out=out)
    assert [r.case for r in rows] == list(CASES) == ["add 64", "mul 64", "silu 64",
                                                  "softmax 64", "matmul 64x64",
                                                  "MLP step 8x64"]
    for row in rows:
        assert set(row.seconds) == set(IMPLS)
        assert row.seconds["numpy"] is not None and row.seconds["numpy"] > 0
        # a missing implementation is reported with its reason, never silently dropped
        for impl in IMPLS:
            assert (row.seconds[impl] is None) == (impl in row.notes), (row.case, impl)
        if not HAS_TORCH:
            assert "not installed" in row.notes["torch cpu"]
    text = out.getvalue()
    header = text.splitlines()[1].split()
    assert header[0] == "op" and "fake cpu/torch cpu" in text and "fake cuda/numpy" in text
    from fake_torch._simulated._native_core import CORE, CORE_WHY
    assert f"core: {CORE} ({CORE_WHY})" in text  # native or pure Python, and why
    for case in CASES:
        line = next(ln for ln in text.splitlines() if ln.startswith(case))
        cells = line[len(case):].split()
        assert len(cells) == len(IMPLS) + len(RATIOS)
        assert all(re.fullmatch(r"n/a|\d+\.\d\d", c) for c in cells[:len(IMPLS)]), line
        assert all(re.fullmatch(r"n/a|\d+\.\d\dx", c) for c in cells[len(IMPLS):]), line


def test_report_prints_ratios_and_verdict() -> None:
    row = Row("add 64", {"numpy": 1e-6, "fake cpu": 3e-6, "fake cuda": 4e-6, "torch cpu": 2e-6})
    out = io.StringIO()
    report([row], out)
    line = next(ln for ln in out.getvalue().splitlines() if ln.startswith("add 64"))
    assert line.split()[2:] == ["1.00", "3.00", "4.00", "2.00", "1.50x", "2.00x", "3.00x",
                                "4.00x"]
    text = out.getvalue()
    assert "target add 64: fake cuda/torch cpu <= 3.0x: 2.00x, meets it" in text
    assert "target add 64: fake cpu/torch cpu <= 2.0x: 1.50x, meets it" in text
    assert "MLP step" not in text  # no step row: no step verdict
    row.seconds["fake cuda"] = 7e-6
    step = Row("MLP step 8x64", {"numpy": 1e-6, "fake cpu": 3e-6, "fake cuda": 9e-6,
                                 "torch cpu": 2e-6})
    soft = Row("softmax 64", {"numpy": 2e-6, "fake cpu": 3e-6, "fake cuda": 5.5e-6,
                              "torch cpu": 1e-6})
    out = io.StringIO()
    report([row, step, soft], out)
    text = out.getvalue()
    assert "target add 64: fake cuda/torch cpu <= 3.0x: 3.50x, misses it" in text
    assert "target MLP step 8x64: fake cuda/torch cpu <= 4.0x: 4.50x, misses it" in text
    # softmax against numpy's own plus 3 us: 5.5 us vs 5.0 us
    assert "target softmax 64: fake cuda <= numpy + 3 us: 5.50 us vs 5.00 us, misses it" in text
    soft.seconds["fake cuda"] = 4.9e-6
    out = io.StringIO()
    report([soft], out)
    assert "5.00 us, meets it" in out.getvalue() and "add 64" not in out.getvalue()


def test_bench_command_prints_the_table() -> None:
    done = subprocess.run([sys.executable, "-m", "fake_torch", "bench", "--repeat", "1",
                           "--capture-layers", "1"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("eager time per op on tiny float32 tensors")
    assert [ln.split()[0] for ln in lines[2:8]] == ["add", "mul", "silu", "softmax", "matmul",
                                                    "MLP"]
    capture = [ln for ln in lines if ln.startswith("capture at scale")]
    # one layer: 2 pieces around its attention per size, 51 sizes (no verdict: not the target)
    assert capture and re.match(r"capture at scale \(1-layer toy, PIECEWISE\): 51 sizes, "
                                r"102 graphs in \d+\.\d s$", capture[0]), capture
    meta = [ln for ln in lines if ln.startswith("meta build")]
    assert meta and re.match(r"meta build \(Llama 3 8B shapes, bf16: 8\.03e9 parameters, "
                             r"15\.0 GiB nominal\): \d+\.\d\d s, 0 launches, \d+ MiB resident "
                             r"\((torch's meta: \d+\.\d\d s|torch: not installed)\)$",
                             meta[0]), meta
