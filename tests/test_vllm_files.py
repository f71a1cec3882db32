"""vLLM's own CUDA-graph files on fake_torch (issue 14), opt-in.

Skipped unless VLLM_PATH names an unpacked vLLM 0.33.0 wheel (`pip download vllm==0.33.0
--no-deps`, then unzip it: the folder holding vllm/). VLLM_PYTHON is the interpreter that runs
it: one with fake_torch and vLLM's Python dependencies (pydantic, transformers, ...) and WITHOUT
real torch (default: this one). tests/vllm/run_vllm_files.py imports vLLM's files unchanged, with
only the three stand-ins of tests/vllm/standins, and writes what each step did; checked here:
  1. vllm.config, forward_context, v1.cudagraph_dispatcher, compilation.cuda_graph and
     compilation.counter import; CompilationConfig keeps the capture sizes it is given;
  2. the dispatcher keys and dispatches per CUDA-graph mode as vLLM's dispatcher test expects
     (two capture sizes: two FULL keys for every FULL mode, two PIECEWISE keys for the piecewise
     ones; an exact size in a captured mode dispatches to it; a size above the largest capture
     size runs eagerly); CUDAGraphWrapper captures once per batch descriptor, replays as ONE
     graph launch with the captured kernels' values, and bypasses for another runtime mode;
  3. piecewise compilation as vLLM's test_simple.py runs it (backend eager), through Dynamo's
     symbolic trace, vLLM's guard filter and VllmBackend's pass manager (its fusion patterns
     traced with make_fx against our stand-ins for vLLM's fused kernels, which carry vLLM's own
     schemas): vLLM's counters (1 graph seen, 5 pieces, 3 capturable, 3 backend compilations,
     6 graphs captured), the op called twice, replay output [19, 19].
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent / "vllm"
TREE = os.environ.get("VLLM_PATH", "")
PYTHON = os.environ.get("VLLM_PYTHON") or sys.executable

pytestmark = pytest.mark.skipif(
    not TREE, reason="set VLLM_PATH to an unpacked vLLM 0.33.0 wheel (and VLLM_PYTHON to an "
    "interpreter with fake_torch and vLLM's dependencies, without torch) to run vLLM's files")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("vllm") / "results.json"
    env = {**os.environ, "VLLM_LOGGING_LEVEL": "WARNING"}
    done = subprocess.run([PYTHON, str(HERE / "run_vllm_files.py"), TREE, str(out)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def _value(results: dict[str, Any], step: str) -> Any:
    got = results[step]
    assert got["ok"], f"{step}: {got['error']}\n{got['trace']}"
    return got["value"]


def test_step1_vllm_files_import_and_configure(results: dict[str, Any]) -> None:
    value = _value(results, "import")
    assert value["modes"] == ["NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY",
                              "FULL_AND_PIECEWISE"]
    assert value["capture_sizes"] == [1, 2, 4, 8]  # (VllmConfig sets the maximum from them)
    assert _value(results, "platform") == "NonNvmlCudaPlatform"


def test_step2_the_dispatcher_keys_and_dispatches_per_mode(results: dict[str, Any]) -> None:
    value = _value(results, "dispatcher")
    for mode, got in value.items():
        full = 2 if mode != "PIECEWISE" else 0
        piecewise = 2 if "PIECEWISE" in mode else 0
        assert got["keys"] == {"FULL": full, "PIECEWISE": piecewise}, mode
        assert got["dispatch"]["15"][0] == "NONE", mode  # above the largest capture size
    # [runtime mode, padded tokens, uniform key] for 8 mixed, 8 uniform-decode, 3 mixed tokens
    assert value["FULL"]["dispatch"] == {"8": ["FULL", 8, False], "8u": ["FULL", 8, False],
                                         "15": ["NONE", 15, False], "3": ["FULL", 8, False]}
    assert value["FULL_AND_PIECEWISE"]["dispatch"]["8"] == ["PIECEWISE", 8, False]
    assert value["FULL_AND_PIECEWISE"]["dispatch"]["8u"] == ["FULL", 8, True]
    assert value["FULL_DECODE_ONLY"]["dispatch"]["8"][0] == "NONE"  # mixed: eager
    assert value["FULL_DECODE_ONLY"]["dispatch"]["8u"] == ["FULL", 8, True]
    assert value["PIECEWISE"]["dispatch"]["8u"] == ["PIECEWISE", 8, False]
    assert value["PIECEWISE"]["dispatch"]["3"] == ["PIECEWISE", 8, False]  # padded to 8


def test_step2_the_wrapper_captures_replays_and_bypasses(results: dict[str, Any]) -> None:
    value = _value(results, "wrapper")
    assert value["entries"] == 1  # one graph, for the one batch descriptor seen in FULL mode
    assert value["debug_address_check"]
    assert value["replay_launches"] == 1 and value["replay_kinds"] == {"graph": 1}
    assert value["replay_equals_eager"] and value["captured_equals_eager"]
    assert value["bypass_launches"] == value["warmup_launches"] > 1  # eager, op by op
    assert results["graph_pool_ids"], "capture passed no pool to NCCL's allocator"


def test_step3_piecewise_compilation(results: dict[str, Any]) -> None:
    got = results["piecewise"]
    assert got["ok"], got.get("trace") or got.get("error")
    value = got["value"]
    counters = value["counters"]
    assert (counters["num_graphs_seen"], counters["num_piecewise_graphs_seen"],
            counters["num_piecewise_capturable_graphs_seen"],
            counters["num_backend_compilations"], counters["num_cudagraph_captured"]) == \
        (1, 5, 3, 3, 6)
    assert value["calls"] == 2 and value["output"] == [19.0, 19.0]

