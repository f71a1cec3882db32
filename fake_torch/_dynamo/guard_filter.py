"""torch.compile(options={"guard_filter_fn": fn}): the user decides which guards an entry keeps.

When a frame compiles, torch lists its guards as `GuardFilterEntry`s, calls `fn(entries)` and
keeps only the guards whose answer is True; later calls skip the dropped checks, so the entry
serves inputs the dropped guards would have sent to a recompile (skip_all_guards_unsafe: every
input). This module turns fake_torch's guards (guards.py, object_guards.py) into entries named
and typed as torch's for the same kind of guard, and builds the entry's guards back from the
answers:

  guard (fake_torch)                entries (torch's guard_type / derived types)
  global state (grad mode,          AUTOGRAD_SAVED_TENSORS_HOOKS, GRAD_MODE, GLOBAL_STATE,
    autocast, default dtype)          DETERMINISTIC_ALGORITHMS, TORCH_FUNCTION_STATE,
                                      DEFAULT_DEVICE (nameless);
                                      the check stays while GLOBAL_STATE or GRAD_MODE is kept
  dynamic dims' `2 <= size`         SHAPE_ENV (nameless; derived SHAPE_ENV when a dim is dynamic)
  a tensor                          TENSOR_MATCH: dtype, device, rank, static sizes, strides
  a number, string, None, dtype     CONSTANT_MATCH (EQUALS_MATCH, BOOL_MATCH, NONE_MATCH); a
                                      dynamic number TYPE_MATCH
  a function / builtin / module     CLOSURE_MATCH / BUILTIN_MATCH / MODULE_MATCH; else ID_MATCH
  a list or tuple argument          SEQUENCE_LENGTH; a dict: TYPE_MATCH
  a module argument (`self`)        TYPE_MATCH of it and of each submodule, CONSTANT_MATCH of
                                      the attributes read, TENSOR_MATCH of its tensors (named
                                      self._modules['lin']._parameters['weight'])
  an argument object                TYPE_MATCH of it; per value reached, its guard's entry
  a global / closure cell read      EQUALS_MATCH and CONSTANT_MATCH ("G['N']"), CONSTANT_MATCH
                                      (the cell's name)

What torch guards and fake_torch does not (the modules and functions the code reached through
globals, a module's dicts and hook dicts) has no entry. The argument structure (how many
arguments, lists' lengths, dicts' keys) is always checked: fake_torch's entries read their
inputs by position in it, so dropping SEQUENCE_LENGTH (or a dict's TYPE_MATCH) changes
nothing: a call of another structure compiles anew rather than misreading its inputs.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import types
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from fake_torch._dynamo.guards import (
    FrameGuards,
    Guard,
    IdGuard,
    Leaf,
    ModuleGuard,
    TensorGuard,
    ValueGuard,
    resolve_attr,
)
from fake_torch._dynamo.object_guards import ObjectGuard, ShapeGuard, path_text, resolve_path
from fake_torch._dynamo.types import GuardFilterEntry
from fake_torch.nn.modules.module import Module

_MISSING = object()  # the value of an entry with has_value=False
_GLOBAL_ENTRIES = ("AUTOGRAD_SAVED_TENSORS_HOOKS", "GRAD_MODE", "DETERMINISTIC_ALGORITHMS",
                   "GLOBAL_STATE", "TORCH_FUNCTION_STATE", "DEFAULT_DEVICE")


class GuardSource(enum.Enum):
    """Where a guarded value comes from (torch._guards.GuardSource, the kinds fake_torch
    makes), with the questions torch.compiler's filters ask of it."""

    LOCAL = 0
    GLOBAL = 1
    SHAPE_ENV = 6
    LOCAL_UNSPECIALIZED_NN_MODULE = 12
    GLOBAL_UNSPECIALIZED_NN_MODULE = 13
    LOCAL_UNSPECIALIZED_BUILTIN_NN_MODULE = 14
    GLOBAL_UNSPECIALIZED_BUILTIN_NN_MODULE = 15

    def is_unspecialized_nn_module(self) -> bool:
        return self in (GuardSource.LOCAL_UNSPECIALIZED_NN_MODULE,
                        GuardSource.GLOBAL_UNSPECIALIZED_NN_MODULE,
                        GuardSource.LOCAL_UNSPECIALIZED_BUILTIN_NN_MODULE,
                        GuardSource.GLOBAL_UNSPECIALIZED_BUILTIN_NN_MODULE)

    def is_unspecialized_builtin_nn_module(self) -> bool:
        return self in (GuardSource.LOCAL_UNSPECIALIZED_BUILTIN_NN_MODULE,
                        GuardSource.GLOBAL_UNSPECIALIZED_BUILTIN_NN_MODULE)

    def is_specialized_nn_module(self) -> bool:
        return False

    def is_fsdp_module(self) -> bool:
        return False

    def is_local(self) -> bool:
        return self in (GuardSource.LOCAL, GuardSource.LOCAL_UNSPECIALIZED_NN_MODULE,
                        GuardSource.LOCAL_UNSPECIALIZED_BUILTIN_NN_MODULE)


