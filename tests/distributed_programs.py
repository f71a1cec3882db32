"""Programs the distributed tests run in each rank's process, under real torch or fake_torch
(named by `lib`, imported in the child), and the helper that starts the ranks and leaves no
process behind. Each program writes what it saw to OUT/rank{r}.pkl."""

# ruff: noqa: B023  (each dtype's closures run inside their own loop iteration)
from __future__ import annotations

import importlib
import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import socket
import sys
import time
from datetime import timedelta
from typing import Any

# the dtypes torch's gloo reduces; every op runs on each
DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8", "bool"]
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_ranks(target: Any, n: int, args: tuple[Any, ...], timeout: float) -> list[int | None]:
    """Run target(rank, *args) in n spawned processes; wait up to `timeout` seconds, then kill
    what is left. The exit codes (None: killed)."""
    return start_jobs([(target, n, args)], timeout)[0]


def start_jobs(jobs: list[tuple[Any, int, tuple[Any, ...]]],
               timeout: float) -> list[list[int | None]]:
    """start_ranks for several (target, n, args) at once: their ranks run side by side.

    Each rank is a new process forked by multiprocessing's fork server, a process started once
    (per test session) that imported fake_torch, and real torch where it is installed, and ran
    nothing else: a rank starts as a spawned one would after `import fake_torch` (or `import
    torch`), without paying that import again, in the environment the parent has now
    (_in_environ). (A fake_torch rank takes real torch's name out of sys.modules: _lib. Real
    torch's import, ~1.5 s of CPU with torch.distributed, was most of each gloo rank's time.)"""
    ctx = start_fork_server()
    environ = dict(os.environ)
    procs = [[ctx.Process(target=_in_environ, args=(environ, target, r, *args))
              for r in range(n)] for target, n, args in jobs]
    for p in (p for job in procs for p in job):
        p.start()
    deadline = time.monotonic() + timeout
    for p in (p for job in procs for p in job):
        p.join(max(0.0, deadline - time.monotonic()))
    codes: list[list[int | None]] = []
    for job in procs:
        codes.append([])
        for p in job:
            killed = p.is_alive()
            if killed:
                p.kill()
                p.join()
            codes[-1].append(None if killed else p.exitcode)
    return codes


