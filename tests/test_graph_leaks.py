"""Deleting a CUDA graph removes every trace of it: 2000 capture/replay/delete cycles leave the
process's object count where it was.

In torch a deleted graph releases its memory pool (c10's releasePool); once no graph uses the
pool, the next empty_cache frees its segments and erases the pool itself (release_cached_blocks
erases a freeable pool whose cudaMalloc_count is 0, CUDACachingAllocator.cpp). Nothing else of
the graph outlives it.
"""

from __future__ import annotations

import gc

import pytest

import fake_torch as torch
from fake_torch._simulated import _machine
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

CYCLES = 2000
NOISE = 100  # objects other tests' leftovers may free or make meanwhile; a leak is >= CYCLES


def _capture_replay_delete(x: torch.Tensor, pool: tuple[int, int] | None = None) -> None:
    g = CUDAGraph()
    with torch.cuda.graph(g, pool=pool):
        y = (x * 2 + 1).relu()
    g.replay()
    assert y.sum().item() == 3 * x.numel()
    del g, y


def _objects() -> int:
    gc.collect()
    return len(gc.get_objects())


def _registries() -> tuple[int, ...]:
    """The sizes of what records graphs: the pools' graph sets, the default generator state's
    registered graphs."""
    state = torch.cuda.default_generators[0]._state
    return len(_machine.current_device().graphs_by_pool), len(state.graphs)


def _drop_released_pools() -> None:
    """What c10's release_cached_blocks erases and fake_torch's allocator still keeps: a
    released pool with no segment left, and its statistics."""
    for pool_id, pool in list(_machine.current_device().allocator.pools.items()):
        if pool.released and not pool.segments:
            del _machine.current_device().allocator.pools[pool_id]
            _machine.current_device().allocator.stats.private_pools.pop(pool_id, None)


@pytest.mark.parametrize("shared_pool", [False, True])
def test_deleted_graphs_leave_no_entry_in_the_graph_registries(shared_pool: bool) -> None:
    x = torch.ones(16, device="cuda")
    pool = torch.cuda.graph_pool_handle() if shared_pool else None
    _capture_replay_delete(x, pool)  # warm: the first capture makes lasting state
    before = _registries()
    for _ in range(CYCLES // 10):
        _capture_replay_delete(x, pool)
    assert _registries() == before


@pytest.mark.parametrize("checks", ["no_sanitizer", "sanitizer"])
def test_deleted_graphs_leave_nothing_but_the_allocators_pool_entries(
        checks: str, request: pytest.FixtureRequest) -> None:
    request.getfixturevalue(checks)  # the sanitizer's books forget deleted graphs too
    x = torch.ones(16, device="cuda")
    _capture_replay_delete(x)
    torch.cuda.empty_cache()
    _drop_released_pools()
    baseline = _objects()
    for _ in range(CYCLES):
        _capture_replay_delete(x)
    torch.cuda.empty_cache()
    _drop_released_pools()
    assert _objects() - baseline < NOISE


def test_deleted_graphs_leave_the_object_count_at_its_baseline() -> None:
    x = torch.ones(16, device="cuda")
    _capture_replay_delete(x)
    torch.cuda.empty_cache()
    baseline = _objects()
    for _ in range(CYCLES):
        _capture_replay_delete(x)
    torch.cuda.empty_cache()
    assert _objects() - baseline < NOISE


def test_a_graph_of_a_replaced_device_leaves_the_new_devices_pool_of_its_id_alone() -> None:
    """Pool ids restart in a fresh simulated device (as in a new process): a graph left over
    from the state before, dying later, must not release the new state's pool of the same id
    (it did: a test's garbage graph collected during a later test emptied that test's pool)."""
    torch.cuda.init()  # (host_memory_stats() is {} before, as in torch)
    with torch.cuda.fresh_simulated_device():
        old_pool = torch.cuda.graph_pool_handle()
        old = CUDAGraph()
        with torch.cuda.graph(old, pool=old_pool):
            torch.ones(8, device="cuda").add_(1)
    with torch.cuda.fresh_simulated_device():
        pool = torch.cuda.graph_pool_handle()
        assert pool == old_pool  # the same id, in another allocator state
        g = CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            scratch = torch.empty(1024, device="cuda")  # dies in the capture: its segment
            scratch.fill_(1)  # stays reserved in g's pool while g holds the pool
            del scratch
            pinned = torch.randn(8).pin_memory()  # the pool's pinned block, likewise
            del pinned
        reserved = torch.cuda.memory_reserved()
        pinned_blocks = torch.cuda.host_memory_stats()["allocations.current"]
        del old
        gc.collect()
        torch.cuda.empty_cache()
        torch._C._host_emptyCache()
        assert torch.cuda.memory_reserved() == reserved
        assert torch.cuda.host_memory_stats()["allocations.current"] == pinned_blocks == 1
        del g
        torch.cuda.empty_cache()
        torch._C._host_emptyCache()
        assert torch.cuda.memory_reserved() < reserved  # released by its own graph: freed
        assert torch.cuda.host_memory_stats()["allocations.current"] == 0


def test_a_graph_keeps_no_reference_to_what_its_capture_freed() -> None:
    """The capture's intermediates, freed before capture_end, leave nothing in the graph (a
    piecewise runner captures thousands of graphs: their dead references were most of what
    every full garbage collection walked); what it still holds stays, and a replay makes it
    valid as before."""
    x = torch.ones(8, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = (x * 2 + 1).relu()  # two intermediates freed inside, y kept
    assert [ref() for ref in g._made] == [y.untyped_storage()._owner]
    g.replay()
    assert y.tolist() == [3.0] * 8
