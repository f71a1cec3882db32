"""Several simulated GPUs: PyTorch-style multi-device code on a machine of 4 devices.

Real torch's CPU build makes cuda tensors only as fake tensors (FakeTensorMode): they are the
oracle for the errors of mixing devices in one op. Otherwise the oracles are torch's documented
semantics and error texts (the current device per thread, `torch.cuda.device` restoring it,
`set_stream` switching to the stream's device, CUDA's invalid device ordinal), numpy for
values, the cost model's own formula for the time of a peer copy, and the same program on a
one-GPU machine for everything that must not change (a graph captured on cuda:1, reduce-overhead
on cuda:1: the same launches, memory statistics and values as on cuda:0 alone).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch._simulated import _cost, _gpus, _machine


@pytest.fixture
def four() -> Iterator[_machine.Machine]:
    """A fresh machine of four simulated GPUs for the test; the machine before it after."""
    with _machine.fresh(num_devices=4) as machine:
        yield machine


# --- devices, the current device -----------------------------------------------------------------

def test_four_devices_are_counted_and_cuda_0_is_current(four: _machine.Machine) -> None:
    assert torch.cuda.device_count() == 4
    assert torch.cuda.current_device() == 0
    assert torch.ones(2, device="cuda").device == torch.device("cuda:0")
    assert [str(torch.ones(1, device=f"cuda:{i}").device) for i in range(4)] == [
        "cuda:0", "cuda:1", "cuda:2", "cuda:3"]
    assert torch.ones(1, device=torch.device("cuda", 3)).get_device() == 3


def test_set_device_makes_plain_cuda_mean_that_device(four: _machine.Machine) -> None:
    torch.cuda.set_device(2)
    assert torch.cuda.current_device() == 2
    x = torch.zeros(3, device="cuda")
    assert x.device == torch.device("cuda:2") and x.cuda().device == x.device
    assert torch.ones(1).cuda().device.index == 2  # Tensor.cuda(): the current device
    torch.cuda.set_device(-1)  # a negative index: no change, as torch documents
    assert torch.cuda.current_device() == 2
    torch.cuda.set_device("cuda:1")
    assert torch.cuda.current_device() == 1


def test_device_context_selects_a_device_and_restores_the_previous(four: _machine.Machine) -> None:
    torch.cuda.set_device(1)
    with torch.cuda.device(3):
        assert torch.cuda.current_device() == 3
        assert torch.empty(1, device="cuda").device.index == 3
        with torch.cuda.device(None):  # None: no change
            assert torch.cuda.current_device() == 3
    assert torch.cuda.current_device() == 1
    t = torch.ones(1, device="cuda:2")
    with torch.cuda.device_of(t):
        assert torch.cuda.current_device() == 2
    assert torch.cuda.current_device() == 1


def test_the_current_device_is_per_thread(four: _machine.Machine) -> None:
    torch.cuda.set_device(3)
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(torch.cuda.current_device()))
    thread.start()
    thread.join()
    assert seen == [0]  # a new host thread starts on device 0, as with cudaSetDevice
    assert torch.cuda.current_device() == 3


@pytest.mark.parametrize("call", [
    lambda: torch.cuda.set_device(4),
    lambda: torch.ones(1, device="cuda:4"),
    lambda: torch.ones(1).to("cuda:7"),
    lambda: torch.cuda.Stream(device=5),
    lambda: torch.cuda.device(4).__enter__(),
])
def test_an_index_past_the_devices_is_cudas_invalid_device_ordinal(
        four: _machine.Machine, call: object) -> None:
    with pytest.raises(torch.AcceleratorError, match=r"^CUDA error: invalid device ordinal"):
        call()  # type: ignore[operator]
    assert issubclass(torch.AcceleratorError, RuntimeError)
    assert torch.cuda.AcceleratorError is torch.AcceleratorError  # as in torch
    assert torch.cuda.current_device() == 0


def test_device_objects_name_any_index_as_torch_does(four: _machine.Machine) -> None:
    real = pytest.importorskip("torch")
    for spec in ("cuda:9", "cuda"):  # a torch.device is a name: no device is asked
        assert repr(torch.device(spec)) == repr(real.device(spec))
    with pytest.raises(AssertionError, match="Invalid device id"):  # torch's own check
        torch.cuda.get_device_properties(4)
    assert torch.cuda.get_device_name(3) == torch.cuda.get_device_name(0)


def test_fake_torch_devices_environment_variable_sets_the_count() -> None:
    code = "import fake_torch as t; print(t.cuda.device_count(), len(t.cuda.default_generators))"
    root = str(Path(torch.__file__).resolve().parents[1])  # this checkout's fake_torch
    env = {**os.environ, "FAKE_TORCH_DEVICES": "3", "PYTHONPATH": root}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["3", "3"]
    env["FAKE_TORCH_DEVICES"] = "0"
    bad = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "FAKE_TORCH_DEVICES must be a positive integer" in bad.stderr


def test_invalid_device_ordinal_says_how_many_devices_are_simulated(
        four: _machine.Machine) -> None:
    """torch's text first (real CUDA's on a machine of fewer GPUs), then fake_torch's hint:
    a rank r of a distributed run needs a machine of more than r devices."""
    calls: list[Callable[[], object]] = [lambda: torch.cuda.set_device(4),
                                         lambda: torch.ones(1, device="cuda:5")]
    for call in calls:
        with pytest.raises(torch.AcceleratorError) as info:
            call()
        text = str(info.value)
        assert text.startswith(_machine.INVALID_ORDINAL)
        assert text.endswith("(fake_torch simulates 4 devices: set FAKE_TORCH_DEVICES, or call "
                             "torch.cuda.set_simulated_devices(n), for more)")
    with _machine.fresh(num_devices=1), pytest.raises(torch.AcceleratorError,
                                                       match=r"simulates 1 device: set"):
        torch.cuda.set_device(1)


SPAWNED = """
import multiprocessing as mp, sys
import fake_torch
fake_torch.install()
import torch.multiprocessing


