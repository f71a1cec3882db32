"""`fake_torch.install()`, `installed()` and `python -m fake_torch run`: torch code runs unchanged.

Installing rewires `sys.modules` for a whole process, and this test session may have real torch
imported, so everything that installs runs in a fresh subprocess (INSTALLED_CASES: one for the
cases that can follow one another).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def _python(code: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def _fake_run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fake_torch", "run", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok"), done.stdout


# Cases that each begin `import fake_torch; fake_torch.install()` as a fresh process would and
# leave it installed: one fresh process runs them in this order (the first install is the
# first case's; none imports what a later one asserts is not yet imported), each in its own
# namespace, and reports each one's output and error; each test asserts its own case.
INSTALLED_CASES = {
    "install_makes_import_torch_mean_fake_torch": """
        import sys
        import fake_torch
        fake_torch.install()
        import torch
        from torch import Tensor
        import torch._kernels.arith as arith
        assert torch is fake_torch and Tensor is fake_torch.Tensor
        assert arith is sys.modules["fake_torch._kernels.arith"]
        # every fake_torch module already imported is aliased under its torch name
        for name, module in list(sys.modules.items()):
            if name.startswith("fake_torch."):
                assert sys.modules["torch" + name[len("fake_torch"):]] is module, name
        x = torch.zeros(2, 3, device="cuda")
        assert isinstance(x, Tensor) and x.device == torch.device("cuda", 0)
        fake_torch.install()  # a second install changes nothing
        print("ok")
    """,
    "install_resolves_nn_functional_and_cuda": """
        import fake_torch
        fake_torch.install()
        import torch
        import torch.cuda
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.nn import functional
        assert nn is fake_torch.nn and F is fake_torch.nn.functional is functional
        assert torch.cuda is fake_torch.cuda and torch.nn is nn
        print("ok")
    """,
    "submodule_imported_later_is_the_same_module_object": """
        import sys
        import fake_torch
        fake_torch.install()
        assert "fake_torch._tools._bench" not in sys.modules  # not imported by the package itself
        import torch._tools._bench
        from torch._tools._bench import Row
        bench = torch._tools._bench
        assert bench is sys.modules["fake_torch._tools._bench"]
        assert bench is sys.modules["torch._tools._bench"]
        assert Row is fake_torch._tools._bench.Row  # one module, executed once: not a second copy
        assert bench.__name__ == "fake_torch._tools._bench"
        assert bench.__spec__.name == "fake_torch._tools._bench"
        print("ok")
    """,
    "import_of_a_torch_module_fake_torch_lacks_names_it": """
        import fake_torch
        fake_torch.install()
        try:
            import torch.fft
        except ModuleNotFoundError as e:
            assert e.name == "torch.fft", e.name
            assert "No module named 'torch.fft'" in str(e), str(e)
        else:
            raise AssertionError("import torch.fft should fail")
        print("ok")
    """,
}

_RUN_CASES = """
import contextlib, io, json, sys, textwrap, traceback
results = {}
for name, code in json.loads(sys.argv[1]).items():
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(textwrap.dedent(code), name, "exec"), {"__name__": "__main__"})
        error = ""
    except BaseException:
        error = traceback.format_exc()
    results[name] = {"stdout": out.getvalue(), "error": error}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def cases() -> dict[str, Any]:
    """Each of INSTALLED_CASES' output and error ("": none)."""
    done = _python(_RUN_CASES, json.dumps(INSTALLED_CASES))
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return results


def _ok_case(results: dict[str, Any], name: str) -> None:
    assert not results[name]["error"], results[name]["error"]
    assert results[name]["stdout"].strip().endswith("ok"), results[name]["stdout"]


def test_install_makes_import_torch_mean_fake_torch(cases: dict[str, Any]) -> None:
    _ok_case(cases, "install_makes_import_torch_mean_fake_torch")


def test_install_resolves_nn_functional_and_cuda(cases: dict[str, Any]) -> None:
    _ok_case(cases, "install_resolves_nn_functional_and_cuda")


def test_submodule_imported_later_is_the_same_module_object(cases: dict[str, Any]) -> None:
    _ok_case(cases, "submodule_imported_later_is_the_same_module_object")


def test_import_of_a_torch_module_fake_torch_lacks_names_it(cases: dict[str, Any]) -> None:
    _ok_case(cases, "import_of_a_torch_module_fake_torch_lacks_names_it")


def test_installed_context_restores_sys_modules() -> None:
    _ok(_python("""
        import sys
        import fake_torch
        before_path = list(sys.meta_path)
        with fake_torch.installed() as torch:
            import torch._tools._bench
            import torch as inner
            assert inner is torch is fake_torch
            assert fake_torch.is_installed()
        assert not [n for n in sys.modules if n == "torch" or n.startswith("torch.")]
        assert sys.meta_path == before_path and not fake_torch.is_installed()
        fake_torch.install()
        with fake_torch.installed():  # nested in an install: leaves the outer one in place
            pass
        import torch
        assert torch is fake_torch and fake_torch.is_installed()
        print("ok")
    """))


def test_install_refuses_when_real_torch_is_imported() -> None:
    pytest.importorskip("torch", reason="real torch (CPU build) not installed")
    import fake_torch

    real = sys.modules["torch"]
    assert real is not fake_torch
    meta_path = list(sys.meta_path)
    with pytest.raises(RuntimeError, match=r"the real torch is already imported"):
        fake_torch.install()
    with pytest.raises(RuntimeError, match=r"python -m fake_torch run"):
        with fake_torch.installed():
            pass
    assert sys.modules["torch"] is real and sys.meta_path == meta_path


def test_run_executes_a_script_as_main_with_its_args(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("VALUE = 42\n")
    (tmp_path / "script.py").write_text(textwrap.dedent("""
        import sys
        import torch
        import fake_torch
        from helper import VALUE  # the script's own folder is on sys.path, as under python
        assert torch is fake_torch and __name__ == "__main__"
        print(sys.argv, VALUE, torch.zeros(2, device="cuda").device)
        print("ok")
    """))
    done = _fake_run(str(tmp_path / "script.py"), "--flag", "x", cwd=tmp_path)
    _ok(done)
    assert done.stdout.splitlines()[0] == f"[{str(tmp_path / 'script.py')!r}, '--flag', 'x'] " \
        "42 cuda:0"


def test_run_missing_script_is_a_one_line_error_and_exit_2(tmp_path: Path) -> None:
    done = _fake_run("no_such_script.py", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "fake_torch run: can't open file 'no_such_script.py': no such file"]


def test_run_script_error_shows_its_own_traceback_and_exits_1(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text("import torch\n\ndef f():\n    raise ValueError('boom')\n"
                                      "\nf()\n")
    done = _fake_run("boom.py", cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == "ValueError: boom"
    assert 'boom.py", line 6, in <module>' in lines[1]
    assert "runpy" not in done.stderr and "__main__.py" not in done.stderr


def test_run_passes_the_scripts_exit_code_through(tmp_path: Path) -> None:
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    assert _fake_run("exits.py", cwd=tmp_path).returncode == 3


def test_run_needs_a_script_argument() -> None:
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "the following arguments are required: script" in done.stderr
