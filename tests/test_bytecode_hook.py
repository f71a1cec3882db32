"""torch._dynamo.convert_frame.register_bytecode_hook and the contract of the code it hands
over, as a wrapper in vLLM's manner uses it (written here, not copied): compile a module's
forward with every guard dropped, catch the new code in the hook (finding the compiling frame
by walking up the stack to convert_frame.py's `_compile` and reading its `frame` local), then
install it as `forward.__code__` and call forward directly: each call runs the compiled graph,
the backend is called once, `super()` inside forward works, values equal eager. The same
program runs on real torch 2.13 CPU and on fake_torch."""

from __future__ import annotations

import inspect
import os
import sys
from types import CodeType
from typing import Any

import numpy as np
import pytest

import fake_torch as ft

LIBS = ["torch", "fake_torch"]


def _lib(name: str) -> Any:
    return pytest.importorskip("torch") if name == "torch" else ft


def _wrapper_classes(lib: Any) -> tuple[type, type]:
    class Base(lib.nn.Module):  # type: ignore[misc]
        def forward(self, x: Any) -> Any:
            return x * 2

    class Wrapped(Base):
        """Compiles its own forward once; later calls run the compiled code directly."""

        def __init__(self, guard_filter_fn: Any = None) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(4, 4)
            # counted in a dict: fake_torch compares the module's attributes before and after
            # a trace (a change means Python with effects) and the backend runs inside it
            self.counts = {"backend": 0, "hook": 0}
            self.new_code: CodeType | None = None
            self.frame_locals: list[str] = []
            options = {"guard_filter_fn": guard_filter_fn or lib.compiler.skip_all_guards_unsafe}
            self.compiled = lib.compile(self.forward, fullgraph=True, dynamic=False,
                                        backend=self.backend, options=options)
            self.handle = lib._dynamo.convert_frame.register_bytecode_hook(self.hook)

        def backend(self, gm: Any, example_inputs: list[Any]) -> Any:
            self.counts["backend"] += 1
            return gm.forward

        def hook(self, old_code: CodeType, new_code: CodeType) -> None:
            if old_code is not type(self).forward.__code__:
                return
            frame = sys._getframe()
            while frame.f_back is not None:
                frame = frame.f_back
                if frame.f_code.co_name == "_compile" and \
                        frame.f_code.co_filename.split(os.path.sep)[-1] == "convert_frame.py":
                    break
            compiling = frame.f_locals["frame"]
            assert compiling.f_code is old_code
            if compiling.f_locals["self"] is not self:
                return
            self.counts["hook"] += 1
            self.frame_locals = list(compiling.f_locals)
            self.new_code = new_code

        def forward(self, x: Any, scale: float = 1.0, *, shift: Any = None) -> Any:
            y = super().forward(self.lin(x)) * scale
            return y if shift is None else y + shift

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            if self.new_code is None:
                lib._dynamo.eval_frame.remove_from_cache(type(self).forward.__code__)
                return self.compiled(*args, **kwargs)
            original = type(self).forward.__code__
            type(self).forward.__code__ = self.new_code
            try:
                return self.forward(*args, **kwargs)
            finally:
                type(self).forward.__code__ = original

    return Base, Wrapped


