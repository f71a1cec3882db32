"""torch._ops and torch.ops: operators as `torch.ops.<namespace>.<name>`.

`torch.ops.mylib.foo` is an OpOverloadPacket, `torch.ops.mylib.foo.default` its one OpOverload;
calling either runs the operator. Operators come from torch.library (custom ops) and, for
`torch.ops.aten`, from the op definitions (fake_torch._opdef): `torch.ops.aten.add` runs
torch.add. A call goes through `__torch_function__` like any public op, so torch.compile's
tracing mode records ONE graph node for the whole operator (its target is the packet or
overload that was called) however many kernels the operator's body launches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch import _torch_function


class OpOverload:
    """torch.ops.<namespace>.<name>.default: one overload of a registered operator."""

    def __init__(self, namespace: str, name: str, schema: str,
                 kernel: Callable[..., Any], packet: OpOverloadPacket) -> None:
        self.namespace = namespace
        self._opname = name
        self._schema = f"{namespace}::{name}{schema}"
        self._kernel = kernel  # what a call runs outside tracing
        self.overloadpacket = packet
        # how fx prints a target: torch.ops.<namespace>.<name>.default
        self.__module__ = f"torch.ops.{namespace}"
        self.__name__ = f"{name}.default"
        self.__qualname__ = self.__name__

    def name(self) -> str:
        return f"{self.namespace}::{self._opname}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _torch_function.state.enabled:
            return _torch_function.handle(self, self._kernel, args, kwargs)
        return self._kernel(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self.namespace}.{self._opname}', overload='default')>"

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}.default"


class OpOverloadPacket:
    """torch.ops.<namespace>.<name>: the operator with all its overloads (here: `default`)."""

    def __init__(self, namespace: str, name: str, schema: str,
                 kernel: Callable[..., Any]) -> None:
        self.namespace = namespace
        self._opname = name
        self.default = OpOverload(namespace, name, schema, kernel, self)
        self.__module__ = f"torch.ops.{namespace}"
        self.__name__ = name
        self.__qualname__ = name

    @property
    def _schema(self) -> str:
        return self.default._schema

    def overloads(self) -> list[str]:
        return ["default"]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _torch_function.state.enabled:
            return _torch_function.handle(self, self.default._kernel, args, kwargs)
        return self.default._kernel(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self.namespace}.{self._opname}')>"

    def __str__(self) -> str:
        return f"{self.namespace}.{self._opname}"


class _OpNamespace:
    """torch.ops.<namespace>: its registered operators as attributes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        packet = self._packets.get(op_name)
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


def lookup(qualname: str) -> OpOverloadPacket | None:
    """The packet registered as "namespace::name", or None."""
    namespace, _, name = qualname.partition("::")
    ns = ops._namespaces.get(namespace)
    return None if ns is None else ns._packets.get(name)
