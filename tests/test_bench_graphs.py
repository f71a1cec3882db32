"""The CUDA-graph benchmark (fake_torch/_tools/_bench_graphs.py) runs and prints the example Llama's
decode step eager vs replay vs floor, with both ratios and verdicts. No timing assertions: the
times depend on the machine; the launch counts and the printout's shape do not."""

from __future__ import annotations

import importlib
import importlib.util
import io
import re
import sys
from pathlib import Path

import pytest

import fake_torch
from fake_torch._tools import _bench_graphs
from fake_torch._tools._bench_graphs import (
    DecodeBench,
    load_example_llama,
    report_decode,
    run_graph_bench,
)

N = 60  # kernels of one eager decode step of the example Llama (tests/test_decode_runner.py)


def test_bench_prints_eager_replay_floor_and_ratios() -> None:
    out = io.StringIO()
    result = run_graph_bench(repeat=3, min_time=0.001, out=out)
    assert result is not None
    assert result.num_kernels == N
    assert result.launches == {"eager": N, "replay": 1}
    assert result.max_abs_diff == 0.0  # same kernels, same buffers' values: bit for bit
    assert all(result.seconds[p] > 0 for p in ("eager", "replay", "floor"))
    lines = out.getvalue().splitlines()
    assert lines[0] == f"example Llama decode step, batch 1 ({N} kernels; median us per step)"
    assert lines[1].split() == ["path", "us", "launches"]
    cells = [line.split() for line in lines[2:5]]
    assert [c[0] for c in cells] == ["eager", "replay", "floor"]
    assert [c[2] for c in cells] == [str(N), "1", "-"]
    assert all(re.fullmatch(r"\d+\.\d", c[1]) for c in cells), cells
    for (num, den), target in ((("replay", "eager"), "0.35"), (("replay", "floor"), "1.20")):
        line = next(ln for ln in lines if ln.startswith(f"{num}/{den}: "))
        m = re.fullmatch(rf"{num}/{den}: (\d+\.\d\d)x \(target <= {target}x, (meets|misses) it\)",
                         line)
        assert m, line
        assert float(m[1]) == pytest.approx(result.ratio(num, den), abs=0.006)
        assert (m[2] == "meets") == (result.ratio(num, den) <= float(target))
    assert lines[-1] == "replay vs eager logits: max |diff| 0.00e+00"


def test_report_ratios_and_verdicts() -> None:
    result = DecodeBench(seconds={"eager": 1e-2, "replay": 3e-3, "floor": 2.5e-3},
                         launches={"eager": N, "replay": 1}, num_kernels=N)
    out = io.StringIO()
    report_decode(result, out)
    text = out.getvalue()
    assert "eager      10000.0        60" in text and "floor       2500.0         -" in text
    assert "replay/eager: 0.30x (target <= 0.35x, meets it)" in text
    assert "replay/floor: 1.20x (target <= 1.20x, meets it)" in text
    result.seconds["replay"] = 4e-3
    out = io.StringIO()
    report_decode(result, out)
    assert "replay/eager: 0.40x (target <= 0.35x, misses it)" in out.getvalue()
    assert "replay/floor: 1.60x (target <= 1.20x, misses it)" in out.getvalue()


def test_example_model_loads_on_fake_torch_and_leaves_torch_alone() -> None:
    if importlib.util.find_spec("torch") is not None and "torch" not in sys.modules:
        importlib.import_module("torch")  # the real one: the per-op bench imports it too
    before = {n: m for n, m in sys.modules.items() if n == "torch" or n.startswith("torch.")}
    llama = load_example_llama()
    assert llama.torch is fake_torch  # its `import torch` meant fake_torch
    assert llama.F is fake_torch.nn.functional
    after = {n: m for n, m in sys.modules.items() if n == "torch" or n.startswith("torch.")}
    assert after == before  # a real torch imported here is back, exactly as it was


def test_missing_example_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(_bench_graphs, "LLAMA", tmp_path / "llama.py")
    out = io.StringIO()
    assert run_graph_bench(out=out) is None
    assert out.getvalue().startswith("example Llama decode step: n/a (the example model ")


def test_cli_bench_prints_the_graph_rows(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from fake_torch import __main__
    from fake_torch._tools import _bench

    monkeypatch.setattr(_bench, "run_bench", lambda **kw: [])  # the per-op table: test_bench
    assert __main__.main(["bench", "--repeat", "1", "--capture-layers", "1"]) == 0
    text = capsys.readouterr().out
    assert "example Llama decode step, batch 1" in text
    assert re.search(r"replay/eager: \d+\.\d\dx", text) and re.search(r"replay/floor: \d", text)
