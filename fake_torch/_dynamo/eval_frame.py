"""What torch.compile hands back: a compiled function (functools.wraps of the original) or an
OptimizedModule, both calling a CompiledFrame; plus optimize(), disable() and explain()."""

from __future__ import annotations

import functools
import inspect
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from fake_torch._dynamo import graph_breaks as gb
from fake_torch._dynamo import output_graph
from fake_torch._dynamo.backends.debugging import ExplainOutput
from fake_torch._dynamo.backends.registry import lookup_backend
from fake_torch._dynamo.convert_frame import CompiledFrame, frame_for, remove_from_cache, reset
from fake_torch._dynamo.output_graph import CompileOptions
from fake_torch._dynamo.state import active_tracer, is_tracing
from fake_torch._dynamo.utils import compile_times
from fake_torch.nn.modules.module import Module


class BackendWithKwargs:
    """A backend called with torch.compile's `mode=` / `options=` (as torch passes them)."""

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self.fn = fn
        self.kwargs = kwargs
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)

    def __call__(self, gm: Any, example_inputs: list[Any]) -> Any:
        return self.fn(gm, example_inputs, **self.kwargs)


def _options(backend: str | Callable[..., Any], fullgraph: bool, dynamic: bool | None,
             recompile_limit: int | None, backend_kwargs: dict[str, Any] | None,
             guard_filter_fn: Callable[[list[Any]], list[bool]] | None = None
             ) -> CompileOptions:
    fn = lookup_backend(backend)
    name = backend if isinstance(backend, str) else getattr(backend, "__name__", "?")
    if backend_kwargs:
        fn = BackendWithKwargs(fn, backend_kwargs)
    key = (backend if isinstance(backend, str) else id(backend),
           repr(sorted((backend_kwargs or {}).items())))
    return CompileOptions(fn, name, fullgraph, dynamic, recompile_limit, key, guard_filter_fn)


def _weakrefable(obj: Any) -> bool:
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True


class OptimizedModule(Module):
    """An nn.Module whose calls run compiled (torch._dynamo.eval_frame.OptimizedModule). The
    original is `_orig_mod` (its state_dict keys get the "_orig_mod." prefix, as in torch);
    every other attribute reads and writes go to it."""

    _opt_mod_attributes = frozenset({"_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable",
                                     "get_compiler_config", "forward", "_forward", "__dict__",
                                     "named_children_walk", "_super_module_initialized",
                                     "_frame"})
    _orig_mod: Module

    def __init__(self, mod: Module, frame: CompiledFrame) -> None:
        super().__init__()
        self._orig_mod = mod
        self._frame = frame
        self.forward = _compiled_callable(mod.__call__, frame, bound=mod)

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._opt_mod_attributes:
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)


def _compiled_callable(fn: Callable[..., Any], frame: CompiledFrame,
                       bound: Any = None) -> Callable[..., Any]:
    """`fn` compiled: calls go to its frame (with `bound`, a module or a bound method's
    object, as the frame's first argument: `self` is an argument Dynamo guards)."""
    if bound is not None:
        @functools.wraps(fn)
        def compile_wrapper(*args: Any, **kwargs: Any) -> Any:
            return frame(bound, *args, **kwargs)
    else:
        @functools.wraps(fn)
        def compile_wrapper(*args: Any, **kwargs: Any) -> Any:
            return frame(*args, **kwargs)

    compile_wrapper._torchdynamo_orig_callable = fn  # type: ignore[attr-defined]
    compile_wrapper._frame = frame  # type: ignore[attr-defined]  # fake_torch: the caches
    return compile_wrapper


def optimize_callable(model: Any, options: CompileOptions, isolate: bool = False) -> Any:
    """torch.compile's result for `model`: an OptimizedModule or a compiled function."""
    if isinstance(model, Module):  # the frame of its class's forward, shared by instances
        forward = type(model).forward
        frame = frame_for(type(model).__call__, forward, options, isolate, user=forward)
        return OptimizedModule(model, frame)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if inspect.ismethod(model):  # its function's frame, with the object as an argument
        frame = frame_for(model.__func__, model.__func__, options, isolate)
        return _compiled_callable(model, frame, bound=model.__self__)
    frame = frame_for(model, model if _weakrefable(model) else None, options, isolate)
    return _compiled_callable(model, frame)