@dataclasses.dataclass(frozen=True)
class FilterGuard:
    """What an entry's `orig_guard` is: the guard as torch._guards.Guard shows it (its full
    name, "L['x']", its source, its kind)."""

    name: str
    source: GuardSource
    guard_type: str
    guard_types: tuple[str, ...]

    def create_fn_name(self) -> str:
        return self.guard_type


@dataclasses.dataclass
class _Item:
    entry: GuardFilterEntry
    key: Hashable  # the part of fake_torch's guards it stands for; None: no part


def _entry(name: str, value: Any, guard_type: str, derived: tuple[str, ...],
           source: GuardSource, key: Hashable) -> _Item:
    short = name
    if name.startswith("L['"):  # torch strips the local scope: L['x'][0] -> x[0]
        end = name.index("']")
        short = name[3:end] + name[end + 2:]
    has_value = value is not _MISSING
    is_global = name.startswith("G[")  # a global's name (the global state's guards: not)
    orig = FilterGuard(name, source, guard_type, derived)
    return _Item(GuardFilterEntry(short, has_value, value, guard_type, derived, is_global,
                                  orig), key)


def _local(name: str) -> str:
    """A leaf name as torch's source names it: xs[0] -> L['xs'][0], self.eps -> L['self'].eps"""
    cut = min((i for i in (name.find("["), name.find(".")) if i >= 0), default=len(name))
    return f"L[{name[:cut]!r}]{name[cut:]}"


def _value_types(v: Any, dynamic: bool) -> tuple[str, tuple[str, ...]]:
    if dynamic:
        return "TYPE_MATCH", ("TYPE_MATCH",)
    if v is None:
        return "CONSTANT_MATCH", ("NONE_MATCH",)
    if isinstance(v, bool):
        return "CONSTANT_MATCH", ("BOOL_MATCH",)
    return "CONSTANT_MATCH", ("EQUALS_MATCH",)


def _id_types(v: Any) -> tuple[str, tuple[str, ...]]:
    if isinstance(v, types.FunctionType):
        return "CLOSURE_MATCH", ()
    if isinstance(v, types.BuiltinFunctionType) or inspect.isbuiltin(v):
        return "BUILTIN_MATCH", ("ID_MATCH",)
    if isinstance(v, types.ModuleType):
        return "MODULE_MATCH", ("ID_MATCH",)
    return "ID_MATCH", ("ID_MATCH",)


def _module_source(m: Any) -> GuardSource:
    builtin = type(m).__module__.startswith(("fake_torch.nn.", "torch.nn."))
    return GuardSource.LOCAL_UNSPECIALIZED_BUILTIN_NN_MODULE if builtin \
        else GuardSource.LOCAL_UNSPECIALIZED_NN_MODULE


def _module_path(root: Module, qualname: str, tensor: bool = False) -> str:
    """'lin.weight' -> ._modules['lin']._parameters['weight'] (an attribute: .eps)."""
    parts = qualname.split(".")
    out, m = "", root  # type: tuple[str, Any]
    for part in parts[:-1]:
        out += f"._modules[{part!r}]"
        m = m._modules.get(part) if isinstance(m, Module) else None
    last = parts[-1]
    if tensor and isinstance(m, Module) and last in m._parameters:
        return out + f"._parameters[{last!r}]"
    if tensor and isinstance(m, Module) and last in m._buffers:
        return out + f"._buffers[{last!r}]"
    if not tensor and len(parts) > 0 and isinstance(m, Module) and last in m._modules:
        return out + f"._modules[{last!r}]"
    return out + f".{last}"