def rank(r, q):
    import torch
    torch.cuda.set_device(r)  # as a tensor-parallel rank does
    q.put((r, torch.cuda.device_count(), torch.ones(1, device="cuda").get_device()))


if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    ps = [ctx.Process(target=rank, args=(r, q)) for r in range(2)]
    for p in ps:
        p.start()
    print(sorted(q.get(timeout=60) for _ in ps))
    for p in ps:
        p.join(60)
"""


def test_spawned_ranks_inherit_the_simulated_devices(tmp_path: Path) -> None:
    """FAKE_TORCH_DEVICES is the machine's size for every process of a run: children the
    spawn start method starts read the same environment, so rank r finds cuda:r."""
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    root = str(Path(torch.__file__).resolve().parents[1])  # this checkout's fake_torch
    env = {**os.environ, "FAKE_TORCH_DEVICES": "2", "PYTHONPATH": root}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[0] == "[(0, 2, 0), (1, 2, 1)]"


def test_set_simulated_devices_swaps_in_a_new_machine() -> None:
    with _machine.fresh():
        before = _machine.MACHINE
        torch.cuda.set_simulated_devices(2, gpu="A100")
        try:
            assert torch.cuda.device_count() == 2 and _machine.MACHINE is not before
            assert torch.cuda.get_device_name(1).startswith("NVIDIA A100")
        finally:
            _gpus.select(_gpus.DEFAULT)
        with pytest.raises(ValueError, match="positive int"):
            torch.cuda.set_simulated_devices(0)


# --- ops on one device, and the errors for mixing them ------------------------------------------

def test_an_op_runs_on_its_tensors_device_whatever_device_is_current(
        four: _machine.Machine) -> None:
    a = torch.arange(4.0, device="cuda:2")
    with torch.cuda.device(0):
        b = a * 2 + 1
    assert b.device.index == 2
    np.testing.assert_array_equal(b.cpu().numpy(), np.arange(4.0) * 2 + 1)
    # its memory came from cuda:2's allocator and its kernels ran on cuda:2's stream
    assert torch.cuda.memory_allocated(2) > 0 and torch.cuda.memory_allocated(0) == 0
    s = torch.ones(()) * 3  # a 0-dim cpu tensor joins a cuda op as a scalar, as in torch
    assert (a + s).device.index == 2


MIXED = [
    lambda lib, a, b: a + b,
    lambda lib, a, b: b + a,
    lambda lib, a, b: lib.cat([a, b]),
    lambda lib, a, b: a.reshape(1, 2) @ b.reshape(2, 1),
    lambda lib, a, b: a.add_(b),
    lambda lib, a, b: lib.where(a > 0, a, b),
    lambda lib, a, b: a + lib.ones(2),  # a cpu tensor that is not a 0-dim scalar
]


@pytest.mark.parametrize("make", MIXED)
def test_mixing_devices_in_one_op_raises_torchs_error(four: _machine.Machine,
                                                      make: Callable[..., Any]) -> None:
    # the oracle: real torch's fake tensors on cuda:0 and cuda:1 (its CPU build makes them
    # without a GPU) raise the same "found at least two devices" error, first device first
    real = pytest.importorskip("torch")
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(), pytest.raises(RuntimeError) as expected:
        make(real, real.ones(2, device="cuda:0"), real.ones(2, device="cuda:1"))
    with pytest.raises(RuntimeError) as raised:
        make(torch, torch.ones(2, device="cuda:0"), torch.ones(2, device="cuda:1"))
    assert str(raised.value) == str(expected.value)


def test_indices_on_another_gpu_are_refused(four: _machine.Machine) -> None:
    x = torch.arange(4.0, device="cuda:0")
    with pytest.raises(RuntimeError, match=r"indices should be either on cpu or on the same "
                                           r"device as the indexed tensor \(cuda:0\)"):
        x[torch.tensor([1], device="cuda:1")]
    assert x[torch.tensor([1, 3])].tolist() == [1.0, 3.0]  # cpu indices: allowed


# --- memory, per device ---------------------------------------------------------------------------

def test_memory_statistics_are_per_device(four: _machine.Machine) -> None:
    a = torch.empty(1000, device="cuda:1")  # 4000 bytes -> a 4096-byte block
    b = torch.empty(10, device="cuda:3")  # 40 bytes -> 512
    assert [torch.cuda.memory_allocated(i) for i in range(4)] == [0, 4096, 0, 512]
    assert torch.cuda.memory_stats(1)["allocated_bytes.all.current"] == 4096
    assert torch.cuda.memory_reserved("cuda:3") == 2 * 1024 * 1024  # one small segment
    assert torch.cuda.memory_allocated() == 0  # the current device, cuda:0
    with torch.cuda.device(1):
        assert torch.cuda.memory_allocated() == 4096
        assert torch.cuda.max_memory_allocated() == 4096
    torch.cuda.reset_peak_memory_stats(3)
    del a, b
    assert [torch.cuda.memory_allocated(i) for i in range(4)] == [0, 0, 0, 0]
    segments = torch.cuda.memory_snapshot()
    assert sorted({s["device"] for s in segments}) == [1, 3]


def test_each_device_has_its_own_addresses_and_reuse(four: _machine.Machine) -> None:
    a = torch.empty(64, device="cuda:0")
    address = a.data_ptr()
    del a
    b = torch.empty(64, device="cuda:1")  # another device's memory: not cuda:0's free block
    c = torch.empty(64, device="cuda:0")  # cuda:0's freed block, at the same address
    assert c.data_ptr() == address and b.data_ptr() != address


# --- copies between devices ----------------------------------------------------------------------

def test_to_another_gpu_is_one_peer_copy(four: _machine.Machine) -> None:
    x = torch.arange(6.0, device="cuda:0").reshape(2, 3)
    with torch.LaunchCounter.expect(1):
        y = x.to("cuda:2")
    assert y.device.index == 2 and torch.LaunchCounter.by_kind["memcpy_p2p"] >= 1
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(6.0).reshape(2, 3))
    assert x.to("cuda:0") is x  # already there: no copy
    with torch.LaunchCounter.expect(1):
        z = x.to("cuda:1", torch.float16)  # a dtype change: the copy kernel, still one launch
    assert z.dtype == torch.float16 and z.device.index == 1


def test_copy_across_devices_and_modules_move_their_parameters(four: _machine.Machine) -> None:
    src = torch.arange(4.0, device="cuda:3")
    dst = torch.zeros(4, device="cuda:1")
    with torch.LaunchCounter.expect(1):
        dst.copy_(src)
    assert dst.tolist() == [0.0, 1.0, 2.0, 3.0] and dst.device.index == 1
    lin = torch.nn.Linear(4, 2).to("cuda:2")
    assert {p.device.index for p in lin.parameters()} == {2}
    out = lin(src.to("cuda:2"))
    assert out.device.index == 2


def test_a_peer_copy_is_timed_over_nvlink_and_orders_both_streams(
        four: _machine.Machine) -> None:
    x = torch.empty(1 << 20, device="cuda:0")  # 4 MiB
    spans: list[object] = []
    remove = _machine.add_listener(spans.append)
    try:
        y = x.to("cuda:1")
    finally:
        remove()
    gpu = [s for s in spans if s.track == "gpu"]  # type: ignore[attr-defined]
    assert [s.kind for s in gpu] == ["memcpy_p2p"]  # type: ignore[attr-defined]
    copy = gpu[0]
    nbytes = 2 * x.numel() * 4  # what the cost model reads: both sides' buffers
    expected = _cost.MEMCPY_LATENCY_NS + nbytes / 2 / _gpus.current().peer_bytes_per_s * 1e9
    assert copy.end_ns - copy.start_ns == pytest.approx(expected)  # type: ignore[attr-defined]
    # the copy ran on the source's stream, and the destination's stream waits for it
    timeline = four.timeline
    assert copy.stream == torch.cuda.current_stream(0).handle  # type: ignore[attr-defined]
    assert timeline.ready[torch.cuda.current_stream(1).handle] >= copy.end_ns  # type: ignore
    assert y.device.index == 1


# --- streams and events belong to a device --------------------------------------------------------

def test_streams_belong_to_their_device(four: _machine.Machine) -> None:
    s = torch.cuda.Stream(device=2)
    assert s.device == torch.device("cuda:2") and s.device_index == 2
    assert torch.cuda.default_stream(3).device.index == 3
    assert torch.cuda.default_stream(3).cuda_stream == 0  # CUDA's null stream on every device
    assert torch.cuda.current_stream(1) == torch.cuda.default_stream(1)
    assert torch.cuda.default_stream(1) != torch.cuda.default_stream(2)
    with torch.cuda.device(2):
        assert torch.cuda.Stream().device.index == 2


def test_stream_context_on_another_device_switches_device_and_restores_both(
        four: _machine.Machine) -> None:
    side = torch.cuda.Stream(device=1)
    with torch.cuda.stream(side):  # torch: set_stream makes the stream's device current
        assert torch.cuda.current_device() == 1
        assert torch.cuda.current_stream() == side
        y = torch.ones(2, device="cuda") + 1  # runs on cuda:1, on `side`
        assert y.device.index == 1
    assert torch.cuda.current_device() == 0
    assert torch.cuda.current_stream(1) == torch.cuda.default_stream(1)
    torch.cuda.set_stream(side)
    assert torch.cuda.current_device() == 1 and torch.cuda.current_stream() == side
    torch.cuda.set_stream(torch.cuda.default_stream(0))
    assert torch.cuda.current_device() == 0 and torch.cuda.current_stream(1) == side


def test_an_event_binds_to_the_device_of_its_first_stream(four: _machine.Machine) -> None:
    event = torch.cuda.Event()
    event.record(torch.cuda.Stream(device=2))
    assert event.device.index == 2
    event.record(torch.cuda.Stream(device=2))  # the same device: fine
    with pytest.raises(RuntimeError, match=r"^Event device 2 does not match recording stream's "
                                           r"device 0\.$"):
        event.record(torch.cuda.current_stream(0))
    torch.cuda.Stream(device=3).wait_event(event)  # a wait on another device: allowed


# --- CUDA graphs on another device ---------------------------------------------------------------

def _capture_and_replay(index: int) -> tuple[torch.cuda.CUDAGraph, list[float], dict[str, int]]:
    """Capture `x * 2 + 1` on cuda:`index`, replay it once on new inputs; the graph, the
    outputs, the device's memory statistics."""
    with torch.cuda.device(index):
        static_x = torch.zeros(8, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=torch.cuda.Stream()):
            static_y = static_x * 2 + 1
    assert static_y.device.index == index
    static_x.copy_(torch.arange(8.0, device=f"cuda:{index}"))
    with torch.LaunchCounter.expect(1):
        g.replay()
    assert g.num_kernels == 2
    return g, static_y.tolist(), torch.cuda.memory_stats(index)