def _eager(lib: Any, model: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
    with lib.no_grad():
        y = model.lin(x) * 2 * (args[0] if args else kwargs.get("scale", 1.0))
        shift = kwargs.get("shift")
        return y if shift is None else y + shift


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


@pytest.mark.parametrize("lib_name", LIBS)
def test_new_code_runs_the_graph_with_no_recompile(lib_name: str) -> None:
    lib = _lib(lib_name)
    lib._dynamo.reset()
    lib.manual_seed(0)
    _, wrapped_cls = _wrapper_classes(lib)
    model = wrapped_cls()
    try:
        x = lib.randn(3, 4)
        first = model(x)
        assert model.counts == {"backend": 1, "hook": 1}
        new = model.new_code
        old = type(model).forward.__code__
        assert new is not None and new is not old
        assert (new.co_name, new.co_argcount, new.co_kwonlyargcount, new.co_freevars,
                new.co_filename, new.co_firstlineno) == \
            (old.co_name, old.co_argcount, old.co_kwonlyargcount, old.co_freevars,
             old.co_filename, old.co_firstlineno)
        assert new.co_varnames[:4] == old.co_varnames[:4]
        called = [n for n in new.co_names if n.startswith("__compiled_fn")]
        assert len(called) == 1 and called[0] in type(model).forward.__globals__
        assert model.frame_locals[:4] == ["self", "x", "scale", "shift"]
        assert "__class__" in model.frame_locals  # the free variable super() reads
        np.testing.assert_allclose(_np(first), _np(_eager(lib, model, x)), rtol=1e-6)
        for rows in (3, 5, 1):  # every size, one graph (nothing in it depends on the size)
            x = lib.randn(rows, 4)
            np.testing.assert_allclose(_np(model(x)), _np(_eager(lib, model, x)), rtol=1e-6)
        assert model.counts == {"backend": 1, "hook": 1}
        assert type(model).forward.__code__ is old
    finally:
        model.handle.remove()


@pytest.mark.parametrize("lib_name", LIBS)
def test_new_code_takes_keyword_and_default_arguments(lib_name: str) -> None:
    """Traced as model(x): a call passing scale=1.0 explicitly by position reuses the graph;
    the compiled graph baked scale=1.0 and shift=None, as torch's does once guards are
    dropped, so a call with another scale still gets the traced values."""
    lib = _lib(lib_name)
    lib._dynamo.reset()
    _, wrapped_cls = _wrapper_classes(lib)
    model = wrapped_cls()
    try:
        x = lib.randn(2, 4)
        model(x)
        np.testing.assert_allclose(_np(model(x, 1.0)), _np(_eager(lib, model, x)), rtol=1e-6)
        assert model.counts["backend"] == 1
    finally:
        model.handle.remove()


@pytest.mark.parametrize("lib_name", LIBS)
def test_removed_hook_is_not_called(lib_name: str) -> None:
    lib = _lib(lib_name)
    lib._dynamo.reset()
    seen: list[tuple[str, str]] = []
    handle = lib._dynamo.convert_frame.register_bytecode_hook(
        lambda old, new: seen.append((old.co_name, new.co_name)))

    def double(x: Any) -> Any:
        return x * 2

    lib.compile(double, backend="eager")(lib.ones(2))
    handle.remove()

    def triple(x: Any) -> Any:
        return x * 3

    lib.compile(triple, backend="eager")(lib.ones(2))
    assert seen == [("double", "double")]


@pytest.mark.parametrize("lib_name", LIBS)
def test_new_code_keeps_every_kind_of_signature(lib_name: str) -> None:
    """Positional-only, *args, keyword-only, **kwargs, a lambda: the new code's argument
    layout and flags are the original's."""
    lib = _lib(lib_name)
    lib._dynamo.reset()
    codes: dict[str, tuple[CodeType, CodeType]] = {}

    def hook(old: CodeType, new: CodeType) -> None:
        codes.setdefault(old.co_name, (old, new))

    handle = lib._dynamo.convert_frame.register_bytecode_hook(hook)

    def many(x: Any, /, y: Any, *rest: Any, k: int = 1, **extra: Any) -> Any:
        return x + y * k

    try:
        lib.compile(many, backend="eager")(lib.ones(2), lib.ones(2), k=3)
        lib.compile(lambda x: x - 1, backend="eager")(lib.ones(2))
    finally:
        handle.remove()
    for name in ("many", "<lambda>"):
        old, new = codes[name]
        layout = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_name",
                  "co_qualname", "co_filename", "co_firstlineno", "co_freevars")
        assert [getattr(new, a) for a in layout] == [getattr(old, a) for a in layout]
        n = old.co_argcount + old.co_kwonlyargcount + 2
        assert new.co_varnames[:n] == old.co_varnames[:n] or name == "<lambda>"
        flags = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
        assert new.co_flags & flags == old.co_flags & flags


@pytest.mark.parametrize("lib_name", LIBS)
def test_installed_code_of_a_function_calls_the_graph(lib_name: str) -> None:
    """A plain function with a closure: the new code installed as its __code__ runs the
    compiled graph (the backend's counter) for new values of the same sizes."""
    lib = _lib(lib_name)
    lib._dynamo.reset()
    codes: list[CodeType] = []
    handle = lib._dynamo.convert_frame.register_bytecode_hook(
        lambda old, new: codes.append(new))
    runs: list[int] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        def run(*args: Any) -> Any:
            runs.append(1)
            return gm.forward(*args)
        return run

    offset = 1.5

    def f(x: Any, y: Any) -> Any:
        return (x + y) * offset

    try:
        compiled = lib.compile(f, backend=backend)
        x, y = lib.ones(3), lib.full((3,), 2.0)
        compiled(x, y)
        assert len(codes) == 1 and len(runs) == 1
        original = f.__code__
        f.__code__ = codes[0]
        try:
            out = f(lib.full((3,), 3.0), y)
        finally:
            f.__code__ = original
        assert len(runs) == 2
        np.testing.assert_allclose(_np(out), np.full(3, 7.5))
    finally:
        handle.remove()


