"""torch.distributed.fsdp: FSDP1 (FullyShardedDataParallel and its options, api.py) and FSDP2
(`fully_shard`, FSDPModule and their policies). The options and policies are torch's enums and
dataclasses, so configuration code can build them, and the classes exist, so `isinstance`
checks run; sharding a module across processes is not emulated, so constructing
FullyShardedDataParallel and calling `fully_shard` raise NotImplementedError."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fake_torch._dtype import dtype
from fake_torch.distributed.device_mesh import DeviceMesh
from fake_torch.distributed.fsdp.api import (
    BackwardPrefetch,
    CPUOffload,
    FullOptimStateDictConfig,
    FullStateDictConfig,
    LocalOptimStateDictConfig,
    LocalStateDictConfig,
    MixedPrecision,
    OptimStateDictConfig,
    ShardedOptimStateDictConfig,
    ShardedStateDictConfig,
    ShardingStrategy,
    StateDictConfig,
    StateDictSettings,
    StateDictType,
)
from fake_torch.distributed.fsdp.fully_sharded_data_parallel import (
    FullyShardedDataParallel,
    OptimStateKeyType,
)

__all__ = [
    "BackwardPrefetch",
    "CPUOffload",
    "CPUOffloadPolicy",
    "DataParallelMeshDims",
    "FSDPModule",
    "FullOptimStateDictConfig",
    "FullStateDictConfig",
    "FullyShardedDataParallel",
    "LocalOptimStateDictConfig",
    "LocalStateDictConfig",
    "MixedPrecision",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "OptimStateDictConfig",
    "OptimStateKeyType",
    "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig",
    "ShardingStrategy",
    "StateDictConfig",
    "StateDictSettings",
    "StateDictType",
    "UnshardHandle",
    "fully_shard",
    "register_fsdp_forward_method",
    "share_comm_ctx",
]


@dataclass
class OffloadPolicy:
    """No offloading (the base of the offload policies)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep sharded parameters, gradients and optimizer state on the CPU (`pin_memory`: in
    pinned memory)."""

    pin_memory: bool = True


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """The dtypes FSDP2 computes, reduces and outputs in (None: the parameters' own)."""

    param_dtype: dtype | None = None
    reduce_dtype: dtype | None = None
    output_dtype: dtype | None = None
    cast_forward_inputs: bool = True


_NO_OFFLOAD = OffloadPolicy()  # fully_shard's default, as torch's


def fully_shard(module: Any, *, mesh: DeviceMesh | None = None,
                reshard_after_forward: bool | int | None = None,
                shard_placement_fn: Callable[[Any], Any] | None = None,
                mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),
                offload_policy: OffloadPolicy = _NO_OFFLOAD,
                ignored_params: set[Any] | None = None,
                dp_mesh_dims: Any | None = None) -> Any:
    """Shard `module`'s parameters across the data-parallel ranks (raises
    NotImplementedError)."""
    raise NotImplementedError("torch.distributed.fsdp.fully_shard: sharding a module across "
                              "processes (FSDP2) is not emulated by fake_torch")


@dataclass
class DataParallelMeshDims:
    """The device-mesh dims fully_shard shards over and replicates over."""

    shard: str | tuple[str, ...] | None = None
    replicate: str | tuple[str, ...] | None = None


class FSDPModule:
    """The class fully_shard mixes into a module it shards (`isinstance(m, FSDPModule)`); no
    module is one in fake_torch, and making one directly raises NotImplementedError."""

    def __new__(cls, *args: Any, **kwargs: Any) -> FSDPModule:
        raise NotImplementedError("torch.distributed.fsdp.FSDPModule: made by fully_shard, "
                                  "which fake_torch does not emulate")


class UnshardHandle:
    """The handle of an asynchronous FSDPModule.unshard (`wait()`)."""

    def wait(self) -> None:
        return None


def register_fsdp_forward_method(module: Any, method_name: str) -> None:
    """Make a method other than forward run FSDP's hooks: nothing to do for a module that is
    no FSDPModule (as torch, which returns)."""
    if isinstance(module, FSDPModule):  # (none can exist here)
        raise NotImplementedError("torch.distributed.fsdp.register_fsdp_forward_method")


def share_comm_ctx(modules: list[FSDPModule]) -> None:
    """Share the communication streams of FSDP roots: nothing for an empty list; torch's
    ValueError for anything that is no FSDPModule."""
    for module in modules:
        if not isinstance(module, FSDPModule):
            raise ValueError(f"Expects list of FSDPModules but got {module}")