def _leaf_items(i: int, guard: Guard, value: Any) -> Iterator[_Item]:
    name = _local(guard.name)
    if isinstance(guard, TensorGuard):
        yield _entry(name, value, "TENSOR_MATCH", ("TENSOR_MATCH",), GuardSource.LOCAL,
                     ("leaf", i))
    elif isinstance(guard, ValueGuard):
        yield _entry(name, value, *_value_types(value, guard.dynamic), GuardSource.LOCAL,
                     ("leaf", i))
    elif isinstance(guard, IdGuard):
        yield _entry(name, value, *_id_types(value), GuardSource.LOCAL, ("leaf", i))
    elif isinstance(guard, ModuleGuard):
        yield _entry(name, value, "TYPE_MATCH", ("TYPE_MATCH",), _module_source(value),
                     ("type", i))
        for j, (qualname, _) in enumerate(guard.modules):
            sub = resolve_attr(value, qualname)
            yield _entry(name + _module_path(value, qualname), sub, "TYPE_MATCH",
                         ("TYPE_MATCH",), _module_source(sub), ("module", i, j))
        for j, (qualname, attr_guard) in enumerate(guard.attrs):
            owner = resolve_attr(value, qualname.rpartition(".")[0]) if "." in qualname \
                else value
            yield _entry(name + _module_path(value, qualname), attr_guard.value,
                         *_value_types(attr_guard.value, False), _module_source(owner),
                         ("attr", i, j))
        for j, (qualname, _) in enumerate(guard.tensors):
            owner = resolve_attr(value, qualname.rpartition(".")[0]) if "." in qualname \
                else value
            yield _entry(name + _module_path(value, qualname, tensor=True),
                         resolve_attr(value, qualname), "TENSOR_MATCH", ("TENSOR_MATCH",),
                         _module_source(owner), ("tensor", i, j))
    elif isinstance(guard, ObjectGuard):
        yield _entry(name, value, "TYPE_MATCH", ("TYPE_MATCH",), GuardSource.LOCAL,
                     ("type", i))
        for j, (path, path_guard) in enumerate(guard.paths):
            sub_name = name + path_text(path)
            sub = resolve_path(value, path)
            if isinstance(path_guard, TensorGuard):
                yield _entry(sub_name, sub, "TENSOR_MATCH", ("TENSOR_MATCH",),
                             GuardSource.LOCAL, ("path", i, j))
            elif isinstance(path_guard, ValueGuard):
                yield _entry(sub_name, sub, *_value_types(sub, False), GuardSource.LOCAL,
                             ("path", i, j))
            elif isinstance(path_guard, ShapeGuard):
                sequence = path_guard.cls in (list, tuple)
                yield _entry(sub_name, sub, "SEQUENCE_LENGTH" if sequence else "TYPE_MATCH",
                             ("TYPE_MATCH", "SEQUENCE_LENGTH") if sequence else ("TYPE_MATCH",),
                             GuardSource.LOCAL, ("path", i, j))
            elif isinstance(path_guard, IdGuard):
                yield _entry(sub_name, path_guard.obj, *_id_types(path_guard.obj),
                             GuardSource.LOCAL, ("path", i, j))


def _container_items(names: list[str], spec: tuple[Any, ...],
                     values: Sequence[Any]) -> Iterator[_Item]:
    """The arguments that are lists, tuples or dicts (their structure: always checked)."""
    def walk(name: str, node: Any, value: Any) -> Iterator[_Item]:
        if node is None:
            return
        cls, children = node
        if cls is dict:
            yield _entry(name, value, "TYPE_MATCH", ("TYPE_MATCH",), GuardSource.LOCAL, None)
            for key, child in children:
                yield from walk(f"{name}[{key!r}]", child, value[key])
        else:
            yield _entry(name, value, "SEQUENCE_LENGTH", ("TYPE_MATCH", "SEQUENCE_LENGTH"),
                         GuardSource.LOCAL, None)
            for k, child in enumerate(children):
                yield from walk(f"{name}[{k}]", child, value[k])

    for i, node in enumerate(spec):
        if isinstance(node, tuple) and len(node) == 2 and isinstance(node[0], str):
            key, sub = node  # a keyword argument
            yield from walk(f"L[{key!r}]", sub, values[i])
        else:
            base = names[i] if i < len(names) else f"args[{i}]"
            yield from walk(f"L[{base!r}]", node, values[i])


