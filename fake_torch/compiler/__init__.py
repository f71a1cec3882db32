"""torch.compiler: the user-facing controls of torch.compile."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch._dynamo import decorators as _decorators
from fake_torch._dynamo import list_backends
from fake_torch._dynamo.eval_frame import disable, is_compiling


def reset() -> None:
    """Clear every compile cache (torch.compiler.reset = torch._dynamo.reset)."""
    from fake_torch import _dynamo

    _dynamo.reset()


def is_dynamo_compiling() -> bool:
    return is_compiling()


def cudagraph_mark_step_begin() -> None:
    """Indicates that a new iteration of inference or training is about to begin.

    CUDA Graphs free the tensors of a prior iteration; torch.compile starts a new iteration at
    each call of a compiled function. Mark it yourself when that is wrong, e.g. when two calls'
    outputs are used together:

        for _ in range(5):
            torch.compiler.cudagraph_mark_step_begin()
            rand_foo() + rand_foo()
    """
    from fake_torch._inductor import cudagraph_trees

    cudagraph_trees.mark_step_begin()


def set_stance(stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
               force_backend: str | Callable[..., Any] | None = None) -> Any:
    """Set the compiler's stance ("default", "force_eager", "eager_on_recompile",
    "fail_on_recompile"): as a call, a context manager or a decorator."""
    return _decorators.set_stance(stance, skip_guard_eval_unsafe=skip_guard_eval_unsafe,
                                  force_backend=force_backend)


def allow_in_graph(fn):  # type: ignore[no-untyped-def]  # torch's signature: (fn)
    """Put `fn` in the graph as one call (fake_torch traces through it; see
    torch._dynamo.allow_in_graph)."""
    return _decorators.allow_in_graph(fn)


def assume_constant_result(fn):  # type: ignore[no-untyped-def]  # torch's signature: (fn)
    """Treat `fn`'s result as a constant of the compiled code."""
    return _decorators.assume_constant_result(fn)


def skip_all_guards_unsafe(guard_entries: list[Any]) -> list[bool]:
    """A guard_filter_fn dropping every guard: the compiled entry then serves every call
    (WARNING: no safety guarantee is left).

        torch.compile(fn, options={"guard_filter_fn": torch.compiler.skip_all_guards_unsafe})
    """
    return [False for _ in guard_entries]


def keep_tensor_guards_unsafe(guard_entries: list[Any], keep_parameters: bool = False
                              ) -> list[bool]:
    """A guard_filter_fn keeping only the tensors' guards (TENSOR_MATCH), parameters' only
    with keep_parameters."""
    from fake_torch.nn.parameter import Parameter

    return [e.guard_type == "TENSOR_MATCH"
            and (keep_parameters or not isinstance(e.value, Parameter)) for e in guard_entries]


def skip_guard_on_globals_unsafe(guard_entries: list[Any]) -> list[bool]:
    """A guard_filter_fn dropping the guards on globals."""
    return [not e.is_global for e in guard_entries]


def keep_portable_guards_unsafe(guard_entries: list[Any]) -> list[bool]:
    """A guard_filter_fn keeping the global state, the shape environment and the local
    tensors' guards."""
    return [e.guard_type in ("GLOBAL_STATE", "SHAPE_ENV")
            or (e.guard_type == "TENSOR_MATCH" and not e.is_global) for e in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries: list[Any]) -> list[bool]:
    """A guard_filter_fn dropping the guards on nn.Modules (user-defined and torch.nn's)."""
    return [not e.orig_guard.source.is_unspecialized_nn_module() for e in guard_entries]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries: list[Any]) -> list[bool]:
    """A guard_filter_fn dropping the guards on torch.nn's own modules (nn.Linear, ...)."""
    return [not e.orig_guard.source.is_unspecialized_builtin_nn_module()
            for e in guard_entries]


__all__ = ["allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "disable",
           "is_compiling", "is_dynamo_compiling", "keep_portable_guards_unsafe",
           "keep_tensor_guards_unsafe", "list_backends", "reset", "set_stance",
           "skip_all_guards_unsafe", "skip_guard_on_all_nn_modules_unsafe",
           "skip_guard_on_globals_unsafe", "skip_guard_on_inbuilt_nn_modules_unsafe"]
