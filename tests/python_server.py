"""`python SCRIPT ARGS` and `python -m MODULE ARGS` for many commands at the price of one
interpreter start and one import of the modules they all begin with.

`PythonServer("torch")` starts this file as a program: it imports the named modules once, then
forks a child per command that runs it as a new `python` would from that point: the script (or
module, through runpy as `-m` does) as `__main__` in a fresh module, sys.argv and sys.path[0] as
python sets them, the command's working directory, stdout and stderr written to files (read back
into a CompletedProcess), stdin empty; an exception that leaves it printed by `sys.excepthook`
(the script's own if it set one) from the command's first frame on, exit status 1; SystemExit's
code the exit status (a non-int code printed), atexit functions run last. What a child cannot
tell from a new interpreter: the preloaded modules (and their imports) are in sys.modules
already, and the environment is the server's (given when it starts).

For tests whose subject is what a command prints and returns, not the interpreter's start:
importing real torch costs ~1.3 s of CPU per process, fake_torch ~0.3 s. Used by
tests/test_run_hints.py; tests/test_python_server.py holds the server to plain `python`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class PythonServer:
    """A server process that imported `preload`; `run(argv, cwd)` is
    `subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True)`."""

    def __init__(self, *preload: str, cwd: Path | str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        """`cwd`: where the server imports `preload` from ('' on its sys.path, as a command's
        working directory is for `-m`)."""
        self._proc = subprocess.Popen([sys.executable, __file__, *preload], cwd=cwd,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      env=None if env is None else dict(env))
        self._tmp = tempfile.TemporaryDirectory(prefix="python_server")

    def run(self, argv: Sequence[str], cwd: Path | str) -> subprocess.CompletedProcess[str]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        out, err = Path(self._tmp.name) / "stdout", Path(self._tmp.name) / "stderr"
        request = {"argv": list(argv), "cwd": str(cwd), "stdout": str(out), "stderr": str(err)}
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        reply = self._proc.stdout.readline()
        if not reply:
            raise RuntimeError(f"the python server exited ({self._proc.wait()})")
        return subprocess.CompletedProcess([sys.executable, *argv], json.loads(reply),
                                           out.read_text(), err.read_text())

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._tmp.cleanup()


# ---- the server (this file as a program) and its children ----

def _exit_status(code: Any) -> int:
    """SystemExit's code as python's exit status (a code that is not an int is printed)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_uncaught(exc: BaseException) -> None:
    """What python does with an exception that leaves `__main__`: `sys.excepthook` on its
    traceback from the command's first frame on (the frame that ran it, _child's, left out; set
    on the exception: 3.11's hook prints the exception's own traceback)."""
    assert exc.__traceback__ is not None
    exc.with_traceback(exc.__traceback__.tb_next)
    sys.excepthook(type(exc), exc, exc.__traceback__)


def _child(request: dict[str, Any]) -> None:
    """Runs one command in this forked child, then exits it (never returns)."""
    import atexit
    import runpy
    import types

    status = 1
    try:
        os.chdir(request["cwd"])
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            opened = os.open(path, flags, 0o644)
            os.dup2(opened, fd)
            os.close(opened)
        argv = request["argv"]
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        if argv[0] == "-m":  # python -m MODULE ARGS: sys.path[0] the working directory
            sys.argv = ["-m", *argv[2:]]
            sys.path[0] = os.getcwd()
            try:
                runpy._run_module_as_main(argv[1])  # type: ignore[attr-defined]  # what -m runs
                status = 0
            except SystemExit as stop:
                status = _exit_status(stop.code)
            except BaseException as exc:  # (python prints whatever leaves)
                _print_uncaught(exc)
        else:  # python SCRIPT ARGS: sys.path[0] the script's folder
            path = argv[0]
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(path))
            main.__file__ = path
            try:
                with open(path, "rb") as f:
                    source = f.read()
                code = compile(source, path, "exec", dont_inherit=True)
            except SyntaxError as exc:
                exc.with_traceback(None)  # python shows no frame for it
                sys.excepthook(type(exc), exc, None)
            else:
                try:
                    exec(code, main.__dict__)
                    status = 0
                except SystemExit as stop:
                    status = _exit_status(stop.code)
                except BaseException as exc:  # (python prints whatever leaves)
                    _print_uncaught(exc)
        if "threading" in sys.modules:  # python's shutdown: non-daemon threads, then atexit
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # (a closed stream: nothing left to write)
                pass
        os._exit(status)


def _serve(preload: Sequence[str]) -> None:
    import importlib

    del sys.path[0]  # this file's folder (a command's sys.path[0] is set per command)
    sys.path.insert(0, "")
    for name in preload:
        importlib.import_module(name)
    requests, replies = sys.stdin, sys.stdout
    for line in requests:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, wait_status = os.waitpid(pid, 0)
        replies.write(json.dumps(os.waitstatus_to_exitcode(wait_status)) + "\n")
        replies.flush()


if __name__ == "__main__":
    _serve(sys.argv[1:])
