"""Run torch code unchanged: make `import torch` (and every `torch.X` submodule) mean fake_torch.

`install()` aliases each imported `fake_torch.X` module as `torch.X` in `sys.modules` and puts a
finder on `sys.meta_path`, so a submodule imported later (`import torch.nn.functional`) resolves
to the SAME module object as `fake_torch.nn.functional`, never to a second copy of its file. A
`torch.X` that fake_torch lacks raises ModuleNotFoundError, saying so when torch has it
(fake_torch._missing_names). The finder also answers for the `torch` distribution
(`importlib.metadata.version("torch")` is torch.__version__), which is how third-party packages
(transformers) decide that torch is installed. `installed()` is the
context-manager form that puts `sys.modules` back as it found it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from fake_torch._missing_names import module_not_found

_REAL = "torch"
_FAKE = "fake_torch"


def _fake_name(name: str) -> str:
    """'torch.nn.functional' -> 'fake_torch.nn.functional'."""
    return _FAKE + name[len(_REAL):]


class _AliasLoader(importlib.abc.Loader):
    """Hands the already imported fake_torch module to the import system under its torch name."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.fake_spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the module ran once, as fake_torch.X); the import system has just
        overwritten its `__spec__` with the torch-named one: give it back its own."""
        module.__spec__ = self.fake_spec


class _TorchDistribution(importlib.metadata.Distribution):
    """The `torch` distribution's metadata, as a wheel's dist-info would give it: name, version
    (torch.__version__), the top-level package, fake_torch's own requirements."""

    def read_text(self, filename: str) -> str | None:
        from fake_torch.version import __version__

        if filename == "METADATA":
            return (f"Metadata-Version: 2.1\nName: torch\nVersion: {__version__}\n"
                    "Summary: fake_torch, a numpy package shaped like torch, installed as "
                    "torch\nRequires-Dist: numpy>=1.26\nRequires-Dist: typing-extensions>=4.8\n"
                    "Requires-Dist: ml_dtypes>=0.7\n")
        if filename == "top_level.txt":
            return "torch\n"
        return None

    def locate_file(self, path: str | os.PathLike[str]) -> Path:
        return Path(__file__).parent.parent / path


class TorchAliasFinder(importlib.metadata.DistributionFinder):
    """`import torch.X` -> the module `fake_torch.X` (imported on demand); the `torch`
    distribution -> fake_torch's metadata."""

    def find_distributions(self, context: importlib.metadata.DistributionFinder.Context | None
                           = None) -> Iterable[importlib.metadata.Distribution]:
        """The `torch` distribution, when asked for it by name or for all of them."""
        name = None if context is None else context.name
        if name is None or name.lower().replace("_", "-").replace(".", "-") == _REAL:
            yield _TorchDistribution()

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_REAL + "."):
            return None
        fake = _fake_name(fullname)
        try:
            found = importlib.util.find_spec(fake)
        except ModuleNotFoundError as exc:  # a torch module fake_torch lacks (_missing_names)
            if exc.name != fake:  # something its parent imports is missing: that error
                raise
            found = None
        if found is None:  # Python's text, and whether torch has the module
            raise module_not_found(fullname)
        module = importlib.import_module(fake)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=hasattr(module, "__path__"))


_finder: TorchAliasFinder | None = None


def is_installed() -> bool:
    """True when `import torch` currently gives fake_torch."""
    return sys.modules.get(_REAL) is sys.modules.get(_FAKE) is not None


def install() -> None:
    """Make `import torch`, `torch.nn`, `torch.nn.functional`, `torch.cuda`, ... mean fake_torch.

    Call it before anything imports torch. Raises RuntimeError when the real torch is already
    imported (its tensors and modules would mix with ours). Installing twice is a no-op.
    """
    global _finder
    from fake_torch import _namespace

    fake_torch = _namespace.torch()

    current = sys.modules.get(_REAL)
    if current is not None and current is not fake_torch:
        raise RuntimeError(
            f"fake_torch.install(): the real torch is already imported "
            f"(sys.modules['torch'] is {current!r}). Install fake_torch before anything imports "
            "torch, e.g. run the script with `python -m fake_torch run SCRIPT`.")
    for name, module in list(sys.modules.items()):
        if module is not None and (name == _FAKE or name.startswith(_FAKE + ".")):
            sys.modules.setdefault(_REAL + name[len(_FAKE):], module)
    if _finder is None:
        _finder = TorchAliasFinder()
        sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Undo `install()`: drop every `torch*` alias of a fake_torch module and the finder."""
    global _finder
    for name, module in list(sys.modules.items()):
        if name == _REAL or name.startswith(_REAL + "."):
            if getattr(module, "__name__", "").split(".")[0] == _FAKE:
                del sys.modules[name]
    if _finder is not None:
        sys.meta_path.remove(_finder)
        _finder = None


@contextmanager
def installed() -> Iterator[ModuleType]:
    """`with fake_torch.installed() as torch:` ... `import torch` means fake_torch inside the
    block; on exit every `torch*` entry of `sys.modules` is put back as it was."""
    saved = {n: m for n, m in sys.modules.items() if n == _REAL or n.startswith(_REAL + ".")}
    was_installed = _finder is not None
    install()
    try:
        yield sys.modules[_REAL]
    finally:
        if not was_installed:
            uninstall()
        for name in [n for n in sys.modules if n == _REAL or n.startswith(_REAL + ".")]:
            if name not in saved:
                del sys.modules[name]
        sys.modules.update(saved)