def start_fork_server() -> Any:
    """multiprocessing's fork server, started (once per process) having imported fake_torch and
    real torch (a module that is not installed is left out: the server ignores its
    ImportError); its context."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["fake_torch", "fake_torch.distributed", "torch",
                                "torch.distributed"])
    multiprocessing.forkserver.ensure_running()
    return ctx


def _in_environ(environ: dict[str, str], target: Any, *args: Any) -> None:
    """target(*args) in the environment the parent had when it started the rank (as a spawned
    rank gets it; the fork server's is the one it started with)."""
    os.environ.clear()
    os.environ.update(environ)
    target(*args)


def _lib(name: str) -> Any:
    if name == "fake_torch":
        sys.modules.pop("torch", None)
    return importlib.import_module(name)


def _save(out: str, rank: int, seen: Any) -> None:
    with open(os.path.join(out, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(seen, f)


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except Exception as e:  # the error's class and first line, as the oracle compares them
        return ("error", type(e).__name__, str(e).splitlines()[0] if str(e) else "")


def collectives(rank: int, lib_name: str, world: int, port: int, backend: str,
                dtypes: list[str], out: str) -> None:
    """Every collective on every dtype; results as lists, keyed by what ran."""
    torch = _lib(lib_name)
    dist = torch.distributed
    dev = "cuda" if backend == "nccl" else "cpu"
    dist.init_process_group(backend, f"tcp://127.0.0.1:{port}", world_size=world, rank=rank,
                            timeout=timedelta(seconds=20))
    seen: dict[str, Any] = {}
    n, r = world, rank

    def data(dt: Any, k: int = 6, salt: int = 0) -> Any:
        if dt is torch.bool:
            return ((torch.arange(k) + r + salt) % 2).to(dt).to(dev)
        return ((torch.arange(k) % 3) + r + 1 + salt).to(dt).to(dev)

    def values(t: Any) -> Any:
        return [str(t.dtype), t.float().cpu().tolist() if t.dtype is torch.bfloat16
                else t.cpu().tolist()]

    for name in dtypes:
        dt = getattr(torch, name)
        for op in OPS:
            def reduce_all(op: str = op) -> Any:
                t = data(dt)
                dist.all_reduce(t, getattr(dist.ReduceOp, op))
                return values(t)
            seen[f"all_reduce {name} {op}"] = _outcome(reduce_all)

        def gathered() -> Any:
            outs = [torch.zeros(6, dtype=dt, device=dev) for _ in range(n)]
            dist.all_gather(outs, data(dt))
            return [values(o) for o in outs]

        def gathered_into() -> Any:
            out = torch.zeros(n * 6, dtype=dt, device=dev)
            dist.all_gather_into_tensor(out, data(dt))
            return values(out)

        def scattered(op: str) -> Any:
            out = torch.zeros(2, dtype=dt, device=dev)
            dist.reduce_scatter_tensor(out, data(dt, 2 * n), getattr(dist.ReduceOp, op))
            return values(out)

        def reduced() -> Any:
            t = data(dt)
            dist.reduce(t, n - 1)
            return values(t) if r == n - 1 else None

        def broadcasted() -> Any:
            t = data(dt)
            dist.broadcast(t, 1)
            return values(t)

        def gathered_to_root() -> Any:
            outs = [torch.zeros(6, dtype=dt, device=dev) for _ in range(n)] if r == 0 else None
            dist.gather(data(dt), outs, 0)
            return [values(o) for o in outs] if outs else None

        def scattered_from_root() -> Any:
            t = torch.zeros(6, dtype=dt, device=dev)
            ins = [data(dt, salt=j) for j in range(n)] if r == n - 1 else None
            dist.scatter(t, ins, n - 1)
            return values(t)

        def all_to_all(uneven: bool) -> Any:
            # rank r sends j+1 rows to rank j (uneven) or 2 rows to each
            sends = [j + 1 if uneven else 2 for j in range(n)]
            recvs = [r + 1 if uneven else 2 for _ in range(n)]
            inp = data(dt, sum(sends) * 2).reshape(sum(sends), 2)
            out = torch.zeros(sum(recvs), 2, dtype=dt, device=dev)
            if uneven:
                dist.all_to_all_single(out, inp, recvs, sends)
            else:
                dist.all_to_all_single(out, inp)
            return values(out)

        def ring() -> Any:
            got = torch.zeros(6, dtype=dt, device=dev)
            ops = [dist.P2POp(dist.isend, data(dt), (r + 1) % n),
                   dist.P2POp(dist.irecv, got, (r - 1) % n)]
            for w in dist.batch_isend_irecv(ops):
                w.wait()
            return values(got)

        def pairs() -> Any:
            got = torch.zeros(6, dtype=dt, device=dev)
            peer = r ^ 1
            if r % 2 == 0:
                dist.send(data(dt), peer)
                dist.recv(got, peer)
            else:
                work = dist.irecv(got, peer)
                work.wait()
                dist.isend(data(dt, salt=5), peer).wait()
            return values(got)

        for key, fn in [("all_gather", gathered), ("all_gather_into_tensor", gathered_into),
                        ("reduce_scatter_tensor SUM", lambda: scattered("SUM")),
                        ("reduce_scatter_tensor MAX", lambda: scattered("MAX")),
                        ("reduce", reduced), ("broadcast", broadcasted),
                        ("gather", gathered_to_root), ("scatter", scattered_from_root),
                        ("all_to_all_single", lambda: all_to_all(False)),
                        ("all_to_all_single splits", lambda: all_to_all(True)),
                        ("batch_isend_irecv", ring), ("send/recv", pairs)]:
            seen[f"{key} {name}"] = _outcome(fn)

    objs: list[Any] = [None] * n
    if backend == "gloo":
        dist.all_gather_object(objs, {"rank": r, "sq": r * r})
        listed: list[Any] = [f"from {r}", r] if r == 0 else [None, None]
        dist.broadcast_object_list(listed, 0)
        seen["objects"] = (objs, listed)
    if n == 2:  # the functional collectives (real torch's take seconds to import: 2 ranks)
        fc = importlib.import_module(f"{lib_name}.distributed._functional_collectives")
        x = data(torch.float32, 2 * n * n).reshape(2 * n, n)
        ranks = list(range(n))
        seen["functional"] = (
            values(fc.all_reduce(x, "sum", ranks)), values(fc.broadcast(x, 1, ranks)),
            values(fc.all_gather_single(x, 0, ranks)), values(fc.all_gather_single(x, 1, ranks)),
            values(fc.reduce_scatter_single(x, "max", 0, ranks)),
            values(fc.all_to_all_single(x, None, None, ranks)),
            values(fc.wait_tensor(fc.reduce_scatter_single(x, "sum", 1, ranks))))
    sub = dist.new_group([0, 1])
    t = data(torch.float32)
    if r in (0, 1):
        dist.all_reduce(t, group=sub)
    seen["subgroup"] = (values(t), dist.get_rank(sub), dist.get_world_size(sub))
    seen["world"] = (dist.get_rank(), dist.get_world_size(), dist.is_initialized())
    t = data(torch.float32)
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    seen["async"] = (values(t), work.is_completed(), work.is_success())
    dist.barrier()
    dist.destroy_process_group()
    _save(out, rank, seen)


def collectives_each(rank: int, lib_name: str, world: int, ports: list[int],
                     backends: list[str], dtypes: list[str], outs: list[str]) -> None:
    """`collectives` once per backend, one process group after the other, in the same ranks:
    one start-up of the library for all of them."""
    for port, backend, out in zip(ports, backends, outs, strict=True):
        collectives(rank, lib_name, world, port, backend, dtypes, out)


def load(out: str, n: int) -> list[Any]:
    results = []
    for r in range(n):
        with open(os.path.join(out, f"rank{r}.pkl"), "rb") as f:
            results.append(pickle.load(f))
    return results


def init_only(rank: int, lib_name: str, init: str, world: list[int], timeout_s: float,
              out: str) -> None:
    """init_process_group(world_size=world[rank]) then a barrier; records the error, if any."""
    torch = _lib(lib_name)
    dist = torch.distributed

    def run() -> str:
        dist.init_process_group("gloo", init, world_size=world[rank], rank=rank,
                                timeout=timedelta(seconds=timeout_s))
        dist.barrier()
        return "ok"
    _save(out, rank, _outcome(run))


def diverging_graphs(rank: int, port: int, out: str) -> None:
    """Two ranks capture a CUDA graph each; rank 1 captures all_gather where rank 0 captured
    all_reduce. Replay: both must fail within the timeout, naming rank and collective."""
    torch = _lib("fake_torch")
    dist = torch.distributed
    dist.init_process_group("nccl", f"tcp://127.0.0.1:{port}", world_size=2, rank=rank,
                            timeout=timedelta(seconds=2))
    x = torch.ones(4, device="cuda") * (rank + 1)
    outs = [torch.empty(4, device="cuda") for _ in range(2)]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        if rank == 0:
            dist.all_reduce(y)
        else:
            dist.all_gather(outs, y)
    start = time.monotonic()
    result = _outcome(lambda: (g.replay(), torch.cuda.synchronize()))
    _save(out, rank, (result, time.monotonic() - start))


def graph_replay(rank: int, port: int, out: str) -> None:
    """A captured all_reduce replays as a node of the one graph launch, meeting the other rank
    at every replay; eager launch counts and simulated times alongside."""
    torch = _lib("fake_torch")
    dist = torch.distributed
    dist.init_process_group("nccl", f"tcp://127.0.0.1:{port}", world_size=2, rank=rank,
                            timeout=timedelta(seconds=10))
    counter = torch.LaunchCounter
    x = torch.zeros(1024, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x + 1
        dist.all_reduce(y)
    counter.reset()
    sums = []
    for step in range(3):
        x.fill_(float(step * (rank + 1)))
        g.replay()
        sums.append(y.cpu().tolist()[:2])
    graph_counts = dict(counter.by_kind)
    x.fill_(10.0 * (rank + 1))
    g.replay()  # (queued, not yet run) then an eager collective: the graph's goes first
    flag = torch.ones(1, device="cuda") * (rank + 1)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    sums.append([*y.cpu().tolist()[:1], *flag.cpu().tolist()])
    # rank 1 replays, then its host waits for rank 0 without touching the device: its graph's
    # collective must still run (a GPU runs its queue whatever the host does)
    side = dist.FileStore(os.path.join(out, "side"), 2)
    x.fill_(100.0)
    g.replay()
    if rank == 1:
        side.wait(["rank 0 has read"])
    else:
        sums.append(y.cpu().tolist()[:1])
        side.set("rank 0 has read", "yes")
    counter.reset()
    z = torch.ones(1024, device="cuda")
    if rank == 1:
        torch.cuda._sleep(10_000_000)  # a straggler: rank 1 reaches the collective late
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    dist.all_reduce(z)
    end.record()
    end.synchronize()
    _save(out, rank, {"sums": sums, "graph_counts": graph_counts,
                      "eager_ops": dict(counter.by_op), "ms": start.elapsed_time(end),
                      "z": z.cpu().tolist()[:2]})
    dist.destroy_process_group()


def one_rank_fails(rank: int, port: int, out: str) -> None:
    """Rank 1 raises right after init; rank 0's all_reduce must fail within the timeout,
    naming rank 1 and the collective (NCCL would hang)."""
    torch = _lib("fake_torch")
    dist = torch.distributed
    dist.init_process_group("gloo", f"tcp://127.0.0.1:{port}", world_size=2, rank=rank,
                            timeout=timedelta(seconds=1))
    if rank == 1:
        raise SystemExit(3)
    start = time.monotonic()
    seen = _outcome(lambda: dist.all_reduce(torch.ones(2)))
    _save(out, rank, (seen, time.monotonic() - start))
    raise SystemExit(0 if seen[:1] == ("error",) else 1)


def leave_late(rank: int, port: int, out: str) -> None:
    """A barrier, then rank 1 takes half a second before it ends; neither destroys its group.
    Rank 0 (whose process hosts the store) records when its process really ends, in a
    multiprocessing finalizer run after fake_torch's; rank 1, when it leaves."""
    import multiprocessing.util
    import time

    torch = _lib("fake_torch")
    dist = torch.distributed
    dist.init_process_group("gloo", f"tcp://127.0.0.1:{port}", world_size=2, rank=rank,
                            timeout=timedelta(seconds=20))
    dist.barrier()
    if rank == 0:
        multiprocessing.util.Finalize(None, lambda: _save(out, 0, time.monotonic()),
                                      exitpriority=-1)
        return
    time.sleep(0.5)
    _save(out, 1, time.monotonic())
