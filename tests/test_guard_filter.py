"""torch.compile(options={"guard_filter_fn": fn}) against real torch 2.13 CPU: the entries fn
receives (GuardFilterEntry fields, guard types, names), what dropping them does (one graph for
every input, the graph's baked values reused as torch reuses them, a baked view failing loudly
at another size with torch's error), and torch.compiler's ready-made filters."""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

import pytest

import fake_torch as ft
from fake_torch._dynamo.types import GuardFilterEntry

LIMIT = 3


class Cfg:
    def __init__(self, lib: Any) -> None:
        self.n = 2
        self.t = lib.ones(4)


def _programs(lib: Any) -> dict[str, tuple[Any, tuple[Any, ...]]]:
    """name -> (function, arguments), written once for both libraries."""
    def f_tensor(x: Any) -> Any:
        return x * 2

    def f_int(x: Any, n: int) -> Any:
        return x * n

    def f_view(x: Any, y: Any) -> Any:
        return x.view(8, 4) + y

    def f_global(x: Any) -> Any:
        return x * LIMIT

    def f_str(x: Any, s: str) -> Any:
        return x + 1 if s == "a" else x

    def f_list(xs: list[Any]) -> Any:
        return xs[0] + xs[1]

    def f_dict(x: Any, d: dict[str, int]) -> Any:
        return x * d["k"]

    def f_none(x: Any, flag: Any) -> Any:
        return x + 1 if flag is None else x

    def f_bool(x: Any, b: bool) -> Any:
        return x + 1 if b else x - 1

    def f_dtype(x: Any, dt: Any) -> Any:
        return x.to(dt)

    def helper(x: Any) -> Any:
        return x * 2

    def f_fn(x: Any, fn: Any) -> Any:
        return fn(x) + 1

    def f_tuple(x: Any, t: tuple[int, int]) -> Any:
        return x * t[0] + t[1]

    def f_object(x: Any, c: Cfg) -> Any:
        return x * c.n + c.t

    c = 3

    def f_closure(x: Any) -> Any:
        return x * c

    return {
        "tensor": (f_tensor, (lib.randn(8, 4),)),
        "int": (f_int, (lib.randn(8, 4), 3)),
        "float": (f_int, (lib.randn(8, 4), 3.5)),
        "view": (f_view, (lib.randn(32), lib.randn(4))),
        "global": (f_global, (lib.randn(3),)),
        "str": (f_str, (lib.randn(3), "a")),
        "list": (f_list, ([lib.randn(3), lib.randn(3)],)),
        "dict": (f_dict, (lib.randn(3), {"k": 2})),
        "none": (f_none, (lib.randn(3), None)),
        "bool": (f_bool, (lib.randn(3), True)),
        "dtype": (f_dtype, (lib.randn(3), lib.float64)),
        "function": (f_fn, (lib.randn(3), helper)),
        "tuple": (f_tuple, (lib.randn(3), (2, 3))),
        "object": (f_object, (lib.randn(4), Cfg(lib))),
        "closure": (f_closure, (lib.randn(3),)),
    }


def _recorded(lib: Any, fn: Any, args: tuple[Any, ...]) -> list[Any]:
    seen: list[Any] = []

    def record(entries: list[Any]) -> list[bool]:
        seen.extend(entries)
        return [True] * len(entries)

    lib._dynamo.reset()
    lib.compile(fn, backend="eager", options={"guard_filter_fn": record})(*args)
    return seen


def _kinds(entries: list[Any]) -> collections.Counter[tuple[Any, ...]]:
    return collections.Counter((e.guard_type, e.name, e.derived_guard_types, e.is_global,
                                e.has_value, e.orig_guard.name, e.orig_guard.source.name)
                               for e in entries)


@pytest.mark.parametrize("name", sorted(_programs(ft)))
def test_filter_entries_are_torchs(name: str) -> None:
    """The multiset of (guard_type, name, derived types, is_global, has_value, the guard's
    full name and source) equals torch's
    for each function (tensors, numbers, strings, None, bools, dtypes, functions, lists,
    tuples, dicts, argument objects, globals, closure cells, the global state)."""
    torch = pytest.importorskip("torch")
    fn, args = _programs(ft)[name]
    their_fn, their_args = _programs(torch)[name]
    ours, theirs = _recorded(ft, fn, args), _recorded(torch, their_fn, their_args)
    assert _kinds(ours) == _kinds(theirs)
    assert all(isinstance(e, GuardFilterEntry) for e in ours)


def test_entry_fields_are_torchs() -> None:
    pytest.importorskip("torch")
    import torch._dynamo.types as their_types

    assert [f.name for f in dataclasses.fields(GuardFilterEntry)] == \
        [f.name for f in dataclasses.fields(their_types.GuardFilterEntry)]
    fn, args = _programs(ft)["int"]
    entry = next(e for e in _recorded(ft, fn, args) if e.name == "n")
    assert (entry.value, entry.orig_guard.name, entry.orig_guard.source.is_local()) == \
        (3, "L['n']", True)


