"""torch.profiler: which ops ran, the launches they cost, where (eager or a graph), and how long
on the simulated clocks (host launch calls, kernels on streams)."""

from fake_torch.profiler._events import FunctionEvent, FunctionEventAvg, KeyAverages
from fake_torch.profiler._schedule import ProfilerAction, schedule, tensorboard_trace_handler
from fake_torch.profiler.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    supported_activities,
)

__all__ = ["FunctionEvent", "FunctionEventAvg", "KeyAverages", "ProfilerAction",
           "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]