def guard_entries(guards: FrameGuards, leaves: list[Leaf], names: list[str],
                  call_values: Sequence[Any]) -> list[_Item]:
    """Every guard of `guards` as torch's filter entries (with the part each stands for)."""
    items: list[_Item] = []
    for kind in _GLOBAL_ENTRIES:
        key = "state" if kind in ("GLOBAL_STATE", "GRAD_MODE") else None
        items.append(_entry("", _MISSING, kind, (kind,) if kind in (
            "AUTOGRAD_SAVED_TENSORS_HOOKS", "DEFAULT_DEVICE") else (), GuardSource.GLOBAL, key))
    items.extend(_container_items(names, guards.spec, call_values))
    for i, (guard, leaf) in enumerate(zip(guards.leaves, leaves, strict=True)):
        items.extend(_leaf_items(i, guard, leaf.value))
    for j, (read, value_guard) in enumerate(guards.globals_):
        value = read()
        if value_guard.name.startswith("G["):
            items.append(_entry(value_guard.name, value, "EQUALS_MATCH", ("EQUALS_MATCH",),
                                GuardSource.GLOBAL, ("global", j)))
            items.append(_entry(value_guard.name, value, *_value_types(value, False),
                                GuardSource.GLOBAL, ("global", j)))
        else:  # a closure cell, named by its variable
            items.append(_entry(_local(value_guard.name), value, *_value_types(value, False),
                                GuardSource.LOCAL, ("global", j)))
    dynamic = any(isinstance(g, TensorGuard) and g.dynamic for g in guards.leaves)
    items.append(_entry("", _MISSING, "SHAPE_ENV", ("SHAPE_ENV",) if dynamic else (),
                        GuardSource.SHAPE_ENV, "shape_env"))
    return items


class _Unguarded:
    """A leaf whose guard the filter dropped: any value passes."""

    def __init__(self, name: str) -> None:
        self.name = name

    def check(self, v: Any) -> str | None:
        return None


def apply_filter(guards: FrameGuards, leaves: list[Leaf], names: list[str],
                 call_values: Sequence[Any],
                 fn: Callable[[list[GuardFilterEntry]], Sequence[bool]]) -> FrameGuards:
    """`guards` with the parts `fn` answered False for (every entry of the part) removed."""
    items = guard_entries(guards, leaves, names, call_values)
    answers = fn([item.entry for item in items])
    if len(answers) != len(items):
        raise AssertionError(f"filter_results length ({len(answers)}) != sorted_guards length "
                             f"({len(items)})")
    if not all(type(x) is bool for x in answers):
        raise AssertionError("All filter_results entries must be bool")
    kept = {item.key for item, keep in zip(items, answers, strict=True) if keep}
    shape_env = "shape_env" in kept

    def tensor(g: TensorGuard, key: Hashable) -> TensorGuard:
        return dataclasses.replace(g, match=key in kept, shape_env=shape_env)

    out: list[Guard] = []
    for i, g in enumerate(guards.leaves):
        if isinstance(g, TensorGuard):
            out.append(tensor(g, ("leaf", i)))
        elif isinstance(g, (ValueGuard, IdGuard)):
            out.append(g if ("leaf", i) in kept else _Unguarded(g.name))
        elif isinstance(g, ModuleGuard):
            out.append(dataclasses.replace(
                g, check_type=("type", i) in kept,
                modules=[m for j, m in enumerate(g.modules) if ("module", i, j) in kept],
                attrs=[a for j, a in enumerate(g.attrs) if ("attr", i, j) in kept],
                tensors=[(q, tensor(t, ("tensor", i, j))) for j, (q, t) in
                         enumerate(g.tensors)]))
        elif isinstance(g, ObjectGuard):
            paths: list[tuple[Any, Any]] = []
            for j, (path, pg) in enumerate(g.paths):
                if isinstance(pg, TensorGuard):
                    paths.append((path, tensor(pg, ("path", i, j))))
                elif ("path", i, j) in kept:
                    paths.append((path, pg))
            out.append(dataclasses.replace(g, check_type=("type", i) in kept, paths=paths))
        else:
            out.append(g)
    globals_ = [g for j, g in enumerate(guards.globals_) if ("global", j) in kept]
    return FrameGuards(guards.spec, out, globals_,
                       guards.state if "state" in kept else None)


__all__ = ["FilterGuard", "GuardSource", "apply_filter", "guard_entries"]
