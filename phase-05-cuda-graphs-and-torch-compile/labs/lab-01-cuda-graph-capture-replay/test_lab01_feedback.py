"""The lab's failures teach: each of six typical mistakes, made in a copy of the reference, fails
a graded test whose message names the build step and the fix; and the README's command prints a
hint once.

A mistake is one edit of `mini_vllm/cudagraph.py` (each edited line must be there exactly once,
so the test notices when the reference moves). The graded tests (test_lab01.py) run against the
mistaken copy in this process; every one that fails must name a step, and the one aimed at the
mistake must say what to do about it.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import lab_files
import pytest

import mini_vllm.cudagraph as reference

GRADED_TESTS = lab_files.load(lab_files.LAB_DIR / "test_lab01.py", "lab01_graded_tests")
REPO_ROOT = lab_files.LAB_DIR.parents[2]
STEP = re.compile(r"^(Step [1-4]|Stretch [12]) \(")

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("LAB_TARGET", "").strip()),
    reason="LAB_TARGET is set: these tests check the lab's own tests, not your file")


@dataclass(frozen=True)
class Mistake:
    name: str
    edits: tuple[tuple[str, str], ...]  # (reference text, the mistaken text)
    caught_by: str  # the graded test aimed at it
    step: str  # what its message starts with
    fix: str  # what its message must say to do


MISTAKES = [
    Mistake("no copy into the static buffer",
            (("        np.copyto(entry.static_input, x)  # Constraint 2", "        pass  #"),),
            "test_step3_replay_reads_the_new_input_through_the_static_buffer",
            "Step 3 (GraphRunner.__call__), Constraint 2", "np.copyto(entry.static_input, x)"),
    Mistake("no copy of the returned output",
            (("return self.capture(x).output.copy()", "return self.capture(x).output"),
             ("return self.replay(entry).copy()", "return self.replay(entry)")),
            "test_step3_call_results_survive_the_next_replay",
            "Step 3 (GraphRunner.__call__)", "return a copy, entry.output.copy()"),
    Mistake("static buffer aliasing the caller's input",
            (("static_input = x.copy()", "static_input = x"),),
            "test_step3_capture_copies_x_into_its_own_static_buffer",
            "Step 3 (GraphRunner.capture), Constraint 2", "static_input = x.copy()"),
    Mistake("replay counting every op",
            (("np.copyto(entry.output, _compute(self.ops, entry.static_input))",
              "np.copyto(entry.output, run_eager(self.ops, entry.static_input))"),),
            "test_step3_capture_then_each_replay_costs_exactly_one_launch",
            "Step 3 (GraphRunner.replay), the win", "count the graph, not its ops"),
    Mistake("replay not writing the output",
            (("        np.copyto(entry.output, _compute(self.ops, entry.static_input))\n"
              "        LaunchCounter.bump(1)  # the win: one launch for the whole graph\n"
              "        return entry.output",
              "        LaunchCounter.bump(1)\n"
              "        return _compute(self.ops, entry.static_input)"),),
            "test_step3_replay_writes_into_the_fixed_output_buffer",
            "Step 3 (GraphRunner.replay)", "np.copyto(entry.output, result)"),
    Mistake("dtype missing from the key",
            (("self.entries.get((x.shape, x.dtype))", "self.entries.get(x.shape)"),
             ("self.entries[(x.shape, x.dtype)] = entry", "self.entries[x.shape] = entry")),
            "test_step3_a_new_dtype_is_a_new_graph",
            "Step 3 (GraphRunner.__call__), Constraint 1",
            "key the entries by (x.shape, x.dtype), not by the shape alone"),
]


def _mistaken(mistake: Mistake, tmp_path: Path) -> ModuleType:
    source = Path(reference.__file__).read_text()
    for before, after in mistake.edits:
        assert source.count(before) == 1, f"mini_vllm/cudagraph.py changed: {before!r}"
        source = source.replace(before, after)
    path = tmp_path / "mistaken_cudagraph.py"
    path.write_text(source)
    return lab_files.load(path, "lab01_mistaken")


def _failures(lab: ModuleType) -> dict[str, str]:
    """Each graded test that takes only `lab` and fails against it -> its message."""
    failed = {}
    for name, test in vars(GRADED_TESTS).items():
        if not name.startswith("test_") or list(inspect.signature(test).parameters) != ["lab"]:
            continue
        lab.LaunchCounter.reset()
        try:
            test(lab)
        except AssertionError as exc:
            failed[name] = str(exc)
        except Exception as exc:  # a crash, not a graded check: it names no step
            failed[name] = f"{type(exc).__name__}: {exc}"
    return failed


def test_the_reference_passes_every_graded_test() -> None:
    assert _failures(reference) == {}


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.name)
def test_a_typical_mistake_fails_with_its_step_and_its_fix(mistake: Mistake,
                                                          tmp_path: Path) -> None:
    failed = _failures(_mistaken(mistake, tmp_path))
    assert mistake.caught_by in failed, f"{mistake.name}: only {sorted(failed)} failed"
    first_line = failed[mistake.caught_by].splitlines()[0]
    assert first_line.startswith(mistake.step + ":"), first_line
    assert mistake.fix in first_line, first_line
    for name, message in failed.items():  # whatever else it breaks says which step too
        assert STEP.match(message), f"{name} failed without naming its step: {message!r}"


def test_the_readme_command_prints_each_hint_once(tmp_path: Path) -> None:
    """pytest 9 prints a --tb=line failure twice (the report's `E` line, then the crash line);
    the README's --tb=short prints the hint once, under the code that raised it."""
    assert "--tb=short" in lab_files.GRADE_COMMAND
    assert lab_files.GRADE_COMMAND in (lab_files.LAB_DIR / "README.md").read_text()
    hint = "Step 2 (run_eager): HINT-ONCE apply each op"
    target = tmp_path / "half_done.py"
    target.write_text("from mini_vllm.cudagraph import *  # noqa: F403\n"
                      "from mini_vllm.cudagraph import __all__  # noqa: F401\n\n\n"
                      "def run_eager(ops, x):\n    raise NotImplementedError(  # as starter.py's\n"
                      f"        {hint!r})\n")
    env = {**os.environ, "LAB_TARGET": str(target)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           str(lab_files.LAB_DIR / "test_lab01.py"), "-q", "--tb=short",
                           "-k", "step2"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    failures = done.stdout.split("short test summary info")[0]
    assert "2 failed" in done.stdout, done.stdout
    assert failures.count("HINT-ONCE") == 2, done.stdout  # two step-2 tests, once each


def test_one_word_for_each_notion() -> None:
    """A *piece* is a run of ops between eager ones and a *graph* one capture, in the lab, the
    notebook, the reference and the demo alike: no text calls a piece a segment, and only the
    seed's `num_graphs` counts pieces (the demo's piecewise backend counts graphs, as
    num_captured)."""
    texts = [p for p in (REPO_ROOT / "phase-05-cuda-graphs-and-torch-compile").rglob("*")
             if p.suffix in (".md", ".py") and p.name != Path(__file__).name]
    tools = REPO_ROOT / "fake_torch" / "_tools"
    texts += [REPO_ROOT / "mini_vllm" / "cudagraph.py", tools / "_demo.py",
              tools / "_demo_piecewise.py"]
    for path in texts:
        assert "segment" not in path.read_text().lower(), path
    assert "num_graphs" not in (tools / "_demo_piecewise.py").read_text()
    assert "**piece**" in (lab_files.LAB_DIR / "README.md").read_text()
