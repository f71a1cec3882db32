"""Under pytest-xdist (`pytest -n N`), the tests of each module in GROUPED run on one worker, so
that the module's expensive module-scoped fixture runs once, not once per worker.

xdist's default distribution (`load`) deals the tests out in chunks and then a few at a time, so
a module's tests land on every worker and each worker sets the module's fixtures up itself: the
transformers check's fixture (two processes that load five models and generate with them, the
suite's longest setup) ran twice, side by side. GroupedLoad is `load` that sends a GROUPED
module's tests to a worker all together, and deals them out first, so that no long fixture
starts last. (xdist's own `--dist loadgroup` with `xdist_group` marks would do this, but it
renames each test by an attribute pytest 9 no longer reads; its scheduler also rescans every
scope at each report, quadratic in a suite of ten thousand tests.) tests/conftest.py registers
the hook; another `--dist` than `load` is left as given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

# test modules whose module-scoped fixture costs seconds (most: a subprocess), by path from the
# repository root as xdist's test ids begin
GROUPED = frozenset({
    "tests/test_transformers_unchanged.py",  # runs: the driver under fake_torch and real torch
    "tests/test_demo.py",  # demo, eager_launches: `python -m fake_torch demo` and `run`
    "tests/test_decode_runner.py",  # shared, private: examples/decode_runner.py, twice
    "tests/test_vllm_runner.py",  # served: a request stream in every mode
    "tests/test_example_model.py",  # runs: the example Llama on real torch and in a subprocess
    "tests/test_compile_table.py",  # counts: the example Llama compiled, in a subprocess
    "tests/test_run_hints.py",  # run_fake, run_real: servers that import fake_torch, torch
    "tests/test_distributed_ranks.py",  # fork_server: imports fake_torch and torch for ranks
})


def module_of(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def grouped_first(collection: Sequence[str], pending: list[int]) -> dict[int, list[int]]:
    """Reorders `pending` (indices into `collection`) in place: the GROUPED modules' tests
    first, the largest module first, each module's tests together in their order, then the rest
    as they were. Returns each grouped index -> all the indices of its module."""
    groups: dict[str, list[int]] = {}
    for index in pending:
        if module_of(collection[index]) in GROUPED:
            groups.setdefault(module_of(collection[index]), []).append(index)
    ordered = sorted(groups.values(), key=len, reverse=True)
    in_group = {index for members in ordered for index in members}
    pending[:] = [i for members in ordered for i in members] + [
        i for i in pending if i not in in_group]
    return {index: members for members in ordered for index in members}


def take(pending: list[int], num: int, group_of: dict[int, list[int]]) -> list[int]:
    """The next `num` indices of `pending`, removed from it, and the rest of each GROUPED module
    one of them belongs to (so that a module is never split between two workers)."""
    chunk = pending[:num]
    if not any(index in group_of for index in chunk):
        del pending[:num]
        return chunk
    wanted = set(chunk).union(*(group_of.get(index, ()) for index in chunk))
    chunk = [index for index in pending if index in wanted]
    pending[:] = [index for index in pending if index not in wanted]
    return chunk


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # before xdist's own LoadScheduling
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "load":
        return None
    # only under xdist (the hook is xdist's); xdist ships no type information
    from xdist.scheduler import LoadScheduling  # type: ignore[import-untyped]

    class GroupedLoad(LoadScheduling):  # type: ignore[misc]  # (its base is Any to mypy)
        group_of: dict[int, list[int]] | None = None

        def _send_tests(self, node: Any, num: int) -> None:
            if self.group_of is None:  # the first send: the collection is known
                self.group_of = grouped_first(self.collection, self.pending)
            tests = take(self.pending, num, self.group_of)
            if tests:
                self.node2pending[node].extend(tests)
                node.send_runtest_some(tests)

    return GroupedLoad(config, log)
