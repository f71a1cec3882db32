"""Grad mode state: no_grad, enable_grad, set_grad_enabled, inference_mode as context managers
and decorators, checked step by step against real torch running the same program."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import fake_torch as ft
from fake_torch import _grad_mode as gm

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


class _NS:
    """The grad-mode names of one library, under torch's spelling."""

    def __init__(self, mod: Any) -> None:
        for name in gm.__all__:
            setattr(self, name, getattr(mod, name))


OURS, THEIRS = _NS(gm), _NS(torch)


def _state(T: Any) -> tuple[bool, bool]:
    return T.is_grad_enabled(), T.is_inference_mode_enabled()


def _nested_contexts(T: Any) -> list[tuple[bool, bool]]:
    seen = [_state(T)]
    with T.no_grad():
        seen.append(_state(T))
        with T.enable_grad():
            seen.append(_state(T))
        with T.set_grad_enabled(True):
            seen.append(_state(T))
        seen.append(_state(T))
        with T.inference_mode(False):
            seen.append(_state(T))
    seen.append(_state(T))
    with T.inference_mode():
        seen.append(_state(T))
        with T.inference_mode(False):
            seen.append(_state(T))
        with T.enable_grad():
            seen.append(_state(T))
        with T.no_grad():
            seen.append(_state(T))
        seen.append(_state(T))
    seen.append(_state(T))
    return seen


def _set_grad_enabled_forms(T: Any) -> list[Any]:
    seen: list[Any] = []
    T.set_grad_enabled(False)  # takes effect at once, as a plain call
    seen.append(_state(T))
    T.set_grad_enabled(True)
    seen.append(_state(T))
    with T.set_grad_enabled(False):
        seen.append(_state(T))
    seen.append(_state(T))

    @T.set_grad_enabled(False)  # as a decorator: no effect until called
    def f() -> bool:
        return bool(T.is_grad_enabled())

    seen.append(_state(T))
    seen.append(f())
    seen.append(_state(T))
    seen.append(repr(T.set_grad_enabled(True)))
    return seen


def _decorators(T: Any) -> list[Any]:
    @T.no_grad
    def a() -> bool:
        return bool(T.is_grad_enabled())

    @T.no_grad()
    def b() -> bool:
        return bool(T.is_grad_enabled())

    @T.enable_grad
    def c() -> bool:
        return bool(T.is_grad_enabled())

    @T.inference_mode
    def d() -> tuple[bool, bool]:
        return _state(T)

    @T.inference_mode(False)
    def e() -> tuple[bool, bool]:
        return _state(T)

    @T.inference_mode()
    def f(x: int, *, y: int) -> int:
        return x + y

    seen: list[Any] = [a(), b(), d(), e(), f(1, y=2), a.__name__, d.__name__]
    with T.no_grad():
        seen.append(c())
    seen.append(_state(T))
    return seen


def _generators(T: Any) -> list[Any]:
    @T.no_grad()
    def gen() -> Iterator[bool]:
        yield bool(T.is_grad_enabled())
        yield bool(T.is_grad_enabled())

    seen: list[Any] = []
    for v in gen():
        seen.append(v)
        seen.append(_state(T))  # the caller runs with grad on between resumptions
    return seen


def _exceptions_restore(T: Any) -> list[Any]:
    seen: list[Any] = []
    try:
        with T.inference_mode():
            raise KeyError("x")
    except KeyError:
        seen.append(_state(T))

    @T.no_grad()
    def boom() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError):
        boom()
    seen.append(_state(T))
    return seen


def _reentrant(T: Any) -> list[Any]:
    ctx = T.no_grad()
    seen: list[Any] = []
    with ctx:
        with ctx:
            seen.append(_state(T))
        seen.append(_state(T))
    seen.append(_state(T))  # torch's quirk: the inner enter overwrote `prev`, grad stays off
    T.set_grad_enabled(True)
    return seen


PROGRAMS: list[Callable[[Any], list[Any]]] = [
    _nested_contexts, _set_grad_enabled_forms, _decorators, _generators, _exceptions_restore,
    _reentrant,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_same_states_as_torch(program: Callable[[Any], list[Any]]) -> None:
    expected = program(THEIRS)
    assert program(OURS) == expected
    assert _state(OURS) == (True, False)


def test_thread_local() -> None:
    seen: list[bool] = []
    with gm.no_grad():
        worker = threading.Thread(target=lambda: seen.append(gm.is_grad_enabled()))
        worker.start()
        worker.join()
        assert not gm.is_grad_enabled()
    assert seen == [True]


def test_set_grad_enabled_type_error_like_torch() -> None:
    with pytest.raises(TypeError) as theirs:
        torch.set_grad_enabled(1)
    with pytest.raises(TypeError) as ours:
        gm.set_grad_enabled(1)  # type: ignore[arg-type]
    assert str(ours.value) == str(theirs.value)


def test_enter_returns_none_and_clone() -> None:
    assert gm.no_grad().__enter__() is None
    gm.set_grad_enabled(True)
    clone = gm.inference_mode(False).clone()
    assert isinstance(clone, gm.inference_mode) and clone.mode is False


def test_top_level_names() -> None:
    """torch.no_grad & co. at the package top level (fake_torch/__init__.py imports them)."""
    for name in gm.__all__:
        assert getattr(ft, name) is getattr(gm, name)