def compile_inplace(module: Module, options: CompileOptions) -> None:
    """nn.Module.compile(): later calls of `module` run its forward compiled."""
    forward = type(module).forward
    frame = frame_for(forward, forward, options, kind="forward")
    compiled = _compiled_callable(forward.__get__(module), frame, bound=module)
    module.__dict__["forward"] = compiled
    module.__dict__["_compiled_call_impl"] = compiled


def optimize(backend: str | Callable[..., Any] = "inductor", *, nopython: bool = False,
             dynamic: bool | None = None, disable: bool = False,
             recompile_limit: int | None = None,
             guard_filter_fn: Callable[[list[Any]], list[bool]] | None = None,
             **kwargs: Any) -> Callable[[Any], Any]:
    """torch._dynamo.optimize(backend)(fn): fn compiled with `backend` (fullgraph=nopython)."""
    options = _options(backend, nopython, dynamic, recompile_limit, None, guard_filter_fn)

    def decorate(model: Any) -> Any:
        return model if disable else optimize_callable(model, options)

    return decorate


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """torch.compiler.disable / torch._dynamo.disable: `fn` always runs eagerly; called from
    compiled code it is a graph break."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def disabled(*args: Any, **kwargs: Any) -> Any:
        tracer = active_tracer()
        if tracer is None:
            return fn(*args, **kwargs)
        text = gb.disabled_call(fn, reason)
        return tracer.breaking_call(gb.GraphBreak(text, text), fn, *args, **kwargs)

    disabled._torchdynamo_disable = True  # type: ignore[attr-defined]
    return disabled


def is_compiling() -> bool:
    """True while torch.compile traces the code that asks (torch.compiler.is_compiling)."""
    return is_tracing()


def explain(f: Callable[..., Any], *extra_args: Any, **extra_kwargs: Any) -> Any:
    """torch._dynamo.explain(f)(*args): run f compiled once and report its graphs, graph
    breaks and their reasons, and the ops of each graph (its call_function targets)."""

    def inner(*args: Any, **kwargs: Any) -> ExplainOutput:
        reset()
        graphs: list[Any] = []
        break_reasons: list[gb.GraphCompileReason] = []
        ops_per_graph: list[list[Any]] = []

        def accumulate(gm: Any, example_inputs: Sequence[Any]) -> Callable[..., Any]:
            graphs.append(gm)
            ops_per_graph.append([n.target for n in gm.graph.nodes if n.op == "call_function"])
            if gm.compile_subgraph_reason.graph_break:
                break_reasons.append(gm.compile_subgraph_reason)
            return gm.forward  # type: ignore[no-any-return]

        options = _options(accumulate, False, None, None, None)
        compiled = optimize_callable(f, options, isolate=True)
        output_graph.explaining = True
        try:
            compiled(*args, **kwargs)
        finally:
            output_graph.explaining = False
        frame: CompiledFrame = compiled._frame
        guards = [g for entry in frame.entries for g in entry.guards.leaves]
        reset()
        return ExplainOutput(graphs, len(graphs), len(graphs) - 1, break_reasons,
                             sum(map(len, ops_per_graph)), ops_per_graph, guards,
                             compile_times(repr="str"))

    if extra_args or extra_kwargs:
        warnings.warn(
            "explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, **kwargs) instead. "
            " If you don't migrate, we may break your explain call in the future if your user "
            "defined kwargs conflict with future kwargs added to explain(f).",
            FutureWarning, stacklevel=2)
        return inner(*extra_args, **extra_kwargs)
    return inner


__all__ = ["OptimizedModule", "disable", "explain", "is_compiling", "optimize",
           "remove_from_cache"]
