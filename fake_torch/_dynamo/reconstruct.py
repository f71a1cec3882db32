"""How a direct entry hands back the function's return value on a later call.

Dynamo's generated code rebuilds the returned Python object on every call around the graph's new
outputs: a tuple, list or dict, and also a namedtuple, a dict subclass (a transformers
ModelOutput), a dataclass or any other object made in the frame (`base.__new__(cls)`, then its
items and attributes stored again), while an object the call was given comes back as itself.
A TEMPLATE records that once, at the trace; `build` follows it per call:

    ("out", i)        the graph's i-th output
    ("source", src)   an argument (or a tensor or object inside one): the new call's
    ("const", v)      the very object the trace returned (nothing in it changes per call)
    ("seq", cls, ts)  an exact tuple or list;  ("dict", {k: t})  an exact dict
    ("obj", cls, base, items, attrs, extra)   anything else rebuilt: `base` is the builtin
                      class whose __new__ makes it (object, tuple, list, dict, OrderedDict,
                      defaultdict, deque), `items` its elements' templates (a list, or a dict
                      for a mapping), `attrs` its __dict__'s and slots' templates, `extra` a
                      defaultdict's default_factory or a deque's maxlen.

An object with nothing that changes per call inside (no graph output, no argument) is kept as a
constant; nn.Modules are never rebuilt. Aliasing holds: an object reached twice is built once.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable, Iterator
from types import FunctionType, MethodType, ModuleType
from typing import Any

from fake_torch._sym import SymBool, SymFloat, SymInt
from fake_torch._tensor import Tensor
from fake_torch.nn.modules.module import Module

Template = tuple[Any, ...]
_BASES = (OrderedDict, defaultdict, deque, dict, list, tuple, object)
_OPAQUE = (type, FunctionType, MethodType, ModuleType, Module, str, bytes, int, float, complex,
           bool, type(None))


_SYM = (SymInt, SymFloat, SymBool)
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python


def _base(cls: type) -> type | None:
    """The builtin class whose __new__ makes an instance of `cls`; None when a class on the
    way there is not written in Python (an int or str subclass, a numpy array): not rebuilt."""
    for klass in cls.__mro__:
        if klass in _BASES:
            return klass
        if not klass.__flags__ & _HEAPTYPE:
            return None
    return None


def own_attributes(value: Any) -> dict[str, Any]:
    """An object's own attributes: its __dict__ and its filled slots."""
    found = dict(getattr(value, "__dict__", {}))
    for klass in type(value).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                found.setdefault(name, getattr(value, name))
    return found


def children(value: Any) -> Iterator[Any]:
    """What an output value holds that may itself hold tensors (the walk of `template`)."""
    if isinstance(value, (Tensor, *_SYM)) or isinstance(value, _OPAQUE):
        return
    if isinstance(value, dict):
        yield from value.values()
    elif isinstance(value, (tuple, list, deque)):
        yield from value
    yield from own_attributes(value).values()


