"""The test run's skips in one line, grouped by reason: `N skipped: torch not installed (M); ...`.

pyproject's addopts report failures and errors one by one (`-rfE`), not skips: without real
torch about two thirds of the suite skips, and `-ra`'s line per skipped test buried the summary.
tests/conftest.py registers the hook; `pytest -rs` still lists every skip.
"""

from __future__ import annotations

from typing import Any

import pytest


def skip_reason(report: pytest.TestReport) -> str:
    """A skipped test's reason as one short phrase: pytest.importorskip's "could not import
    'torch': No module named 'torch'" reads "torch not installed"; others as the test says."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    if reason.startswith("could not import '"):
        return f"{reason.split(chr(39))[1]} not installed"
    return reason


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line for every skip, grouped by reason, most first, instead of `-ra`'s line per
    skipped test (pyproject's addopts report only failures and errors, `-rfE`); `pytest -rs`
    still lists them one by one."""
    line = summary_line([r for r in terminalreporter.stats.get("skipped", [])
                         if isinstance(r, pytest.TestReport)])
    if line:
        terminalreporter.write_line(line)


def summary_line(skipped: list[pytest.TestReport]) -> str:
    """`N skipped: reason (count); ...`, most frequent first, or "" when nothing skipped."""
    counts: dict[str, int] = {}
    for report in skipped:
        reason = skip_reason(report)
        counts[reason] = counts.get(reason, 0) + 1
    groups = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if not groups:
        return ""
    return f"{len(skipped)} skipped: " + "; ".join(f"{reason} ({n})" for reason, n in groups)
