"""tests/python_server.py's children against plain `python`: the same stdout, stderr and exit
status for scripts and modules that print, fail (a chained error, Python's "Did you mean"
hints), exit with codes of each kind, replace sys.excepthook and register atexit functions; and
sys.argv, sys.path[0] and `__name__` as python sets them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from python_server import PythonServer

SCRIPTS = {
    "prints": "import sys\nprint('out', sys.argv[1:], __name__)\nprint('err', file=sys.stderr)\n",
    "chained": """\
        import json

        def f():
            tensr = 1
            return tensor + 1
        try:
            json.dumpz
        except AttributeError as e:
            raise RuntimeError("no dumps") from e
        """,
    "name_error": """\
        def f():
            tensr = 1
            return tensor + 1

        f()
        """,
    "while_handling": "try:\n    1 / 0\nexcept ZeroDivisionError:\n    [][1]\n",
    "exit_3": "import sys\nprint('bye')\nsys.exit(3)\n",
    "exit_text": "raise SystemExit('a message')\n",
    "exit_none": "raise SystemExit\n",
    "hook_and_atexit": """\
        import atexit, sys
        atexit.register(print, "at exit")
        sys.excepthook = lambda kind, value, tb: print("hooked", kind.__name__, value)
        raise ValueError("boom")
        """,
    "syntax": "x = (1,\n",
    "path": "import os, sys\nprint(os.path.basename(sys.path[0]), sys.argv[0].endswith('.py'))\n",
}


@pytest.fixture(scope="module")
def server() -> Iterator[PythonServer]:
    served = PythonServer("json")
    yield served
    served.close()


def _same(served: subprocess.CompletedProcess[str],
          plain: subprocess.CompletedProcess[str]) -> None:
    assert (served.returncode, served.stdout, served.stderr) == \
        (plain.returncode, plain.stdout, plain.stderr)


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_script_runs_as_plain_python_runs_it(server: PythonServer, tmp_path: Path,
                                               name: str) -> None:
    folder = tmp_path / "scripts"
    folder.mkdir()
    script = folder / f"{name}.py"
    script.write_text(textwrap.dedent(SCRIPTS[name]))
    argv = [str(script), "an arg"]
    _same(server.run(argv, tmp_path),
          subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60, check=False))


def test_a_module_runs_as_python_m_runs_it(server: PythonServer, tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "__main__.py").write_text(textwrap.dedent("""\
        import os, sys
        print(__name__, sys.argv[1:], sys.argv[0].endswith("__main__.py"))
        print(sys.path[0] == os.getcwd())
        print(sorted(k for k in globals() if not k.startswith("__")))
        raise KeyError("missing")
        """))
    argv = ["-m", "pkg", "x"]
    served = server.run(argv, tmp_path)
    assert served.returncode == 1 and "KeyError: 'missing'" in served.stderr
    _same(served, subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True,
                                 text=True, timeout=60, check=False))
