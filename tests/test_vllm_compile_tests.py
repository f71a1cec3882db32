"""vLLM's OWN compile tests, unchanged, on fake_torch (issue 25), opt-in.

Skipped unless VLLM_PATH names an unpacked vLLM 0.33.0 wheel (the folder holding vllm/, as for
tests/test_vllm_files.py) and VLLM_TESTS names vLLM 0.33.0's `tests/` folder, which the wheel
does not ship. Get that folder from vLLM's repository at the release tag, outside this repo:

    git clone --depth 1 --branch v0.33.0 --filter=blob:none --sparse \\
        https://github.com/vllm-project/vllm vllm-src
    git -C vllm-src sparse-checkout set tests      # (cone mode keeps the top-level files too)
    export VLLM_TESTS=$PWD/vllm-src/tests

(or unpack PyPI's source archive vllm-0.33.0.tar.gz, which carries the same tests/ and
pyproject.toml). VLLM_PYTHON is the interpreter that runs them: fake_torch and vLLM's Python
dependencies, WITHOUT real torch, plus what vLLM's tests/conftest.py and tests/utils.py import
(tests/vllm/requirements.txt lists both).

Each vLLM test file is run by pytest in VLLM_PYTHON, from the folder above VLLM_TESTS (vLLM's
repository root: its pyproject.toml's pytest settings and tests/conftest.py apply, as in vLLM's
CI). tests/vllm/site is put on PYTHONPATH: its sitecustomize.py makes `import torch` give
fake_torch and installs the stand-ins for vLLM's compiled CUDA kernels (tests/vllm/standins), in
pytest's process and in the fresh interpreter vLLM's `create_new_process_for_each_test("spawn")`
starts for each test. Only configurations that need no inductor codegen are selected
(KEYWORDS: `-k eager` in the fullgraph files, every test of the two pass files):
  - compile/fullgraph/test_simple.py: test_simple_piecewise_compile, backend eager, with and
    without an unbacked intermediate size: one graph seen, 5 pieces, 3 capturable, 3 backend
    compilations, 6 CUDA graphs captured, replay output [19, 19], the op called twice;
  - compile/fullgraph/test_toy_llama.py: test_toy_llama, backend eager, no inductor partition:
    vLLM's counters for no compilation, compilation without splitting and split at attention,
    and equal outputs across the three;
  - compile/passes/test_noop_elimination.py (issue 26): every case (24 parametrizations of
    test_noop_elimination and test_non_noop_slice_preserved). vLLM's TestBackend calls
    compile_fx with its passes as post_grad_custom_post_pass: fake_torch traces Dynamo's
    graph to aten ops (sizes as Dynamo's symbols), runs view_to_reshape and torch's
    remove_noop_ops, then NoOpEliminationPass; the test's counts of aten.reshape.default,
    aten.slice.Tensor and aten.slice_scatter.default hold, and the compiled output equals eager;
  - compile/passes/test_rmsnorm_reshape_fusion.py (issue 26): all three tests. vLLM's IR ops
    (torch.ops.vllm_ir.rms_norm, fused_add_rms_norm) reach the aten graph as their OpOverloads;
    AddRMSNormFusionPass and RMSNormReshapeFusionPass (register_replacement patterns) match once
    each, and the ops before/after checks hold;
  - compile/passes/test_split_coalescing.py, test_scatter_split_replace.py and
    test_vllm_fusion_pattern_matcher_pass.py: every test (SplitCoalescingPass,
    ScatterSplitReplacementPass and VllmFusionPatternMatcherPass's match counts, on the aten
    graph and on graphs the tests build by hand).
Each selected vLLM test must pass, and all do. In the fullgraph files they run through Dynamo,
VllmBackend's pass manager (whose fusion patterns register_replacement traces with make_fx,
calling auto_functionalized on vLLM's fused kernels: tests/vllm/standins declares them with
vLLM's own schemas and plain-torch bodies), piecewise splitting and CUDA-graph capture, and
vLLM's own assertions of its counters and outputs hold. In the unbacked variant the test's fake
implementation of mylib::foo asks torch.library.get_ctx() for a new dynamic size: an unbacked
symbol u0 of the trace's ShapeEnv, which the graph carries as torch's does (the op's node, its
range asserted, `new_ones(s77, u0)`). BLOCKERS names where a selected test stops while an issue
is open (none today); any other outcome fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SITE = REPO / "tests" / "vllm" / "site"  # sitecustomize.py: fake_torch as torch
TREE = os.environ.get("VLLM_PATH", "")
TESTS = os.environ.get("VLLM_TESTS", "")
PYTHON = os.environ.get("VLLM_PYTHON") or sys.executable

pytestmark = pytest.mark.skipif(
    not (TREE and TESTS), reason="set VLLM_PATH to an unpacked vLLM 0.33.0 wheel and VLLM_TESTS "
    "to vLLM 0.33.0's tests/ folder (and VLLM_PYTHON to an interpreter with fake_torch and "
    "vLLM's dependencies, without torch) to run vLLM's own compile tests")

# vLLM test file -> the `-k` expression that selects its tests needing no inductor codegen (None:
# every test of the file)
KEYWORDS: dict[str, str | None] = {
    "compile/fullgraph/test_simple.py": "eager",
    "compile/fullgraph/test_toy_llama.py": "eager",
    "compile/passes/test_noop_elimination.py": None,
    "compile/passes/test_rmsnorm_reshape_fusion.py": None,
    "compile/passes/test_split_coalescing.py": None,
    "compile/passes/test_scatter_split_replace.py": None,
    "compile/passes/test_vllm_fusion_pattern_matcher_pass.py": None,
}
# vLLM test file -> the test ids KEYWORDS selects in it (vLLM 0.33.0)
SELECTED = {
    "compile/fullgraph/test_simple.py": ["test_simple_piecewise_compile[True-eager]",
                                         "test_simple_piecewise_compile[False-eager]"],
    "compile/fullgraph/test_toy_llama.py": ["test_toy_llama[eager-False]"],
    # (hidden_size, num_tokens, buffer_size, dtype): every case, each a Dynamo graph compiled by
    # compile_fx with vLLM's NoOpEliminationPass as its post-grad custom pass
    "compile/passes/test_noop_elimination.py": [
        f"test_noop_elimination[{hidden}-{tokens}-{buffer}-dtype{d}]"
        for hidden in (64, 4096) for tokens, buffer in ((256, 256), (256, 512), (1024, 1024),
                                                        (1024, 1025))
        for d in range(3)] + ["test_non_noop_slice_preserved"],
    "compile/passes/test_rmsnorm_reshape_fusion.py": [
        "test_rmsnorm_reshape_fusion", "test_add_rmsnorm_reshape_fusion[True]",
        "test_add_rmsnorm_reshape_fusion[False]"],
    "compile/passes/test_split_coalescing.py": [
        "test_split_coalescing[dtype0]", "test_split_coalescing[dtype1]",
        "test_slice_partition_canonicalization[dtype0]",
        "test_slice_partition_canonicalization[dtype1]",
        "test_slice_partition_accepts_safe_group",
        *[f"test_slice_partition_rejects_unsafe_groups[ranges{i}]" for i in range(6)],
        "test_nested_slice_partitions_use_live_source",
        "test_split_coalescing_preserves_different_dimensions"],
    "compile/passes/test_scatter_split_replace.py": ["test_scatter_split_replace[dtype0]",
                                                     "test_scatter_split_replace[dtype1]"],
    "compile/passes/test_vllm_fusion_pattern_matcher_pass.py": [
        "test_register_tracks_patterns", "test_uuid_stable",
        *[f"test_matched_count_and_match_table[{n}]" for n in (1, 2, 4)]],
}


@dataclass(frozen=True)
class Blocker:
    """Where a vLLM test stops today: the issue that lifts it, the error, the frames it is in."""

    issue: str
    error: str
    frames: tuple[str, ...]


# What each selected test that does not pass yet stops at: the exception and message fake_torch
# raises, and the frames (file, function) it must be raised under. A test not named here must
# pass.
BLOCKERS: dict[str, Blocker] = {}


@dataclass
class Outcome:
    """One vLLM test as pytest's JUnit report gives it."""

    outcome: str  # "passed", "failed", "error" or "skipped"
    text: str  # the failure's message and report ("" when it passed)


