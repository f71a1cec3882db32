"""Recording for torch.jit.trace: one concrete run of a function under a TorchFunctionMode.

Each outermost public call (what the user's code called; what an op calls inside is part of it)
becomes one node of an FX graph whose placeholders are the input tensors; the tensors it returns
map to that node. Python values are not recorded: a branch on a tensor, `.item()`, `float(t)` run
once and are baked into the trace, with torch's TracerWarning at the user's line (calls from
fake_torch's own library code stay quiet, as torch ignores TracerWarnings from torch.*). Tensors
found elsewhere (parameters, globals) stay as they are: constants held by reference. Ops whose
values nothing uses are dropped, as TorchScript drops them; a read of a tensor size is noted.
"""

from __future__ import annotations

import operator
import os
import sys
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from fake_torch import _opdef, _torch_function
from fake_torch._dynamo.export import is_size_read
from fake_torch._ops import OpOverload, OpOverloadPacket
from fake_torch._tensor import Tensor
from fake_torch.fx import Graph, GraphModule, Node
from fake_torch.overrides import TorchFunctionMode


class TracerWarning(Warning):
    """A traced function did something the trace cannot follow (torch.jit.TracerWarning)."""


_HOST_TEXT = {"__bool__": "a Python boolean", "__float__": "a Python float",
              "__int__": "a Python integer", "item": "a Python number",
              "tolist": "a Python list", "numpy": "a NumPy array", "__array__": "a NumPy array"}
_CONTAINER_TEXT = (
    "Encountering a {kind} at the output of the tracer might cause the trace to be incorrect, "
    "this is only valid if the container structure does not change based on the module's "
    "inputs. Consider using a constant container instead (e.g. for `list`, use a `tuple` "
    "instead. for `dict`, use a `NamedTuple` instead). If you absolutely need this and know "
    "the side effects, pass strict=False to trace() to allow this behavior.")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_DOOR_FILES = (os.path.join(_PACKAGE, "_torch_function.py"), os.path.join(_PACKAGE, "overrides.py"),
               os.path.abspath(__file__))


class _TracingState(threading.local):
    recording: _Recording | None = None


_tracing = _TracingState()


def is_tracing() -> bool:
    """True while torch.jit.trace records the calling code."""
    return _tracing.recording is not None


def _warn_at_user_line(message: str) -> None:
    """Warn at the user's line that made the call; calls made by fake_torch's own library code
    (an nn module's checks) stay quiet, as torch ignores TracerWarnings from torch.*."""
    frame = sys._getframe(1)
    while frame is not None and (frame.f_code.co_filename in _DOOR_FILES
                                 or frame.f_code.co_filename.startswith("<fake_torch entry")):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None or frame.f_code.co_filename.startswith(_PACKAGE + os.sep):
        return
    warnings.warn_explicit(message, TracerWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=frame.f_globals.get("__name__"),
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


def _type_name(v: Any) -> str:
    """A value's TorchScript type, as trace's errors name it ('Tuple[Tensor, int]')."""
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, tuple):
        return f"Tuple[{', '.join(_type_name(x) for x in v)}]"
    if isinstance(v, list):
        return f"List[{_type_name(v[0]) if v else 'Tensor'}]"
    if isinstance(v, dict):
        k, val = next(iter(v.items()), ("", None))
        return f"Dict[{_type_name(k)}, {_type_name(val) if v else 'Tensor'}]"
    return "NoneType" if v is None else type(v).__name__


