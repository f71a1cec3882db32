"""tests/skip_summary.py: the run's skips as one line, grouped by reason (oracle: written out)."""

from __future__ import annotations

import pytest
from skip_summary import skip_reason, summary_line


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
