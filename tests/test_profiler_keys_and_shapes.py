"""fake_torch.profiler's table takes torch's sort_by keys and groups by input shapes as torch's
key_averages(group_by_input_shape=True) does, with record_shapes=True.

Oracle: real torch (CPU build): which keys its table accepts, its error for a bad one, its Input
Shapes column and the rows it groups; the profiler docs' example runs as written.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest

import fake_torch as torch
from fake_torch.profiler import ProfilerActivity, profile, record_function
from fake_torch.profiler._events import SORT_KEYS

pytestmark = pytest.mark.usefixtures("fresh_device")

# the keys torch's EventList.table documents for sort_by, and the self_/device_ spellings of
# the time keys (torch reads "cuda", "xpu" and "privateuse1" as "device")
TORCH_KEYS = ("cpu_time", "cuda_time", "xpu_time", "cpu_time_total", "cuda_time_total",
              "xpu_time_total", "cpu_memory_usage", "cuda_memory_usage", "xpu_memory_usage",
              "self_cpu_memory_usage", "self_cuda_memory_usage", "self_xpu_memory_usage",
              "count", "self_cpu_time_total", "self_cuda_time_total", "device_time_total",
              "self_device_time_total", "device_time", "privateuse1_time_total")
BAD_KEYS = ("cuda_time_totl", "time", "self_cuda_time")
FAKE_COLUMNS = ("Where", "Kernel launches", "Graph launches")
CUDA_COLUMNS = ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg")


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def _rows(table: str) -> list[list[str]]:
    """The body rows of a printed table, as cells."""
    lines = table.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("---")]
    return [_cells(line) for line in lines[rules[1] + 1:rules[2]]]


def _real_torch() -> Any:
    return pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def _torch_table_error(real: Any, sort_by: str) -> str | None:
    with real.profiler.profile(activities=[real.profiler.ProfilerActivity.CPU]) as prof:
        real.ones(4) * 2
    try:
        prof.key_averages().table(sort_by=sort_by)
    except AttributeError as exc:
        return str(exc)
    return None


def _ours() -> profile:
    x = torch.ones(4, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        x * 2
        (x + 1).relu()
    return prof


@pytest.mark.parametrize("sort_by", TORCH_KEYS)
def test_every_key_torch_sorts_by_sorts_ours(sort_by: str) -> None:
    assert _torch_table_error(_real_torch(), sort_by) is None
    averages = _ours().key_averages()
    table = averages.table(sort_by=sort_by)
    attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace(
        "privateuse1", "device")
    assert attr in SORT_KEYS
    values = [getattr(r, attr) for r in sorted(averages, key=lambda r: -getattr(r, attr))]
    assert values == sorted(values, reverse=True)
    assert [row[0] for row in _rows(table)] == [
        r.key for r in sorted(averages, key=lambda r: getattr(r, attr), reverse=True)]


@pytest.mark.parametrize("sort_by", BAD_KEYS)
def test_a_bad_key_raises_torchs_error(sort_by: str) -> None:
    theirs = _torch_table_error(_real_torch(), sort_by)
    assert theirs is not None and theirs.startswith("'FunctionEventAvg' object has no attribute")
    with pytest.raises(AttributeError) as caught:
        _ours().key_averages().table(sort_by=sort_by)
    assert str(caught.value).startswith(theirs + "; valid sort_by keys: cpu_time, ")


def test_the_docs_example_sorts_by_cuda_time_total_and_groups_by_shape() -> None:
    """torch's profiler recipe, on a small model: no warning, the CUDA columns, the rows in
    descending CUDA total, and Input Shapes when grouped by them."""
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 8)).cuda()
    inputs = torch.randn(5, 16).cuda()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     record_shapes=True) as prof:
            with record_function("model_inference"):
                model(inputs)
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=10)
    header = _cells(table.splitlines()[1])
    assert "CUDA total" in header and "Input Shapes" not in header
    totals = [row[header.index("CUDA total")] for row in _rows(table)]
    in_us = [float(t[:-2]) * (1e3 if t.endswith("ms") else 1.0) for t in totals]
    assert in_us == sorted(in_us, reverse=True) and _rows(table)[0][0] == "model_inference"
    grouped = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total",
                                                                 row_limit=10)
    header = _cells(grouped.splitlines()[1])
    assert header[header.index("# of Calls") + 1] == "Input Shapes"
    shapes = {(row[0], row[header.index("Input Shapes")]) for row in _rows(grouped)}
    addmm = sorted(s for name, s in shapes if name == "addmm")  # one row per layer's shapes
    assert len(addmm) == 2 and "[5, 16], [16, 32]" in addmm[0] and "[5, 32], [32, 8]" in addmm[1]
    assert ("model_inference", "[]") in shapes  # a range has none, as torch's


def _torch_shape_rows(real: Any) -> set[tuple[str, str, int]]:
    x, y, w = real.ones(4), real.ones(2, 3), real.ones(3, 5)
    with real.profiler.profile(activities=[real.profiler.ProfilerActivity.CPU],
                               record_shapes=True) as prof:
        x * 2
        x * 2
        y * 2
        real.mm(y, w)
    return {(r.key.removeprefix("aten::"), str(r.input_shapes), r.count)
            for r in prof.key_averages(group_by_input_shape=True)
            if r.key in ("aten::mul", "aten::mm")}


def test_rows_group_by_input_shape_as_torchs() -> None:
    theirs = _torch_shape_rows(_real_torch())
    x, y, w = (torch.ones(4, device="cuda"), torch.ones(2, 3, device="cuda"),
               torch.ones(3, 5, device="cuda"))
    with profile(record_shapes=True) as prof:
        x * 2
        x * 2
        y * 2
        torch.mm(y, w)
    ours = {(r.key, str(r.input_shapes), r.count)
            for r in prof.key_averages(group_by_input_shape=True)}
    assert ours == theirs == {("mul", "[[4], []]", 2), ("mul", "[[2, 3], []]", 1),
                              ("mm", "[[2, 3], [3, 5]]", 1)}
    ungrouped = prof.key_averages()
    assert {(r.key, r.input_shapes, r.count) for r in ungrouped} == {("mul", "", 3),
                                                                     ("mm", "", 1)}
    assert "Input Shapes" not in ungrouped.table()


def test_the_input_shapes_column_sits_where_torchs_does() -> None:
    real = _real_torch()
    with real.profiler.profile(activities=[real.profiler.ProfilerActivity.CPU],
                               record_shapes=True) as theirs:
        real.ones(4) * 2
    torch_header = _cells(theirs.key_averages(group_by_input_shape=True).table().splitlines()[1])
    x = torch.ones(4, device="cuda")
    with profile(record_shapes=True) as prof:
        x * 2
    ours = _cells(prof.key_averages(group_by_input_shape=True).table().splitlines()[1])
    assert [c for c in ours if c not in FAKE_COLUMNS + CUDA_COLUMNS] == torch_header
    assert torch_header[-2:] == ["# of Calls", "Input Shapes"]


def test_without_record_shapes_grouping_changes_nothing() -> None:
    x = torch.ones(4, device="cuda")
    y = torch.ones(2, 3, device="cuda")
    with profile() as prof:
        x * 2
        y * 2
    grouped = prof.key_averages(group_by_input_shape=True)
    assert [(r.key, r.input_shapes, r.count) for r in grouped] == [("mul", [], 2)]
    assert "Input Shapes" not in grouped.table()  # torch's: no shapes recorded, no column