class _Recording:
    """The graph being recorded: tensors map to the node that made them (or a placeholder)."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.nodes: dict[int, tuple[weakref.ref[Tensor], Node]] = {}
        self.reads_sizes = False

    def placeholder(self, t: Tensor, i: int) -> None:
        self.nodes[id(t)] = (weakref.ref(t), self.graph.placeholder(f"input_{i}"))

    def map(self, value: Any) -> Any:
        """A call's arguments with recorded tensors replaced by their nodes (any other tensor
        stays as it is: a constant of the trace)."""
        if isinstance(value, Tensor):
            found = self.nodes.get(id(value))
            return found[1] if found is not None and found[0]() is value else value
        if isinstance(value, tuple):
            items = [self.map(v) for v in value]
            return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
        if isinstance(value, list):
            return [self.map(v) for v in value]
        if isinstance(value, dict):
            return {k: self.map(v) for k, v in value.items()}
        if isinstance(value, slice):
            return slice(self.map(value.start), self.map(value.stop), self.map(value.step))
        return value

    def bind(self, result: Any, node: Node) -> None:
        """The tensors a call returned come from its node (tuple elements: getitem nodes)."""
        if isinstance(result, Tensor):
            self.nodes[id(result)] = (weakref.ref(result), node)
        elif isinstance(result, (tuple, list)):
            for i, r in enumerate(result):
                if isinstance(r, (Tensor, tuple, list)):
                    self.bind(r, self.graph.call_function(operator.getitem, (node, i)))


class _RecordMode(TorchFunctionMode):
    """Each outermost call: a node (its value computed for real); host reads warn; metadata
    reads run as they are (a size read is noted)."""

    def __init__(self, recording: _Recording) -> None:
        super().__init__()
        self.recording = recording

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        rec = self.recording
        entry = _torch_function.called_entry() or func
        opdef = _opdef.def_of(entry)
        if opdef is None and not isinstance(func, (OpOverload, OpOverloadPacket)):
            rec.reads_sizes = rec.reads_sizes or is_size_read(func)
            return func(*args, **kwargs)  # metadata: a Python value
        if opdef is not None and opdef.kind == _opdef.HOST:
            what = _HOST_TEXT.get(opdef.name)
            if what is not None:
                _warn_at_user_line(
                    f"Converting a tensor to {what} might cause the trace to be incorrect. We "
                    "can't record the data flow of Python values, so this value will be "
                    "treated as a constant in the future. This means that the trace might not "
                    "generalize to other inputs!")
            return func(*args, **kwargs)
        node_args, node_kwargs = rec.map(tuple(args)), rec.map(kwargs)
        result = func(*args, **kwargs)
        if result is NotImplemented:
            return result
        node = rec.graph.call_function(entry, node_args, node_kwargs)
        rec.bind(result, node)
        return result


def _is_impure(node: Node) -> bool:
    """Ops replay must keep even when nothing reads their value: writes and random draws."""
    if node.op != "call_function" or "out" in node.kwargs:
        return node.op == "call_function"
    if isinstance(node.target, (OpOverload, OpOverloadPacket)):
        return True
    opdef = _opdef.def_of(node.target)
    return opdef is not None and (opdef.mutates or opdef.random)


def _flatten(value: Any, out: list[Any]) -> Any:
    """The tensors of a (nested) input in order, and its structure with the tensors blanked."""
    if isinstance(value, Tensor):
        out.append(value)
        return None
    if isinstance(value, (tuple, list)):
        return (type(value), [_flatten(v, out) for v in value])
    if isinstance(value, dict):
        return (dict, {k: _flatten(v, out) for k, v in value.items()})
    raise TypeError(type(value).__name__)


def _leaves(value: Any) -> list[Tensor]:
    out: list[Tensor] = []
    for v in value:
        _flatten(v, out)
    return out


def _record(fn: Callable[..., Any], inputs: tuple[Any, ...], strict: bool
            ) -> tuple[GraphModule, bool]:
    """Run fn on the inputs under recording; the replayable GraphModule and whether the
    Python read a tensor size."""
    rec = _Recording()
    for i, t in enumerate(_leaves(inputs)):
        rec.placeholder(t, i)
    saved, _tracing.recording = _tracing.recording, rec
    try:
        with _RecordMode(rec):
            result = fn(*inputs)
    finally:
        _tracing.recording = saved
    if result is None:
        raise RuntimeError("The traced function didn't return any values! Side-effects are not "
                           "captured in traces, so it would be a no-op.")
    _check_output(result, strict, top=True)
    rec.graph.output(rec.map(result))
    rec.graph.eliminate_dead_code(_is_impure)
    return GraphModule({}, rec.graph), rec.reads_sizes


def _check_output(value: Any, strict: bool, top: bool = False) -> None:
    if isinstance(value, Tensor):
        return
    if isinstance(value, (list, dict)) and strict and top:
        kind = "list" if isinstance(value, list) else "dict"
        if kind == "dict":
            raise RuntimeError(_CONTAINER_TEXT.format(kind=kind))
        warnings.warn(_CONTAINER_TEXT.format(kind=kind), TracerWarning, stacklevel=4)
    if isinstance(value, (tuple, list)):
        for v in value:
            _check_output(v, strict)
        return
    if isinstance(value, dict):
        for v in value.values():
            _check_output(v, strict)
        return
    if value is None or isinstance(value, (int, float, complex, str)):
        raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can "
                           "be output from traced functions")
    raise RuntimeError(f"Tracer cannot infer type of {value}\n:Only tensors and (possibly "
                       "nested) tuples of tensors, lists, or dicts are supported as inputs or "
                       "outputs of traced functions, but instead got value of type "
                       f"{type(value).__name__}.")


__all__ = ["TracerWarning", "is_tracing"]
