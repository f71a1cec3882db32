"""`torch.tensor(<Python data>)` inside a torch.compile'd function: a graph constant made at
compile time (fake_torch/_inductor/_tensor_constants.py), as aot_autograd + inductor
make it: no host-to-device copy per call, so CUDA-graph capture (mode="reduce-overhead")
accepts it. transformers' sliding-window cache (Gemma2 under generate's static-cache compile)
writes its KV cache through `torch.tensor([-1], dtype=int, device=...)` so. Values against real
torch CPU eagerly; launches against the eager path."""

from __future__ import annotations

from typing import Any

import pytest
from oracles import launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def _step(lib: Any, cache: Any, v: Any) -> Any:
    """A sliding-window cache write: roll left, write the new row at the last slot through a
    constant index tensor, copy back in place; plus a constant of several values."""
    idx = lib.tensor([-1], dtype=int, device=cache.device)
    new = cache.roll(-1, dims=-2)
    new[:, idx] = v
    cache.copy_(new)
    return cache * lib.tensor([[1.0, 2.0]], device=cache.device) + \
        lib.tensor(0.5, device=cache.device)


def _run(lib: Any, step: Any, device: str, static: bool = False) -> list[Any]:
    cache = lib.arange(12.0, device=device).reshape(1, 6, 2)
    if static:
        lib._dynamo.mark_static_address(cache)  # as transformers marks its StaticCache
    outs = []
    for i in range(4):
        outs.append(step(cache, lib.full((1, 1, 2), float(i), device=device)).tolist())
    return [outs, cache.tolist()]


@pytest.mark.parametrize("mode", ["default", "reduce-overhead"])
def test_compiled_constant_tensors_give_torchs_values(mode: str) -> None:
    ft._dynamo.reset()
    compiled = ft.compile(lambda c, v: _step(ft, c, v), mode=mode, fullgraph=True)
    ours = _run(ft, compiled, "cuda", static=True)
    assert ours == _run(torch, lambda c, v: _step(torch, c, v), "cpu")


def test_compiled_call_copies_nothing_from_the_host() -> None:
    """Eagerly each torch.tensor(...) on cuda is a host-to-device copy_; compiled, the
    constants were uploaded at compile time: the call is the fused kernels alone."""
    ft._dynamo.reset()
    cache = ft.arange(12.0, device="cuda").reshape(1, 6, 2)
    v = ft.ones(1, 1, 2, device="cuda")
    with launches() as eager:
        _step(ft, cache, v)
    assert eager.count("copy_") == 4  # three constants uploaded, the copy back
    compiled = ft.compile(lambda c, x: _step(ft, c, x), fullgraph=True)
    compiled(cache, v)  # compiles: the constants' uploads happen here
    with launches() as names:
        compiled(cache, v)
    assert "copy_" not in names and names, names


def test_reduce_overhead_replays_one_graph_per_call() -> None:
    ft._dynamo.reset()
    cache = ft.arange(12.0, device="cuda").reshape(1, 6, 2)
    ft._dynamo.mark_static_address(cache)
    compiled = ft.compile(lambda c, x: _step(ft, c, x), mode="reduce-overhead", fullgraph=True)
    v = ft.ones(1, 1, 2, device="cuda")
    for _ in range(3):  # warm-up, record, replay
        compiled(cache, v)
    ft.LaunchCounter.reset()
    compiled(cache, v)
    # the replay, and the copy of v (not a static input) into the graph's input slot
    assert dict(ft.LaunchCounter.by_op) == {"cudaGraphLaunch": 1, "_foreach_copy_": 1}
