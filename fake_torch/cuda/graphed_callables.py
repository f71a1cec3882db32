"""torch.cuda.make_graphed_callables, for inference: warm up, capture, replay with input copies.

fake_torch has no autograd, so only the forward graph exists; the returned callables copy a new
input into the static input only when its address differs (a caller that writes into the static
inputs itself pays no copy), replay once, and return the static outputs (detached views that the
next call overwrites, as in torch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch._tensor import Tensor
from fake_torch.cuda import streams
from fake_torch.cuda.graphs import CUDAGraph, graph, graph_pool_handle


def _flatten(out: Any) -> tuple[list[Tensor], Callable[[list[Tensor]], Any]]:
    """Outputs as a flat tensor list, and how to rebuild the caller's structure."""
    if isinstance(out, Tensor):
        return [out], lambda flat: flat[0]
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        kind = type(out)
        return list(out), lambda flat: kind(flat)
    raise TypeError("make_graphed_callables: outputs must be a Tensor or a tuple/list of "
                    f"Tensors, got {type(out).__name__}")


def _graph_one(fn: Callable[..., Any], args: tuple[Tensor, ...], num_warmup_iters: int,
               pool: tuple[int, int]) -> Callable[..., Any]:
    side = streams.Stream()
    side.wait_stream(streams.current_stream())
    with streams.stream(side):
        for _ in range(num_warmup_iters):  # warmup: eager, so lazy init happens outside capture
            fn(*args)
    streams.current_stream().wait_stream(side)
    g = CUDAGraph()
    with graph(g, pool=pool):
        static_out = fn(*args)
    static_outputs, rebuild = _flatten(static_out)
    static_inputs = args

    def graphed(*user_args: Tensor) -> Any:
        if len(user_args) != len(static_inputs):
            raise TypeError(f"graphed callable takes {len(static_inputs)} tensor arguments, got "
                            f"{len(user_args)}")
        for static, new in zip(static_inputs, user_args, strict=True):
            if static.data_ptr() != new.data_ptr():  # a copy only when the address differs
                static.copy_(new)
        g.replay()
        return rebuild([o.detach() for o in static_outputs])

    graphed.cuda_graph = g  # type: ignore[attr-defined]
    return graphed


def make_graphed_callables(callables: Any, sample_args: Any, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False,
                           pool: tuple[int, int] | None = None) -> Any:
    """Graph each callable (function or nn.Module) with its sample arguments; modules get a
    forward that replays while their training flag equals the one at capture."""
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise AssertionError("callables and sample_args must have the same length")
    for args in sample_args:
        if not isinstance(args, (tuple, list)) or not all(isinstance(a, Tensor) for a in args):
            raise AssertionError("In the beta API, sample_args for each callable must contain "
                                 "only Tensors. Other types are not allowed.")
    shared_pool = graph_pool_handle() if pool is None else pool
    results = []
    for fn, args in zip(callables, sample_args, strict=True):
        module_hooks = [getattr(fn, name, None) for name in
                        ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks")]
        if any(module_hooks):
            raise AssertionError("Modules must not have hooks registered at the time they are "
                                 "passed. However, registering hooks on modules after passing "
                                 "them through make_graphed_callables is allowed.")
        graphed = _graph_one(fn, tuple(args), num_warmup_iters, shared_pool)
        if hasattr(fn, "forward") and hasattr(fn, "training"):
            results.append(_graph_module(fn, graphed))
        else:
            results.append(graphed)
    return results[0] if just_one else tuple(results)


def _graph_module(module: Any, graphed: Callable[..., Any]) -> Any:
    training_at_capture = module.training
    eager_forward: Callable[..., Any] = module.forward

    def forward(*user_args: Any) -> Any:
        if module.training == training_at_capture:
            return graphed(*user_args)
        return eager_forward(*user_args)

    module.forward = forward
    return module


__all__ = ["make_graphed_callables"]