def output_values(value: Any) -> Iterator[Any]:
    """Every tensor and captured scalar a return value holds, in any container or object."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, (Tensor, *_SYM)):
            yield v
        else:
            stack.extend(children(v))


def template(value: Any, outs: dict[int, int], sources: dict[int, Any]) -> Template:
    """The template of `value`: `outs` maps id -> graph output index, `sources` id -> the
    Source of a tensor or object the call was given."""
    return _Templater(outs, sources).of(value)


class _Templater:
    def __init__(self, outs: dict[int, int], sources: dict[int, Any]) -> None:
        self.outs = outs
        self.sources = sources
        self.done: dict[int, Template] = {}  # id -> its template (aliases share one)
        self.open: set[int] = set()  # being walked: a cycle back to one stays a constant

    def of(self, value: Any) -> Template:
        key = id(value)
        if key in self.done:
            return self.done[key]
        if key in self.sources:
            return ("source", self.sources[key])
        if isinstance(value, (Tensor, *_SYM)):
            return ("out", self.outs[key]) if key in self.outs else ("const", value)
        if isinstance(value, _OPAQUE) or key in self.open:
            return ("const", value)
        self.open.add(key)
        try:
            made = self._container(value)
        finally:
            self.open.discard(key)
        self.done[key] = made
        return made

    def _container(self, value: Any) -> Template:
        cls = type(value)
        if cls in (tuple, list):
            return ("seq", cls, [self.of(v) for v in value])
        if cls is dict:
            return ("dict", {k: self.of(v) for k, v in value.items()})
        base = _base(cls)
        if base is None:
            return ("const", value)
        items: list[Template] | dict[Any, Template] | None = None
        if isinstance(value, dict):
            items = {k: self.of(v) for k, v in value.items()}
        elif isinstance(value, (tuple, list, deque)):
            items = [self.of(v) for v in value]
        attrs = {k: self.of(v) for k, v in own_attributes(value).items()}
        parts = [*(items.values() if isinstance(items, dict) else items or ()),
                 *attrs.values()]
        if not any(_live(t) for t in parts):
            return ("const", value)
        extra = value.default_factory if isinstance(value, defaultdict) else \
            value.maxlen if isinstance(value, deque) else None
        return ("obj", cls, base, items, attrs, extra)


def _live(t: Template) -> bool:
    """Does the template take anything from the call (an output or an argument)?"""
    return bool(t[0] != "const")


def build(t: Template, outs: Any, source_value: Callable[[Any], Any],
          memo: dict[int, Any] | None = None) -> Any:
    """The return value of a call whose graph returned `outs` (`source_value(src)`: the
    call's value of a source)."""
    kind = t[0]
    if kind == "out":
        return outs[t[1]]
    if kind == "source":
        return source_value(t[1])
    if kind == "const":
        return t[1]
    if memo is None:
        memo = {}
    if id(t) in memo:
        return memo[id(t)]
    if kind == "seq":
        made: Any = t[1](build(x, outs, source_value, memo) for x in t[2])
    elif kind == "dict":
        made = {k: build(x, outs, source_value, memo) for k, x in t[1].items()}
    else:
        made = _build_object(t, outs, source_value, memo)
    memo[id(t)] = made
    return made


def _build_object(t: Template, outs: Any, source_value: Callable[[Any], Any],
                  memo: dict[int, Any]) -> Any:
    _, cls, base, items, attrs, extra = t
    if base is tuple:
        obj = tuple.__new__(cls, [build(x, outs, source_value, memo) for x in items])
    else:
        obj = base.__new__(cls)
    memo[id(t)] = obj
    if base is deque:
        deque.__init__(obj, [build(x, outs, source_value, memo) for x in items], extra)
    elif base is list:
        list.extend(obj, [build(x, outs, source_value, memo) for x in items])
    elif base in (dict, OrderedDict, defaultdict):
        if base is defaultdict:
            obj.default_factory = extra
        for k, x in items.items():
            base.__setitem__(obj, k, build(x, outs, source_value, memo))
    for name, x in attrs.items():
        object.__setattr__(obj, name, build(x, outs, source_value, memo))
    return obj


def leaves(t: Template, value: Any) -> Iterator[tuple[Template, Any]]:
    """The ("out", i) and ("source", src) templates in `t`, each with the part of `value`
    (the value `t` was made from, or one built from it) it stands for."""
    kind = t[0]
    if kind in ("out", "source"):
        yield t, value
    elif kind == "seq":
        for x, v in zip(t[2], value, strict=True):
            yield from leaves(x, v)
    elif kind == "dict":
        for k, x in t[1].items():
            yield from leaves(x, value[k])
    elif kind == "obj":
        _, _, _, items, attrs, _ = t
        if isinstance(items, dict):
            for k, x in items.items():
                yield from leaves(x, dict.__getitem__(value, k))
        elif items is not None:
            for x, v in zip(items, value, strict=True):
                yield from leaves(x, v)
        for name, x in attrs.items():
            yield from leaves(x, object.__getattribute__(value, name))


__all__ = ["Template", "build", "children", "leaves", "output_values", "template"]
