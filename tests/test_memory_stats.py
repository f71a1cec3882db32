"""torch.cuda.memory_stats() with c10's whole key set, memory_snapshot(), record_stream and the
allocator settings (PYTORCH_CUDA_ALLOC_CONF), against c10's CUDACachingAllocator.

The oracles: c10's rules written out again here (block rounding, splitting, what each stat
counts); the snapshot itself (every stat must be what the segments and blocks add up to); and,
for the settings parser, real torch: its CPU build links c10's AcceleratorAllocatorConfig, so
`torch._C._accelerator_setAllocatorSettings` checks the device-generic options exactly as on a
GPU. Every test runs on a fresh simulated device.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator

import pytest

import fake_torch as torch
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

MB = 1024**2
ARRAYS = ["allocation", "segment", "active", "inactive_split", "allocated_bytes",
          "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"]
POOL_TYPES = ["all", "small_pool", "large_pool"]
FIELDS = ["current", "peak", "allocated", "freed"]
SCALARS = ["max_split_size", "num_alloc_retries", "num_device_alloc", "num_device_free",
           "num_oom_rejections", "num_ooms", "num_sync_all_streams"]


def _bytes(n: int) -> torch.Tensor:
    return torch.empty(n, dtype=torch.uint8, device="cuda")


@pytest.fixture
def settings() -> Iterator[None]:
    """Allocator settings changed by the test are undone afterwards (the device is fresh, but
    real torch's c10 config is process-wide)."""
    yield
    real = sys.modules.get("torch")
    for lib in (torch, real) if real is not None and real is not torch else (torch,):
        # an empty string resets only three options: set the rest back explicitly first
        lib._C._accelerator_setAllocatorSettings("large_segment_size_mb:20,"
                                                 "max_non_split_rounding_mb:20")
        lib._C._accelerator_setAllocatorSettings("")


# --- the key set --------------------------------------------------------------------------------

def test_memory_stats_has_c10s_whole_key_set() -> None:
    expected = {f"{a}.{t}.{f}" for a in ARRAYS for t in POOL_TYPES for f in FIELDS}
    expected |= {f"oversize_{k}.{f}" for k in ("allocations", "segments") for f in FIELDS}
    expected |= set(SCALARS)
    stats = torch.cuda.memory_stats()
    assert set(stats) == expected and list(stats) == sorted(stats)
    assert all(isinstance(v, int) and v == 0 for k, v in stats.items() if k != "max_split_size")
    assert stats["max_split_size"] == -1  # c10's SIZE_MAX ("no limit") read as int64
    nested = torch.cuda.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["small_pool"] == {"current": 0, "peak": 0, "allocated": 0,
                                                       "freed": 0}
    assert nested["reserved_bytes_by_private_pools"] == {}
    # a private pool (a graph's) gets reserved-bytes figures of its own, keyed "1_0" when flat
    x = torch.ones(4, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        _ = x * 2
    flat = torch.cuda.memory_stats()
    assert flat["reserved_bytes_by_private_pools.1_0.all.current"] == 2 * MB
    assert flat["reserved_bytes_by_private_pools.1_0.small_pool.current"] == 2 * MB
    assert torch.cuda.memory_stats_as_nested_dict()["reserved_bytes_by_private_pools"][
        (1, 0)]["large_pool"]["current"] == 0
    # torch.accelerator's device-generic view leaves the CUDA-only entries out
    generic = torch.accelerator.memory_stats()
    assert set(generic) == {k for k in flat if not k.startswith(
        ("reserved_bytes_by_private_pools", "num_oom_rejections"))}
    assert torch.accelerator.memory_allocated() == torch.cuda.memory_allocated()


# --- every stat is what the snapshot adds up to --------------------------------------------------

def _check_against_snapshot() -> None:
    stats = torch.cuda.memory_stats()
    segments = torch.cuda.memory_snapshot()
    for kind in ("all", "small_pool", "large_pool"):
        segs = [s for s in segments if kind == "all" or s["segment_type"] == kind[:5]]
        blocks = [b for s in segs for b in s["blocks"]]
        split = [b for s in segs for b in s["blocks"] if len(s["blocks"]) > 1]
        active = [b for b in blocks if b["state"] != "inactive"]
        allocated = [b for b in blocks if b["state"] == "active_allocated"]
        inactive_split = [b for b in split if b["state"] == "inactive"]
        expected = {
            "segment": len(segs), "reserved_bytes": sum(s["total_size"] for s in segs),
            "allocation": len(allocated), "allocated_bytes": sum(b["size"] for b in allocated),
            "active": len(active), "active_bytes": sum(b["size"] for b in active),
            "requested_bytes": sum(b["requested_size"] for b in active),
            "inactive_split": len(inactive_split),
            "inactive_split_bytes": sum(b["size"] for b in inactive_split)}
        for name, value in expected.items():
            assert stats[f"{name}.{kind}.current"] == value, (name, kind)
            assert stats[f"{name}.{kind}.current"] == (
                stats[f"{name}.{kind}.allocated"] - stats[f"{name}.{kind}.freed"]), (name, kind)
            assert stats[f"{name}.{kind}.peak"] >= value
    for s in segments:
        assert s["total_size"] == sum(b["size"] for b in s["blocks"])
        assert [b["address"] for b in s["blocks"]] == [
            s["address"] + sum(b["size"] for b in s["blocks"][:i]) for i in range(len(s["blocks"]))]


def test_every_stat_is_what_the_snapshot_adds_up_to_through_random_traffic() -> None:
    rng = random.Random(13)
    live: list[torch.Tensor] = []
    side = torch.cuda.Stream()
    for step in range(300):
        if live and rng.random() < 0.45:
            live.pop(rng.randrange(len(live)))
        else:
            n = rng.choice([1, 700, 4096, 300_000, 900_000, 2 * MB + 3, 6 * MB, 12 * MB + 1])
            with torch.cuda.stream(side if rng.random() < 0.2 else None):
                live.append(_bytes(n))
        if step % 25 == 0:
            _check_against_snapshot()
        if step % 97 == 0:
            torch.cuda.empty_cache()
    _check_against_snapshot()
    del live
    _check_against_snapshot()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_stats()["reserved_bytes.all.current"] == 0


def test_the_figures_of_a_split_segment_by_c10s_rules() -> None:
    a, b = _bytes(1000), _bytes(600 * 1024)  # 1024 and 614400 bytes of one 2 MiB segment
    stats = torch.cuda.memory_stats()
    rest = 2 * MB - 1024 - 600 * 1024
    assert stats["inactive_split.small_pool.current"] == 1  # the free tail of the segment
    assert stats["inactive_split_bytes.all.current"] == rest
    assert stats["requested_bytes.all.current"] == 1000 + 600 * 1024
    assert stats["allocated_bytes.all.current"] == 1024 + 600 * 1024
    assert (stats["num_device_alloc"], stats["segment.all.current"]) == (1, 1)
    del a  # a free piece at the segment's start: a second inactive split
    stats = torch.cuda.memory_stats()
    assert stats["inactive_split.all.current"] == 2
    assert stats["inactive_split_bytes.all.current"] == rest + 1024
    assert (stats["allocation.all.freed"], stats["active.all.freed"]) == (1, 1)
    del b  # all three merge: one free block spanning the segment, no longer a split
    stats = torch.cuda.memory_stats()
    assert stats["inactive_split.all.current"] == 0 and stats["active_bytes.all.current"] == 0
    assert stats["inactive_split.all.peak"] == 2
    torch.cuda.empty_cache()
    stats = torch.cuda.memory_stats()
    assert (stats["num_device_free"], stats["num_sync_all_streams"]) == (1, 1)
    assert stats["segment.all.freed"] == 1 and stats["reserved_bytes.all.freed"] == 2 * MB


def test_peak_and_accumulated_resets() -> None:
    big = _bytes(3 * MB)
    del big
    small = _bytes(10)
    torch.cuda.reset_peak_memory_stats()
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.all.peak"] == 512 and stats["allocated_bytes.all.freed"] > 0
    assert stats["reserved_bytes.large_pool.peak"] == 20 * MB  # still reserved, cached
    torch.cuda.reset_accumulated_memory_stats()
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.all.allocated"] == stats["allocated_bytes.all.freed"] == 0
    assert stats["allocated_bytes.all.current"] == 512 and stats["num_device_alloc"] == 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.reset_max_memory_allocated()
    assert caught[0].category is FutureWarning
    assert torch.cuda.memory_cached() == torch.cuda.memory_reserved() == 22 * MB
    del small


# --- the snapshot's layout ----------------------------------------------------------------------

def test_memory_snapshot_has_c10s_layout() -> None:
    a = _bytes(100)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        b = _bytes(3 * MB)
    segments = torch.cuda.memory_snapshot()
    assert [s["address"] for s in segments] == sorted(s["address"] for s in segments)
    small = next(s for s in segments if s["segment_type"] == "small")
    large = next(s for s in segments if s["segment_type"] == "large")
    assert set(small) == {"device", "address", "total_size", "allocated_size", "active_size",
                          "requested_size", "stream", "segment_type", "segment_pool_id",
                          "is_expandable", "frames", "blocks"}
    assert small["blocks"][0] == {"address": a.data_ptr(), "size": 512, "requested_size": 100,
                                  "state": "active_allocated", "frames": []}
    assert small["blocks"][1]["state"] == "inactive" and small["stream"] == 0
    assert (small["segment_pool_id"], small["is_expandable"], small["device"]) == ((0, 0), False, 0)
    assert large["stream"] == side.cuda_stream and large["total_size"] == 20 * MB
    assert large["allocated_size"] == 3 * MB and large["requested_size"] == 3 * MB
    full = torch.cuda.memory._snapshot()
    assert set(full) == {"segments", "device_traces", "allocator_settings",
                         "external_annotations"}
    assert full["segments"] == segments and full["device_traces"] == [[]]
    assert full["allocator_settings"]["max_split_size"] == -1
    assert full["allocator_settings"]["roundup_power2_divisions"]["32768"] == 0
    x = torch.ones(4, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        _ = x + 1
    (graph_segment,) = torch.cuda.memory_snapshot(g.pool())
    assert graph_segment["segment_pool_id"] == (1, 0)
    del a, b


# --- streams: free blocks serve their stream; record_stream ---------------------------------------

def test_a_free_block_serves_only_its_own_stream() -> None:
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = _bytes(1000)
    addr = t.data_ptr()
    del t
    u = _bytes(1000)  # the default stream: the side stream's cached block is not for it
    assert u.data_ptr() != addr and torch.cuda.memory_reserved() == 4 * MB
    with torch.cuda.stream(side):
        assert _bytes(1000).data_ptr() == addr  # its own stream reuses it


def test_record_stream_holds_a_freed_block_until_the_allocator_next_looks() -> None:
    x = _bytes(1000)
    addr = x.data_ptr()
    side = torch.cuda.Stream()
    x.record_stream(side)
    x.record_stream(torch.cuda.current_stream())  # its own stream: ignored, as in c10
    del x
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == 0  # freed ...
    assert stats["active_bytes.all.current"] == 1024  # ... but still active: pending free
    (seg,) = torch.cuda.memory_snapshot()
    assert seg["blocks"][0]["state"] == "active_pending_free" and seg["active_size"] == 1024
    y = _bytes(1000)  # the next allocation finds the side stream's work done: reuse
    assert y.data_ptr() == addr
    assert torch.cuda.memory_stats()["active_bytes.all.current"] == 1024
    y.record_stream(torch.Stream())  # torch.Stream works too
    del y
    torch.cuda.empty_cache()  # synchronizes, frees, releases
    stats = torch.cuda.memory_stats()
    assert (stats["reserved_bytes.all.current"], stats["num_sync_all_streams"]) == (0, 1)


def test_record_stream_of_a_cpu_tensor_raises_torchs_error() -> None:
    real = pytest.importorskip("torch")
    with pytest.raises(NotImplementedError) as theirs:
        real.ones(2).record_stream(real.Stream())
    with pytest.raises(NotImplementedError) as ours:
        torch.ones(2).record_stream(torch.Stream())
    assert str(theirs.value).startswith(str(ours.value).split(" This could be")[0])


def test_a_block_freed_with_stream_uses_during_capture_waits_for_the_capture_to_end() -> None:
    x = torch.ones(1000, device="cuda")
    side = torch.cuda.Stream()
    g = CUDAGraph()
    with torch.cuda.graph(g):
        t = x * 2
        t.record_stream(side)
        addr = t.data_ptr()
        del t  # c10 defers its event until no capture is underway
        u = x * 3
        assert u.data_ptr() != addr  # not reused inside the capture
    del u
    assert torch.cuda.memory_stats()["active.all.current"] >= 1


def _capture_reuse(reuse: bool, joins: int) -> tuple[int, int, int, CUDAGraph]:
    """A capture on `main` frees `data` after two side streams read it (record_stream), then
    allocates once before `main` joins them back and once after `joins` of them joined.
    Returns (data's address, the two allocations' addresses, the graph)."""
    torch._C._accelerator_setAllocatorSettings(f"graph_capture_record_stream_reuse:{reuse}")
    main, side1, side2 = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
    g = CUDAGraph(keep_graph=True)
    with torch.cuda.stream(main):
        g.capture_begin()
        sink = torch.zeros(2, device="cuda")  # a node on main
        data = torch.ones(2, device="cuda")
        address = data.data_ptr()
        outs = []
        for side in (side1, side2):
            side.wait_stream(main)  # the side stream joins the capture
            with torch.cuda.stream(side):
                outs.append(data + 1)  # a node on the side stream that reads data
                data.record_stream(side)
        del data  # free markers: the terminals of main and of both side streams
        before = torch.empty(2, device="cuda")  # main has not waited for the side streams
        for side in (side1, side2)[:joins]:
            main.wait_stream(side)
        sink.add_(1)  # a node after the joins
        after = torch.empty(2, device="cuda")
        for side in (side1, side2)[joins:]:  # every fork joined back before the end (CUDA
            main.wait_stream(side)  # fails an unjoined one: "capturing stream has unjoined work")
        g.capture_end()
    return address, before.data_ptr(), after.data_ptr(), g


@pytest.mark.parametrize("joins", [0, 1, 2])
def test_graph_capture_record_stream_reuse_frees_a_block_once_its_streams_joined(
        joins: int, settings: None) -> None:
    # c10's free_safe_blocks_in_capture: every free marker must be an ancestor of the
    # allocating stream's terminals
    address, before, after, _ = _capture_reuse(True, joins)
    assert before != address
    assert (after == address) is (joins == 2)


def test_without_graph_capture_record_stream_reuse_the_block_waits_for_the_end(
        settings: None) -> None:
    address, before, after, _ = _capture_reuse(False, 2)
    assert address not in (before, after)

    def state() -> str:  # of the block holding data's address
        return next(b["state"] for seg in torch.cuda.memory_snapshot() for b in seg["blocks"]
                    if b["address"] <= address < b["address"] + b["size"])

    assert state() == "active_pending_free"  # until an allocation after the capture
    _bytes(8)
    assert state() == "inactive"  # (merged with its free neighbours)


def test_a_free_marker_needs_every_stream_that_used_the_block_to_be_capturing(
        settings: None) -> None:
    # record_free_markers: a stream outside the capture -> no markers -> deferred to the end
    torch._C._accelerator_setAllocatorSettings("graph_capture_record_stream_reuse:True")
    outside = torch.cuda.Stream()  # never joins the capture
    g = CUDAGraph()
    with torch.cuda.graph(g):
        data = torch.ones(2, device="cuda")
        address = data.data_ptr()
        data.record_stream(outside)
        del data
        torch.ones(2, device="cuda").add_(1)
        assert torch.empty(2, device="cuda").data_ptr() != address


# --- torch.cuda.caching_allocator_alloc / caching_allocator_delete -------------------------------

def test_caching_allocator_alloc_holds_a_block_until_caching_allocator_delete() -> None:
    side = torch.cuda.Stream()
    address = torch.cuda.caching_allocator_alloc(1000, stream=side)
    assert torch.cuda.memory_allocated() == 1024
    (seg,) = torch.cuda.memory_snapshot()
    assert (seg["stream"], seg["blocks"][0]["address"]) == (side.cuda_stream, address)
    torch.cuda.caching_allocator_delete(address)
    assert torch.cuda.memory_allocated() == 0
    assert torch.cuda.caching_allocator_alloc(1000, stream=side.cuda_stream) == address
    with pytest.raises(RuntimeError, match=f"^invalid device pointer: {address + 8:#x}$"):
        torch.cuda.caching_allocator_delete(address + 8)  # c10's free() of an unknown pointer
    with pytest.raises(TypeError, match=re.escape(
            "Invalid type for stream argument, must be `torch.cuda.Stream` or `int` "
            "representing a pointer to an existing stream")):
        torch.cuda.caching_allocator_alloc(8, stream="s")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^Expected a cuda device, but got: cpu$"):
        torch.cuda.caching_allocator_alloc(8, device="cpu")
    assert torch.cuda.caching_allocator_alloc(0) == 0  # raw_alloc of 0 bytes: nullptr
    torch.cuda.caching_allocator_delete(0)  # raw_delete(nullptr): nothing


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")
def test_caching_allocator_alloc_follows_the_streams_capture() -> None:
    g = CUDAGraph()
    side = torch.cuda.Stream()  # not part of the capture: its memory is the default pool's
    with torch.cuda.graph(g):
        captured = torch.cuda.caching_allocator_alloc(1000)
        eager = torch.cuda.caching_allocator_alloc(1000, stream=side)
    segments = torch.cuda.memory_snapshot()

    def pool_of(address: int) -> tuple[int, int]:
        return next(s["segment_pool_id"] for s in segments
                    if s["address"] <= address < s["address"] + s["total_size"])

    assert (pool_of(captured), pool_of(eager)) == (g.pool(), (0, 0))
    torch.cuda.caching_allocator_delete(captured)
    torch.cuda.caching_allocator_delete(eager)


# --- allocator settings ---------------------------------------------------------------------------

SETTINGS = [
    "max_split_size_mb:64", "max_split_size_mb:10", "max_split_size_mb:abc",
    "garbage_collection_threshold:0.6", "garbage_collection_threshold:1.5",
    "garbage_collection_threshold:abc", "roundup_power2_divisions:4",
    "roundup_power2_divisions:3", "roundup_power2_divisions:[256:1,512:2,>:8]",
    "roundup_power2_divisions:[3:1]", "roundup_power2_divisions:[256:3]",
    "roundup_power2_divisions:[256:1,512:2", "expandable_segments:yes",
    "expandable_segments:false", "max_split_size_mb", "max_split_size_mb;64",
    "large_segment_size_mb:10", "large_segment_size_mb:40,max_split_size_mb:30",
    "max_split_size_mb:30,large_segment_size_mb:40", "max_non_split_rounding_mb:5",
    "  max_split_size_mb : 64 ", ",max_split_size_mb:64,", ",max_split_size_mb:10,",
    "max_split_size_mb,64", "foo:1:2,max_split_size_mb:10", "foo:[1,2",
    "roundup_power2_divisions:[256,1]", "expandable_segments", "",
]


@pytest.mark.parametrize("env", SETTINGS)
def test_settings_are_checked_as_c10_checks_them(env: str, settings: None) -> None:
    real = pytest.importorskip("torch")
    try:
        real._C._accelerator_setAllocatorSettings(env)
        theirs: BaseException | None = None
    except Exception as e:  # the outcome under comparison
        theirs = e
    try:
        torch._C._accelerator_setAllocatorSettings(env)
        ours: BaseException | None = None
    except Exception as e:
        ours = e
    assert type(ours) is type(theirs), (theirs, ours)
    if theirs is not None:
        assert str(ours).split("\n")[0] == str(theirs).split("\n")[0].rstrip("\n")
    else:
        assert torch._C._accelerator_getAllocatorSettings() == env


def test_keys_the_cuda_allocator_does_not_know_are_refused(settings: None) -> None:
    # c10's CUDAAllocatorConfig (the CPU build has no such check: torch accepts "foo:1" there)
    with pytest.raises(ValueError, match=re.escape(
            "Unrecognized key 'foo' in CUDA allocator config.")):
        torch._C._accelerator_setAllocatorSettings("max_split_size_mb:64,foo:1")
    with pytest.raises(ValueError, match="per_process_memory_fraction is invalid"):
        torch._C._accelerator_setAllocatorSettings("per_process_memory_fraction:1.5")
    for accepted in ("release_lock_on_cudamalloc:True", "pinned_use_cuda_host_register:True",
                     "pinned_num_register_threads:8", "backend:native",
                     "expandable_segments:False", "graph_capture_record_stream_reuse:False"):
        torch._C._accelerator_setAllocatorSettings(accepted)
    assert torch.cuda.get_allocator_backend() == "native"


def test_what_fake_torch_does_not_simulate_raises_not_implemented(settings: None) -> None:
    for env in ("expandable_segments:True", "backend:cudaMallocAsync"):
        with pytest.raises(NotImplementedError, match=env.split(":")[0]):
            torch._C._accelerator_setAllocatorSettings(env)


def test_the_deprecated_setter_warns_as_torch(settings: None) -> None:
    real = pytest.importorskip("torch")
    for lib in (real, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.cuda.memory._set_allocator_settings("max_split_size_mb:64")
        assert [(w.category, str(w.message)) for w in caught] == [
            (FutureWarning, "torch.cuda._set_allocator_settings is deprecated. Use "
                            "torch._C._accelerator_setAllocatorSettings instead.")]
        assert lib._C._accelerator_getAllocatorSettings() == "max_split_size_mb:64"
    assert torch.cuda.memory_stats()["max_split_size"] == 64 * MB


def test_max_split_size_keeps_oversize_blocks_whole_and_apart(settings: None) -> None:
    def figures() -> tuple[int, int, int]:
        big = _bytes(30 * MB)
        del big  # a cached 30 MiB block
        small = _bytes(6 * MB)  # would split the cached block ... unless it is oversize
        stats = torch.cuda.memory_stats()
        del small
        out = (stats["reserved_bytes.all.current"], stats["oversize_segments.current"],
               stats["oversize_allocations.allocated"])
        torch.cuda.empty_cache()
        return out

    assert figures() == (30 * MB, 0, 0)  # default: the 30 MiB block serves the 6 MiB request
    torch._C._accelerator_setAllocatorSettings("max_split_size_mb:25")
    # 30 MiB >= 25: an oversize block serves no smaller request; a 20 MiB segment for 6 MiB
    assert figures() == (50 * MB, 1, 1)


def test_roundup_power2_divisions_rounds_requests(settings: None) -> None:
    def allocated(n: int) -> int:
        t = _bytes(n)
        size = torch.cuda.memory_allocated()
        del t
        return size

    n = MB + 100 * 1024  # 1.1 MiB
    assert allocated(n) == n  # a multiple of 512 already
    torch._C._accelerator_setAllocatorSettings("roundup_power2_divisions:4")
    assert allocated(n) == MB + MB // 4  # the next quarter step between 1 and 2 MiB
    assert allocated(3 * MB + 1) == 3 * MB + MB // 2  # between 2 and 4 MiB: steps of 512 KiB
    assert allocated(1000) == 1024  # below 512 * 4 bytes: plain rounding
    torch._C._accelerator_setAllocatorSettings("roundup_power2_divisions:[1:1,2:4,>:2]")
    assert allocated(n) == n  # 1 MiB's interval: no rounding
    assert allocated(3 * MB + 1) == 3 * MB + MB // 2  # 2 MiB's: quarters
    assert allocated(5 * MB) == 6 * MB  # beyond: halves (4 MiB + 2 MiB steps)


def test_a_memory_fraction_caps_reserved_memory_and_gc_gives_back_cache(settings: None) -> None:
    torch.cuda.set_simulated_device_memory(100 * MB)
    torch.cuda.set_per_process_memory_fraction(0.5)  # 50 MiB allowed
    assert torch.cuda.get_per_process_memory_fraction() == 0.5

    def reserved_after_churn() -> int:
        held = [_bytes(12 * MB) for _ in range(3)]  # three 12 MiB segments
        del held  # ... now cached
        t = _bytes(14 * MB)  # fits no cached block: a fourth segment
        reserved = torch.cuda.memory_reserved()
        del t
        torch.cuda.empty_cache()
        return reserved

    assert reserved_after_churn() == 50 * MB  # exactly the allowed 50 MiB: no GC without it
    torch._C._accelerator_setAllocatorSettings("garbage_collection_threshold:0.6")
    # past 60% of 50 MiB, c10 frees cached whole segments aged at least the average (here all)
    assert reserved_after_churn() == 14 * MB
    with pytest.raises(torch.cuda.OutOfMemoryError, match=re.escape(
            "CUDA out of memory. Tried to allocate 52.00 MiB. GPU 0 has a total capacity of "
            "100.00 MiB of which 100.00 MiB is free. 50.00 MiB allowed; ")):
        _bytes(52 * MB)
    with pytest.raises(TypeError, match="must be `float`"):
        torch.cuda.set_per_process_memory_fraction(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        torch.cuda.set_per_process_memory_fraction(1.5)


ENV_PROGRAM = """
import fake_torch as torch
t = torch.empty(1, device="cuda")
print(torch.cuda.memory_stats()["max_split_size"] // 2**20,
      torch._C._accelerator_getAllocatorSettings())
"""


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", ENV_PROGRAM], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", **env}, check=False)


def test_the_environment_variables_as_c10_reads_them() -> None:
    assert _run({"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64"}).stdout.split() == [
        "64", "max_split_size_mb:64"]
    # PYTORCH_CUDA_ALLOC_CONF comes first in c10's order, then PYTORCH_ALLOC_CONF
    both = _run({"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64",
                 "PYTORCH_ALLOC_CONF": "max_split_size_mb:128"})
    assert both.stdout.split()[0] == "64"
    assert _run({"PYTORCH_ALLOC_CONF": "max_split_size_mb:128"}).stdout.split()[0] == "128"
    bad = _run({"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:6"})  # checked at first use
    assert "ValueError: CachingAllocator option max_split_size_mb too small, must be >= 20" in (
        bad.stderr)
    expandable = _run({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    assert "NotImplementedError" in expandable.stderr and "expandable_segments" in (
        expandable.stderr)
