"""`python -m fake_torch run SCRIPT` prints a script's uncaught error as `python SCRIPT` with real
torch prints it: Python's "Did you mean" hints kept, torch's module names in the text, and a
torch API fake_torch lacks named as such (fake_torch/_missing_names.py). The oracle is the same
script run by plain python with real torch; those comparisons skip without it."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from python_server import PythonServer

import fake_torch
from fake_torch import _torch_names
from fake_torch._missing_names import stands_for_torch

REPO_ROOT = Path(__file__).resolve().parents[1]
# found on sys.path itself, not through fake_torch.install()'s alias (another test may have run it)
HAVE_TORCH = importlib.machinery.PathFinder.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="real torch (CPU build) not installed")


def _script(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


Run = Callable[[Path], subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def run_fake() -> Iterator[Run]:
    """`python -m fake_torch run SCRIPT` (from the repository's root)."""
    server = PythonServer("fake_torch", cwd=REPO_ROOT)
    yield lambda script: server.run(["-m", "fake_torch", "run", str(script)], cwd=REPO_ROOT)
    server.close()


@pytest.fixture(scope="module")
def run_real() -> Iterator[Run]:
    """`python SCRIPT`, with real torch (from the script's folder)."""
    server = PythonServer("torch")
    yield lambda script: server.run([str(script)], cwd=script.parent)
    server.close()


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    return done.stderr.rstrip("\n").splitlines()[-1]


def _no_fake_torch_frame(stderr: str) -> None:
    assert f'File "{Path(fake_torch.__file__).parent}' not in stderr, stderr


@needs_torch
def test_attribute_typo_prints_as_python_does_with_torch(run_fake: Run, run_real: Run,
                                                         tmp_path: Path) -> None:
    script = _script(tmp_path, """\
        import torch
        graph = torch.cuda.CUDAgraph
    """)
    fake, real = run_fake(script), run_real(script)
    assert fake.returncode == real.returncode == 1
    assert fake.stderr == real.stderr  # the whole traceback: the script's frames only
    assert _last_line(fake) == ("AttributeError: module 'torch.cuda' has no attribute "
                                "'CUDAgraph'. Did you mean: 'CUDAGraph'?")


@needs_torch
def test_a_chained_missing_name_prints_as_python_does_with_torch(run_fake: Run, run_real: Run,
                                                                 tmp_path: Path) -> None:
    script = _script(tmp_path, """\
        import torch
        try:
            torch.cuda.CUDAgraph
        except AttributeError as e:
            raise RuntimeError("no graphs") from e
    """)
    fake, real = run_fake(script), run_real(script)
    assert fake.stderr == real.stderr
    assert "Did you mean: 'CUDAGraph'?" in fake.stderr


@needs_torch
def test_name_error_hint_comes_from_the_scripts_frame(run_fake: Run, run_real: Run,
                                                      tmp_path: Path) -> None:
    script = _script(tmp_path, """\
        import torch

        def f():
            tensr = torch.ones(2)
            return tensor + 1

        f()
    """)
    fake, real = run_fake(script), run_real(script)
    assert fake.stderr == real.stderr
    assert _last_line(fake) == "NameError: name 'tensor' is not defined. Did you mean: 'tensr'?"


@needs_torch
def test_import_of_a_misspelt_name_prints_as_python_does(run_fake: Run, run_real: Run,
                                                         tmp_path: Path) -> None:
    # the path in python's text is the module's file: torch's there, fake_torch's here
    script = _script(tmp_path, """\
        from torch.cuda import CUDAgraph
    """)
    fake, real = run_fake(script), run_real(script)
    assert fake.returncode == real.returncode == 1
    strip = re.compile(r" \(/\S+/__init__\.py\)")
    assert strip.sub("", fake.stderr) == strip.sub("", real.stderr)
    assert _last_line(fake).startswith("ImportError: cannot import name 'CUDAgraph' from "
                                       "'torch.cuda' (")
    _no_fake_torch_frame(fake.stderr)


@needs_torch
def test_import_of_a_module_torch_lacks_prints_as_python_does(run_fake: Run, run_real: Run,
                                                              tmp_path: Path) -> None:
    script = _script(tmp_path, "import torch.fftt\n")
    fake, real = run_fake(script), run_real(script)
    assert fake.stderr == real.stderr
    assert _last_line(fake) == "ModuleNotFoundError: No module named 'torch.fftt'"


@needs_torch
def test_the_scripts_own_excepthook_is_called(run_fake: Run, run_real: Run,
                                              tmp_path: Path) -> None:
    script = _script(tmp_path, """\
        import sys
        import torch
        sys.excepthook = lambda kind, value, tb: print("hooked", kind.__name__, value)
        raise ValueError("boom")
    """)
    fake, real = run_fake(script), run_real(script)
    assert fake.stdout == real.stdout == "hooked ValueError boom\n"
    assert fake.returncode == real.returncode == 1


NOT_PROVIDED = "torch.fft is a torch 2.13 API that fake_torch does not provide"


@pytest.mark.parametrize(("line", "error"), [
    ("torch.fft", f"AttributeError: module 'torch' has no attribute 'fft': {NOT_PROVIDED}"),
    ("import torch.fft", f"ModuleNotFoundError: No module named 'torch.fft': {NOT_PROVIDED}"),
    ("from torch import fft", "ImportError: cannot import name 'fft' from 'torch' "
     f"({Path(fake_torch.__file__)}): {NOT_PROVIDED}"),
])
def test_a_torch_api_fake_torch_lacks_says_so(run_fake: Run, tmp_path: Path, line: str,
                                              error: str) -> None:
    done = run_fake(_script(tmp_path, f"import torch\n{line}\n"))
    assert done.returncode == 1
    assert _last_line(done) == error  # no "Did you mean" for a name torch has
    _no_fake_torch_frame(done.stderr)


@needs_torch
def test_real_torch_has_the_api_the_message_names(run_real: Run, tmp_path: Path) -> None:
    done = run_real(_script(tmp_path,
                            "import torch.fft\nfrom torch import fft\nprint(torch.fft)\n"))
    assert done.returncode == 0, done.stderr


def test_a_lacking_torch_api_keeps_the_exception_class_code_tests_for(run_fake: Run,
                                                                      tmp_path: Path) -> None:
    done = run_fake(_script(tmp_path, """\
        import torch
        print(hasattr(torch, "fft"), hasattr(torch.cuda, "CUDAgraph"), hasattr(torch, "cuda"))
        try:
            import torch.fft
        except ImportError as e:
            print(type(e).__name__, e.name)
        try:
            from torch import fft
        except ImportError as e:
            print(type(e).__name__, e.name)
    """))
    assert done.stdout == "False False True\nModuleNotFoundError torch.fft\nImportError torch\n"


def test_direct_users_see_torch_names_and_keep_suggestions() -> None:
    with pytest.raises(AttributeError) as typo:
        fake_torch.cuda.CUDAgraph  # type: ignore[attr-defined]  # noqa: B018
    assert str(typo.value) == "module 'torch.cuda' has no attribute 'CUDAgraph'"
    assert typo.value.name == "CUDAgraph" and typo.value.obj is fake_torch.cuda
    with pytest.raises(AttributeError) as lacking:
        fake_torch.fft  # noqa: B018
    assert str(lacking.value) == f"module 'torch' has no attribute 'fft': {NOT_PROVIDED}"
    assert lacking.value.name is None  # so Python suggests nothing for it
    with pytest.raises(ModuleNotFoundError, match="No module named 'fake_torch.fft': "
                       + re.escape(NOT_PROVIDED)) as missing:
        importlib.import_module("fake_torch.fft")
    assert missing.value.name == "fake_torch.fft"
    with pytest.raises(ModuleNotFoundError, match=r"^No module named 'fake_torch.fftt'$"):
        importlib.import_module("fake_torch.fftt")


def test_every_imported_fake_torch_module_has_the_missing_name_path() -> None:
    """Every module a torch user may reach has it; fake_torch's own machinery (the top-level
    private modules torch has none of) has not, so CPython caches its `module.NAME` reads."""
    machinery = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("fake_torch.") or module is None:
            continue
        has = "__getattr__" in vars(module) or hasattr(type(module), "__getattr__")
        if stands_for_torch(name):
            assert has, name
        else:
            assert "__getattr__" not in vars(module), name
            machinery.append(name)
    assert "fake_torch._simulated._machine" in machinery
    assert "fake_torch._kernels.arith" in machinery
    assert stands_for_torch("fake_torch.cuda") and stands_for_torch("fake_torch._dynamo.config")
    assert stands_for_torch("fake_torch._tensor") and stands_for_torch("fake_torch.nn._pad")


@needs_torch
def test_the_names_file_is_torchs() -> None:
    torch = pytest.importorskip("torch")
    if torch.__name__ != "torch":  # fake_torch.install() ran in this process
        pytest.skip("torch is fake_torch here")
    assert _torch_names.torch_version() == torch.__version__.split("+")[0]
    cuda_names = _torch_names._data()["attributes"]["torch.cuda"]
    assert "CUDAGraph" in cuda_names and "CUDAgraph" not in cuda_names
    # each is an attribute of torch.cuda, or a submodule `import torch.cuda.X` gives
    assert all(hasattr(torch.cuda, n) or importlib.util.find_spec(f"torch.cuda.{n}")
               for n in cuda_names)
    assert _torch_names.torch_has_module("torch.fft")
    assert not _torch_names.torch_has_module("torch.fftt")


def test_from_import_finds_a_submodule_mid_import_as_python_does() -> None:
    # a circular import: fake_torch.nn.X is in sys.modules, not yet an attribute of fake_torch.nn;
    # Python's `from fake_torch.nn import X` falls back to sys.modules, and so must __getattr__
    child = types.ModuleType("fake_torch.nn._mid_import")
    sys.modules["fake_torch.nn._mid_import"] = child
    try:
        from fake_torch.nn import _mid_import  # type: ignore[attr-defined]
        assert _mid_import is child
        assert not hasattr(fake_torch.nn, "_mid_import")  # an attribute lookup still misses
    finally:
        del sys.modules["fake_torch.nn._mid_import"]


def test_a_modules_path_probe_is_python_s_plain_attribute_error() -> None:
    """importlib asks every module of a from-import run in a function for `__path__`; a
    fake_torch module that is not a package answers as Python's own lookup, in torch's name."""
    import fake_torch.nn.functional as F
    assert not hasattr(F, "__path__")
    with pytest.raises(AttributeError) as missing:
        F.__path__  # noqa: B018
    assert str(missing.value) == "module 'torch.nn.functional' has no attribute '__path__'"
    assert missing.value.name == "__path__" and missing.value.obj is F
