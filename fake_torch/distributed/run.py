"""torch.distributed.run (torchrun) for one node: start `--nproc-per-node` copies of a script,
each with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
MASTER_PORT, TORCHELASTIC_RUN_ID, ...), with `import torch` meaning fake_torch in each
(`python -m fake_torch run`), and wait for them. The first worker to fail stops the others
(terminate, then kill after a grace period), as torchelastic's local agent does; the exit code
is the failed worker's. So the same script runs under real torchrun and here:

    python -m fake_torch.distributed.run --nproc-per-node 2 train.py --lr 1e-3
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence

__all__ = ["get_args_parser", "main", "run"]

_GRACE_S = 5.0  # terminate, then kill after this long (torchelastic's default 30 s, shorter)


def get_args_parser() -> argparse.ArgumentParser:
    """torchrun's options that matter on one node (the others are accepted and ignored)."""
    p = argparse.ArgumentParser(prog="torchrun", description="fake_torch's torchrun")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1")
    p.add_argument("--nnodes", default="1")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true")
    p.add_argument("--rdzv-backend", "--rdzv_backend", default="static")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", default="")
    p.add_argument("--rdzv-id", "--rdzv_id", default="none")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    p.add_argument("-m", "--module", action="store_true")
    p.add_argument("--no-python", "--no_python", action="store_true")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(args: argparse.Namespace) -> int:
    """Start the workers and wait; the exit code (0, or the first failed worker's)."""
    if args.nnodes not in ("1", "1:1"):
        raise NotImplementedError("torch.distributed.run with --nnodes other than 1: fake_torch "
                                  "runs the ranks of one node")
    if args.no_python or args.max_restarts:
        raise NotImplementedError("torch.distributed.run --no-python / --max-restarts are not "
                                  "emulated by fake_torch")
    n = int(args.nproc_per_node)
    port = _free_port() if args.standalone else args.master_port
    run_id = str(uuid.uuid4()) if args.standalone else args.rdzv_id
    command = [sys.executable, "-m", "fake_torch", "run"]
    if args.module:
        raise NotImplementedError("torch.distributed.run -m MODULE is not emulated by "
                                  "fake_torch: give the script's path")
    workers = []
    for rank in range(n):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), GROUP_RANK="0",
                   ROLE_RANK=str(rank), WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n),
                   ROLE_WORLD_SIZE=str(n), MASTER_ADDR=args.master_addr,
                   MASTER_PORT=str(port), TORCHELASTIC_RUN_ID=run_id,
                   TORCHELASTIC_RESTART_COUNT="0", TORCHELASTIC_MAX_RESTARTS="0",
                   OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        workers.append(subprocess.Popen([*command, args.training_script,
                                         *args.training_script_args], env=env))
    failed = 0
    while any(w.poll() is None for w in workers) and not failed:
        failed = next((w.returncode for w in workers if w.returncode not in (None, 0)), 0)
        time.sleep(0.02)
    failed = failed or next((w.returncode for w in workers if w.returncode), 0)
    _stop(workers)
    return int(failed)


def _stop(workers: Sequence[subprocess.Popen[bytes]]) -> None:
    """Terminate the workers still running; kill those that outlive the grace period."""
    for w in workers:
        if w.poll() is None:
            w.terminate()
    deadline = time.monotonic() + _GRACE_S
    for w in workers:
        try:
            w.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            w.kill()
            w.wait()


def main(args: list[str] | None = None) -> None:
    """torchrun's entry point."""
    sys.exit(run(get_args_parser().parse_args(args)))


if __name__ == "__main__":
    main()
