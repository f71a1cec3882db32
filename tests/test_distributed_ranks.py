"""torch.distributed across local processes: the collectives against real torch's gloo backend
(2 and 4 ranks, every op and dtype gloo reduces; fake_torch's nccl on cuda tensors too, where
both accept the op), graph capture of a collective, a straggler's wait, a rank that captures
another collective, init errors. Each rank is a new process (tests/distributed_programs.py:
forked by a fork server that imported fake_torch, in the parent's environment; torchrun's and
multiprocessing.spawn's ranks are spawned); every test kills what is left after its timeout
and asserts no rank was left running."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from datetime import timedelta
from typing import Any

import pytest

import fake_torch as ft
from fake_torch._simulated import _gpus
from fake_torch.distributed import _nccl_cost

sys.path.insert(0, os.path.dirname(__file__))
import distributed_programs as programs

torch_or_skip = pytest.importorskip  # (the oracle runs in the children; the parent checks it)


@pytest.fixture(scope="module", autouse=True)
def fork_server() -> None:
    """The ranks' fork server, started before the first test (it imports fake_torch and real
    torch once, for every rank it forks: tests/distributed_programs.py)."""
    programs.start_fork_server()


def _run(target: Any, n: int, args: tuple[Any, ...], timeout: float = 60.0) -> list[Any]:
    out = tempfile.mkdtemp()
    codes = programs.start_ranks(target, n, (*args, out), timeout)
    assert None not in codes, f"a rank was still running after {timeout} s: {codes}"
    return programs.load(out, n) if all(c == 0 for c in codes) else [codes]


def _failed_only_on_one_side(a: Any, b: Any) -> bool:
    return (isinstance(a, tuple) and a[:1] == ("error",)) or (
        isinstance(b, tuple) and b[:1] == ("error",))


@pytest.mark.parametrize("n,dtypes", [(2, programs.DTYPES),
                                      (4, ["float32", "bfloat16", "int8"])])
def test_collectives_match_gloo(n: int, dtypes: list[str]) -> None:
    torch_or_skip("torch")
    libs = ("torch:gloo", "fake_torch:gloo", "fake_torch:nccl")
    outs = [tempfile.mkdtemp() for _ in libs]
    # real torch's ranks beside fake_torch's, whose ranks run gloo's group then nccl's
    jobs = [(programs.collectives_each, n, (lib, n, [programs.free_port() for _ in backends],
                                            backends, dtypes, lib_outs))
            for lib, backends, lib_outs in (("torch", ["gloo"], outs[:1]),
                                            ("fake_torch", ["gloo", "nccl"], outs[1:]))]
    codes = programs.start_jobs(jobs, 120)
    assert codes == [[0] * n] * 2
    results = {lib: programs.load(out, n) for lib, out in zip(libs, outs, strict=True)}
    oracle, ours, nccl = (results[k] for k in ("torch:gloo", "fake_torch:gloo",
                                               "fake_torch:nccl"))
    # 20 per dtype; the functional collectives, objects, subgroup, world, async
    assert len(oracle[0]) == 20 * len(dtypes) + 4 + (n == 2)
    assert ours == oracle  # every result and every error, rank by rank
    for r in range(n):  # nccl on cuda tensors: the same values where both accept the op
        for key, value in nccl[r].items():
            if not _failed_only_on_one_side(value, oracle[r][key]):
                assert value == oracle[r][key], (r, key)
        assert nccl[r]["all_reduce float32 BAND"][:2] == ("error", "ValueError")


def test_captured_collective_replays_and_a_straggler_makes_everyone_wait() -> None:
    seen = _run(programs.graph_replay, 2, (programs.free_port(),))
    for r in (0, 1):
        # y = x + 1 summed over ranks, x = step * (rank + 1): 3 * step + 2
        assert seen[r]["sums"][:4] == [[2.0, 2.0], [5.0, 5.0], [8.0, 8.0], [32.0, 2.0]]
        assert seen[0]["sums"][4] == [202.0]  # 101 + 101: rank 1's host never synced
        # the collective is a node of the graph: three graph launches, no NCCL launch of its own
        assert seen[r]["graph_counts"]["graph"] == 3
        assert not any(k.startswith("nccl") for k in seen[r]["graph_counts"])
        assert seen[r]["z"] == [2.0, 2.0]
    kernel = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"  # 4 KiB: the LL protocol is fastest
    assert seen[0]["eager_ops"] == {"ones": 1, kernel: 1}
    assert seen[1]["eager_ops"] == {"ones": 1, "_sleep": 1, kernel: 1}
    sleep_ms = 10_000_000 / _gpus.current().clock_hz * 1e3
    cost_ms = _nccl_cost.collective_ns("AllReduce", 2, 4096) / 1e6
    # rank 1 slept before the collective: rank 0's kernel waited for it, then both ran it
    assert seen[0]["ms"] == pytest.approx(sleep_ms + cost_ms, rel=0.01)
    assert seen[1]["ms"] == pytest.approx(cost_ms, abs=0.002)


def test_ranks_capturing_different_collectives_are_reported() -> None:
    seen = _run(programs.diverging_graphs, 2, (programs.free_port(),), timeout=30)
    for r, (outcome, seconds) in enumerate(seen):
        assert outcome[:2] == ("error", "RuntimeError")
        other = 1 - r
        assert f"rank {r} called" in outcome[2] and f"rank {other} called" in outcome[2]
        assert "all_reduce(SUM" in outcome[2] and "all_gather(" in outcome[2]
        assert seconds < 2.0


def test_a_rank_that_never_arrives_times_out() -> None:
    port = programs.free_port()
    # world_size 2, only rank 0 started: the TCPStore master waits for its clients
    seen = _run(programs.init_only, 1, ("fake_torch", f"tcp://127.0.0.1:{port}", [2], 1.0),
                timeout=30)
    assert seen[0][:2] == ("error", "DistStoreError")
    assert seen[0][2].startswith("Timed out after 1 seconds waiting for clients. 1/2 clients "
                                 "joined.")


def test_a_rank_with_another_world_size_fails_both(tmp_path: Any) -> None:
    seen = _run(programs.init_only, 2, ("fake_torch", f"file://{tmp_path}/store", [2, 3], 1.0),
                timeout=30)
    assert seen[0][:2] == ("error", "ValueError") and "world_size=3" in seen[0][2]
    assert seen[1][:2] == ("error", "RuntimeError") and "for rank 2" in seen[1][2]


@pytest.mark.parametrize("init", ["file", "env"])
def test_file_and_env_init(init: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    if init == "env":
        monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
        monkeypatch.setenv("MASTER_PORT", str(programs.free_port()))
    url = f"file://{tmp_path}/store" if init == "file" else "env://"
    assert _run(programs.init_only, 2, ("fake_torch", url, [2, 2], 5.0)) == ["ok", "ok"]


def test_the_store_host_outlives_the_other_ranks() -> None:
    """Ranks that end without destroy_process_group in multiprocessing children (os._exit: no
    atexit function runs) still leave their group: rank 0's process, which hosts the store,
    ends only after rank 1 has left, so rank 1 never loses the store mid-read ("Failed to
    recv, got 0 bytes" once in ~10 runs before)."""
    rank0_ended, rank1_left = _run(programs.leave_late, 2, (programs.free_port(),))
    assert rank0_ended >= rank1_left


def test_port_taken_is_torchs_error() -> None:
    master = ft.distributed.TCPStore("127.0.0.1", 0, 1, True, wait_for_workers=False)
    with pytest.raises(ft.distributed.DistNetworkError,
                       match=r"^The server socket has failed to listen on any local network "
                             rf"address. port: {master.port}, useIpv6: false, code: -98"):
        ft.distributed.init_process_group("gloo", f"tcp://127.0.0.1:{master.port}",
                                          world_size=2, rank=0)
    assert not ft.distributed.is_initialized()


def test_client_without_a_server_times_out() -> None:
    port = programs.free_port()
    with pytest.raises(ft.distributed.DistNetworkError,
                       match=rf"^The client socket has timed out after 300ms while trying to "
                             rf"connect to \(127.0.0.1, {port}\)."):
        ft.distributed.TCPStore("127.0.0.1", port, 2, False,
                                timeout=timedelta(milliseconds=300))


def test_torchrun_launcher(tmp_path: Any) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        "import sys, torch, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "t = torch.tensor([float(dist.get_rank() + 1)])\n"
        "dist.all_reduce(t)\n"
        "sys.stdout.write(f\"{dist.get_rank()} {dist.get_world_size()} {t.item()} "
        "{'fake_torch' in torch.__file__}\\n\")\n"  # (one write: the ranks share the pipe)
        "sys.stdout.flush()\n"
        "dist.destroy_process_group()\n"
        "sys.exit(7 if sys.argv[1:] == ['fail'] else 0)\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ft.__file__)))
    for extra, code in (([], 0), (["fail"], 7)):
        done = subprocess.run([sys.executable, "-m", "fake_torch.distributed.run",
                               "--nproc-per-node", "2", "--standalone", str(script), *extra],
                              capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == code, done.stderr
        assert sorted(done.stdout.split("\n")[:2]) == ["0 2 3.0 True", "1 2 3.0 True"]


def test_a_failed_rank_is_reported_and_spawn_leaves_no_process() -> None:
    import multiprocessing

    out = tempfile.mkdtemp()
    # every rank runs to its end: rank 0's collective fails within the timeout, naming rank 1
    codes = programs.start_ranks(programs.one_rank_fails, 2, (programs.free_port(), out), 30)
    assert codes == [0, 3]
    outcome, seconds = programs.load(out, 1)[0]
    assert outcome[:2] == ("error", "RuntimeError")
    assert "for rank 1, which never called it" in outcome[2] and "all_reduce(SUM" in outcome[2]
    assert seconds < 3.0
    # torch.multiprocessing.spawn: the first failure ends the other ranks, and raises
    with pytest.raises(ft.multiprocessing.ProcessExitedException,
                       match="process 1 terminated with exit code 3"):
        ft.multiprocessing.spawn(programs.one_rank_fails, (programs.free_port(), out), nprocs=2)
    assert multiprocessing.active_children() == []


def test_nccl_cost_model_and_kernel_names() -> None:
    c = _nccl_cost
    assert _gpus.current().key == "H200"
    # 64 MiB all_reduce among 4 H200s: Simple protocol, 2(n-1) steps, 2(n-1)/n of the bytes
    # over 450 GB/s (NVLink 4, one direction)
    nbytes = 64 << 20
    simple_us = 8.4 + 6 * 3.4 + 1.5 * nbytes / 450e9 * 1e6
    assert c.collective_ns("AllReduce", 4, nbytes) == pytest.approx(simple_us * 1e3)
    assert c.kernel_name("AllReduce", 4, nbytes, "bfloat16", "SUM") == \
        "ncclDevKernel_AllReduce_Sum_bf16_RING_SIMPLE"
    # 4 KiB: latency-bound, LL (3.6 us base + 0.47 us per step; its bandwidth capped at
    # Hopper's 141 GB/s)
    small_us = 3.6 + 2 * 0.47 + 4096 / 141e9 * 1e6
    assert c.collective_ns("AllReduce", 2, 4096) == pytest.approx(small_us * 1e3)
    assert c.kernel_name("ReduceScatter", 2, 4096, "float16", "MAX") == \
        "ncclDevKernel_ReduceScatter_MinMax_f16_RING_LL"
    assert c.kernel_name("AllReduce", 2, 4096, "int32", "AVG", floating=False) == \
        "ncclDevKernel_AllReduce_SumPostDiv_i32_RING_LL"
    assert c.kernel_name("AllGather", 8, nbytes) == "ncclDevKernel_AllGather_RING_LL128"
    assert c.kernel_name("SendRecv", 2, 10) == "ncclDevKernel_SendRecv"
    # all_gather moves half of what all_reduce moves, in half the steps
    assert c.collective_ns("AllGather", 4, nbytes) < c.collective_ns("AllReduce", 4, nbytes)


def test_spawned_context_children_get_fake_torch(tmp_path: Any) -> None:
    """nano-vllm's way: under `python -m fake_torch run`, `mp.get_context("spawn")` starts a
    rank whose target imports torch; the child's torch is fake_torch too."""
    (tmp_path / "worker.py").write_text(
        "import torch, torch.distributed as dist\n"
        "def run(rank, port, event):\n"
        "    dist.init_process_group('nccl', f'tcp://localhost:{port}', world_size=2, rank=rank)\n"
        "    x = torch.full((3,), float(rank + 1), device='cuda')\n"
        "    dist.all_reduce(x)\n"
        "    assert x.tolist() == [3.0] * 3 and 'fake_torch' in torch.__file__\n"
        "    dist.destroy_process_group()\n"
        "    if event is not None:\n"
        "        event.set()\n")
    (tmp_path / "main.py").write_text(
        "import sys, torch.multiprocessing as mp\n"
        "from worker import run\n"
        "if __name__ == '__main__':\n"
        "    ctx = mp.get_context('spawn')\n"
        "    event = ctx.Event()\n"
        "    child = ctx.Process(target=run, args=(1, int(sys.argv[1]), event))\n"
        "    child.start()\n"
        "    run(0, int(sys.argv[1]), None)\n"
        "    child.join(30)\n"
        "    print(child.exitcode, event.is_set())\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ft.__file__)))
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run", "main.py",
                           str(programs.free_port())], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0 True"
