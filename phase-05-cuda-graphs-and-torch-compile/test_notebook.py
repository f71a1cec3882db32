"""The notebook's citations and examples, checked against the code they describe.

A citation is "`path:LINE` — `code`"; the cited line, stripped, must equal the quoted code. The
four labelled answers must cite the right kind of line in the right place, and every `>>>`
example must run and print what the notebook says.
"""

from __future__ import annotations

import ast
import doctest
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

PHASE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PHASE_DIR.parent
NOTEBOOK = PHASE_DIR / "notebook.md"
REFERENCE = "mini_vllm/cudagraph.py"

CITATION = re.compile(r"`(?P<path>[\w./-]+\.py):(?P<line>\d+)` — `(?P<code>[^`]+)`")
ANSWER = re.compile(r"^\*\*Answer \((?P<label>[^)]+)\):\*\* (?P<citation>.+)$", re.MULTILINE)
ANY_LINE_REFERENCE = re.compile(r"[\w./-]+\.py:\d+")


@dataclass(frozen=True)
class Citation:
    path: str
    line: int
    code: str


def _citations(text: str) -> list[Citation]:
    return [Citation(m["path"], int(m["line"]), m["code"]) for m in CITATION.finditer(text)]


def _source_line(path: str, line: int) -> str:
    lines = (REPO_ROOT / path).read_text().splitlines()
    assert 1 <= line <= len(lines), f"{path}:{line} is past the end of the file ({len(lines)})"
    return lines[line - 1].strip()


def _span(qualname: str) -> range:
    """The line numbers of `Class.method` (or `Class`) in the reference file."""
    tree = ast.parse((REPO_ROOT / REFERENCE).read_text())
    parts = qualname.split(".")
    nodes: list[ast.stmt] = tree.body
    found: ast.stmt | None = None
    for part in parts:
        found = next((n for n in nodes if isinstance(n, (ast.ClassDef, ast.FunctionDef))
                      and n.name == part), None)
        assert found is not None, f"{REFERENCE} has no {qualname}"
        nodes = found.body
    assert found is not None and found.end_lineno is not None
    return range(found.lineno, found.end_lineno + 1)


def _answers(text: str) -> dict[str, Citation]:
    answers: dict[str, Citation] = {}
    for match in ANSWER.finditer(text):
        label = match["label"]
        assert label not in answers, f"the notebook answers {label!r} twice"
        cited = _citations(match["citation"])
        assert len(cited) == 1, f"answer {label!r} must hold exactly one citation: {match[0]!r}"
        answers[label] = cited[0]
    return answers


TEXT = NOTEBOOK.read_text()

# label -> (code the cited line must contain, where in the reference the line must sit)
EXPECTED_ANSWERS = {
    "constraint 1": ("self.entries.get((x.shape, x.dtype))", "GraphRunner"),
    "constraint 2": ("np.copyto(entry.static_input, x)", "GraphRunner"),
    "the win": ("LaunchCounter.bump(1)", "GraphRunner.replay"),
    "num_graphs": ("isinstance(p, GraphRunner)", "PiecewiseGraphRunner.num_graphs"),
}


def test_every_line_reference_is_a_well_formed_citation() -> None:
    cited = _citations(TEXT)
    assert len(cited) >= len(EXPECTED_ANSWERS)
    assert len(ANY_LINE_REFERENCE.findall(TEXT)) == len(cited), (
        "some `file.py:NN` in the notebook is not in the form `path:NN` — `code`")


@pytest.mark.parametrize("citation", _citations(TEXT), ids=lambda c: f"{c.path}:{c.line}")
def test_cited_line_holds_the_quoted_code(citation: Citation) -> None:
    assert _source_line(citation.path, citation.line) == citation.code, (
        f"{citation.path}:{citation.line} no longer holds the quoted code; update the notebook")


def test_the_notebook_answers_each_question_once() -> None:
    assert sorted(_answers(TEXT)) == sorted(EXPECTED_ANSWERS)


@pytest.mark.parametrize("label", sorted(EXPECTED_ANSWERS))
def test_each_answer_cites_the_right_line(label: str) -> None:
    needle, owner = EXPECTED_ANSWERS[label]
    answer = _answers(TEXT)[label]
    assert answer.path == REFERENCE
    assert needle in _source_line(answer.path, answer.line), (
        f"answer {label!r} should cite the line holding {needle!r}")
    assert answer.line in _span(owner), (
        f"answer {label!r} cites line {answer.line}, outside {owner} (lines {_span(owner)})")


def test_the_notebook_examples_run_and_show_the_counts() -> None:
    num_examples = len(re.findall(r"^\s*>>> ", TEXT, re.MULTILINE))
    result = doctest.testfile(str(NOTEBOOK), module_relative=False, verbose=False)
    assert result.failed == 0, f"{result.failed} notebook example(s) failed; see the output above"
    assert result.attempted == num_examples > 0
