"""torch._ops and torch.ops: operators as `torch.ops.<namespace>.<name>`.

`torch.ops.mylib.foo` is an OpOverloadPacket, `torch.ops.mylib.foo.default` (or `.out`, ...)
one of its OpOverloads; calling either runs the operator. Operators come from torch.library
(custom ops, Library.define) and, for `torch.ops.aten`, from the op definitions
(fake_torch._opdef): `torch.ops.aten.add` runs torch.add. A call goes through
`__torch_function__` like any public op, so torch.compile's tracing mode records ONE graph node
for the whole operator (its target is the packet or overload that was called) however many
kernels the operator's body launches.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

from fake_torch import _torch_function


class OpOverload:
    """torch.ops.<namespace>.<name>.<overload>: one overload of a registered operator."""

    def __init__(self, namespace: str, name: str, schema: str,
                 kernel: Callable[..., Any], packet: OpOverloadPacket,
                 overload: str = "default") -> None:
        self.namespace = namespace
        self._opname = name
        self._overloadname = overload
        dotted = name if overload == "default" else f"{name}.{overload}"
        self._schema = f"{namespace}::{dotted}{schema}"
        self._kernel = kernel  # what a call runs outside tracing
        self.overloadpacket = packet
        # how fx prints a target: torch.ops.<namespace>.<name>.<overload>
        self.__module__ = f"torch.ops.{namespace}"
        self.__name__ = f"{name}.{overload}"
        self.__qualname__ = self.__name__

    def name(self) -> str:
        """"namespace::name", with ".overload" unless it is the default overload."""
        if self._overloadname == "default":
            return f"{self.namespace}::{self._opname}"
        return f"{self.namespace}::{self._opname}.{self._overloadname}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _torch_function.state.enabled:
            return _torch_function.handle(self, self._kernel, args, kwargs)
        return self._kernel(*args, **kwargs)

    def __repr__(self) -> str:
        return (f"<OpOverload(op='{self.namespace}.{self._opname}', "
                f"overload='{self._overloadname}')>")

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}.{self._overloadname}"


class OpOverloadPacket:
    """torch.ops.<namespace>.<name>: the operator with all its overloads (`default`, and those
    torch.library.Library.define named, e.g. "foo.out")."""

    def __init__(self, namespace: str, name: str, schema: str,
                 kernel: Callable[..., Any], overload: str = "default") -> None:
        self.namespace = namespace
        self._opname = name
        self._overloads: dict[str, OpOverload] = {}
        self.__module__ = f"torch.ops.{namespace}"
        self.__name__ = name
        self.__qualname__ = name
        self.add_overload(overload, schema, kernel)

    def add_overload(self, overload: str, schema: str, kernel: Callable[..., Any]) -> OpOverload:
        """fake_torch only: make `<packet>.<overload>` run `kernel`."""
        found = self._overloads[overload] = OpOverload(self.namespace, self._opname, schema,
                                                       kernel, self, overload)
        return found

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__") or overload == "_overloads":
            raise AttributeError(overload)
        found = self._overloads.get(overload)
        if found is None and self.namespace == "aten" and _aten_overload_hook is not None:
            found = _aten_overload_hook(self._opname, overload)
        if found is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name "
                                 f"'{overload}'")
        return found

    @property
    def default(self) -> OpOverload:
        return self.__getattr__("default")

    @property
    def _qualified_op_name(self) -> str:
        """"namespace::name", as torch's packets name their operator (no overload)."""
        return f"{self.namespace}::{self._opname}"

    @property
    def _schema(self) -> str:
        return self._first()._schema

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def _first(self) -> OpOverload:
        # torch matches the arguments against each overload's schema; fake_torch calls the
        # default overload, or the only one
        if "default" in self._overloads or len(self._overloads) != 1:
            return self.default
        return next(iter(self._overloads.values()))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kernel = self._first()._kernel
        if _torch_function.state.enabled:
            return _torch_function.handle(self, kernel, args, kwargs)
        return kernel(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self.namespace}.{self._opname}')>"

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}"


