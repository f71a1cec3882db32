"""The simulated caching allocator, seen through torch.cuda's memory API, against c10's rules.

The expected figures are computed here from the rules of c10's CUDACachingAllocator, written
out again independently of fake_torch/_simulated/_allocator.py:
  - a request rounds up to a multiple of 512 bytes (at least 512);
  - requests up to 1 MiB come from 2 MiB segments (the small pool), larger ones below 10 MiB
    from 20 MiB segments, and from 10 MiB on a segment is the request rounded up to 2 MiB;
  - a free block is split when the rest is >= 512 bytes (small) or > 1 MiB (large); otherwise
    the whole block is handed out, and memory_allocated() counts all of it.
Each graph capture allocates from its own private pool unless given one to share. Every test
runs on a fresh simulated device (the `fresh_device` fixture in conftest.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

import fake_torch as torch
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

KB, MB = 1024, 1024**2
TOTAL = 143771 * MB  # the default simulated GPU's memory (the H200's, as torch reports it)


# --- c10's rules, written out for the oracle ---------------------------------------------------

def _round(nbytes: int) -> int:
    return 512 if nbytes < 512 else (nbytes + 511) // 512 * 512


def _segment(size: int) -> int:
    if size <= 1 * MB:
        return 2 * MB
    if size < 10 * MB:
        return 20 * MB
    return (size + 2 * MB - 1) // (2 * MB) * (2 * MB)


def _block_from_fresh_segment(size: int) -> int:
    """The block a rounded request gets from a new segment: split off, or the whole segment."""
    rest = _segment(size) - size
    split = rest >= 512 if size <= 1 * MB else rest > 1 * MB
    return size if split else _segment(size)


def _bytes(nbytes: int) -> torch.Tensor:
    return torch.empty(nbytes, dtype=torch.uint8, device="cuda")


def _figures() -> tuple[int, int]:
    return torch.cuda.memory_allocated(), torch.cuda.memory_reserved()


# --- one request: rounding and segment sizes ---------------------------------------------------

SIZES = [1, 511, 512, 513, 4000, MB - 1, MB, MB + 1, 3 * MB, 9 * MB + 1, 10 * MB - 1, 10 * MB,
         10 * MB + 512, 11 * MB, 19 * MB + 5, 33 * MB + 7]


@pytest.mark.parametrize("nbytes", SIZES)
def test_one_request_takes_a_rounded_block_from_a_segment_of_c10s_size(nbytes: int) -> None:
    size = _round(nbytes)
    t = _bytes(nbytes)
    assert _figures() == (_block_from_fresh_segment(size), _segment(size))
    stats = torch.cuda.memory_stats()
    assert stats["requested_bytes.all.current"] == nbytes
    assert stats["segment.all.current"] == 1
    assert stats["allocation.all.current"] == 1
    free, total = torch.cuda.mem_get_info()
    assert (free, total) == (TOTAL - _segment(size), TOTAL)
    del t  # back to the cache: still reserved
    assert _figures() == (0, _segment(size))
    torch.cuda.empty_cache()
    assert _figures() == (0, 0)
    assert torch.cuda.mem_get_info() == (TOTAL, TOTAL)


def test_a_zero_byte_tensor_takes_no_memory() -> None:
    t = torch.empty(0, device="cuda")
    assert _figures() == (0, 0) and t.numel() == 0


# --- several requests: packing, splitting, merging ---------------------------------------------

def test_small_requests_pack_into_a_2_mib_segment_until_it_is_full() -> None:
    size = 600 * KB  # three fit in 2 MiB (1800 KiB); the 248 KiB left is too small for a fourth
    held, seen = [], []
    for _ in range(4):
        held.append(_bytes(size))
        seen.append(_figures())
    assert seen == [(size, 2 * MB), (2 * size, 2 * MB), (3 * size, 2 * MB), (4 * size, 4 * MB)]
    first = held[0].data_ptr()
    assert [t.data_ptr() - first for t in held[:3]] == [0, size, 2 * size]  # one segment, in order


def test_a_large_block_is_not_split_when_at_most_1_mib_would_remain() -> None:
    size = 6 * MB + 512 * KB
    held, seen = [], []
    for _ in range(4):
        held.append(_bytes(size))
        seen.append(_figures())
    # the third takes the whole 7 MiB rest of the 20 MiB segment; the fourth needs a new one
    assert seen == [(size, 20 * MB), (2 * size, 20 * MB), (20 * MB, 20 * MB),
                    (20 * MB + size, 40 * MB)]


def test_freed_blocks_are_reused_best_fit_and_free_neighbours_merge() -> None:
    a, b, c = _bytes(512), _bytes(512), _bytes(512)
    addr_a = a.data_ptr()
    assert (b.data_ptr() - addr_a, c.data_ptr() - addr_a) == (512, 1024)
    del a, b  # two free neighbours merge into one 1024-byte block
    d = _bytes(1000)  # rounds to 1024: the merged block fits exactly (best fit, not the tail)
    assert d.data_ptr() == addr_a
    del d
    e = _bytes(100)  # the smallest free block that fits is the merged 1024: split, 512 handed out
    assert e.data_ptr() == addr_a
    assert _figures() == (1024, 2 * MB)  # e and c
    f = _bytes(512)  # the 512 left of the split block, before the big tail of the segment
    assert f.data_ptr() == addr_a + 512


def test_peak_statistics_and_their_reset() -> None:
    big, small = _bytes(3 * MB), _bytes(KB)
    del big
    assert torch.cuda.memory_allocated() == KB
    assert torch.cuda.max_memory_allocated() == 3 * MB + KB
    assert torch.cuda.max_memory_reserved() == 20 * MB + 2 * MB
    torch.cuda.empty_cache()  # the 20 MiB segment is free; the small one holds `small`
    assert torch.cuda.memory_reserved() == 2 * MB
    assert torch.cuda.max_memory_reserved() == 22 * MB
    torch.cuda.reset_peak_memory_stats()
    assert (torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()) == (KB, 2 * MB)
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.all.peak"] == KB and stats["reserved_bytes.all.peak"] == 2 * MB
    assert (stats["allocation.all.allocated"], stats["allocation.all.freed"]) == (2, 1)
    assert (stats["num_ooms"], stats["num_alloc_retries"]) == (0, 0)
    del small


# --- the size of the device: out of memory -----------------------------------------------------

def test_allocating_beyond_the_device_raises_torchs_out_of_memory_error() -> None:
    torch.cuda.set_simulated_device_memory(8 * MB)  # put back by the fixture
    assert torch.cuda.mem_get_info() == (8 * MB, 8 * MB)
    with pytest.raises(torch.cuda.OutOfMemoryError, match=re.escape(
            "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
            "8.00 MiB of which 8.00 MiB is free.")) as info:
        _bytes(3 * MB)  # a 3 MiB request needs a 20 MiB segment: c10 reports the segment
    assert isinstance(info.value, RuntimeError)
    assert str(info.value).startswith("CUDA out of memory. Tried to allocate ")
    assert torch.cuda.memory_stats()["num_ooms"] == 1
    t = _bytes(KB)  # a small request needs only a 2 MiB segment: it fits
    assert _figures() == (KB, 2 * MB)
    del t


def test_out_of_memory_sizes_use_c10s_format_size() -> None:
    torch.cuda.set_simulated_device_memory(MB)
    with pytest.raises(torch.cuda.OutOfMemoryError, match=re.escape(
            "CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of "
            "1024.00 KiB of which 1024.00 KiB is free. Of the allocated memory 0 bytes is "
            "allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.")):
        _bytes(1)  # even one byte needs a 2 MiB small segment


def test_out_of_memory_first_frees_the_cache_and_retries() -> None:
    torch.cuda.set_simulated_device_memory(21 * MB)
    t = _bytes(KB)
    del t  # a cached 2 MiB segment: 2 + 20 MiB would not fit, 20 MiB alone does
    big = _bytes(3 * MB)
    assert _figures() == (3 * MB, 20 * MB)
    stats = torch.cuda.memory_stats()
    assert (stats["num_alloc_retries"], stats["num_ooms"]) == (1, 0)
    del big


def test_simulated_device_memory_must_be_a_positive_int() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="total_bytes must be a positive int"):
            torch.cuda.set_simulated_device_memory(bad)  # type: ignore[arg-type]


# --- graph pools ---------------------------------------------------------------------------------

def _capture(fn: Callable[[], torch.Tensor],
             pool: tuple[int, int] | None = None) -> tuple[CUDAGraph, torch.Tensor]:
    g = CUDAGraph()
    with torch.cuda.graph(g, pool=pool):
        out = fn()
    return g, out


def test_pool_ids_are_torchs_kind_of_pair() -> None:
    x = torch.ones(4, device="cuda")
    h1 = torch.cuda.graph_pool_handle()
    g1, _ = _capture(lambda: x * 2)
    h2 = torch.cuda.graph_pool_handle()
    g2, _ = _capture(lambda: x * 3)
    g3, _ = _capture(lambda: x * 4, pool=h1)
    g4, _ = _capture(lambda: x * 5, pool=g1.pool())
    # user handles (0, n) and graphs' private pools (n, 0) are numbered separately, from 1
    assert (h1, h2) == ((0, 1), (0, 2))
    assert (g1.pool(), g2.pool(), g3.pool(), g4.pool()) == ((1, 0), (2, 0), (0, 1), (1, 0))


def _two_steps(x: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = (x * 2) + 1  # the temporary x * 2 dies inside the capture: block freed
    return out


def test_each_graph_gets_a_private_pool_unless_given_one() -> None:
    x = torch.ones(4, device="cuda")  # one 2 MiB segment in the default pool
    _capture(lambda: _two_steps(x))
    g1, y1 = _capture(lambda: _two_steps(x))  # (the first graph above is dead already)
    base = torch.cuda.memory_reserved()
    g2, y2 = _capture(lambda: _two_steps(x))  # private: a segment of its own
    assert torch.cuda.memory_reserved() - base == 2 * MB
    g3, y3 = _capture(lambda: _two_steps(x), pool=g1.pool())  # shared: fits in g1's segment
    assert torch.cuda.memory_reserved() - base == 2 * MB
    for g in (g1, g2, g3):
        g.replay()
    for y in (y1, y2, y3):
        np.testing.assert_array_equal(y.numpy(force=True), [3.0] * 4)


def test_a_shared_pool_really_reuses_blocks_freed_by_an_earlier_capture() -> None:
    x = torch.ones(4, device="cuda")
    pool = torch.cuda.graph_pool_handle()
    temps: list[int] = []

    def step() -> torch.Tensor:
        t = x * 2
        temps.append(t.data_ptr())
        out: torch.Tensor = t + 1
        return out

    _g1, y1 = _capture(step, pool=pool)
    _g2, y2 = _capture(step, pool=pool)
    assert temps[1] == temps[0]  # g2's temporary lives in the block g1's temporary freed
    _g3, y3 = _capture(step)  # a private pool: somewhere else
    assert temps[2] != temps[0]
    assert len({y1.data_ptr(), y2.data_ptr(), y3.data_ptr()}) == 3  # live outputs never shared


ROW = 512 * KB // 4  # float32 elements in 512 KiB
BATCHES = [16, 8, 4]  # 8, 4 and 2 MiB per activation: all from 20 MiB segments


def _chain(x: torch.Tensor) -> torch.Tensor:
    out: torch.Tensor = ((x * 2) + 1) * 3  # at most two activations live at once
    return out


def _capture_batches(order: list[int], shared: bool) -> tuple[int, list[CUDAGraph]]:
    """Capture `_chain` for each batch size in `order`; return the bytes the captures reserved
    (the static inputs live in the default pool and are not counted) and the graphs."""
    inputs = {bs: torch.full((bs, ROW), float(bs), device="cuda") for bs in BATCHES}
    pool = torch.cuda.graph_pool_handle() if shared else None
    before = torch.cuda.memory_reserved()
    graphs, outputs = [], []
    for bs in order:
        g, out = _capture(lambda bs=bs: _chain(inputs[bs]), pool=pool)  # type: ignore[misc]
        graphs.append(g)
        outputs.append(out)
    cost = torch.cuda.memory_reserved() - before
    for bs, g, out in zip(order, graphs, outputs, strict=True):
        g.replay()  # read each output right after its own replay
        np.testing.assert_array_equal(out[:, :3].numpy(force=True),
                                      np.full((bs, 3), (bs * 2 + 1) * 3.0, np.float32))
    return cost, graphs


def test_capturing_the_largest_batch_first_into_one_pool_costs_the_largest_graph() -> None:
    alone = {}
    for bs in BATCHES:
        cost, graphs = _capture_batches([bs], shared=False)
        alone[bs] = cost
        del graphs
        torch.cuda.empty_cache()
    # alone, each graph fits its two live activations in one 20 MiB segment; and a capture
    # while no graph lives gives the default generator's graph-side seed and offset a 2 MiB
    # segment (of the default pool) that the graphs keep: 2 MiB more, once
    generator = 2 * MB
    assert alone == {bs: _segment(_round(bs * ROW * 4)) + generator for bs in BATCHES} == {
        16: 22 * MB, 8: 22 * MB, 4: 22 * MB}
    private, _g1 = _capture_batches(BATCHES, shared=False)
    largest_first, _g2 = _capture_batches(BATCHES, shared=True)
    smallest_first, _g3 = _capture_batches(BATCHES[::-1], shared=True)
    assert private == sum(alone.values()) - 2 * generator == 62 * MB  # private pools: the sum
    # shared, largest first: the largest (the generator's segment exists already)
    assert largest_first == max(alone.values()) - generator == 20 * MB
    # smallest first, the 8 MiB activations of the last graph no longer fit in what the small
    # graphs left free of the first segment (6 MiB): a second 20 MiB segment
    assert smallest_first == 40 * MB


# --- replaying graphs that share a pool out of order ---------------------------------------------

def test_out_of_order_replay_of_a_shared_pool_clobbers_exactly_as_on_a_gpu(
        no_sanitizer: None) -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], device="cuda")
    pool = torch.cuda.graph_pool_handle()
    seen: dict[str, int] = {}
    g1, g2, g3 = CUDAGraph(), CUDAGraph(), CUDAGraph()
    with torch.cuda.graph(g1, pool=pool):
        o1 = x + 1
    with torch.cuda.graph(g2, pool=pool):
        t = o1 * 2  # an intermediate: freed when the capture drops it
        seen["t"] = t.data_ptr()
        o2 = t + 1
        del t
    with torch.cuda.graph(g3, pool=pool):
        o3 = x * 10  # lands in the block g2's intermediate freed
    assert o3.data_ptr() == seen["t"]
    xs = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    for g in (g1, g2, g3):  # capture order: every output right
        g.replay()
    np.testing.assert_array_equal(o1.numpy(force=True), xs + 1)
    np.testing.assert_array_equal(o2.numpy(force=True), (xs + 1) * 2 + 1)
    np.testing.assert_array_equal(o3.numpy(force=True), xs * 10)
    for g in (g1, g3, g2):  # out of order: g2's replay rewrites its intermediate over o3
        g.replay()
    np.testing.assert_array_equal(o2.numpy(force=True), (xs + 1) * 2 + 1)
    np.testing.assert_array_equal(o3.numpy(force=True), (xs + 1) * 2)  # wrong, as a GPU's is