def test_a_graph_captured_on_cuda_1_replays_there(four: _machine.Machine) -> None:
    g, values, stats = _capture_and_replay(1)
    pool = g.pool()
    assert values == (np.arange(8.0) * 2 + 1).tolist()
    assert torch.cuda.memory_reserved(0) == 0  # nothing of the capture touched cuda:0
    # the graph is cuda:1's: another device's pool ids and graph registry are untouched
    assert pool == (1, 0)  # the first private pool of cuda:1's allocator
    assert four.devices[0].graphs_by_pool == {}
    assert list(four.devices[1].graphs_by_pool) == [(1, 0)]
    side = torch.cuda.current_stream(1).handle
    before = four.timeline.ready.get(side, 0.0)
    with torch.cuda.device(0):  # replayed from cuda:0: on cuda:1's current stream all the same
        g.replay()
    assert four.timeline.ready[side] > before and torch.cuda.memory_reserved(0) == 0
    # the oracle: the same program on the one device of a single-GPU machine
    with _machine.fresh(num_devices=1):
        g0, values0, stats0 = _capture_and_replay(0)
        assert (g0.pool(), values0, stats0) == (pool, values, stats)


def test_random_draws_use_each_devices_own_generator(four: _machine.Machine) -> None:
    assert len(torch.cuda.default_generators) == 4
    torch.cuda.manual_seed_all(7)
    a = torch.rand(4, device="cuda:1")
    offsets = [g.get_offset() for g in torch.cuda.default_generators]
    assert offsets[1] > 0 and offsets[0] == offsets[2] == offsets[3] == 0
    torch.cuda.manual_seed_all(7)
    b = torch.rand(4, device="cuda:3")  # the same seed and offset on another device
    assert a.tolist() == b.tolist()
    with torch.cuda.device(2):
        torch.cuda.manual_seed(11)  # the current device's only
    assert [g.initial_seed() for g in torch.cuda.default_generators] == [7, 7, 11, 7]


