"""A captured input freed after capture is a hazard only where its memory can go to another tensor.

vLLM's piecewise CUDA graphs (examples/vllm_runner) share one pool: piece N's output, made by
piece N's capture, is piece N+1's captured input, and the runner drops it once the capture's
forward pass is over. Its block goes back to the graphs' private pool, not to the cache: eager
code never allocates from that pool, and piece N's replay rewrites the block before piece N+1
reads it. On an H200 (torch 2.11, cu130) the same program showed each case tested here:
  - the freed block's state in the pool snapshot: "inactive"; 50 eager allocations of its size
    never got its address; g1, g2 replays stayed correct for new inputs (the chain below);
  - a later capture into the pool took the block: replaying g1, g3, g2 gave o2 = 101 (not 3),
    and g1, g2 again gave 3 (the out-of-order test below);
  - a freed default-pool input: the next tensor got its address, and the replay computed 14
    (7 * 2) instead of 2 (tests/test_cuda_sanitizer.py's dead-input tests).
So the sanitizer raises "dead tensor(s)" only for memory the allocator may hand out again, and a
replay order that overwrote the freed block as the overwrite it is. torch's own opt-in
`check_input_liveness` exempts only an address inside an *active* block of the graph's pool, so
it still raises on the chain (the freed block is "inactive"), as torch 2.13 does.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import fake_torch as torch
from fake_torch._simulated._allocator import CachingAllocator
from fake_torch._tools._bench_graphs import _torch_is_fake_torch
from fake_torch.cuda import CUDAGraph

DEAD_INPUT = "CUDA graph replay detected 1 dead tensor(s)."
OVERWRITTEN = "replay them in the order they were captured, or keep the input alive"
N = 1 << 10
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _np(t: torch.Tensor) -> np.ndarray:
    return t.numpy(force=True)


def _chain(x: torch.Tensor, pool: tuple[int, int] | None = None
           ) -> tuple[CUDAGraph, CUDAGraph, torch.Tensor, int]:
    """g1: o1 = x * 2; g2: o2 = o1 + 1, captured into one pool (g1's unless `pool`); o1 is
    dropped after the captures, as vLLM's runner drops a piece's output. (g1, g2, o2, o1's
    address)"""
    pool = pool if pool is not None else torch.cuda.graph_pool_handle()
    g1, g2 = CUDAGraph(), CUDAGraph()
    with torch.cuda.graph(g1, pool=pool):
        o1 = x * 2
    with torch.cuda.graph(g2, pool=pool):
        o2 = o1 + 1
    address = o1.data_ptr()
    del o1
    return g1, g2, o2, address


@pytest.mark.usefixtures("fresh_device", "sanitizer")
def test_a_freed_output_of_an_earlier_graph_of_the_pool_is_no_dead_input() -> None:
    x = torch.full((N,), 1.0, device="cuda")
    g1, g2, o2, address = _chain(x)
    churn = [torch.full((N,), 9.0, device="cuda") for _ in range(50)]  # eager allocations
    assert all(t.data_ptr() != address for t in churn)  # never get the pool's block
    for v in (1.0, 3.0, 5.0):
        x.fill_(v)
        g1.replay()
        g2.replay()  # raised "dead tensor(s)" before
        np.testing.assert_array_equal(_np(o2), _np(x * 2 + 1))  # eager's values
    assert o2.tolist()[:2] == [11.0, 11.0]


@pytest.mark.usefixtures("fresh_device", "sanitizer")
def test_a_later_capture_reusing_the_block_then_an_out_of_order_replay_raises() -> None:
    x = torch.full((N,), 1.0, device="cuda")
    g1, g2, o2, address = _chain(x)
    g3 = CUDAGraph()
    with torch.cuda.graph(g3, pool=g1.pool()):
        t = torch.full((N,), 100.0, device="cuda")  # takes o1's freed block
        o3 = t + x
    assert t.data_ptr() == address
    del t
    g1.replay()
    g3.replay()
    with pytest.raises(RuntimeError, match=r"^fake_torch sanitizer: the replay of .* overwrote "
                                           r"it since\.") as info:
        g2.replay()  # a GPU reads g3's 100s: o2 = 101
    assert OVERWRITTEN in str(info.value)
    g1.replay()  # the capture order: g1 writes the block again, g2 reads it
    g2.replay()
    np.testing.assert_array_equal(_np(o2), [3.0] * N)
    np.testing.assert_array_equal(_np(o3), [101.0] * N)


@pytest.mark.usefixtures("fresh_device", "no_sanitizer")
def test_the_out_of_order_replay_is_silent_and_wrong_by_default() -> None:
    x = torch.full((N,), 1.0, device="cuda")
    g1, g2, o2, address = _chain(x)
    g3 = CUDAGraph()
    with torch.cuda.graph(g3, pool=g1.pool()):
        t = torch.full((N,), 100.0, device="cuda")
        o3 = t + x
    assert t.data_ptr() == address
    for g in (g1, g3, g2):
        g.replay()
    np.testing.assert_array_equal(_np(o2), [101.0] * N)  # what the H200 computed
    del o3


@pytest.mark.usefixtures("sanitizer")
def test_a_freed_input_in_a_released_pool_handed_out_again_raises(
        fresh_device: CachingAllocator) -> None:
    """g2 (its own pool) reads g1's output; once g1 is gone its pool is released, and
    empty_cache gives the segment back: the memory may go to any tensor. Dead, as a GPU sees."""
    x = torch.full((N,), 1.0, device="cuda")
    g1 = CUDAGraph()
    with torch.cuda.graph(g1):
        o1 = x * 2
    g2 = CUDAGraph()
    with torch.cuda.graph(g2):  # a private pool of its own
        o2 = o1 + 1
    g1.replay()
    del o1
    g2.replay()  # g1's pool still owns the block: not a dead input yet
    np.testing.assert_array_equal(_np(o2), [3.0] * N)
    del g1
    torch.cuda.empty_cache()
    assert not any(p.id == (1, 0) for p in fresh_device.pools.values())  # g1's pool is gone
    with pytest.raises(RuntimeError, match="^" + re.escape(DEAD_INPUT)):
        g2.replay()


@pytest.mark.usefixtures("fresh_device", "sanitizer")
def test_a_freed_default_pool_input_reused_by_another_tensor_still_raises() -> None:
    tmp = torch.full((N,), 1.0, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = tmp * 2
    address = tmp.data_ptr()
    del tmp
    other = torch.full((N,), 7.0, device="cuda")
    assert other.data_ptr() == address  # the cache handed the block out again
    with pytest.raises(RuntimeError, match="^" + re.escape(DEAD_INPUT)):
        g.replay()
    del y


@pytest.mark.usefixtures("fresh_device", "no_sanitizer")
def test_torchs_check_input_liveness_still_flags_the_inactive_pool_block() -> None:
    """torch 2.13's check exempts a dead input only inside an active block of the graph's
    pool; the freed output is an inactive one (the H200's snapshot said so)."""
    x = torch.ones(N, device="cuda")
    pool = torch.cuda.graph_pool_handle()
    h1, h2 = CUDAGraph(), CUDAGraph()
    with torch.cuda.graph(h1, pool=pool, check_input_liveness=True):
        q1 = x * 2
    with torch.cuda.graph(h2, pool=pool, check_input_liveness=True):
        q2 = q1 + 1
    h1.replay()
    h2.replay()  # q1 alive: fine
    del q1
    h1.replay()
    with pytest.raises(RuntimeError, match="^" + re.escape(DEAD_INPUT)):
        h2.replay()
    h3 = CUDAGraph()  # a capture allocating the freed block makes it active again: exempt
    with torch.cuda.graph(h3, pool=pool):
        r = torch.full((N,), 5.0, device="cuda")
    h2.replay()
    del q2, r


# --- the vLLM-style runner, served with the sanitizer on -------------------------------------

def _load(name: str) -> ModuleType:
    with _torch_is_fake_torch():
        if str(EXAMPLES) not in sys.path:
            sys.path.insert(0, str(EXAMPLES))
        return importlib.import_module(f"vllm_runner.{name}")


@pytest.mark.usefixtures("sanitizer")
def test_the_vllm_runner_serves_every_mode_under_the_sanitizer_as_eager_does() -> None:
    model_mod, serve_mod, scheduler_mod = _load("model"), _load("serve"), _load("scheduler")
    torch.manual_seed(0)  # (model_mod.LlamaConfig: examples/llama.py's, as the runner imported it)
    model = model_mod.FlatLlama(model_mod.LlamaConfig(num_layers=2)).cuda().eval()
    requests = scheduler_mod.make_requests(6, 256, seed=1)
    eager, results = serve_mod.run_all_modes(model, requests, 4)  # raised "dead tensor(s)"
    assert {r.uniform_decode for r in eager.records} == {True, False}  # mixed and decode steps
    assert any(res.num_graphs for res in results)
    for res in results:
        assert res.outputs == eager.outputs, res.label
        for a, b in zip(res.logits, eager.logits, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-4, rtol=0)


def _producer(graph: CUDAGraph, t: torch.Tensor) -> CUDAGraph | str | None:
    """The graph `graph`'s capture records as the maker of `t`'s memory (its replays write
    it), None if none; "not an input" when the capture did not read `t` as an input."""
    from fake_torch._simulated import _machine

    storage = _machine.MACHINE.storage_of(t._a)
    for captured in graph._inputs:
        if captured.ref() is storage:
            return captured.producer() if captured.producer is not None else None
    return "not an input"


@pytest.mark.usefixtures("fresh_device")
def test_a_captured_inputs_producer_is_the_live_graph_whose_current_capture_made_it() -> None:
    # (what the out-of-order check above reads; found by a lookup, not a search of the pool)
    x = torch.full((N,), 1.0, device="cuda")
    pool = torch.cuda.graph_pool_handle()
    g1, g2, g3, g4 = CUDAGraph(), CUDAGraph(), CUDAGraph(), CUDAGraph()
    with torch.cuda.graph(g1, pool=pool):
        o1 = x * 2
    with torch.cuda.graph(g2, pool=pool):
        o2 = o1 + 1
    assert _producer(g2, o1) is g1
    assert _producer(g1, x) is None  # made outside any capture
    assert _producer(g2, o2) == "not an input"  # its own output
    g1.reset()  # g1's capture is gone: o1, still alive, has no producer any more
    with torch.cuda.graph(g3, pool=pool):
        o3 = o1 + o2
    assert _producer(g3, o1) is None
    assert _producer(g3, o2) is g2
    with torch.cuda.graph(g1, pool=pool):  # g1 captures again: a producer of its new outputs
        o4 = x * 3
    with torch.cuda.graph(g4, pool=pool):
        o5 = o1 + o4
    assert (_producer(g4, o1), _producer(g4, o4)) == (None, g1)
    del o3, o5