def _run_vllm_file(rel: str, report: Path) -> tuple[subprocess.CompletedProcess[str],
                                                     dict[str, Outcome]]:
    """pytest <VLLM_TESTS>/<rel> [-k KEYWORDS[rel]] in VLLM_PYTHON; each test case's outcome by
    name."""
    tests = Path(TESTS).resolve()
    root = tests.parent  # vLLM's repository root (its pyproject.toml holds pytest's settings)
    keyword = KEYWORDS[rel]
    args = [PYTHON, "-m", "pytest", str(tests / rel), *(["-k", keyword] if keyword else []),
            "-p", "no:cacheprovider", "-q", f"--rootdir={root}", f"--junitxml={report}"]
    if (root / "pyproject.toml").is_file():
        args += ["-c", str(root / "pyproject.toml")]
    path = os.pathsep.join([str(REPO), str(SITE), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "VLLM_PATH": TREE,
           "VLLM_LOGGING_LEVEL": "WARNING"}
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=900)
    outcomes: dict[str, Outcome] = {}
    if report.is_file():
        for case in ET.parse(report).getroot().iter("testcase"):
            outcome, text = "passed", ""
            for kind in ("failure", "error", "skipped"):
                found = case.find(kind)
                if found is not None:
                    outcome = "failed" if kind == "failure" else kind
                    text = f"{found.get('message', '')}\n{found.text or ''}"
            outcomes[case.get("name", "")] = Outcome(outcome, text)
    return done, outcomes