# --- one machine, swapped whole -------------------------------------------------------------------

def test_a_fresh_machine_is_one_swap_and_old_tensors_free_into_their_own() -> None:
    outer = _machine.MACHINE
    kept = torch.empty(256, device="cuda")
    before = torch.cuda.memory_allocated()
    with torch.cuda.fresh_simulated_device():
        assert _machine.MACHINE is not outer
        assert torch.cuda.memory_allocated() == 0
        del kept  # made on the outer machine: its block goes back to the outer allocator
        assert torch.cuda.memory_allocated() == 0
    assert _machine.MACHINE is outer
    assert torch.cuda.memory_allocated() == before - 1024


def test_host_copies_run_on_the_cuda_sides_device(four: _machine.Machine) -> None:
    side = torch.cuda.Stream(device=2)
    torch.cuda.set_stream(side)  # cuda:2's current stream: `side`
    torch.cuda.set_device(0)  # ... while cuda:0 is current
    pinned = torch.arange(4.0).pin_memory()
    y = pinned.to("cuda:2", non_blocking=True)  # on cuda:2's current stream, not cuda:0's
    timeline = four.timeline
    end = timeline.ready.get(side.handle, 0.0)
    assert end > 0.0 and timeline.ready.get(torch.cuda.current_stream(0).handle, 0.0) == 0.0
    assert y.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]  # blocking: the host waited for `side`
    assert timeline.host_ns >= timeline.ready[side.handle] > end
    torch.cuda.set_stream(torch.cuda.default_stream(2))
    torch.cuda.set_device(0)


