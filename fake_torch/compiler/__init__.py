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


__all__ = ["allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "disable",
           "is_compiling", "is_dynamo_compiling", "list_backends", "reset", "set_stance"]
