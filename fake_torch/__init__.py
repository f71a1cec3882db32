"""fake_torch: a numpy package shaped like `torch` that counts every would-be GPU launch."""

from fake_torch._counter import LaunchCounter

__all__ = ["LaunchCounter"]
