"""Guards on an argument object (a KV cache, a config, a ModelOutput), as Dynamo guards one.

Dynamo guards a user-defined object by its type and by what the trace read from it: each
attribute reached (`L['cache'].key_cache`: its type and length; `L['cache'].key_cache[0]`: the
tensor's metadata; `L['cache'].max_len`: its value), never by identity, so a fresh cache object
of the same class each call (a new one per generate()) reuses the compiled graph, and a changed
number the code branched on recompiles.

fake_torch traces by running the Python, so it cannot list the attribute reads one by one; it
walks the object through the attributes whose NAMES the compiled function's code or the
methods of the classes on the way load (`loaded_names`: LOAD_ATTR and its kin, so a name only
__init__ stores is not one), into lists, tuples, dicts and nested objects of that kind, and
guards every value it reaches: a superset of Dynamo's guards that agrees with them for the
state a trace reads. The tensors it reaches are graph inputs taken
from the new object on every call (a placeholder named as Dynamo names it, `L_cache_key_cache_0_`).
"""

from __future__ import annotations

import dis
import enum
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from types import CodeType
from typing import Any

from fake_torch._dynamo.guards import (
    IdGuard,
    TensorGuard,
    ValueGuard,
    is_constant,
)
from fake_torch._dynamo.reconstruct import own_attributes
from fake_torch._tensor import Tensor
from fake_torch.nn.modules.module import Module

Step = tuple[str, Any]  # ("attr", name) or ("item", index or key)
Path = tuple[Step, ...]
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python
_MAX_DEPTH = 8
_MISSING = object()


def is_user_object(v: Any) -> bool:
    """An instance of a class written in Python (not a tensor, module, enum member or one of
    fake_torch's own objects): guarded by type and what is read, not identity."""
    cls = type(v)
    return (bool(cls.__flags__ & _HEAPTYPE) and not isinstance(v, (Tensor, Module, enum.Enum))
            and not cls.__module__.startswith("fake_torch"))


def resolve_path(root: Any, path: Path) -> Any:
    """The value at `path` inside `root` (`_MISSING` when a step finds nothing)."""
    obj = root
    for kind, key in path:
        try:
            obj = getattr(obj, key) if kind == "attr" else obj[key]
        except (AttributeError, LookupError, TypeError):
            return _MISSING
    return obj


def path_text(path: Path) -> str:
    """`.key_cache[0]`: a path as Dynamo's guard source names it after the root."""
    return "".join(f".{key}" if kind == "attr" else f"[{key!r}]" for kind, key in path)


def path_name(path: Path) -> str:
    """`key_cache_0`: a path as it appears in a placeholder's name."""
    return "_".join("".join(c if c.isalnum() else "_" for c in str(key)) for _, key in path)


_class_names: weakref.WeakKeyDictionary[type, frozenset[str]] = weakref.WeakKeyDictionary()


_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"})


def loaded_names(code: CodeType | None) -> frozenset[str]:
    """The attribute names a code object (and the functions nested in it) loads."""
    if code is None:
        return frozenset()
    names = {i.argval for i in dis.get_instructions(code) if i.opname in _LOADS}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= loaded_names(const)
    return frozenset(n for n in names if isinstance(n, str))


def class_loaded_names(cls: type) -> frozenset[str]:
    """The attribute names the methods (and properties) of `cls` and its Python bases load."""
    found = _class_names.get(cls)
    if found is None:
        names: set[str] = set()
        for klass in cls.__mro__:
            if not klass.__flags__ & _HEAPTYPE:
                continue
            for member in vars(klass).values():
                for fn in (member, getattr(member, "__func__", None),
                           getattr(member, "fget", None), getattr(member, "fset", None)):
                    names |= loaded_names(getattr(fn, "__code__", None))
        found = _class_names[cls] = frozenset(names)
    return found


def object_entries(root: Any, code: CodeType | None) -> Iterator[tuple[Path, Any]]:
    """(path, value) for everything of `root` a trace of `code` may have read, parents first."""
    yield from _walk(root, (), loaded_names(code), {id(root)})


def _walk(obj: Any, path: Path, names: frozenset[str], seen: set[int]) -> Iterator[tuple[
        Path, Any]]:
    if len(path) >= _MAX_DEPTH:
        return
    steps: list[tuple[Step, Any]] = []
    if isinstance(obj, dict):
        steps += [(("item", k), v) for k, v in obj.items() if is_constant(k)]
    elif isinstance(obj, (list, tuple)):
        steps += [(("item", i), v) for i, v in enumerate(obj)]
    if is_user_object(obj):
        names = names | class_loaded_names(type(obj))
        steps += [(("attr", k), v) for k, v in own_attributes(obj).items() if k in names]
    for step, value in steps:
        sub = (*path, step)
        yield sub, value
        if isinstance(value, (dict, list, tuple)) or is_user_object(value):
            if id(value) not in seen:
                seen.add(id(value))
                yield from _walk(value, sub, names, seen)


@dataclass
class ShapeGuard:
    """A container or object on a path: its type, and a list's length or a dict's keys."""

    name: str
    cls: type
    size: Any = None  # len() of a list or tuple, the keys of a dict

    @classmethod
    def of(cls, name: str, v: Any) -> ShapeGuard:
        size = tuple(v) if isinstance(v, dict) else len(v) if isinstance(v, (list, tuple)) \
            else None
        return cls(name, type(v), size)

    def check(self, v: Any) -> str | None:
        if type(v) is not self.cls:
            return f"___check_type_id({self.name}, {id(self.cls)})"
        if isinstance(v, dict) and tuple(v) != self.size:
            return f"___dict_keys_match({self.name}, {list(self.size)!r})"
        if isinstance(v, (list, tuple)) and len(v) != self.size:
            return f"len({self.name}) == {self.size}"
        return None


PathGuard = ShapeGuard | TensorGuard | ValueGuard | IdGuard


def value_guard(name: str, v: Any) -> PathGuard:
    """The guard of one value reached inside an object."""
    if isinstance(v, Tensor):
        return TensorGuard.of(name, v)
    if is_constant(v):
        return ValueGuard(name, v)
    if isinstance(v, (dict, list, tuple)) or is_user_object(v):
        return ShapeGuard.of(name, v)
    return IdGuard(name, v)


@dataclass
class ObjectGuard:
    """An argument object: its type, then every value its walk reached (parents first)."""

    name: str
    cls: type
    paths: list[tuple[Path, PathGuard]]
    check_type: bool = True  # False: guard_filter_fn dropped the object's TYPE_MATCH

    @classmethod
    def of(cls, name: str, obj: Any, code: CodeType | None) -> ObjectGuard:
        return cls(name, type(obj), [(p, value_guard(name + path_text(p), v))
                                     for p, v in object_entries(obj, code)])

    def check(self, v: Any) -> str | None:
        if self.check_type and type(v) is not self.cls:
            return f"___check_type_id({self.name}, {id(self.cls)})"
        for path, guard in self.paths:
            failure = guard.check(resolve_path(v, path))
            if failure is not None:
                return failure
        return None


def object_state(obj: Any, code: CodeType | None) -> list[tuple[Path, Any]]:
    """What the Python of a trace could change in an argument object (compared before and
    after the trace: a change means the Python has effects, and must run on every call)."""
    return [(p, v if is_constant(v) else (id(v), len(v) if isinstance(v, (list, dict)) else 0))
            for p, v in object_entries(obj, code)]


__all__ = ["ObjectGuard", "ShapeGuard", "is_user_object", "object_entries", "object_state",
           "path_name", "path_text", "resolve_path"]
