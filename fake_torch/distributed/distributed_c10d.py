"""torch.distributed.distributed_c10d for ONE process: init_process_group with world_size 1
(any backend torch builds with a CUDA GPU, any init_method; nothing is connected), the group
queries, and the collectives (fake_torch.distributed._collectives) as the one-rank identity.

    dist.init_process_group("nccl", "tcp://localhost:2333", world_size=1, rank=0)
    dist.all_reduce(x)          # x already holds the sum over one rank: no launch
    dist.destroy_process_group()

world_size > 1 raises NotImplementedError: there is no second process to talk to.
"""

from __future__ import annotations

import os
import warnings
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlparse

from fake_torch._torch_device import device
from fake_torch.distributed._c10d_bindings import (
    _unregister_process_group as _unregister_process_group,  # torch's c10d reads it
)
from fake_torch.distributed._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_gather_single,
    all_reduce,
    all_to_all_single,
    barrier,
    broadcast,
    broadcast_object_list,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_single,
    reduce_scatter_tensor,
    scatter,
    send,
)
from fake_torch.distributed._groups import (
    Backend,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    Work,
    default_group,
    device_backends,
    group,
    resolve,
    world,
)
from fake_torch.distributed._store import PrefixStore, Store
from fake_torch.distributed.constants import default_pg_nccl_timeout, default_pg_timeout

__all__ = [
    "Backend", "GroupMember", "PrefixStore", "ProcessGroup", "ReduceOp", "Store", "Work",
    "all_gather", "all_gather_into_tensor", "all_gather_object", "all_gather_single", "all_reduce",
    "all_to_all_single", "barrier", "broadcast", "broadcast_object_list", "default_pg_timeout",
    "destroy_process_group", "gather", "get_backend", "get_global_rank", "get_group_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
    "irecv", "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "is_xccl_available", "isend", "new_group", "recv", "reduce",
    "reduce_scatter", "reduce_scatter_single", "reduce_scatter_tensor", "scatter", "send",
]


def _rendezvous(init_method: str, rank: int, world_size: int) -> tuple[int, int]:
    """(rank, world_size) as torch's rendezvous handlers read them, with their errors; the
    addresses are read and never connected to."""
    url = urlparse(init_method)
    query = dict(parse_qsl(url.query))
    if rank != -1:
        query["rank"] = str(rank)
    if world_size != -1:
        query["world_size"] = str(world_size)

    def error(msg: str) -> ValueError:
        return ValueError(f"Error initializing torch.distributed using {url.scheme}:// "
                          f"rendezvous: {msg}")

    if url.scheme == "env":
        def env(name: str) -> str:
            value = os.environ.get(name)
            if not value:
                raise error(f"environment variable {name} expected, but not set")
            return value

        rank = int(query["rank"]) if "rank" in query else int(env("RANK"))
        world_size = (int(query["world_size"]) if "world_size" in query
                      else int(env("WORLD_SIZE")))
        env("MASTER_ADDR")
        env("MASTER_PORT")
        return rank, world_size
    if url.scheme not in ("tcp", "file"):
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    if url.scheme == "tcp" and url.port is None:
        raise error("port number missing")
    if "rank" not in query:
        raise error("rank parameter missing")
    if "world_size" not in query:
        raise error("world size parameter missing")
    return int(query["rank"]), int(query["world_size"])


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Any | None = None, group_name: str = "",
                       pg_options: Any | None = None, device_id: device | int | None = None,
                       _ranks: list[int] | None = None) -> None:
    """Make the default process group: this process, rank 0 of world_size 1."""
    if world.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        if world_size <= 0:
            raise AssertionError("world_size must be positive if using store")
        if rank < 0:
            raise AssertionError("rank must be non-negative if using store")
    else:
        rank, world_size = _rendezvous(init_method or "env://", rank, world_size)
    if world_size != 1:
        raise NotImplementedError(
            f"torch.distributed.init_process_group(world_size={world_size}): fake_torch runs "
            "one process and emulates world_size 1 only (rank 0)")
    if rank != 0:
        raise ValueError(f"Invalid rank {rank}: with world_size 1 the only rank is 0")
    name = Backend(backend) if backend else Backend(Backend.UNDEFINED)
    pg = ProcessGroup(name, group_name or "0", device_id, device_backends(name))
    world.default = pg
    world.groups = [pg]


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Destroy `group`, or (None: the default group) every group."""
    pg = world.default if group is None else group
    if pg is None:
        raise AssertionError("Process group cannot be None")
    if pg not in world.groups:
        raise ValueError("Invalid process group specified")
    if pg is world.default:
        world.default = None
        world.groups = []
    else:
        world.groups.remove(pg)


def is_initialized() -> bool:
    """Whether init_process_group has made the default group."""
    return world.default is not None


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None,
              backend: str | None = None, pg_options: Any | None = None,
              use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: device | None = None, sort_ranks: bool = True) -> ProcessGroup:
    """A new group of `ranks` (None: all of them, i.e. rank 0)."""
    default = default_group()
    ranks = [0] if ranks is None else list(ranks)
    if len(ranks) > 1:
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    for r in ranks:
        if r != 0:
            raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to 0 (world_size=1)")
    if not ranks:
        raise NotImplementedError("torch.distributed.new_group([]): a group this rank is not a "
                                  "member of is not emulated by fake_torch")
    name = Backend(backend) if backend else default.backend
    pg = ProcessGroup(name, str(len(world.groups)), device_id or default.bound_device_id,
                      device_backends(name))
    world.groups.append(pg)
    return pg


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in `group`: 0."""
    resolve(group)
    return 0


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of ranks in `group`: 1."""
    resolve(group)
    return 1


def get_backend(group: ProcessGroup | None = None) -> Backend:
    """The backend `group` was made with ("undefined": none was given, torch's default)."""
    return Backend(resolve(group).backend)


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of `group`'s members: [0]."""
    resolve(group)
    return [0]


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of `group`'s rank `group_rank`."""
    resolve(group)
    if group_rank != 0:
        raise ValueError(f"Group {group} does not contain rank {group_rank}")
    return 0


def _get_global_rank(group: ProcessGroup, rank: int) -> int:
    """Deprecated spelling of get_global_rank, with torch's FutureWarning (fairscale imports
    it)."""
    warnings.warn("`torch.distributed.distributed_c10d._get_global_rank` is deprecated, please "
                  "use `torch.distributed.distributed_c10d.get_global_rank` instead",
                  FutureWarning, stacklevel=2)
    return get_global_rank(group, rank)


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """`global_rank`'s rank within `group`."""
    resolve(group)
    if global_rank != 0:
        raise ValueError(f"Group {group} does not contain rank {global_rank}")
    return 0


def is_nccl_available() -> bool:
    return True


def is_gloo_available() -> bool:
    return True


def is_mpi_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    """Whether torchrun (torchelastic) started this process."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _get_default_group() -> ProcessGroup:
    """The default process group (what runner code reads through this private name)."""
    return default_group()


def is_xccl_available() -> bool:
    """Whether the XCCL (Intel GPU) backend is built in: no, fake_torch is a CUDA build."""
    return False


def _get_default_timeout(backend: Backend) -> timedelta:
    """The default timeout of a `backend` process group: 10 minutes for nccl, 30 for the
    others (torch.distributed.constants)."""
    if backend == Backend.NCCL:
        if not isinstance(default_pg_nccl_timeout, timedelta):
            warnings.warn("Attempted to get default timeout for nccl backend, but NCCL support "
                          "is not compiled", stacklevel=2)
            return default_pg_timeout
        return default_pg_nccl_timeout
    return default_pg_timeout