class HigherOrderOperator(abc.ABC):
    """torch._ops.HigherOrderOperator: an operator over functions or other operators
    (auto_functionalized, triton_kernel_wrapper_functional, ...), in torch.ops.higher_order.
    A subclass defines `__call__` (abstract, as in torch); fake_torch's graphs hold none it
    runs, so the base call raises, naming the operator. Graph passes compare node targets
    with these objects (isinstance, identity)."""

    def __init__(self, name: str, *, cacheable: bool = False,
                 supports_training_input_mutation: bool = False) -> None:
        self._name = name
        self.__name__ = name  # fx prints a target by it
        self.__module__ = "torch.ops.higher_order"
        self._cacheable = cacheable
        self.supports_training_input_mutation = supports_training_input_mutation

    @property
    def namespace(self) -> str:
        return "higher_order"

    def name(self) -> str:
        return self._name

    def cacheable(self) -> bool:
        """Whether a graph holding it may be cached (inductor's FX graph cache)."""
        return self._cacheable

    @abc.abstractmethod
    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"torch.ops.higher_order.{self._name} is not emulated by fake_torch: it runs no "
            "higher-order operator")

    def __str__(self) -> str:
        return self._name


class _OpNamespace:
    """torch.ops.<namespace>: its registered operators as attributes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        packet = self._packets.get(op_name)
        if packet is None and self.name == "aten" and _aten_overload_hook is not None:
            made = _aten_overload_hook(op_name, "default")  # aten ops make_fx records
            packet = made.overloadpacket if made is not None else None
        if packet is None and self.name == "aten":
            packet = self._packets[op_name] = _aten_packet(op_name)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{op_name}'")
        return packet

    def __iter__(self) -> Any:
        return iter(self._packets)


class _Ops:
    """torch.ops: namespaces come into being on first access, as in torch."""

    def __init__(self) -> None:
        self._namespaces: dict[str, _OpNamespace] = {}
        self.loaded_libraries: set[str] = set()  # (always empty: see load_library)

    def load_library(self, path: str) -> None:
        """torch.ops.load_library: refused. The library would be a compiled torch extension
        (custom operators in C++/CUDA linked against libtorch), which fake_torch cannot run."""
        raise NotImplementedError(
            f"torch.ops.load_library is not emulated by fake_torch: {path!r} is a compiled "
            "torch extension (linked against libtorch), which it cannot load")

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.namespace(name)

    def namespace(self, name: str) -> _OpNamespace:
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _OpNamespace(name)
        return ns


ops = _Ops()
# torch.ops.aten.<name>.<overload> beyond `.default`: made on first access by make_fx's
# overload table (fake_torch.fx.experimental._aten_overloads registers it), None if unknown
_aten_overload_hook: Callable[[str, str], OpOverload | None] | None = None


def set_aten_overload_hook(hook: Callable[[str, str], OpOverload | None]) -> None:
    global _aten_overload_hook
    _aten_overload_hook = hook


def _aten_packet(name: str) -> OpOverloadPacket:
    """torch.ops.aten.<name>, from the op definitions: it runs the op of that name."""
    from fake_torch import _opdef

    if name not in _opdef.aten_names():
        raise NotImplementedError(f"torch.ops.aten.{name} is not emulated by fake_torch: call "
                                  "the public torch function instead")
    kernel = _opdef.aten_callable(name)
    if kernel is None:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError(
                f"torch.ops.aten.{name} is not emulated by fake_torch: fake_torch launches it "
                "inside a public op but cannot run it alone; call the public torch function")
    return OpOverloadPacket("aten", name, "(...) -> ...", kernel)


def register(namespace: str, name: str, schema: str,
             kernel: Callable[..., Any]) -> OpOverloadPacket:
    """Make `torch.ops.<namespace>.<name>` run `kernel` (a later registration replaces an
    earlier one, as torch.library.custom_op does)."""
    packet = OpOverloadPacket(namespace, name, schema, kernel)
    ops.namespace(namespace)._packets[name] = packet
    return packet


def register_overload(namespace: str, name: str, overload: str, schema: str,
                      kernel: Callable[..., Any]) -> OpOverload:
    """Add the overload `torch.ops.<namespace>.<name>.<overload>` (torch.library.Library.define
    of "name.overload(...)"), making the packet if it is the first."""
    packets = ops.namespace(namespace)._packets
    packet = packets.get(name)
    if packet is None:
        packet = packets[name] = OpOverloadPacket(namespace, name, schema, kernel, overload)
        return packet._overloads[overload]
    return packet.add_overload(overload, schema, kernel)


def unregister(namespace: str, name: str, overload: str) -> None:
    """Remove one overload (torch.library.Library._destroy); the packet goes with its last."""
    packets = ops.namespace(namespace)._packets
    packet = packets.get(name)
    if packet is None:
        return
    packet._overloads.pop(overload, None)
    if not packet._overloads:
        del packets[name]


def lookup(qualname: str) -> OpOverloadPacket | None:
    """The packet registered as "namespace::name", or None."""
    namespace, _, name = qualname.partition("::")
    ns = ops._namespaces.get(namespace)
    return None if ns is None else ns._packets.get(name)
