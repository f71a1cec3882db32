"""torch._logging: the structured trace log (tlparse's input) that torch.compile writes to."""

from fake_torch._logging._internal import LazyString, trace_structured

__all__ = ["LazyString", "trace_structured"]
