"""torch's __torch_function__ protocol, differentially against real torch (CPU build): the
same program under a TorchFunctionMode logs the same calls, Tensor subclasses keep their type
through ops (nn.Parameter does not), a subclass's own __torch_function__ sees what torch's
sees, modes nest and stay on their thread, and the errors read the same."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")
LIBS = [torch, ft]


def _no_address(e: BaseException) -> str:
    return re.sub(r" at 0x[0-9a-f]+", "", str(e)).replace(".<locals>", "")


def _log_mode(lib: Any) -> Any:
    class Log(lib.overrides.TorchFunctionMode):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    return Log()


def _program(lib: Any, lin: Any, x0: Any) -> None:
    """Factories, operators, methods, functions, F, a module, metadata, host reads."""
    F = lib.nn.functional
    x = lib.ones(2, 3)
    y = x + 1
    z = lib.add(y, 2, alpha=2)
    z.view(-1)
    x.size(0), x.shape, x.dim(), x.dtype
    F.silu(x), lib.relu(x), x.T, x[0]
    x[1] = 0
    lin(x0)
    x.sum().item(), bool(x[0, 0] > 0)
    2 * x, 1 - x, x / 2, -x, x @ x.T
    lib.cat([x, x]), lib.stack([x, x], 1), lib.softmax(x, -1), F.softmax(x, -1)
    x.to(lib.float64), x.float(), x.contiguous(), x.clone(), x.unsqueeze(0).squeeze(0)


def _logged(lib: Any, program: Callable[[Any, Any, Any], None]) -> list[str]:
    lib.manual_seed(0)
    lin, x0 = lib.nn.Linear(3, 3), lib.ones(2, 3)
    with _log_mode(lib) as log:
        program(lib, lin, x0)
    names: list[str] = log.names
    return names


def test_a_logging_mode_sees_the_calls_torch_shows_it() -> None:
    """The outermost public calls, named as torch names them (`x + 1` is add, `1 - x`
    __rsub__, a property __get__), and not what they call inside (linear, not addmm)."""
    theirs, ours = (_logged(lib, _program) for lib in LIBS)
    assert ours == theirs
    assert "linear" in ours and "addmm" not in ours


def test_a_mode_that_declines_gets_torchs_type_error() -> None:
    def decline(lib: Any) -> Exception:
        class Decline(lib.overrides.TorchFunctionMode):  # type: ignore[misc,name-defined]
            def __torch_function__(self, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                return NotImplemented

        x = lib.ones(2)
        with Decline(), pytest.raises(TypeError) as info:
            lib.add(x, 1)
        return info.value

    theirs, ours = (_no_address(decline(lib)) for lib in LIBS)
    assert ours == theirs
    assert ours.startswith("Multiple dispatch failed for 'torch.add'")


def test_modes_nest_innermost_first_and_see_each_call_once() -> None:
    def nested(lib: Any) -> tuple[list[str], list[str]]:
        outer, inner = _log_mode(lib), _log_mode(lib)
        x = lib.ones(2)
        with outer, inner:
            (x + 1).exp()
        return outer.names, inner.names

    theirs, ours = (nested(lib) for lib in LIBS)
    assert ours == theirs == (["add", "exp"], ["add", "exp"])


def test_a_mode_sees_only_its_own_threads_calls() -> None:
    def threads(lib: Any) -> list[str]:
        x = lib.ones(2)
        seen: list[str] = []
        other = threading.Thread(target=lambda: seen.append(type((x + 1).exp()).__name__))
        with _log_mode(lib) as log:
            x.sin()
            other.start()
            other.join()
            x.cos()
        return [*log.names, *seen]

    theirs, ours = (threads(lib) for lib in LIBS)
    assert ours == theirs == ["sin", "cos", "Tensor"]


def _subclass_types(lib: Any) -> list[str]:
    class Plain(lib.Tensor):  # type: ignore[misc,name-defined]
        pass

    s = lib.ones(2, 3).as_subclass(Plain)
    p = lib.nn.Parameter(lib.ones(2))
    results = [s + 1, lib.add(s, 1), s.sum(), s[0], s.T, s.max(0).values, s.split(1)[0],
               p * 2, p.sum()]
    with lib._C.DisableTorchFunctionSubclass():
        results.append(s + 1)
    return [type(r).__name__ for r in results]


def test_subclasses_keep_their_type_through_ops_and_parameters_do_not() -> None:
    theirs, ours = (_subclass_types(lib) for lib in LIBS)
    assert ours == theirs == ["Plain"] * 7 + ["Tensor", "Tensor", "Tensor"]


def _subclass_log(lib: Any) -> tuple[list[str], list[str]]:
    names: list[str] = []

    class Logged(lib.Tensor):  # type: ignore[misc,name-defined]
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            names.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    x = lib.ones(2, 3)
    s = x.as_subclass(Logged)
    out = [(s * 2).exp(), lib.cat([x, s]), x + s, s.shape, lib.nn.functional.relu(s)]
    return names, [type(o).__name__ for o in out]


def test_a_subclasss_torch_function_sees_what_torchs_sees() -> None:
    """Its own calls only (super() runs the op with subclass dispatch off), in a list too."""
    theirs, ours = (_subclass_log(lib) for lib in LIBS)
    assert ours == theirs
    assert ours[0] == ["mul", "exp", "cat", "add", "__get__", "relu"]


def test_handle_torch_function_and_has_torch_function_as_torch() -> None:
    def protocol(lib: Any) -> list[Any]:
        class Wrapped:
            @classmethod
            def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                return ("handled", func.__name__, len(args))

        def fn(a: Any) -> Any:
            return lib.overrides.handle_torch_function(fn, (a,), a)

        plain = lib.ones(1)
        return [fn(Wrapped()), lib.overrides.has_torch_function((plain,)),
                lib.overrides.has_torch_function((Wrapped(),)),
                lib.overrides.has_torch_function((lib.nn.Parameter(plain),)),
                lib.overrides.is_tensor_like(plain), lib.overrides.is_tensor_like(Wrapped())]

    theirs, ours = (protocol(lib) for lib in LIBS)
    assert ours == theirs == [("handled", "fn", 1), False, True, False, True, True]


def test_declining_handlers_get_torchs_errors() -> None:
    """C++ ops (torch.add, Tensor.add) and Python ones (F.silu) word it differently; a
    declined operator is Python's own TypeError."""
    def declined(lib: Any) -> list[str]:
        class Sub(lib.Tensor):  # type: ignore[misc,name-defined]
            @classmethod
            def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                return NotImplemented

        s = lib.ones(2).as_subclass(Sub)
        calls = [lambda: lib.add(s, 1), lambda: s.add(1), lambda: lib.nn.functional.silu(s),
                 lambda: s + 1, lambda: s.as_subclass(int)]
        texts = []
        for call in calls:
            with pytest.raises(TypeError) as info:
                call()
            texts.append(_no_address(info.value).replace(__name__, "M"))
        return texts

    theirs, ours = (declined(lib) for lib in LIBS)
    assert ours == theirs


def test_size_checks_its_dim_under_a_mode_as_without_one() -> None:
    """With a mode pushed (or any Tensor subclass defined), `size` takes the dispatching path;
    its argument check is torch's there too (it fell through to a comparison's TypeError)."""
    from fake_torch.overrides import TorchFunctionMode

    class PassThrough(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            return func(*args, **(kwargs or {}))

    x = ft.ones(2, 3)
    with PassThrough(), pytest.raises(TypeError) as seen:
        x.size("a")  # type: ignore[arg-type]
    assert str(seen.value) == "size(): argument 'dim' (position 1) must be int, not str"
    with PassThrough():
        assert x.size(-1) == 3 and x.size() == (2, 3)
