"""torch.distributed.distributed_c10d: init_process_group, groups and their queries, and the
collectives (fake_torch.distributed._collectives).

    dist.init_process_group("nccl", "tcp://localhost:2333", world_size=2, rank=r)
    dist.all_reduce(x)          # each process one rank; they meet through the store
    dist.destroy_process_group()

World size 1 connects nothing (the url is read, no store is made) and its collectives are the
one-rank identity. With several ranks, the init method's store (rendezvous.py) is where the
ranks meet: at init every rank posts its world size and waits for all the others (within the
timeout; a rank that never arrives, or one that says another world size, raises), then each
collective meets there (_exchange.py). Every rank must call new_group for every group, in the
same order (as torch requires); a rank outside the group gets GroupMember.NON_GROUP_MEMBER.
"""

from __future__ import annotations

import atexit
import multiprocessing.util
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
    P2POp,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_gather_single,
    all_reduce,
    all_to_all_single,
    barrier,
    batch_isend_irecv,
    broadcast,
    broadcast_object_list,
    gather,
    gather_object,
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
from fake_torch.distributed._exchange import Exchange
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
from fake_torch.distributed.rendezvous import rendezvous

__all__ = [
    "Backend",
    "GroupMember",
    "P2POp",
    "PrefixStore",
    "ProcessGroup",
    "ReduceOp",
    "Store",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_gather_single",
    "all_reduce",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_xccl_available",
    "isend",
    "new_group",
    "new_subgroups",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_single",
    "reduce_scatter_tensor",
    "scatter",
    "send",
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
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                         f"[0, {world_size - 1}]")
    name = Backend(backend) if backend else Backend(Backend.UNDEFINED)
    backends = device_backends(name)
    pg = ProcessGroup(name, group_name or "0", device_id, backends, rank,
                      list(range(world_size)))
    if world_size > 1:
        timeout = timeout or _get_default_timeout(name)
        if store is None:  # (the url's own rank/world_size stay in it)
            url = init_method or "env://"
            query = dict(parse_qsl(urlparse(url).query))
            store, rank, world_size = next(rendezvous(
                url, -1 if "rank" in query else rank,
                -1 if "world_size" in query else world_size, timeout=timeout))
        world.store, world.timeout = store, timeout
        pg.exchange = _exchange(pg, store, timeout)
        _meet_at_init(pg)
        atexit.register(_leave_at_exit, pg)
        # a multiprocessing child (mp.spawn's ranks) ends in os._exit, running no atexit
        # function, but its finalizers: rank 0 must not take the store away mid-read
        multiprocessing.util.Finalize(None, _leave_at_exit, args=(pg,), exitpriority=0)
    world.default = pg
    world.groups = [pg]
    world.count = 1


def _leave_at_exit(pg: ProcessGroup) -> None:
    """A process ending without destroy_process_group leaves its group all the same (rank 0's
    process hosts the store: it waits for the others)."""
    if world.default is pg:
        pg.exchange.leave()


def _exchange(pg: ProcessGroup, store: Store, timeout: timedelta) -> Exchange:
    return Exchange(PrefixStore(f"fake_torch_pg{pg.group_name}", store), pg.rank(), pg.size(),
                    timeout, pg.group_name)


