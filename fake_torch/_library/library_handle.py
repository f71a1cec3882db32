"""torch.library.Library: a handle through which Python defines operators in a namespace
(`define`), gives them kernels per dispatch key (`impl`) and fake impls (`_register_fake`).

What a Library registered lives as long as the Library: `_destroy()`, or the Library being
garbage collected, takes its definitions and kernels back out of torch.ops, as torch does.
vLLM keeps its Library objects at module level for that reason.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

from fake_torch import _ops
from fake_torch._library import op_entry
from fake_torch._library.opaque_object import registered_names
from fake_torch._library.schema import parse_schema
from fake_torch._ops import OpOverload

_KINDS = ("IMPL", "DEF", "FRAGMENT")
_RESERVED_NAMESPACES = ("prim",)
_impls: set[str] = set()  # "ns/name/key" of every kernel a live Library registered
_def_namespaces: set[str] = set()  # namespaces a live kind="DEF" Library owns
_warned_override = False

Undo = Callable[[], None]


class Library:
    """A library of operators in namespace `ns`: kind "DEF" (the one library that owns `ns`),
    "FRAGMENT" (adds to it; any number of them) or "IMPL" (kernels for operators defined
    elsewhere). `dispatch_key` is the default key of `impl`."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library "
                             "with another name.")
        if dispatch_key and kind != "IMPL":
            block = "TORCH_LIBRARY" if kind == "DEF" else "TORCH_LIBRARY_FRAGMENT"
            raise RuntimeError("!dispatch_key_.has_value() INTERNAL ASSERT FAILED (Error "
                               f"occurred while processing {block} block)")
        if dispatch_key and dispatch_key not in op_entry.DISPATCH_KEYS:
            raise RuntimeError(f"could not parse dispatch key: {dispatch_key}")
        undo: list[Undo] = []
        if kind == "DEF":
            if ns in _def_namespaces:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If "
                    "you were trying to specify implementations, consider using "
                    "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to "
                    "define operators for a single namespace in a distributed way, you can use "
                    "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.")
            _def_namespaces.add(ns)
            undo.append(lambda: _def_namespaces.discard(ns))
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._op_defs: set[str] = set()
        self._op_impls: set[str] = set()
        self._undo = undo  # what _destroy (or the finalizer) takes back, newest last
        self._destroyed = False
        weakref.finalize(self, _release, undo)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema: str, alias_analysis: str = "", *, tags: Any = ()) -> str:
        """Define the operator `schema` ("name(Tensor x) -> Tensor") as torch.ops.<ns>.<name>;
        returns its name."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        self._check_alive()
        parsed = parse_schema(schema, registered_names())
        dotted = parsed.name + (f".{parsed.overload_name}" if parsed.overload_name else "")
        qualname = f"{self.ns}::{dotted}"
        entry = op_entry.find(qualname)
        if entry.schema is not None:
            raise RuntimeError(
                f"Tried to register an operator ({qualname}{schema[schema.index('('):]}) with "
                "the same name and overload name multiple times. Each overload's schema should "
                "only be registered with a single call to def(). Duplicate registration: "
                "registered by a torch.library.Library")
        entry.set_schema(parsed)
        entry.tags = tuple(tags) if isinstance(tags, (tuple, list)) else (tags,)
        overload = parsed.overload_name or "default"
        signature = parsed.text[parsed.text.index("("):]  # as torch prints it
        _ops.register_overload(self.ns, parsed.name, overload, signature, entry.run)
        _by_overload[_ops.ops.namespace(self.ns)._packets[parsed.name]._overloads[overload]] = \
            entry

        ns = self.ns  # the undo steps hold no reference to the Library: it must die

        def undefine() -> None:
            entry.set_schema(None)
            _ops.unregister(ns, parsed.name, overload)
        self._undo.append(undefine)
        self._op_defs.add(qualname)
        return schema.split("(")[0].split(".")[0]

    def impl(self, op_name: str | OpOverload, fn: Callable[..., Any], dispatch_key: str = "",
             *, with_keyset: bool = False, allow_override: bool = True) -> None:
        """Register `fn` as the operator's kernel for `dispatch_key` (default: the library's;
        "" means CompositeImplicitAutograd, which runs on every device)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        name = self._resolve_op_name(op_name, "impl")
        key = f"{self.ns}/{name.split('::')[-1]}/{dispatch_key}"
        if not allow_override and key in _impls:
            raise RuntimeError(
                "This is not allowed since there's already a kernel registered from python "
                f"overriding {name.split('::')[-1]}'s behavior for {dispatch_key} dispatch key "
                f"and {self.ns} namespace.")
        self._check_alive()
        dispatch_key = dispatch_key or "CompositeImplicitAutograd"
        if dispatch_key not in op_entry.DISPATCH_KEYS:
            raise RuntimeError(f"could not parse dispatch key: {dispatch_key}")
        entry = op_entry.find(name if "::" in name else f"{self.ns}::{name}")
        previous = entry.kernels.get(dispatch_key)
        if previous is not None:
            _warn_override(entry.qualname, dispatch_key)
        entry.kernels[dispatch_key] = (fn, with_keyset)

        def unimpl() -> None:
            if previous is None:
                entry.kernels.pop(dispatch_key, None)
            else:
                entry.kernels[dispatch_key] = previous
            _impls.discard(key)
        self._undo.append(unimpl)
        _impls.add(key)
        self._op_impls.add(key)

    def _register_fake(self, op_name: str, fn: Callable[..., Any], _stacklevel: int = 1, *,
                       allow_override: bool = True) -> None:
        """Register the operator's fake impl: its outputs' shapes, dtypes and devices without
        running a kernel (what torch.compile traces with)."""
        entry = op_entry.find(f"{self.ns}::{op_name}")
        if not allow_override and entry.fake is not None:
            raise RuntimeError(f"register_fake(...): the operator {entry.qualname} already has "
                               "an fake impl registered.")
        previous = entry.fake
        entry.fake = fn

        def unregister() -> None:
            entry.fake = previous
        self._undo.append(unregister)

    def _destroy(self) -> None:
        """Take back everything this library registered."""
        self._destroyed = True
        _release(self._undo)
        self._op_impls.clear()

    def _check_alive(self) -> None:
        if self._destroyed:
            raise AssertionError("Library object has been destroyed")

    def _resolve_op_name(self, op_name: object, api_name: str) -> str:
        if isinstance(op_name, str):
            return op_name
        if isinstance(op_name, OpOverload):
            return op_name.name()
        raise RuntimeError(f"{api_name} should be passed either a name or an OpOverload object "
                           f"as the first argument, got {type(op_name)}")

    def __getattr__(self, name: str) -> Any:
        if name in ("fallback", "_impl_with_aoti_compile", "_register_torch_dispatch_rule",
                    "_register_effectful_op", "register_symm_mem_args"):
            raise NotImplementedError(f"torch.library.Library.{name} is not emulated by "
                                      "fake_torch")
        raise AttributeError(f"'Library' object has no attribute '{name}'")


def _release(undo: list[Undo]) -> None:
    while undo:
        undo.pop()()


def _warn_override(qualname: str, dispatch_key: str) -> None:
    global _warned_override
    if not _warned_override:
        _warned_override = True
        warnings.warn("Warning only once for all operators,  other operators may also be "
                      "overridden.\n  Overriding a previously registered kernel for the same "
                      f"operator and the same dispatch key\n  operator: {qualname}\n  "
                      f"dispatch key: {dispatch_key}", UserWarning, stacklevel=3)


# torch.ops overloads made by Library.define -> their entries
_by_overload: weakref.WeakKeyDictionary[OpOverload, op_entry.OperatorEntry] = \
    weakref.WeakKeyDictionary()


def entry_of(op: object) -> op_entry.OperatorEntry | None:
    """The defined entry behind a torch.ops overload or packet made by Library.define."""
    if isinstance(op, _ops.OpOverloadPacket):
        if not op._overloads:
            return None
        op = op._first() if ("default" in op._overloads or len(op._overloads) == 1) else None
    if isinstance(op, OpOverload):
        entry = _by_overload.get(op)
        return entry if entry is not None and entry.schema is not None else None
    return None
