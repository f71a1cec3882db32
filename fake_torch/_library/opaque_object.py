"""torch._library.opaque_object: Python types a custom operator's schema may name.

A registered type appears in inferred schemas by its qualified name ("mymod.LayerName"). A
"value" type is compared by `__eq__` (what torch.compile guards on); fake_torch's tracer takes
such an argument as a constant of the graph, whatever `hoist` says (torch lifts a hoisted one as
a graph input to share one compiled graph between values).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal
from weakref import WeakKeyDictionary

from fake_torch import _opaque_base
from fake_torch._opaque_base import OpaqueBaseMeta
from fake_torch._tensor import Tensor

__all__ = ["MemberType", "get_opaque_type_name", "is_opaque_reference_type", "is_opaque_type",
           "is_opaque_value", "is_opaque_value_type", "register_opaque_type"]


class MemberType(Enum):
    """How torch.compile treats a member of an opaque reference type."""

    USE_REAL = "use_real"
    INLINED = "inlined"


@dataclass
class _OpaqueTypeInfo:
    class_name: str
    opaque_typ: Literal["reference", "value"]
    guard_fn: Callable[[Any], list[Any]] | None
    members: dict[str, MemberType] = field(default_factory=dict)
    hoist: bool = False
    reconstruct_fn: Callable[..., Any] | None = None


_OPAQUE_TYPES: WeakKeyDictionary[Any, _OpaqueTypeInfo] = WeakKeyDictionary()


def _info(cls: Any) -> _OpaqueTypeInfo | None:
    if not isinstance(cls, type):
        return None
    for c in cls.__mro__:
        if c in _OPAQUE_TYPES:
            return _OPAQUE_TYPES[c]
    return None


def register_opaque_type(cls: Any, *, typ: str, hoist: bool = False, guard_fn: Any = None,
                         members: dict[str, MemberType] | None = None,
                         reconstruct_fn: Callable[..., Any] | None = None) -> None:
    """Let custom operators take `cls`: "value" (compared by `__eq__`, hashed, printed in
    graphs by `__fx_repr__`) or "reference" (a subclass of torch._opaque_base.OpaqueBase)."""
    if cls.__module__ == "builtins" or cls is Tensor:
        raise ValueError(f"Unable to register built-in type {cls} as an opaque type. Please "
                         "wrap it in a custom class and register the custom class as opaque.")
    if typ != "value" and not isinstance(cls, OpaqueBaseMeta):
        raise TypeError(f"Opaque type {cls} must subclass torch._opaque_base.OpaqueBase or "
                        "'metaclass=torch._opaque_base.OpaqueBaseMeta'. ")
    if typ not in ("reference", "value"):
        raise AssertionError(f"Opaque type must be either 'reference' or 'value', got {typ!r}")
    if typ == "value":
        is_enum = issubclass(cls, Enum)
        if not is_enum and cls.__eq__ is object.__eq__:
            raise TypeError(f"Value-type opaque object of type {cls} is expected to have a "
                            "non-default `__eq__` implementation as we will use this in "
                            "torch.compile to guard on the equality of objects.")
        if cls.__hash__ is None:
            raise TypeError(f"Value-type opaque object of type {cls} is expected to have a "
                            "non-default `__hash__` implementation as we will use this in "
                            "torch.compile for FakeTensor caching.")
        if not is_enum and not hasattr(cls, "__fx_repr__"):
            raise TypeError(f"Value-type opaque object of type {cls} is expected to have a "
                            "`__fx_repr__` method implementation as we will use this to "
                            "reconstruct the object in the FX codegen.")
        if guard_fn is not None:
            raise TypeError(f"No need to specify `guard_fn` for value-type opaque class {cls} "
                            "as it will be guarded based on `__eq__`.")
    name = f"{cls.__module__}.{cls.__qualname__}"
    _OPAQUE_TYPES[cls] = _OpaqueTypeInfo(name, "value" if typ == "value" else "reference",
                                         guard_fn, members or {}, hoist, reconstruct_fn)


register_opaque_type(Enum, typ="value")  # enums are always opaque value types, as in torch


def get_opaque_type_name(cls: Any) -> str:
    """The name a registered type has in schemas."""
    info = _info(cls)
    if info is None:
        raise ValueError(f"Class {cls} is not registered as an opaque type. Call "
                         f"register_opaque_type({cls.__name__}) first.")
    return info.class_name


def is_opaque_type(cls: Any) -> bool:
    """Whether `cls` (or a base of it; or a registered name) is a registered opaque type."""
    if isinstance(cls, str):
        return cls in registered_names()
    return _info(cls) is not None


def is_opaque_value(value: object) -> bool:
    return is_opaque_type(type(value))


_opaque_base.is_opaque_value = is_opaque_value  # isinstance(x, OpaqueBase)


def is_opaque_value_type(cls: Any) -> bool:
    info = _info(cls) if not isinstance(cls, str) else _by_name(cls)
    return info is not None and info.opaque_typ == "value"


def is_opaque_reference_type(cls: Any) -> bool:
    info = _info(cls) if not isinstance(cls, str) else _by_name(cls)
    return info is not None and info.opaque_typ == "reference"


def _by_name(name: str) -> _OpaqueTypeInfo | None:
    return next((i for i in _OPAQUE_TYPES.values() if i.class_name == name), None)


def registered_names() -> frozenset[str]:
    """fake_torch only: the schema names of the registered opaque types."""
    return frozenset(i.class_name for i in _OPAQUE_TYPES.values())
