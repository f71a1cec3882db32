"""torch.get_num_threads / set_num_threads and their inter-op twins: CPU thread-pool settings.

fake_torch's kernels are numpy calls, so the numbers change nothing; they are kept, checked
and reported as torch keeps them. The default is torch's: OMP_NUM_THREADS when set (intra-op only),
else the CPUs this process may run on."""

from __future__ import annotations

import os

_num_threads: int | None = None
_num_interop_threads: int | None = None


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _default() -> int:
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return _cpus()


def _checked(n: int, fn: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"{fn} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{fn} expects a positive integer")
    return n


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism on CPU."""
    return _default() if _num_threads is None else _num_threads


def set_num_threads(int: int) -> None:
    """Set the number of threads used for intra-op parallelism on CPU."""
    global _num_threads
    _num_threads = _checked(int, "set_num_threads")


def get_num_interop_threads() -> int:
    """The number of threads used for inter-op parallelism on CPU."""
    # OMP_NUM_THREADS sets the intra-op pool only: torch's inter-op pool is one thread a CPU
    return _cpus() if _num_interop_threads is None else _num_interop_threads


def set_num_interop_threads(int: int) -> None:
    """Set the number of threads used for inter-op parallelism on CPU."""
    global _num_interop_threads
    _num_interop_threads = _checked(int, "set_num_interop_threads")
