"""The caching allocator of pinned host memory (fake_torch/_simulated/_host_allocator.py) against
torch's CachingHostAllocator: block sizes and reuse, events of non-blocking copies, the CUDA-graph
private pools, empty_cache, and torch.cuda.host_memory_stats().

Real torch's CPU build cannot pin memory (its host_memory_stats() is {}), so the oracle is
ATen's source, cited per test: ATen/core/CachingHostAllocator.h (CachingHostAllocatorImpl:
allocate, free, record_event, process_events, empty_cache, getStats) and
ATen/cuda/CachingHostAllocator.cpp. Every test runs on a fresh device, whose pinned allocator
(and allocator settings) are a new process's.
"""

from __future__ import annotations

import gc

import pytest

import fake_torch as ft
from fake_torch.cuda import CUDAGraph, _device_queries

pytestmark = pytest.mark.usefixtures("fresh_device")
KB = 1024


@pytest.fixture(autouse=True)
def cuda_initialised() -> None:
    ft.cuda.init()  # host_memory_stats() is {} before CUDA is initialised, as in torch


def _pinned(nbytes: int) -> ft.Tensor:
    return ft.empty(nbytes, dtype=ft.uint8, pin_memory=True)


# --- sizes and reuse ------------------------------------------------------------------------------

def test_requests_round_up_to_a_power_of_two_and_the_last_freed_block_serves_first() -> None:
    # allocate(): PowerOf2Ceil(size), then get_free_block takes the free list's back
    a, b = _pinned(40_000), _pinned(65_536)
    pa, pb = a.data_ptr(), b.data_ptr()
    assert pa != pb and ft.cuda.host_memory_stats()["allocated_bytes.current"] == 2 * 65_536
    del a, b  # free(): a then b onto the 64 KiB free list
    c = _pinned(33_000)  # also a 64 KiB block: the back of the list is b's
    assert c.data_ptr() == pb
    assert _pinned(50_000).data_ptr() == pa
    assert _pinned(65_537).data_ptr() not in (pa, pb)  # 128 KiB: a new block
    assert ft.cuda.host_memory_stats()["num_host_alloc"] == 3


def test_a_view_keeps_the_block_and_pin_memory_copies_take_blocks_too() -> None:
    t = ft.arange(8.0).pin_memory()  # 32 bytes of floats: a 32-byte block
    address, view = t.data_ptr(), t[2:]
    del t
    assert _pinned(32).data_ptr() != address  # the view still holds the block
    assert view.is_pinned() and view.data_ptr() == address + 8
    del view
    again = ft.ones(8).pin_memory()
    assert again.data_ptr() == address and again.is_pinned()
    assert ft.cuda.host_memory_stats()["num_host_alloc"] == 2


def test_a_non_blocking_copy_holds_the_block_until_the_next_allocation_processes_events() -> None:
    # copy_kernel_cuda records an event of the current stream (record_event); free() queues the
    # block behind it; an allocate() processes the events the device has reached, first
    host = _pinned(100)  # a 128-byte block
    address = host.data_ptr()
    dev = ft.zeros(100, dtype=ft.uint8, device="cuda")
    ft.cuda._sleep(1_000_000)  # the stream lags: the copy lands ~0.5 ms (simulated) from now
    dev.copy_(host, non_blocking=True)
    del host
    assert ft.cuda.host_memory_stats()["active_requests.current"] == 1
    early = _pinned(128)  # the event is not reached yet: the block is not reused
    assert early.data_ptr() != address
    ft.cuda.synchronize()
    assert _pinned(128).data_ptr() == address  # processed, then reused


def test_only_non_blocking_copies_of_the_pinned_tensor_itself_record_an_event() -> None:
    host = ft.ones(4).pin_memory()
    dev = ft.zeros(4, device="cuda")
    dev.copy_(host)  # blocking: memcpy_and_sync, no event
    dev.copy_(host.double(), non_blocking=True)  # a pageable temporary
    address = host.data_ptr()
    del host
    stats = ft.cuda.host_memory_stats()
    # freed straight onto the free list: c10 leaves the active counts as they were
    assert (stats["active_requests.current"], stats["active_requests.freed"]) == (1, 0)
    assert ft.ones(4).pin_memory().data_ptr() == address