def test_module_entries_match_torchs_where_fake_torch_guards() -> None:
    """A module argument: TYPE_MATCH of it and its submodules, CONSTANT_MATCH of the
    attributes read, TENSOR_MATCH of its tensors, named and sourced as torch's. torch also
    guards the module's dicts, hook dicts and the modules its code reached through globals
    (fake_torch does not guard those): only those are left out of the comparison."""
    torch = pytest.importorskip("torch")

    def model(lib: Any) -> Any:
        class M(lib.nn.Module):  # type: ignore[misc]
            def __init__(self) -> None:
                super().__init__()
                self.lin = lib.nn.Linear(4, 4)
                self.eps = 0.5
                self.register_buffer("b", lib.ones(4))

            def forward(self, x: Any) -> Any:
                return self.lin(x) * self.eps + self.b
        return M()

    def seen(lib: Any) -> collections.Counter[tuple[Any, ...]]:
        entries = _recorded(lib, model(lib), (lib.randn(2, 4),))
        torch_only = {"NOT_PRESENT_IN_GENERIC_DICT", "EMPTY_NN_MODULE_HOOKS_DICT",
                      "MODULE_MATCH", "BUILTIN_MATCH"}
        kept = [e for e in entries if e.guard_type not in torch_only and not e.is_global
                and not e.name.endswith(("._modules", "._parameters", "._buffers"))]
        return collections.Counter((e.guard_type, e.name, e.orig_guard.source.name)
                                   for e in kept)

    assert seen(ft) == seen(torch)


def _counting(lib: Any, fn: Any, guard_filter_fn: Any) -> tuple[Any, list[int]]:
    calls: list[int] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        calls.append(1)
        return gm.forward

    lib._dynamo.reset()
    return lib.compile(fn, backend=backend,
                       options={"guard_filter_fn": guard_filter_fn}), calls


@pytest.mark.parametrize("lib_name", ["torch", "fake_torch"])
def test_skip_all_guards_reuses_one_graph_as_torch(lib_name: str) -> None:
    """Dropped guards: one compile serves every call; a number the graph baked in stays
    baked (x * 2 at n=3, as torch); a baked view(8, 4) given 20 elements fails loudly, with
    torch's error."""
    lib = pytest.importorskip("torch") if lib_name == "torch" else ft

    def f(x: Any, n: int) -> Any:
        return x.view(8, 4) * n

    compiled, calls = _counting(lib, f, lib.compiler.skip_all_guards_unsafe)
    assert float(compiled(lib.ones(32), 2).sum()) == 64.0
    assert float(compiled(lib.ones(32), 3).sum()) == 64.0  # n=2 is in the graph
    with pytest.raises(RuntimeError, match=r"shape '\[8, 4\]' is invalid for input of size 20"):
        compiled(lib.ones(20), 2)
    assert len(calls) == 1


@pytest.mark.parametrize("lib_name", ["torch", "fake_torch"])
def test_kept_guards_still_recompile(lib_name: str) -> None:
    """Keeping only TENSOR_MATCH: a new number reuses the graph, a new size recompiles."""
    lib = pytest.importorskip("torch") if lib_name == "torch" else ft

    def f(x: Any, n: int) -> Any:
        return x * n

    compiled, calls = _counting(
        lib, f, lambda entries: [e.guard_type == "TENSOR_MATCH" for e in entries])
    compiled(lib.ones(4), 2)
    assert float(compiled(lib.ones(4), 5).sum()) == 8.0
    assert len(calls) == 1
    assert float(compiled(lib.ones(6), 2).sum()) == 12.0
    assert len(calls) == 2


def test_guard_filter_fn_is_taken_out_of_options() -> None:
    """As torch: the backend gets the options without it (here: none left, so none)."""
    got: list[dict[str, Any]] = []

    def backend(gm: Any, example_inputs: list[Any], **kwargs: Any) -> Any:
        got.append(kwargs)
        return gm.forward

    options = {"guard_filter_fn": ft.compiler.skip_all_guards_unsafe}
    ft.compile(lambda x: x + 1, backend=backend, options=options)(ft.ones(2))
    assert options == {} and got == [{}]


def test_bad_filter_answers_raise_torchs_assertions() -> None:
    with pytest.raises(AssertionError, match="filter_results length"):
        ft.compile(lambda x: x + 1, backend="eager",
                   options={"guard_filter_fn": lambda entries: [True]})(ft.ones(2))
    ft._dynamo.reset()
    with pytest.raises(AssertionError, match="must be bool"):
        ft.compile(lambda x: x + 2, backend="eager",
                   options={"guard_filter_fn": lambda entries: [1] * len(entries)})(ft.ones(2))


def test_ready_made_filters_answer_as_torchs() -> None:
    """torch.compiler's filters, run on the same entries (the module program's), give the same
    answers as torch's own functions on them."""
    torch = pytest.importorskip("torch")
    fn, args = _programs(ft)["object"]
    entries = _recorded(ft, fn, args)
    for name in ("skip_all_guards_unsafe", "keep_tensor_guards_unsafe",
                 "skip_guard_on_globals_unsafe", "keep_portable_guards_unsafe",
                 "skip_guard_on_all_nn_modules_unsafe",
                 "skip_guard_on_inbuilt_nn_modules_unsafe"):
        ours = getattr(ft.compiler, name)(entries)
        theirs = getattr(torch.compiler, name)(entries)
        assert ours == theirs, name


@pytest.mark.parametrize("lib_name", ["torch", "fake_torch"])
def test_a_dynamic_dim_without_guards_takes_sizes_one_and_two(lib_name: str) -> None:
    """A marked dim, every guard dropped (vLLM's token dim): sizes 1 and 2, which a guarded
    entry sends to a recompile, run the one compiled graph, with eager's values."""
    lib = pytest.importorskip("torch") if lib_name == "torch" else ft

    def f(x: Any) -> Any:
        return (x + 3).relu() * 2

    compiled, calls = _counting(lib, f, lib.compiler.skip_all_guards_unsafe)
    x = lib.randn(100)
    lib._dynamo.mark_dynamic(x, 0)
    compiled(x)
    for n in (2, 1, 5, 1):
        y = lib.randn(n)
        assert compiled(y).tolist() == ((y + 3).relu() * 2).tolist()
    assert len(calls) == 1
