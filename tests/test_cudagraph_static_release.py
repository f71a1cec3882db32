"""A CUDA-graph recording remembers its static inputs by address only (torch's CUDAGraphNode
keeps their data_ptrs, not the tensors). A tensor marked with mark_static_address (a
transformers StaticCache, made anew per generate()) that the caller drops is freed, so the
next one of the same size lands at the same address and the recorded graph replays for it.

Oracle: this very program run on an NVIDIA H200 with torch 2.11+cu130 printed
    drop  same ptr: True   recordings per call: [0,1,0,0, 0,0,0,0, 0,0,0,0]  graphs: 1
    keep  same ptr: False  recordings per call: [0,1,0,0, 1,0,0,0, 1,0,0,0]  graphs: 1
(the first call warms up, the second records; a cache at a new address is recorded again).
fake_torch held every recorded static input alive, so a dropped cache's memory was never
reused and each new cache was recorded again.
"""

from __future__ import annotations

from typing import Any

import pytest

import fake_torch as ft
from fake_torch._dynamo.utils import counters

torch: Any = ft  # (mypy sees fake_torch's ops through its module __getattr__)


class Cache:
    def __init__(self) -> None:
        self.k = torch.zeros(4, 8, device="cuda")
        torch._dynamo.mark_static_address(self.k)


def _step(x: Any, cache: Cache) -> Any:
    cache.k.add_(x)
    return cache.k.sum(0)


@pytest.mark.parametrize(("keep", "same_address", "recordings"), [
    (False, True, [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    (True, False, [0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]),
])
def test_a_dropped_static_cache_frees_its_memory_and_its_successor_replays(
        keep: bool, same_address: bool, recordings: list[int]) -> None:
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(_step, mode="reduce-overhead")
    kept: list[Cache | None] = []
    recorded: list[int] = []
    addresses = []
    cache = None
    for _generate in range(3):
        if keep:
            kept.append(cache)
        cache = None  # the caller drops the old cache before making the next
        cache = Cache()
        addresses.append(cache.k.data_ptr())
        for i in range(4):
            before = counters["inductor"]["cudagraph_recorded_non_static_inputs"]
            compiled(torch.full((4, 8), float(i), device="cuda"), cache)
            recorded.append(counters["inductor"]["cudagraph_recorded_non_static_inputs"] - before)
        assert cache.k.sum().item() == 4 * 8 * (0 + 1 + 2 + 3)
    assert (len(set(addresses)) == 1) == same_address
    assert recorded == recordings
    assert counters["stats"]["unique_graphs"] == 1
