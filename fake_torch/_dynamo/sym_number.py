"""Numbers captured from `.item()` while tracing (capture_scalar_outputs, or fullgraph=True):
torch's SymInt / SymFloat ("u0", "zuf0"). Arithmetic on them is recorded as graph nodes; Python
control flow on them needs the value: a data-dependent guard (an error under fullgraph=True,
else a graph break that computes it)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fake_torch._dynamo.state import _state
from fake_torch._tensor import Tensor
from fake_torch.fx.experimental.symbolic_shapes import _register_symbolic_type

if TYPE_CHECKING:
    from fake_torch._dynamo.trace import Segment, Tracer
    from fake_torch.fx import Node


class SymNumber:
    """A number `.item()` returned while tracing with captured scalar outputs (torch's
    SymInt/SymFloat, "u0"/"zuf0"): arithmetic on it is recorded; Python control flow on it is
    a data-dependent guard."""

    _tracer: Tracer
    _node: Node
    _segment: Segment
    _value: Any
    _name: str

    def _arg(self, tracer: Tracer) -> Any:
        """What a node argument holds for this number: its node while its graph is open."""
        if self._value is None and self._segment is tracer.segment:
            return self._node
        return self._resolved()

    def _resolved(self) -> Any:
        return self._value if self._value is not None else self._plain()

    def _plain(self) -> Any:
        raise NotImplementedError


def _recording(tracer: Tracer | None, sym: SymNumber) -> bool:
    return (tracer is not None and _state.depth == 0 and sym._value is None
            and tracer.segment is sym._segment)


def _binop(fn: Callable[[Any, Any], Any], reflected: bool) -> Callable[[SymNumber, Any], Any]:
    def method(self: SymNumber, other: Any) -> Any:
        tracer = _state.tracer
        if not isinstance(other, (int, float)) or isinstance(other, Tensor):
            return NotImplemented
        if not _recording(tracer, self):
            a, b = self._resolved(), other._resolved() if isinstance(other, SymNumber) else other
            return fn(b, a) if reflected else fn(a, b)
        assert tracer is not None
        pair = (other, self) if reflected else (self, other)
        node = tracer.segment.graph.call_function(fn, tracer.map_args(pair))  # type: ignore[union-attr]
        plain = tuple(p._plain() if isinstance(p, SymNumber) else p for p in pair)
        return tracer.new_scalar(node, fn(*plain))
    return method


def _unary(fn: Callable[[Any], Any]) -> Callable[[SymNumber], Any]:
    def method(self: SymNumber) -> Any:
        tracer = _state.tracer
        if not _recording(tracer, self):
            return fn(self._resolved())
        assert tracer is not None
        node = tracer.segment.graph.call_function(fn, (self._node,))  # type: ignore[union-attr]
        return tracer.new_scalar(node, fn(self._plain()))
    return method


def _guarded(fn: Callable[..., Any], symbol: str) -> Callable[..., Any]:
    """Python needs the value (comparison, bool, int, format): guard on data."""
    def method(self: SymNumber, *other: Any) -> Any:
        tracer = _state.tracer
        if _recording(tracer, self):
            assert tracer is not None
            rhs = f" {other[0]}" if other else ""
            tracer.scalar_guard(self, f"{self._name}{symbol}{rhs}")
        values = [o._resolved() if isinstance(o, SymNumber) else o for o in other]
        return fn(self._resolved(), *values)
    return method


_ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
          "pow": operator.pow}


def _number_class(base: type) -> Any:
    namespace: dict[str, Any] = {}
    for name, fn in _ARITH.items():
        namespace[f"__{name}__"] = _binop(fn, False)
        namespace[f"__r{name}__"] = _binop(fn, True)
    namespace["__neg__"] = _unary(operator.neg)
    namespace["__abs__"] = _unary(abs)
    for name, sym in (("lt", " <"), ("le", " <="), ("gt", " >"), ("ge", " >="), ("eq", " =="),
                      ("ne", " !=")):
        namespace[f"__{name}__"] = _guarded(getattr(operator, name), sym)
    namespace["__bool__"] = _guarded(bool, " != 0")
    namespace["__int__"] = _guarded(int, "")
    namespace["__float__"] = _guarded(float, "")
    namespace["__index__"] = _guarded(operator.index, "")
    namespace["__format__"] = _guarded(format, "")
    namespace["__repr__"] = _guarded(repr, "")
    namespace["__hash__"] = lambda self: id(self)
    namespace["_plain"] = (lambda self: float.__float__(self)) if base is float else \
        (lambda self: int.__int__(self))
    return namespace


SymInt = type("SymInt", (SymNumber, int), _number_class(int))
SymFloat = type("SymFloat", (SymNumber, float), _number_class(float))
_register_symbolic_type(SymNumber)  # is_symbolic(x.item()) is True, as for torch's u0


__all__ = ["SymFloat", "SymInt", "SymNumber"]
