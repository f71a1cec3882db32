"""torch.multiprocessing: Python's multiprocessing, plus torch's process helpers (`spawn`,
`start_processes`) and sharing-strategy names.

Tensors are numpy-backed host memory: one sent to another process is pickled (a copy), not
shared as torch's shared-memory reducers share it; a cuda tensor goes as torch's CUDA IPC
record, which rebuilds only in this process (see reductions.py). A child started by `spawn` installs
fake_torch as torch before it unpickles `fn` when the parent had it installed; a `spawn` child
still re-runs the parent's `__main__` module first (Python does), so a script's own top-level
`import torch` there needs torch importable in the child (`fork` children inherit the install).
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import traceback
from multiprocessing import *  # noqa: F403  (the API is Python's)
from typing import Any

from fake_torch.multiprocessing import reductions as reductions
from fake_torch.multiprocessing.reductions import init_reductions

__all__ = ["get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy",
           *multiprocessing.__all__]

init_reductions()  # as torch: its queues pickle tensors with reduce_tensor

_all_sharing_strategies = ({"file_system"} if sys.platform in ("darwin", "win32")
                           else {"file_descriptor", "file_system"})
_sharing_strategy = "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Set the strategy for sharing CPU tensors (recorded; tensors are pickled regardless)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies this system supports."""
    return _all_sharing_strategies


class ProcessException(Exception):
    """A process started by `spawn` failed."""

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid


class ProcessRaisedException(ProcessException):
    """A process failed with an exception its code raised (its traceback is the message)."""


class ProcessExitedException(ProcessException):
    """A process exited with a nonzero code or by a signal."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name


def _wrap(fn_bytes: bytes, i: int, args_bytes: bytes, install: bool, errors: Any) -> None:
    """A child's entry: install fake_torch (when the parent had it), then run fn(i, *args);
    an exception's traceback goes to the parent through `errors`."""
    if install:
        from fake_torch._install import install as install_fake_torch

        install_fake_torch()
    try:
        fn = pickle.loads(fn_bytes)
        fn(i, *pickle.loads(args_bytes))
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put((i, traceback.format_exc()))
        sys.exit(1)


class ProcessContext:
    """The processes `start_processes(join=False)` started; `join()` waits for them."""

    def __init__(self, processes: list[Any], errors: Any) -> None:
        self.processes = processes
        self.errors = errors

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait for the processes; True when all ended well. The first failure terminates the
        others and raises ProcessRaisedException (with its traceback) or
        ProcessExitedException."""
        multiprocessing.connection.wait([p.sentinel for p in self.processes], timeout=timeout)
        # liveness first, exit codes after: a process that ends between the two looks alive
        # (we wait again), never ended without an exit code (a failure read as success)
        alive = [p.is_alive() for p in self.processes]
        failed = next((i for i, p in enumerate(self.processes)
                       if p.exitcode not in (None, 0)), None)
        if failed is None:
            return not any(alive)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join(grace_period)
        process = self.processes[failed]
        if not self.errors.empty():
            index, trace = self.errors.get()
            raise ProcessRaisedException(
                f"\n\n-- Process {index:d} terminated with the following error:\n{trace}",
                index, self.processes[index].pid)
        code = process.exitcode
        if code < 0:
            name = _signal_name(-code)
            raise ProcessExitedException(f"process {failed:d} terminated with signal {name}",
                                         failed, process.pid, code, name)
        raise ProcessExitedException(f"process {failed:d} terminated with exit code {code:d}",
                                     failed, process.pid, code)


class SpawnContext(ProcessContext):
    """What `spawn(join=False)` returns."""


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"<Unknown signal {number}>"


def start_processes(fn: Any, args: tuple[Any, ...] = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn") -> ProcessContext | None:
    """Start `nprocs` processes running fn(i, *args) (i: the process index); with `join`,
    wait for them all (a failure raises, see ProcessContext.join), else return the context."""
    from fake_torch._install import is_installed

    ctx: Any = multiprocessing.get_context(start_method)
    errors = ctx.SimpleQueue()
    fn_bytes, args_bytes = pickle.dumps(fn), pickle.dumps(args)
    processes = []
    for i in range(nprocs):
        process = ctx.Process(target=_wrap, daemon=daemon,
                              args=(fn_bytes, i, args_bytes, is_installed(), errors))
        process.start()
        processes.append(process)
    context = ProcessContext(processes, errors)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Any, args: tuple[Any, ...] = (), nprocs: int = 1, join: bool = True,
          daemon: bool = False, start_method: str = "spawn") -> ProcessContext | None:
    """start_processes with the "spawn" start method (torch warns for any other)."""
    if start_method != "spawn":
        import warnings

        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t "
                      "torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