def _meet_at_init(pg: ProcessGroup) -> None:
    """Every rank says its world size and waits for the others (a rank that never comes
    raises after the timeout; one with another world size raises here)."""
    for post in pg.exchange.collective("init_process_group()", pg.size()):
        if post.data != pg.size():
            raise ValueError(f"init_process_group: rank {post.rank} was started with "
                             f"world_size={post.data}, rank {pg.rank()} with "
                             f"world_size={pg.size()}: every rank must give the same")


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Destroy `group`, or (None: the default group) every group."""
    pg = world.default if group is None else group
    if pg is None:
        raise AssertionError("Process group cannot be None")
    if pg not in world.groups:
        raise ValueError("Invalid process group specified")
    if pg is world.default:
        if pg.exchange is not None:
            pg.exchange.leave()
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
              device_id: device | None = None,
              sort_ranks: bool = True) -> ProcessGroup | int:
    """A new group of `ranks` (None: all of them); every rank must call it, in the same
    order. A rank outside `ranks` gets GroupMember.NON_GROUP_MEMBER."""
    default = default_group()
    size = default.size()
    ranks = list(range(size)) if ranks is None else list(ranks)
    if sort_ranks:
        ranks = sorted(ranks)
    if len(ranks) > size:
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    for r in ranks:
        if not 0 <= r < size:
            raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to {size - 1} "
                             f"(world_size={size})")
    if not ranks:
        raise NotImplementedError("torch.distributed.new_group([]): a group this rank is not a "
                                  "member of is not emulated by fake_torch")
    name = Backend(backend) if backend else default.backend
    group_name = str(world.count)
    world.count += 1
    me = default.ranks[default.rank()]
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(name, group_name, device_id or default.bound_device_id,
                      device_backends(name), ranks.index(me), ranks)
    if len(ranks) > 1:
        pg.exchange = _exchange(pg, world.store, timeout or world.timeout)
    world.groups.append(pg)
    return pg


def new_subgroups(group_size: int | None = None, group: ProcessGroup | None = None,
                  timeout: timedelta | None = None, backend: str | None = None,
                  pg_options: Any | None = None,
                  group_desc: str | None = None) -> tuple[ProcessGroup, list[ProcessGroup]]:
    """Split the world into groups of `group_size` consecutive ranks: (this rank's group,
    all of them)."""
    if group is not None:
        raise NotImplementedError("torch.distributed.new_subgroups(group=...) is not emulated "
                                  "by fake_torch: it splits the default group")
    size = get_world_size()
    if group_size is None:
        raise NotImplementedError("torch.distributed.new_subgroups() without group_size "
                                  "(the number of local GPUs) is not emulated by fake_torch")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({size})")
    if size % group_size:
        raise ValueError("The world size must be divisible by 'group_size'")
    mine: ProcessGroup | None = None
    subgroups = []
    for start in range(0, size, group_size):
        pg = new_group(list(range(start, start + group_size)), timeout, backend, pg_options)
        if isinstance(pg, ProcessGroup):
            mine = pg
            subgroups.append(pg)
    assert mine is not None  # every rank is in one subgroup
    return mine, subgroups


def get_rank(group: ProcessGroup | int | None = None) -> int:
    """This process's rank in `group` (-1 outside it)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).rank()  # type: ignore[arg-type]


def get_world_size(group: ProcessGroup | int | None = None) -> int:
    """The number of ranks in `group` (-1 outside it)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()  # type: ignore[arg-type]


def get_backend(group: ProcessGroup | None = None) -> Backend:
    """The backend `group` was made with ("undefined": none was given, torch's default)."""
    return Backend(resolve(group).backend)


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of `group`'s members."""
    return list(resolve(group).ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of `group`'s rank `group_rank`."""
    pg = resolve(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group {group} does not contain rank {group_rank}")
    return pg.ranks[group_rank]


def _get_global_rank(group: ProcessGroup, rank: int) -> int:
    """Deprecated spelling of get_global_rank, with torch's FutureWarning (fairscale imports
    it)."""
    warnings.warn("`torch.distributed.distributed_c10d._get_global_rank` is deprecated, please "
                  "use `torch.distributed.distributed_c10d.get_global_rank` instead",
                  FutureWarning, stacklevel=2)
    return get_global_rank(group, rank)


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """`global_rank`'s rank within `group`."""
    pg = resolve(group)
    if global_rank not in pg.ranks:
        raise ValueError(f"Group {group} does not contain rank {global_rank}")
    return pg.ranks.index(global_rank)


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