def _reduce_overhead_on(index: int) -> tuple[list[int], dict[str, int], list[float]]:
    """A Linear compiled with mode="reduce-overhead" and called four times on cuda:`index`:
    the launches of each call, the device's memory statistics, the last output."""
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 8).to(f"cuda:{index}")
    compiled = torch.compile(model, mode="reduce-overhead")
    x = torch.ones(4, 8, device=f"cuda:{index}")
    counts = []
    for _ in range(4):
        before = torch.LaunchCounter.n
        out = compiled(x)
        counts.append(torch.LaunchCounter.n - before)
    assert out.device.index == index
    return counts, torch.cuda.memory_stats(index), out.flatten().tolist()


def test_reduce_overhead_on_cuda_1_keeps_its_trees_there(four: _machine.Machine) -> None:
    torch._dynamo.reset()
    got = _reduce_overhead_on(1)
    assert four.devices[1].trees_manager is not None and four.devices[0].trees_manager is None
    assert torch.cuda.memory_reserved(0) == 0
    torch._dynamo.reset()
    with _machine.fresh(num_devices=1):  # the oracle: the same program on a one-GPU machine
        assert _reduce_overhead_on(0) == got
    torch._dynamo.reset()


def test_synchronize_waits_for_one_devices_streams(four: _machine.Machine) -> None:
    side = torch.cuda.Stream(device=3)
    with torch.cuda.stream(side):
        torch.cuda._sleep(1_000_000)  # cuda:3's side stream busy for half a millisecond
    busy_until = four.timeline.ready[side.handle]
    torch.cuda.synchronize(0)  # cudaDeviceSynchronize on cuda:0: nothing of cuda:3's
    assert four.timeline.host_ns < busy_until
    torch.cuda.synchronize(3)
    assert four.timeline.host_ns >= busy_until
