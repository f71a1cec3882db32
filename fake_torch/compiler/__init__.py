"""torch.compiler: the user-facing controls of torch.compile."""

from __future__ import annotations

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


__all__ = ["cudagraph_mark_step_begin", "disable", "is_compiling", "is_dynamo_compiling",
           "list_backends", "reset"]