# --- statistics -----------------------------------------------------------------------------------

def test_host_memory_stats_count_as_getStats() -> None:
    assert set(ft.cuda.host_memory_stats()) == {
        f"{stat}.{field}" for stat in ("allocations", "allocated_bytes", "active_requests",
                                       "active_bytes")
        for field in ("current", "peak", "allocated", "freed")} | {
        f"{t}.{field}" for t in ("host_alloc_time", "host_free_time")
        for field in ("total", "max", "min", "count", "avg")} | {"num_host_alloc",
                                                                  "num_host_free"}
    t1 = ft.ones(10 * KB, pin_memory=True)  # 40 KiB -> a 64 KiB block
    t2 = ft.ones(20 * KB, pin_memory=True)  # 80 KiB -> 128 KiB
    stats = ft.cuda.host_memory_stats()
    for key in ("allocations", "active_requests"):
        assert [stats[f"{key}.{f}"] for f in ("current", "peak", "allocated", "freed")] == [
            2, 2, 2, 0]
    for key in ("allocated_bytes", "active_bytes"):
        assert stats[f"{key}.current"] == stats[f"{key}.peak"] == 192 * KB
    assert stats["num_host_alloc"] == stats["host_alloc_time.count"] == 2
    ft._C._host_emptyCache()  # both blocks in use: nothing to give back
    assert ft.cuda.host_memory_stats() == stats
    del t1, t2
    ft._C._host_emptyCache()  # free_from_pool: cudaFreeHost both
    stats = ft.cuda.host_memory_stats()
    assert (stats["allocations.current"], stats["allocated_bytes.current"]) == (0, 0)
    assert stats["num_host_free"] == stats["host_free_time.count"] == 2
    # a direct free leaves the active counts (only process_events lowers them)
    assert stats["active_requests.current"] == 2
    ft.cuda.reset_peak_host_memory_stats()
    ft.cuda.reset_accumulated_host_memory_stats()
    stats = ft.cuda.host_memory_stats()
    assert stats["allocations.peak"] == 0 and stats["num_host_alloc"] == 0
    assert stats["active_requests.peak"] == 2  # peaks reset to the current values
    assert stats["host_alloc_time.count"] == stats["host_free_time.count"] == 0


def test_a_block_freed_behind_events_lowers_active_counts_as_c10_does() -> None:
    # process_events passes size -1 ("any size") down: active_bytes "decreases" by -1
    host = _pinned(64)
    ft.zeros(64, dtype=ft.uint8, device="cuda").copy_(host, non_blocking=True)
    del host
    ft.cuda.synchronize()  # the device reaches the copy's event
    ft.accelerator.empty_host_cache()  # processes the event, then frees the block
    stats = ft.cuda.host_memory_stats()
    assert (stats["active_requests.current"], stats["active_requests.freed"]) == (0, 1)
    assert (stats["active_bytes.current"], stats["active_bytes.freed"]) == (65, -1)
    assert (stats["allocations.current"], stats["num_host_free"]) == (0, 1)


