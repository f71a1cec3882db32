"""torch.profiler: see which ops ran, how many launches they cost, and where (eager or a graph)."""

from fake_torch.profiler._events import FunctionEvent, FunctionEventAvg, KeyAverages
from fake_torch.profiler.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    supported_activities,
)

__all__ = ["FunctionEvent", "FunctionEventAvg", "KeyAverages", "ProfilerActivity", "profile",
           "record_function", "supported_activities"]
