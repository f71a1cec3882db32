"""The errors for a name a fake_torch module lacks, worded as torch's and naming torch's APIs.

fake_torch's modules keep their own `__name__` ('fake_torch.cuda': pickling, `__module__`,
relative imports, the stubs and `api` all read it), but what a torch user sees of a missing
name says torch's: `module 'torch.cuda' has no attribute 'CUDAgraph'`, with Python's own
"Did you mean: 'CUDAGraph'?" kept (the AttributeError carries `name` and `obj`, which Python's
suggestions read). A name real torch has and fake_torch lacks (fake_torch/_torch_names.json)
says so, with the exception class a missing name gets (AttributeError, ImportError,
ModuleNotFoundError, so `hasattr` and `except ImportError` behave) and no suggestion:
`module 'torch' has no attribute 'fft': torch.fft is a torch 2.13 API that fake_torch does not
provide`.

One mechanism for every module: `hook()` (run when this module is imported, first thing in
fake_torch/__init__) puts a finder on `sys.meta_path` that gives each `fake_torch.X` module,
once it has run, a module `__getattr__` returning `missing_attribute` (a module with its own
`__getattr__` calls it itself; one whose class has one keeps its own text; fake_torch's own
machinery, which no torch user reaches, gets none: see `attach`), and that says
which missing `fake_torch.X` torch has. `module_not_found` words the ModuleNotFoundError of
both that finder and fake_torch.install()'s. `python -m fake_torch run` leaves out the frames
these errors are raised in, which Python's own lookup errors have not.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import opcode
import sys
from collections.abc import Callable, Sequence
from types import FrameType, ModuleType
from typing import Any, TypeVar

from fake_torch._torch_names import not_provided, torch_has_attribute, torch_has_module

_FAKE = "fake_torch"
_REAL = "torch"
_IMPORT_FROM = opcode.opmap["IMPORT_FROM"]
_MARK = "_fake_torch_lookup_frames"  # set in an error's __dict__ by _from_lookup
_E = TypeVar("_E", bound=BaseException)


def torch_name(name: str) -> str:
    """'fake_torch.cuda' -> 'torch.cuda' (another name is kept)."""
    if name == _FAKE or name.startswith(_FAKE + "."):
        return _REAL + name[len(_FAKE):]
    return name


def _imported_as(module: ModuleType) -> str:
    """The name `sys.modules` knows the module by: torch's once fake_torch.install() aliased
    it, else its own (what an ImportError's `name` must say for Python to find it again)."""
    shown = torch_name(module.__name__)
    return shown if sys.modules.get(shown) is module else module.__name__


def _importing_from(frame: FrameType) -> bool:
    """The frame is running `from M import NAME` (its IMPORT_FROM asked the module for NAME),
    not `M.NAME` or `hasattr(M, NAME)`."""
    code = frame.f_code.co_code  # f_lasti: the byte offset of the instruction running
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _IMPORT_FROM


def _from_lookup(error: _E, frames: int) -> _E:
    """Mark an error as Python's own lookup error that fake_torch raises from its last `frames`
    frames (a module `__getattr__`, a finder): `python -m fake_torch run` leaves them out, as
    python's own lookup errors have none."""
    error.__dict__[_MARK] = frames
    return error


def lookup_frames(error: BaseException) -> int:
    """How many of `error`'s last traceback entries are fake_torch's missing-name machinery
    (0: not a missing-name error)."""
    frames = getattr(error, "__dict__", {}).get(_MARK, 0)
    return frames if isinstance(frames, int) else 0


def missing_attribute(module: ModuleType, name: str) -> Any:
    """What `module.NAME` that does not exist gives: an AttributeError, or for
    `from M import NAME` Python's ImportError, unless the submodule M.NAME is in sys.modules
    mid-import (returned, as Python's IMPORT_FROM would find it). Call it from the module's
    `__getattr__` only, as `return missing_attribute(module, name)`: it reads the frame that
    asked. A torch name fake_torch lacks says so and gets no "Did you mean" (its `obj` is set,
    its `name` not: Python adds both only to an error that has neither, and suggests only with
    a name)."""
    shown = torch_name(module.__name__)
    if name == "__path__":  # importlib's probe in every `from M import x` run in a function
        # (~3 us with the frame read below): a module's, never a torch name
        raise _from_lookup(AttributeError(f"module '{shown}' has no attribute '{name}'",
                                          name=name, obj=module), 2)
    asker = sys._getframe(2)  # 0: here, 1: the module's __getattr__
    from_import = _importing_from(asker)
    if from_import and f"{module.__name__}.{name}" in sys.modules:
        return sys.modules[f"{module.__name__}.{name}"]
    # importlib's probe in `from package import submodule` drops the error: no names to read
    lacking = (not name.startswith("__") and not asker.f_code.co_filename.startswith("<frozen")
               and torch_has_attribute(shown, name))
    note = f": {not_provided(f'{shown}.{name}')}" if lacking else ""
    if from_import:
        where = getattr(module, "__file__", None)
        error = ImportError(f"cannot import name '{name}' from '{shown}' "
                            f"({where or 'unknown location'}){note}",
                            name=_imported_as(module), path=where)
        if not lacking:
            error.name_from = name  # type: ignore[attr-defined]  # 3.12+: "Did you mean"
        raise _from_lookup(error, 2)
    if lacking:
        raise _from_lookup(AttributeError(f"module '{shown}' has no attribute '{name}'{note}",
                                          obj=module), 2)
    raise _from_lookup(AttributeError(f"module '{shown}' has no attribute '{name}'",
                                      name=name, obj=module), 2)


def module_not_found(name: str) -> ModuleNotFoundError:
    """`import NAME` (torch.X or fake_torch.X) that fake_torch cannot give: Python's text, and
    when torch has the module, that fake_torch does not provide it. A finder raises it."""
    shown = torch_name(name)
    note = f": {not_provided(shown)}" if torch_has_module(shown) else ""
    return _from_lookup(ModuleNotFoundError(f"No module named '{name}'{note}", name=name), 1)


def _module_getattr(module: ModuleType) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        return missing_attribute(module, name)

    return __getattr__


def stands_for_torch(name: str) -> bool:
    """Whether the module `name` is one a torch user may reach: anything but fake_torch's own
    machinery, the top-level private modules and packages torch has none of
    ('fake_torch._simulated._machine', 'fake_torch._kernels.arith'; 'fake_torch._dynamo' and
    'fake_torch.nn._activations' stand for torch's)."""
    top = name.split(".")[:2]
    return (len(top) < 2 or not top[1].startswith("_")
            or torch_has_module(torch_name(".".join(top))))


def attach(module: ModuleType) -> None:
    """Give `module` the `__getattr__` that raises `missing_attribute`, unless it has its
    own (in its dict or its class's) or is fake_torch's own machinery: CPython caches
    `module.NAME` lookups only in modules without a `__getattr__`, and the hot path reads
    its modules' names (`_machine.MACHINE`, `_cost.EAGER_LAUNCH_NS`) at every op, ~250
    instructions each uncached."""
    if (stands_for_torch(module.__name__) and "__getattr__" not in vars(module)
            and not hasattr(type(module), "__getattr__")):
        vars(module)["__getattr__"] = _module_getattr(module)


class _AttachingLoader(importlib.machinery.SourceFileLoader):
    """A source file's loader that, once the module has run, attaches its `__getattr__`."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        attach(module)


class _AttachingExtensionLoader(importlib.machinery.ExtensionFileLoader):
    """A compiled module's loader (the native core) that attaches its `__getattr__` too."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        attach(module)


class FakeTorchFinder(importlib.abc.MetaPathFinder):
    """`fake_torch.X`: found as usual (by the finders after this one), loaded by a loader that
    attaches `__getattr__`; not found but a torch module: ModuleNotFoundError saying so."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_FAKE + "."):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: importlib.machinery.ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            if type(spec.loader) is importlib.machinery.SourceFileLoader:
                spec.loader = _AttachingLoader(spec.loader.name, spec.loader.path)
            elif type(spec.loader) is importlib.machinery.ExtensionFileLoader:
                spec.loader = _AttachingExtensionLoader(spec.loader.name, spec.loader.path)
            return spec
        if torch_has_module(torch_name(fullname)):
            raise module_not_found(fullname)
        return None


def hook() -> None:
    """Put the finder first on `sys.meta_path` (once) and attach `__getattr__` to the
    fake_torch modules already imported."""
    if not any(isinstance(f, FakeTorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, FakeTorchFinder())
    for name, module in list(sys.modules.items()):
        if name.startswith(_FAKE + ".") and isinstance(module, ModuleType):
            attach(module)


hook()
