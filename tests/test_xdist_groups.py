"""tests/xdist_groups.py: under `pytest -n N` a GROUPED module's tests go to one worker together,
first, and every other test is dealt out as xdist's `load` deals it."""

from __future__ import annotations

import re
from pathlib import Path

from xdist_groups import GROUPED, grouped_first, take

REPO_ROOT = Path(__file__).resolve().parents[1]

# a toy collection: two grouped modules (sizes 2 and 3) between ungrouped tests
A, B = "tests/test_demo.py", "tests/test_transformers_unchanged.py"
COLLECTION = ["tests/test_x.py::t0", f"{A}::a0", "tests/test_x.py::t1", f"{B}::b0", f"{B}::b1",
              f"{A}::a1", f"{B}::b2[p]", "tests/test_y.py::t2"]


def test_every_grouped_module_exists_and_has_a_module_scoped_fixture() -> None:
    for path in GROUPED:
        text = (REPO_ROOT / path).read_text()
        assert re.search(r'@pytest\.fixture\(scope="module"', text), path


def test_grouped_modules_come_first_largest_first_then_the_rest_in_order() -> None:
    pending = list(range(len(COLLECTION)))
    group_of = grouped_first(COLLECTION, pending)
    assert [COLLECTION[i] for i in pending] == [
        f"{B}::b0", f"{B}::b1", f"{B}::b2[p]", f"{A}::a0", f"{A}::a1",
        "tests/test_x.py::t0", "tests/test_x.py::t1", "tests/test_y.py::t2"]
    assert group_of[3] == group_of[6] == [3, 4, 6] and group_of[1] == [1, 5]
    assert 0 not in group_of and 7 not in group_of


def test_a_chunk_takes_the_whole_of_each_module_it_reaches_into() -> None:
    pending = list(range(len(COLLECTION)))
    group_of = grouped_first(COLLECTION, pending)
    assert take(pending, 1, group_of) == [3, 4, 6]  # one of B asked for: all of B
    assert take(pending, 3, group_of) == [1, 5, 0]  # A (whole already) and the next test
    assert take(pending, 1, group_of) == [2]  # ungrouped: exactly as many as asked
    assert take(pending, 5, group_of) == [7] and pending == []


def test_a_module_is_never_split_between_two_takes() -> None:
    pending = [0, 2, 7, 1, 3, 5, 4, 6]  # a group's tests scattered (a crashed worker's return)
    group_of = {1: [1, 5], 5: [1, 5], 3: [3, 4, 6], 4: [3, 4, 6], 6: [3, 4, 6]}
    chunks = [take(pending, 4, group_of) for _ in range(3)]
    assert chunks == [[0, 2, 7, 1, 5], [3, 4, 6], []]
