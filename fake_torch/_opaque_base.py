"""torch._opaque_base: the base class of opaque types, Python objects a custom operator takes
as an argument (torch._library.opaque_object.register_opaque_type)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["OpaqueBase", "OpaqueBaseMeta"]


def _none_registered(instance: object) -> bool:
    return False


# whether a value's type is a registered opaque type: fake_torch/_library/opaque_object.py (the
# registry) registers its answer here when imported; until then no type is registered
is_opaque_value: Callable[[object], bool] = _none_registered


class OpaqueBaseMeta(type):
    """The metaclass of opaque types: `isinstance(x, OpaqueBase)` asks the registry whether x's
    type (or a base of it) is a registered opaque type."""

    def __instancecheck__(cls, instance: object) -> bool:
        if cls is OpaqueBase:
            return is_opaque_value(instance)
        return super().__instancecheck__(instance)


class OpaqueBase(metaclass=OpaqueBaseMeta):
    """Subclass this to make a type a custom operator can take (after registering it)."""