@pytest.mark.parametrize("lib_name", LIBS)
def test_new_code_checks_no_guard(lib_name: str) -> None:
    """Guards kept (no filter): the frame would recompile for another size, but the new code,
    called directly, runs the one graph on it, as torch's does."""
    lib = _lib(lib_name)
    lib._dynamo.reset()
    _, wrapped_cls = _wrapper_classes(lib)
    model = wrapped_cls(guard_filter_fn=lambda entries: [True] * len(entries))
    try:
        model(lib.randn(2, 4))
        x = lib.randn(7, 4)
        np.testing.assert_allclose(_np(model(x)), _np(_eager(lib, model, x)), rtol=1e-6)
        assert model.counts == {"backend": 1, "hook": 1}
    finally:
        model.handle.remove()


@pytest.mark.parametrize("lib_name", LIBS)
def test_new_code_of_a_dynamic_dim_serves_every_size(lib_name: str) -> None:
    """A dim marked dynamic, guards dropped: each size runs through the new code with no
    second backend call (fake_torch traces the original code again for a new size; the
    transformed code it would meet there runs the original)."""
    lib = _lib(lib_name)
    lib._dynamo.reset()
    _, wrapped_cls = _wrapper_classes(lib)
    model = wrapped_cls()
    try:
        x = lib.randn(4, 4)
        lib._dynamo.mark_dynamic(x, 0)
        model(x)
        for rows in (6, 9, 6):
            x = lib.randn(rows, 4)
            out = model(x)
            assert tuple(out.shape) == (rows, 4)
            np.testing.assert_allclose(_np(out), _np(_eager(lib, model, x)), rtol=1e-6)
        assert model.counts == {"backend": 1, "hook": 1}
    finally:
        model.handle.remove()


@pytest.mark.parametrize("lib_name", LIBS)
def test_a_frame_with_a_graph_break_gets_new_code_too(lib_name: str) -> None:
    lib = _lib(lib_name)
    lib._dynamo.reset()
    codes: list[CodeType] = []
    handle = lib._dynamo.convert_frame.register_bytecode_hook(
        lambda old, new: codes.append(new) if old.co_name == "broken" else None)

    def broken(x: Any) -> Any:
        y = x + 1
        print("", end="")  # a graph break
        return y * 2

    try:
        lib.compile(broken, backend="eager")(lib.ones(2))
        assert len(codes) >= 1
        original = broken.__code__
        broken.__code__ = codes[0]
        try:
            out = broken(lib.full((2,), 3.0))
        finally:
            broken.__code__ = original
        np.testing.assert_allclose(_np(out), np.full(2, 8.0))
    finally:
        handle.remove()


@pytest.mark.parametrize("lib_name", LIBS)
def test_a_backend_counting_on_the_module_is_no_python_side_effect(lib_name: str) -> None:
    """The backend sets an attribute of the module being compiled (an int counter): that is
    not the traced Python's doing, so the compile stays one graph, reached by the new code."""
    lib = _lib(lib_name)
    lib._dynamo.reset()

    class Counting(lib.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(4, 4)
            self.backend_calls = 0

        def backend(self, gm: Any, example_inputs: list[Any]) -> Any:
            self.backend_calls += 1
            return gm.forward

        def forward(self, x: Any) -> Any:
            return self.lin(x).relu()

    model = Counting()
    codes: list[CodeType] = []
    handle = lib._dynamo.convert_frame.register_bytecode_hook(
        lambda old, new: codes.append(new) if old is Counting.forward.__code__ else None)
    try:
        compiled = lib.compile(model.forward, backend=model.backend, options={
            "guard_filter_fn": lib.compiler.skip_all_guards_unsafe})
        compiled(lib.randn(2, 4))
        assert len(codes) == 1 and model.backend_calls == 1
        original = Counting.forward.__code__
        Counting.forward.__code__ = codes[0]
        try:
            for rows in (2, 3):
                x = lib.randn(rows, 4)
                with lib.no_grad():
                    expected = model.lin(x).relu()
                np.testing.assert_allclose(_np(model.forward(x)), _np(expected), rtol=1e-6)
        finally:
            Counting.forward.__code__ = original
        assert model.backend_calls == 1
    finally:
        handle.remove()
