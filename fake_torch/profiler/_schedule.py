"""torch.profiler.schedule, ProfilerAction and tensorboard_trace_handler: which steps a
profile records (skip_first, then cycles of wait / warmup / active steps), and a handler that
writes each recorded cycle as a Chrome trace file (TensorBoard's profiler plugin reads them)."""

from __future__ import annotations

import os
import socket
import time
import warnings
from collections.abc import Callable
from enum import Enum
from typing import Any

__all__ = ["ProfilerAction", "schedule", "tensorboard_trace_handler"]


class ProfilerAction(Enum):
    """What a profile does at a step: nothing, warm up, record, or record and then hand the
    cycle to on_trace_ready."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """step -> ProfilerAction: skip `skip_first` steps, then cycles of `wait` steps doing
    nothing, `warmup` warming up and `active` recording (the last one saves); `repeat` cycles
    (0: until the profile ends); `skip_first_wait` skips the first cycle's wait."""

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return (ProfilerAction.RECORD if mod_step < num_steps - 1
                else ProfilerAction.RECORD_AND_SAVE)

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def default_schedule(_: int) -> ProfilerAction:
    """Without a schedule a profile records from start to stop."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable[[Any], None]:
    """An on_trace_ready handler: each cycle's trace goes to
    `dir_name/<worker_name>.<time_ns>.pt.trace.json` (worker_name: "<hostname>_<pid>")."""
    if use_gzip:
        raise NotImplementedError("torch.profiler.tensorboard_trace_handler(use_gzip=True): "
                                  "fake_torch writes plain JSON traces")

    def handler_fn(prof: Any) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, file_name),
                                 use_python_export=use_python_export)

    return handler_fn