@pytest.fixture(scope="module", params=sorted(SELECTED))
def vllm_file(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[str, subprocess.CompletedProcess[str], dict[str, Outcome]]:
    rel: str = request.param
    if not (Path(TESTS) / rel).is_file():
        pytest.fail(f"VLLM_TESTS={TESTS!r} has no {rel}: point it at vLLM 0.33.0's tests/")
    report = tmp_path_factory.mktemp("vllm_tests") / "report.xml"
    done, outcomes = _run_vllm_file(rel, report)
    return rel, done, outcomes


def test_vllm_compile_tests_pass_or_stop_at_the_named_blocker(
        vllm_file: tuple[str, subprocess.CompletedProcess[str], dict[str, Outcome]]) -> None:
    rel, done, outcomes = vllm_file
    log = (done.stdout + done.stderr)[-6000:]
    # collected and selected exactly as expected (no collection error, no test renamed)
    assert sorted(outcomes) == sorted(SELECTED[rel]), log
    passed = [name for name, got in outcomes.items() if got.outcome == "passed"]
    blocked = []
    for name, got in outcomes.items():
        if got.outcome == "passed":
            continue
        assert got.outcome == "failed", f"{name}: {got.outcome}\n{got.text[-6000:]}"
        # vLLM's spawn wrapper re-raises the child's traceback as a RuntimeError's message
        assert name in BLOCKERS, f"{name} no longer passes:\n{got.text[-6000:]}"
        blocker = BLOCKERS[name]
        assert blocker.error in got.text, f"{name} failed otherwise:\n{got.text[-6000:]}"
        missing = [frame for frame in blocker.frames if frame not in got.text]
        assert not missing, f"{name}: not raised under {missing}:\n{got.text[-6000:]}"
        blocked.append(f"{name} at {blocker.error!r} ({blocker.issue})")
    assert len(passed) + len(blocked) == len(SELECTED[rel])
    if blocked:
        assert done.returncode == 1, log  # pytest's "tests failed"
        pytest.xfail(f"{rel}: {len(passed)} passed; stopped: {'; '.join(blocked)}")
    assert done.returncode == 0, log
    assert len(passed) == len(SELECTED[rel])
