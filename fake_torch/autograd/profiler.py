"""torch.autograd.profiler: the older home of record_function (the same class as
torch.profiler.record_function)."""

from fake_torch.profiler import record_function

__all__ = ["record_function"]
