"""torch.compile: the signature, defaults and argument errors of torch 2.13's.

`torch.compile(fn)`, `@torch.compile`, `@torch.compile(mode=...)`, on functions and on
nn.Modules (an OptimizedModule; `module.compile()` compiles in place). The work is done by
fake_torch._dynamo (tracing, guards, graph breaks) and the chosen backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch._dynamo import state
from fake_torch._dynamo.backends import registry
from fake_torch._dynamo.eval_frame import _options, compile_inplace, optimize_callable
from fake_torch.distributed import _collectives
from fake_torch.nn.modules import module as _module
from fake_torch.nn.modules.module import Module


def _backend_kwargs(backend: str | Callable[..., Any], mode: str | None,
                    options: dict[str, Any] | None) -> dict[str, Any]:
    """What torch passes on to the backend; for "inductor", torch's errors for an unknown mode
    or option are raised here, at torch.compile() time."""
    kwargs: dict[str, Any] = {}
    if mode and mode != "default":
        kwargs["mode"] = mode
    if options:
        kwargs["options"] = options
    if backend == "inductor" and registry.is_registered("inductor"):
        from fake_torch._inductor.backends import config_patches_for

        config_patches_for(mode, options)
    return kwargs


def compile(model: Callable[..., Any] | None = None, *, fullgraph: bool = False,
            dynamic: bool | None = None, backend: str | Callable[..., Any] | None = None,
            mode: str | None = None, options: dict[str, Any] | None = None,
            name: str | None = None, disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None) -> Any:
    """Optimize `model` (a function or nn.Module) with TorchDynamo and `backend` (default
    "inductor"): guards, recompiles, graph breaks and launches behave as torch.compile's."""
    if backend is None:
        backend = "inductor"  # torch's default
    if shapes_spec is not None:
        raise NotImplementedError("torch.compile(shapes_spec=...) is not emulated by fake_torch")
    if model is None:
        def fn(model: Callable[..., Any]) -> Any:
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles)
        return fn
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is None and options is None:
        mode = "default"
    guard_filter_fn = None
    if isinstance(options, dict):  # as torch: taken out of the dict the caller passed
        guard_filter_fn = options.pop("guard_filter_fn", None)
    kwargs = _backend_kwargs(backend, mode, dict(options) if options else None)
    compile_options = _options(backend, fullgraph, dynamic, recompile_limit, kwargs,
                               guard_filter_fn)
    if disable:
        return model
    return optimize_callable(model, compile_options, isolate_recompiles)


def compile_module(module: Module, *args: Any, **kwargs: Any) -> None:
    """nn.Module.compile(**kwargs): compile the module's forward in place with torch.compile's
    arguments."""
    if args:
        raise TypeError("Module.compile() takes torch.compile's keyword arguments only")
    backend = kwargs.pop("backend", None) or "inductor"
    mode, options = kwargs.pop("mode", None), kwargs.pop("options", None)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if kwargs.pop("disable", False):
        return
    guard_filter_fn = options.pop("guard_filter_fn", None) if isinstance(options, dict) \
        else None
    compile_options = _options(backend, kwargs.pop("fullgraph", False),
                               kwargs.pop("dynamic", None), kwargs.pop("recompile_limit", None),
                               _backend_kwargs(backend, mode or "default", options),
                               guard_filter_fn)
    kwargs.pop("name", None)
    kwargs.pop("isolate_recompiles", None)
    if kwargs:
        raise TypeError(f"compile() got an unexpected keyword argument '{next(iter(kwargs))}'")
    compile_inplace(module, compile_options)


# what the layers below ask of compile (imports point down: fake_torch/_tools/_layers.py)
_module.set_compile_source(compile_module)  # nn.Module.compile
_collectives.is_tracing = state.is_tracing  # a collective refuses to run inside a trace

__all__ = ["compile"]
