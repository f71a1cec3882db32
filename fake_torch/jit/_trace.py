"""torch.jit.trace: run a function once on example inputs, record its ops, replay them.

The recording (_record.py) is one concrete run: Python control flow takes its branch once and
is baked in, so the replay always takes the traced branch (the point of the torch.compile
tutorial's example, with torch's TracerWarning). Calling the result replays the recorded graph
on the new inputs: each op launches as it did eagerly. check_trace traces again on copies of
the inputs and compares, as torch's does.

torch records tensor sizes as graph values (`x.shape[0]` follows the input); fake_torch bakes
them, so a trace whose Python read a size replays only at the traced sizes (other sizes raise
NotImplementedError). The TorchScript IR itself (`.graph`, `.code`, `save`) is not emulated.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

from fake_torch._tensor import Tensor
from fake_torch.fx import Graph, GraphModule
from fake_torch.jit._record import (
    TracerWarning,
    _flatten,
    _leaves,
    _record,
    _type_name,
    is_tracing,
)
from fake_torch.jit._script import ScriptFunction, ScriptModule
from fake_torch.nn.modules.module import Module


class _Trace:
    """What one trace recorded: the graph to replay and the inputs it was recorded on."""

    def __init__(self, gm: GraphModule, name: str, params: list[str], example: tuple[Any, ...],
                 reads_sizes: bool) -> None:
        self.gm = gm
        self.name = name
        self.params = params
        self.structure = [_flatten(a, []) for a in example]
        self.shapes = [tuple(t.shape) for t in _leaves(example)]
        self.reads_sizes = reads_sizes

    def declaration(self) -> str:
        return f"{self.name}({', '.join(f'Tensor {p}' for p in self.params)}) -> Tensor"

    def replay(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        args = self._bind(args, kwargs)
        tensors: list[Any] = []
        for i, (a, structure) in enumerate(zip(args, self.structure, strict=True)):
            try:
                got = _flatten(a, tensors)
            except TypeError as e:
                raise RuntimeError(self._type_error(i, a, str(e))) from None
            if _shape_of(got) != _shape_of(structure):
                raise RuntimeError(f"Expected a value of structure {_type_name(args[i])} matching "
                                   f"the traced input {i} of {self.name}()")
        if self.reads_sizes:
            for t, shape in zip(tensors, self.shapes, strict=True):
                if tuple(t.shape) != shape:
                    raise NotImplementedError(
                        f"torch.jit.trace: {self.name} read tensor sizes while it was traced; "
                        "fake_torch bakes them into the trace (torch records them), so it "
                        f"replays only at the traced sizes: got {tuple(t.shape)}, traced {shape}")
        return self.gm(*tensors)

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        n = len(self.params)
        if len(args) > n:
            raise RuntimeError(f"{self.name}() expected at most {n} argument(s) but received "
                               f"{len(args) + len(kwargs)} argument(s). Declaration: "
                               f"{self.declaration()}")
        bound = list(args)
        for p in self.params[len(args):]:
            if p not in kwargs:
                raise RuntimeError(f"{self.name}() is missing value for argument '{p}'. "
                                   f"Declaration: {self.declaration()}")
            bound.append(kwargs.pop(p))
        if kwargs:
            raise RuntimeError(f"{self.name}() got an unexpected keyword argument "
                               f"'{next(iter(kwargs))}'")
        return tuple(bound)

    def _type_error(self, i: int, value: Any, found: str) -> str:
        return (f"{self.name}() Expected a value of type 'Tensor' for argument "
                f"'{self.params[i]}' but instead found type '{found}'.\nPosition: {i}\n"
                f"Value: {value!r}\nDeclaration: {self.declaration()}\n"
                f"Cast error details: Unable to cast {value!r} to Tensor")


def _shape_of(structure: Any) -> Any:
    if structure is None:
        return None
    kind, items = structure
    if kind is dict:
        return (dict, tuple((k, _shape_of(v)) for k, v in items.items()))
    return (kind in (tuple, list), tuple(_shape_of(v) for v in items))


class TracingCheckError(Exception):
    """check_trace found the trace unsound (torch.jit._trace.TracingCheckError)."""


def _check(fn: Callable[..., Any], trace: _Trace, inputs: tuple[Any, ...],
           tolerance: float, strict: bool) -> None:
    """check_trace, as torch's: trace again on copies of the inputs (the same ops must be
    recorded), then the Python function and the trace must agree on copies."""
    from fake_torch.testing import assert_close

    def clone(v: Any) -> Any:
        if isinstance(v, Tensor):
            return v.clone()
        if isinstance(v, (tuple, list)):
            return type(v)(clone(x) for x in v)
        if isinstance(v, dict):
            return {k: clone(x) for k, x in v.items()}
        return v

    again, _ = _record(fn, clone(inputs), strict)
    if _ops(again.graph) != _ops(trace.gm.graph):
        raise TracingCheckError("Tracing failed sanity checks!\nERROR: Graphs differed across "
                                "invocations!")
    expected = _leaves((fn(*clone(inputs)),))
    got = _leaves((trace.replay(clone(inputs), {}),))
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        try:
            assert_close(g, e, rtol=tolerance, atol=1e-5, equal_nan=True)
        except AssertionError as err:
            warnings.warn(f"Output nr {i + 1}. of the traced function does not match the "
                          "corresponding output of the Python function. Detailed error:\n"
                          f"{err}", TracerWarning, stacklevel=3)


def _ops(graph: Graph) -> list[tuple[str, Any]]:
    return [(n.op, n.target) for n in graph.nodes]


def _make_tuple(example_inputs: Any) -> tuple[Any, ...]:
    if isinstance(example_inputs, (Tensor, dict)):
        return (example_inputs,)
    if not isinstance(example_inputs, tuple):
        return tuple(example_inputs)
    return example_inputs


class TopLevelTracedModule(ScriptModule):
    """A traced nn.Module: calling it replays the trace of its forward (its submodules,
    parameters and buffers are the original module's)."""

    def __init__(self, orig: Module, trace: _Trace) -> None:
        super().__init__()
        self._original_name = type(orig).__name__
        self._trace = trace
        self.training = orig.training
        for name, child in orig.named_children():
            self.add_module(name, child)
        for name, p in orig._parameters.items():
            self.register_parameter(name, p)
        for name, b in orig._buffers.items():
            self.register_buffer(name, b)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._trace.replay(args, kwargs)

    def _get_name(self) -> str:
        return self._original_name

    def extra_repr(self) -> str:
        return f"original_name={self._original_name}"


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: list[Any] | None = None, check_tolerance: float = 1e-05,
          strict: bool = True, _force_outplace: bool = False, _module_class: Any = None,
          _compilation_unit: Any = None, example_kwarg_inputs: dict[str, Any] | None = None,
          _store_inputs: bool = True) -> Any:
    """Record `func` (a function or an nn.Module) run on `example_inputs`; the result replays
    the recorded ops (a ScriptFunction, or a TopLevelTracedModule for a module)."""
    warnings.warn("`torch.jit.trace` is deprecated. Please switch to `torch.compile` or "
                  "`torch.export`.", DeprecationWarning, stacklevel=1)
    if example_kwarg_inputs is not None:
        raise NotImplementedError("torch.jit.trace(example_kwarg_inputs=...) is not emulated by "
                                  "fake_torch: pass the example inputs positionally")
    if example_inputs is None:
        raise RuntimeError("example_kwarg_inputs should be a dict")
    inputs = _make_tuple(example_inputs)
    try:
        _leaves(inputs)
    except TypeError:
        raise RuntimeError(f"Type '{_type_name(inputs)}' cannot be traced. Only Tensors and "
                           "(possibly nested) Lists, Dicts, and Tuples of Tensors can be "
                           "traced") from None
    target = func.forward if isinstance(func, Module) else func
    name = getattr(target, "__name__", type(func).__name__).replace("<lambda>", "_lambda")
    params = [p.name for p in inspect.signature(target).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:len(inputs)]
    gm, reads_sizes = _record(func, inputs, strict)
    recorded = _Trace(gm, name if not isinstance(func, Module) else "forward", params, inputs,
                      reads_sizes)
    if check_trace:
        for check in ([_make_tuple(c) for c in check_inputs] if check_inputs else [inputs]):
            _check(func, recorded, check, check_tolerance, strict)
    if isinstance(func, Module):
        return TopLevelTracedModule(func, recorded)
    return ScriptFunction(recorded.replay, name)


__all__ = ["TopLevelTracedModule", "TracerWarning", "TracingCheckError", "is_tracing", "trace"]
