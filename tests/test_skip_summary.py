"""tests/skip_summary.py: the run's skips as one line, grouped by reason (oracle: written out)."""

from __future__ import annotations

import pytest
from skip_summary import REASON_WIDTH, TOP_REASONS, skip_reason, summary_line


def _skipped(reason: str) -> pytest.TestReport:
    return pytest.TestReport("t.py::t", ("t.py", 1, "t"), {}, "skipped",
                             ("t.py", 3, f"Skipped: {reason}"), "call")


def test_importorskip_reads_as_not_installed_and_others_as_written() -> None:
    assert skip_reason(_skipped("could not import 'torch': No module named 'torch'")) == \
        "torch not installed"
    assert skip_reason(_skipped("real torch (CPU build) is the oracle")) == \
        "real torch (CPU build) is the oracle"


def test_one_line_grouped_by_reason_most_first() -> None:
    reports = [_skipped("could not import 'torch': No module named 'torch'")] * 3 + \
        [_skipped("b"), _skipped("a"), _skipped("b")]
    assert summary_line(reports) == "6 skipped: torch not installed (3); b (2); a (1)"
    assert summary_line([]) == ""


def test_the_top_reasons_are_named_the_rest_counted_and_long_ones_cut() -> None:
    reports = [_skipped(f"reason {i}") for i in range(TOP_REASONS + 2) for _ in range(10 - i)]
    counts = [10 - i for i in range(TOP_REASONS + 2)]
    named = "; ".join(f"reason {i} ({counts[i]})" for i in range(TOP_REASONS))
    assert summary_line(reports) == (f"{sum(counts)} skipped: {named}; 2 other reasons "
                                     f"({sum(counts[TOP_REASONS:])}; pytest -rs lists them)")
    long = "x" * (REASON_WIDTH + 1)
    assert skip_reason(_skipped(long)) == "x" * (REASON_WIDTH - 3) + "..."
    assert skip_reason(_skipped(long[:REASON_WIDTH])) == long[:REASON_WIDTH]


def test_a_module_skipped_whole_counts_once() -> None:
    module = pytest.CollectReport("t.py", "skipped", ("t.py", 1, "Skipped: no numpy"), [])
    assert summary_line([module, _skipped("no numpy")]) == "2 skipped: no numpy (2)"
