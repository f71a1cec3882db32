"""The counts that teach (examples/compile_table.py): launches per decode step of the example
Llama eagerly, compiled and with mode="reduce-overhead", checked against counts taken another
way: the compiled step's own launches (one per kernel the report lists, plus the eager ops
after the graph), every eager launch absorbed by exactly one kernel, and a replay that is one
input copy plus one graph launch.

Runs under `python -m fake_torch run` in a subprocess: this process may hold real torch."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

_DRIVER = f"""
import json, sys
import torch
import torch._dynamo
import torch.compiler
from fake_torch._compile import compile
from fake_torch._simulated._dispatch import record_ops

sys.path.insert(0, {str(EXAMPLES)!r})
from compile_table import decode_counts
from llama import Llama, LlamaConfig, decode_step, prefill

counts = decode_counts(batch=2)
report = {{"eager": counts.eager, "compiled": counts.compiled,
          "reduce_overhead": counts.reduce_overhead, "graphs": len(counts.graphs),
          "kernels": [[k.name, k.kind, k.ops] for k in counts.kernels]}}

def steps(model, tokens, positions, n):
    for _ in range(n):
        torch.compiler.cudagraph_mark_step_begin()
        with record_ops() as ops:
            decode_step(model, tokens, positions)
    return list(ops)

torch.manual_seed(0)
model = Llama(LlamaConfig()).to("cuda").eval()
model.allocate_kv_cache(2)
prompt = torch.randint(0, 256, (2, 5), device="cuda")
with torch.inference_mode():
    _, tokens, positions = prefill(model, prompt)
    direct = {{"eager": steps(model, tokens, positions, 1),
              "compiled": steps(compile(model), tokens, positions, 3)}}
    torch._dynamo.reset()
    direct["reduce_overhead"] = steps(compile(model, mode="reduce-overhead"), tokens,
                                      positions, 3)
print(json.dumps({{"report": report, "direct": direct}}))
"""


@pytest.fixture(scope="module")
def counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    driver = tmp_path_factory.mktemp("compile_table") / "driver.py"
    driver.write_text(_DRIVER)
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run", str(driver)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        pytest.fail(f"examples/compile_table.py failed:\n{done.stderr}", pytrace=False)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_eager_column_is_the_launches_of_an_eager_step(counts: dict[str, Any]) -> None:
    assert counts["report"]["eager"] == len(counts["direct"]["eager"])


def test_compiled_column_is_one_launch_per_listed_kernel(counts: dict[str, Any]) -> None:
    report, direct = counts["report"], counts["direct"]
    kernels = [name for name, _, _ in report["kernels"]]
    assert report["graphs"] == 1
    assert direct["compiled"] == [*kernels, "argmax", "add"]  # sampling runs after the graph
    assert report["compiled"] == len(direct["compiled"])


def test_every_eager_launch_is_absorbed_by_exactly_one_kernel(counts: dict[str, Any]) -> None:
    absorbed = [op for _, _, ops in counts["report"]["kernels"] for op in ops]
    assert Counter([*absorbed, "argmax", "add"]) == Counter(counts["direct"]["eager"])


def test_fused_kernels_are_triton_and_extern_ones_are_gemms_and_attention(
        counts: dict[str, Any]) -> None:
    kinds = {kind for _, kind, _ in counts["report"]["kernels"]}
    assert kinds == {"pointwise", "reduction", "extern"}
    for name, kind, ops in counts["report"]["kernels"]:
        if kind == "extern":
            assert ops == [name] and name in ("mm", "_scaled_dot_product_efficient_attention")
        else:
            assert name.startswith(("triton_poi_fused_", "triton_per_fused_"))


def test_reduce_overhead_replays_one_graph(counts: dict[str, Any]) -> None:
    # the new tokens and positions copied in (one _foreach_copy_: both int64), one replay
    assert counts["direct"]["reduce_overhead"] == ["_foreach_copy_", "cudaGraphLaunch",
                                                   "argmax", "add"]
    assert counts["report"]["reduce_overhead"] == 4


def test_the_table_prints_the_three_counts(counts: dict[str, Any]) -> None:
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run",
                           str(EXAMPLES / "compile_table.py")], cwd=REPO, capture_output=True,
                          text=True, timeout=300, check=True)
    report = counts["report"]
    lines = done.stdout.splitlines()
    assert lines[0] == "launches per decode step (batch 2):"
    assert lines[1].split() == ["eager", str(report["eager"])]
    assert lines[2].split()[:3] == ["compiled", "(fused)", str(report["compiled"])]
    assert lines[3].split() == ["reduce-overhead", "(replay)", str(report["reduce_overhead"])]
