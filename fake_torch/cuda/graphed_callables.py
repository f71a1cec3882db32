"""torch.cuda.make_graphed_callables, for inference: warm up, capture, replay with input copies.

As in torch: the sample arguments of each callable may be any pytree (nested tuples, lists,
dicts) whose leaves are tensors; they are flattened as torch.utils._pytree flattens them, and
so are the outputs, which come back in the structure the capture returned. Every callable
warms up first (`num_warmup_iters` calls each, on a side stream), then each is captured in
order into one shared memory pool.

fake_torch has no autograd, so only the forward graph exists; the returned callables copy a new
input into the static input only when its address differs (a caller that writes into the static
inputs itself pays no copy), replay once, and return the static outputs (detached views that the
next call overwrites, as in torch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch._tensor import Tensor
from fake_torch.amp._state import is_autocast_cache_enabled, is_autocast_enabled
from fake_torch.cuda import _device_queries, streams
from fake_torch.cuda.graphs import CUDAGraph, graph, graph_pool_handle
from fake_torch.utils import _pytree


def _check_callable(fn: Any, args: Any) -> list[Tensor]:
    """torch's checks of one callable and its sample arguments; their tensors, flattened."""
    if hasattr(fn, "_forward_hooks") and any(getattr(fn, name, None) for name in (
            "_forward_hooks", "_forward_pre_hooks", "_backward_hooks")):
        raise AssertionError("Modules must not have hooks registered at the time they are "
                             "passed. However, registering hooks on modules after passing them "
                             "through make_graphed_callables is allowed.")
    buffers = getattr(fn, "buffers", None)
    if hasattr(fn, "_forward_hooks") and callable(buffers) and any(
            b.requires_grad for b in buffers()):
        raise AssertionError("In any :class:`~torch.nn.Module` passed to "
                             ":func:`~make_graphed_callables`, only parameters may be trainable. "
                             "All buffers must have ``requires_grad=False``.")
    leaves = _pytree.tree_leaves(tuple(args) if isinstance(args, (tuple, list)) else (args,))
    if not all(isinstance(leaf, Tensor) for leaf in leaves):
        raise AssertionError("In the beta API, sample_args for each callable must contain only "
                             "Tensors. Other types are not allowed.")
    return leaves


def _graphed(g: CUDAGraph, static_inputs: list[Tensor], out: Any) -> Callable[..., Any]:
    """The replaying callable: copy what moved into the static inputs, replay, hand back the
    static outputs in the captured structure."""
    static_outputs, spec = _pytree.tree_flatten(out)
    for leaf in static_outputs:
        if not isinstance(leaf, Tensor):
            raise TypeError("make_graphed_callables: the outputs must be tensors (in any nesting "
                            f"of tuples, lists and dicts), got a {type(leaf).__name__}")

    def graphed(*user_args: Any) -> Any:
        inputs = _pytree.tree_leaves(user_args)
        if len(inputs) != len(static_inputs):
            raise TypeError(f"graphed callable takes {len(static_inputs)} tensors (flattened), "
                            f"got {len(inputs)}")
        for static, new in zip(static_inputs, inputs, strict=True):
            if static.data_ptr() != new.data_ptr():  # a copy only when the address differs
                static.copy_(new)
        g.replay()
        return _pytree.tree_unflatten([o.detach() for o in static_outputs], spec)

    graphed.cuda_graph = g  # type: ignore[attr-defined]
    return graphed


def make_graphed_callables(callables: Any, sample_args: Any, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False,
                           pool: tuple[int, int] | None = None) -> Any:
    """Graph each callable (function or nn.Module) with its sample arguments; modules get a
    forward that replays while their training flag equals the one at capture."""
    if is_autocast_enabled() and is_autocast_cache_enabled():
        # a cast cached during capture would be freed when autocast's block exits, while the
        # graph still reads it
        raise RuntimeError("make_graphed_callables does not support the autocast caching. "
                           "Please set `cache_enabled=False`.")
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise AssertionError("callables and sample_args must have the same length")
    flat_args = [_check_callable(fn, args) for fn, args in zip(callables, sample_args,
                                                               strict=True)]
    shared_pool = graph_pool_handle() if pool is None else pool
    # warmup: eager, on a side stream, so lazy initialisation happens outside any capture
    _device_queries.synchronize()
    with streams.stream(streams.Stream()):
        for fn, args in zip(callables, sample_args, strict=True):
            for _ in range(num_warmup_iters):
                fn(*args)
    _device_queries.synchronize()
    # capture: every forward, in the order they will run, into the one pool
    results = []
    for fn, args, static_inputs in zip(callables, sample_args, flat_args, strict=True):
        g = CUDAGraph()
        with graph(g, pool=shared_pool):
            out = fn(*args)
        graphed = _graphed(g, static_inputs, out)
        results.append(_graph_module(fn, graphed) if hasattr(fn, "forward")
                       and hasattr(fn, "training") else graphed)
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
