"""The test run's skips in one line, grouped by reason: `N skipped: torch not installed (M); ...`.

pyproject's addopts report failures and errors one by one (`-rfE`), not skips: without real
torch about two thirds of the suite skips, and `-ra`'s line per skipped test buried the summary.
tests/conftest.py registers the hook; `pytest -rs` still lists every skip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

TOP_REASONS = 4  # reasons named; the rest are counted together
REASON_WIDTH = 72  # a longer reason is cut (`pytest -rs` prints it whole)


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """A skipped test's reason as one short phrase: pytest.importorskip's "could not import
    'torch': No module named 'torch'" reads "torch not installed"; others as the test says."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    reason = reason.removeprefix("Skipped: ")
    if reason.startswith("could not import '"):
        return f"{reason.split(chr(39))[1]} not installed"
    return reason if len(reason) <= REASON_WIDTH else reason[:REASON_WIDTH - 3] + "..."


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line for every skip, grouped by reason, most first, instead of `-ra`'s line per
    skipped test (pyproject's addopts report only failures and errors, `-rfE`); `pytest -rs`
    still lists them one by one."""
    line = summary_line([r for r in terminalreporter.stats.get("skipped", [])
                         if isinstance(r, (pytest.TestReport, pytest.CollectReport))])
    if line:
        terminalreporter.write_line(line)


def summary_line(skipped: Sequence[pytest.TestReport | pytest.CollectReport]) -> str:
    """`N skipped: reason (count); ...`, most frequent first (TOP_REASONS of them, then the
    rest together), or "" when nothing skipped. A module skipped whole counts once, as pytest
    counts it."""
    counts: dict[str, int] = {}
    for report in skipped:
        reason = skip_reason(report)
        counts[reason] = counts.get(reason, 0) + 1
    groups = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if not groups:
        return ""
    named = [f"{reason} ({n})" for reason, n in groups[:TOP_REASONS]]
    rest = groups[TOP_REASONS:]
    if rest:
        named.append(f"{len(rest)} other reasons ({sum(n for _, n in rest)}; pytest -rs lists "
                     "them)")
    return f"{len(skipped)} skipped: " + "; ".join(named)
