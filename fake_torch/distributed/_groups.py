"""The state of torch.distributed in this process: its process groups (this rank's place in
each, and the Exchange its ranks meet through when there are several), their backends, the
reduce ops, and the Work a collective returns."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "group"]


class ReduceOp:
    """How a reduction combines ranks' values: `ReduceOp.SUM`, `AVG`, `MAX`, ..."""

    class RedOpType(enum.Enum):
        """The op's code (an enum, as torch's; `int(op)` reads it)."""

        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8
        UNUSED = 9

        def __int__(self) -> int:
            return int(self.value)

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


class Backend(str):
    """A backend's name, lower-cased: `Backend("NCCL") == "nccl"`."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        return super().__new__(cls, name.lower())


def device_backends(backend: str) -> dict[str, str]:
    """Which backend serves each device type: "undefined" (no backend given) is gloo for cpu
    and nccl for cuda, as torch's default; "cuda:nccl,cpu:gloo" lists them."""
    if backend == Backend.UNDEFINED:
        return {"cpu": Backend.GLOO, "cuda": Backend.NCCL}
    if ":" not in backend:
        if backend == Backend.MPI:
            raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only "
                               "included if you build PyTorch from source on a host that has "
                               "MPI installed.")
        if backend in (Backend.UCC, Backend.XCCL):
            raise NotImplementedError(f"torch.distributed backend {backend!r}: fake_torch "
                                      "emulates 'nccl' and 'gloo'")
        if backend not in (Backend.NCCL, Backend.GLOO):
            raise AssertionError(f"Unknown backend type {backend}")
        # nccl serves cuda only; gloo serves cpu (cuda tensors on gloo are refused later)
        return {"cuda": backend} if backend == Backend.NCCL else {"cpu": backend, "cuda": backend}
    pairs: dict[str, str] = {}
    for part in backend.split(","):
        dev, _, name = part.strip().partition(":")
        device_backends(Backend(name))  # an unknown or unemulated name raises
        pairs[dev] = Backend(name)
    return pairs


@dataclass(eq=False)
class ProcessGroup:
    """A group of ranks: `ranks` (global ranks, in group-rank order), this process being
    group rank `group_rank`; `exchange` (an _exchange.Exchange) when there are several."""

    backend: str
    group_name: str = ""
    bound_device_id: Any = None
    device_backends: dict[str, str] = field(default_factory=dict)
    group_rank: int = 0
    ranks: list[int] = field(default_factory=lambda: [0])
    exchange: Any = None

    def rank(self) -> int:
        return self.group_rank

    def size(self) -> int:
        return len(self.ranks)

    def name(self) -> str:
        return self.backend


class Work:
    """What a collective with `async_op=True` returns: the collective has run already (an
    irecv receives at `wait()`); an async barrier's host wait happens at `wait()`.
    `done`, when given, says whether `wait()` would return at once."""

    def __init__(self, on_wait: Any = None, done: Any = None) -> None:
        self._on_wait = on_wait
        self._done = done

    def wait(self, timeout: Any = None) -> bool:
        if self._on_wait is not None:
            on_wait, self._on_wait = self._on_wait, None
            on_wait()
        return True

    def is_completed(self) -> bool:
        return self._on_wait is None or self._done is None or bool(self._done())

    def is_success(self) -> bool:
        return True

    def synchronize(self) -> None:
        self.wait()


class _World:
    """The default process group and every group made since; None before init."""

    def __init__(self) -> None:
        self.default: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []
        self.count = 0  # groups made since init (new_group names the next by it)
        self.store: Any = None  # where the ranks meet (several ranks only)
        self.timeout: Any = None


world = _World()


class _WorldMeta(type):
    """`group.WORLD` / `GroupMember.WORLD`: the default group, read when asked."""

    @property
    def WORLD(cls) -> ProcessGroup | None:
        return world.default


class GroupMember(metaclass=_WorldMeta):
    """Group membership markers: `WORLD` (the default group), `NON_GROUP_MEMBER`."""

    NON_GROUP_MEMBER = -100


class group(metaclass=_WorldMeta):
    """`group.WORLD`: the default process group (None before init_process_group)."""


def default_group() -> ProcessGroup:
    """The default group; torch's ValueError before init_process_group."""
    if world.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return world.default


def resolve(pg: ProcessGroup | None) -> ProcessGroup:
    """`group` as a collective gets it: None (or WORLD) is the default group."""
    default = default_group()
    if pg is None:
        return default
    if not isinstance(pg, ProcessGroup) or pg not in world.groups:
        raise ValueError(f"Invalid process group specified: {pg!r}")
    return pg