def test_host_memory_stats_are_empty_before_cuda_is_initialised(
        monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(_device_queries, "_initialized", False)
    assert ft.cuda.host_memory_stats() == torch.cuda.host_memory_stats() == {}
    assert ft.cuda.host_memory_stats_as_nested_dict() == {}


# --- CUDA graph capture ---------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_a_capture_takes_pinned_blocks_from_the_graphs_private_pool() -> None:
    outside = ft.empty(8, pin_memory=True)
    del outside  # cached in the default pool; torch.cuda.graph() gives it back first
    g = CUDAGraph()
    with ft.cuda.graph(g):
        data = ft.empty(8, pin_memory=True)
        inside = data.data_ptr()
        del data  # never used by a copy: straight back to the private pool
        assert ft.empty(8, pin_memory=True).data_ptr() == inside
    stats = ft.cuda.host_memory_stats()
    assert stats["num_host_free"] == 1 and stats["allocations.current"] == 1
    later = ft.empty(8, pin_memory=True)  # the default pool: not the private pool's block
    assert later.data_ptr() != inside


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_the_pool_follows_the_stream_a_stream_that_joined_the_capture_allocates_into_it() -> None:
    # the graph's allocate filter: the current stream's capture is the graph's
    joined, apart = ft.cuda.Stream(), ft.cuda.Stream()
    with ft.cuda.graph(CUDAGraph()):
        joined.wait_stream(ft.cuda.current_stream())
        with ft.cuda.stream(joined):
            a = ft.empty(8, pin_memory=True)
        with ft.cuda.stream(apart):
            b = ft.empty(8, pin_memory=True)
    address_a, address_b = a.data_ptr(), b.data_ptr()
    del a, b  # a back to the private pool, b to the default pool
    first = ft.empty(8, pin_memory=True)
    assert first.data_ptr() == address_b
    assert ft.empty(8, pin_memory=True).data_ptr() != address_a  # the graph's block stays its


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_a_block_a_capture_copied_is_never_reused() -> None:
    g = CUDAGraph()
    dev = ft.zeros(8, device="cuda")
    with ft.cuda.graph(g):
        data = ft.randn(8).pin_memory()
        dev.copy_(data, non_blocking=True)  # the graph's replays read these host bytes
        used = data.data_ptr()
        del data
        assert ft.randn(8).pin_memory().data_ptr() != used
    shared = CUDAGraph()
    with ft.cuda.graph(shared, pool=g.pool()):
        assert ft.randn(8).pin_memory().data_ptr() != used


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_graphs_sharing_a_pool_share_its_free_pinned_blocks_and_release_it_together() -> None:
    pool = ft.cuda.graph_pool_handle()
    g1, g2 = CUDAGraph(), CUDAGraph()
    with ft.cuda.graph(g1, pool=pool):
        data = ft.randn(8).pin_memory()
        address = data.data_ptr()
        del data
    with ft.cuda.graph(g2, pool=pool):
        kept = ft.randn(8).pin_memory()
    assert kept.data_ptr() == address
    del kept
    del g1
    gc.collect()  # (the counts below must not hang on when the collector frees a cycle)
    ft._C._host_emptyCache()  # g2 still holds the pool
    assert ft.cuda.host_memory_stats()["allocations.current"] == 1
    del g2
    gc.collect()
    ft._C._host_emptyCache()  # released by both: its free blocks go back
    assert ft.cuda.host_memory_stats()["allocations.current"] == 0


# --- allocator settings ---------------------------------------------------------------------------

def test_with_background_threads_events_wait_for_the_thread_to_start() -> None:
    # allocate(): the default pool leaves process_events to a background thread, which starts
    # at the first allocation that finds no free block
    host = _pinned(256)
    address = host.data_ptr()
    ft.zeros(256, dtype=ft.uint8, device="cuda").copy_(host, non_blocking=True)
    ft._C._accelerator_setAllocatorSettings("pinned_use_background_threads:True")
    del host
    ft.cuda.synchronize()  # the device reaches the copy's event
    second = _pinned(256)  # the event is not processed yet: a new block (the thread starts)
    assert second.data_ptr() != address
    assert _pinned(256).data_ptr() == address  # the thread has run since


def test_a_pinned_reserve_segment_hands_out_4k_pieces_in_order() -> None:
    # PinnedReserveSegment: cudaHostAlloc'd once, at the first new block; every request then
    # takes the next 4 KiB-rounded piece (no cudaHostAlloc, so no alloc time is counted)
    ft._C._accelerator_setAllocatorSettings("pinned_reserve_segment_size_mb:1")
    first, second = _pinned(100), _pinned(5000)
    assert second.data_ptr() - first.data_ptr() == 4096
    third = _pinned(9000)  # a 16 KiB block: two 4 KiB pieces after second's 8 KiB
    assert third.data_ptr() - second.data_ptr() == 8192
    stats = ft.cuda.host_memory_stats()
    assert stats["host_alloc_time.count"] == 1 and stats["num_host_alloc"] == 3
    del first
    ft._C._host_emptyCache()  # a reserve piece is never given back: no free time counted
    assert ft.cuda.host_memory_stats()["host_free_time.count"] == 0
