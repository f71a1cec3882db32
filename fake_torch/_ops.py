"""torch.ops: the operators registered with torch.library, as `torch.ops.<namespace>.<name>`.

`torch.ops.mylib.foo` is an OpOverloadPacket, `torch.ops.mylib.foo.default` its one OpOverload;
calling either runs the operator. While torch.compile traces, `_trace_hook` is set and a call
goes to it instead, so the tracer records ONE graph node for the whole operator (its target is
the packet or overload that was called) however many kernels the operator's body launches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# set by the tracer while a trace is active: hook(op, args, kwargs) -> what the call returns
TraceHook = Callable[["OpOverload | OpOverloadPacket", tuple[Any, ...], dict[str, Any]], Any]
_trace_hook: TraceHook | None = None


def set_trace_hook(hook: TraceHook | None) -> TraceHook | None:
    """Route every custom-op call to `hook` (None: run the operators again); returns the
    previous hook so a tracer can put it back."""
    global _trace_hook
    previous, _trace_hook = _trace_hook, hook
    return previous


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
        hook = _trace_hook
        if hook is not None:
            return hook(self, args, kwargs)
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
        hook = _trace_hook
        if hook is not None:
            return hook(self, args, kwargs)
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
        if packet is None:
            if self.name == "aten":
                raise NotImplementedError(f"torch.ops.aten.{op_name} is not emulated by "
                                          f"fake_torch: call the public torch function instead")
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


def run_kernel(op: OpOverload | OpOverloadPacket, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
    """Run the operator itself, bypassing the trace hook (for a tracer's nested calls)."""
    overload = op.default if isinstance(op, OpOverloadPacket) else op
    return overload._kernel(*args, **kwargs)


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
