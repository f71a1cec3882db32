"""torch.profiler.schedule with profile(schedule=..., on_trace_ready=...), against real torch
CPU: which steps hand a cycle to on_trace_ready, the ProfilerStep ranges and the op calls each
recorded cycle holds; tensorboard_trace_handler's files."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from oracles import assert_same_error, outcome

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def _cycles(lib: Any, make_schedule: Callable[[Any], Any], steps: int = 9) -> list[Any]:
    """(step at on_trace_ready, the step ranges, the adds recorded) per cycle; torch's CPU adds
    are the launches fake_torch records for the same code on cuda."""
    seen = []

    def ready(prof: Any) -> None:
        names = [e.name for e in prof.events()]
        seen.append((prof.step_num, names.count("ProfilerStep*"),
                     sum(name in ("aten::add", "add") for name in names)))

    x = lib.ones(4) if lib is torch else lib.ones(4, device="cuda")
    profiler = lib.profiler
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                              schedule=make_schedule(profiler), on_trace_ready=ready) as p:
            for _ in range(steps):
                x = x + 1
                p.step()
    return seen


SCHEDULES: list[tuple[str, Callable[[Any], Any]]] = [
    ("cycles", lambda P: P.schedule(wait=1, warmup=1, active=2)),
    ("repeat", lambda P: P.schedule(wait=1, warmup=1, active=2, repeat=1)),
    ("no warmup", lambda P: P.schedule(wait=0, warmup=0, active=1)),
    ("skip_first", lambda P: P.schedule(wait=2, warmup=1, active=3, skip_first=1)),
    ("skip_first_wait", lambda P: P.schedule(wait=2, warmup=1, active=3, skip_first=3,
                                             skip_first_wait=1)),
    ("hand-written, RECORD then NONE",
     lambda P: lambda s: P.ProfilerAction.RECORD if s % 3 else P.ProfilerAction.NONE),
    ("no schedule", lambda P: None),
]


@pytest.mark.parametrize("make", [m for _, m in SCHEDULES], ids=[n for n, _ in SCHEDULES])
def test_cycles_like_torch(make: Callable[[Any], Any]) -> None:
    assert _cycles(ft, make) == _cycles(torch, make)


def test_schedule_function_like_torch() -> None:
    for kwargs in ({"wait": 1, "warmup": 2, "active": 3, "repeat": 2},
                   {"wait": 0, "warmup": 1, "active": 1, "skip_first": 2}):
        ours, theirs = ft.profiler.schedule(**kwargs), torch.profiler.schedule(**kwargs)
        assert [ours(i).name for i in range(16)] == [theirs(i).name for i in range(16)]
    assert [a.name for a in ft.profiler.ProfilerAction] == [
        a.name for a in torch.profiler.ProfilerAction]
    for bad in ({"wait": -1, "warmup": 1, "active": 1}, {"wait": 1, "warmup": 1, "active": 0}):
        _, theirs_e = outcome(lambda bad=bad: torch.profiler.schedule(**bad))
        _, ours_e = outcome(lambda bad=bad: ft.profiler.schedule(**bad))
        assert_same_error(ours_e, theirs_e)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        ft.profiler.schedule(wait=0, warmup=0, active=1)


def test_tensorboard_trace_handler_writes_one_trace_per_cycle(tmp_path: Path) -> None:
    x = ft.ones(4, device="cuda")
    handler = ft.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w0")
    P = ft.profiler
    with P.profile(schedule=P.schedule(wait=0, warmup=1, active=1),
                   on_trace_ready=handler) as p:
        for _ in range(4):
            x = x + 1
            p.step()
    files = sorted((tmp_path / "tb").iterdir())
    assert len(files) == 2 and all(f.name.startswith("w0.") and
                                   f.name.endswith(".pt.trace.json") for f in files)
    names = [e["name"] for e in json.loads(files[0].read_text())["traceEvents"]]
    assert "add" in names
    with pytest.raises(NotImplementedError, match="use_gzip"):
        P.tensorboard_trace_handler(str(tmp_path), use_gzip=True)
