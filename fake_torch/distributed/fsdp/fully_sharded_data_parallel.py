"""torch.distributed.fsdp.FullyShardedDataParallel (FSDP1): the class exists, so code that asks
`isinstance(module, FullyShardedDataParallel)` runs (no module ever is one); wrapping a module
raises NotImplementedError: sharding parameters across ranks needs several processes and
autograd, and fake_torch has one process and runs forward only."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

from fake_torch._torch_device import device
from fake_torch.distributed._groups import ProcessGroup
from fake_torch.distributed.device_mesh import DeviceMesh
from fake_torch.distributed.fsdp.api import (
    BackwardPrefetch,
    CPUOffload,
    MixedPrecision,
    ShardingStrategy,
)
from fake_torch.nn.modules.module import Module

__all__ = ["FullyShardedDataParallel", "OptimStateKeyType"]


class OptimStateKeyType(enum.Enum):
    """How FSDP1's optimizer state dicts are keyed."""

    PARAM_NAME = 1
    PARAM_ID = 2


class FullyShardedDataParallel(Module):
    """FSDP1's wrapper module (constructing one raises NotImplementedError)."""

    def __init__(self, module: Module,
                 process_group: ProcessGroup | tuple[ProcessGroup, ProcessGroup] | None = None,
                 sharding_strategy: ShardingStrategy | None = None,
                 cpu_offload: CPUOffload | None = None,
                 auto_wrap_policy: Callable[..., Any] | None = None,
                 backward_prefetch: BackwardPrefetch | None = BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision: MixedPrecision | None = None,
                 ignored_modules: Iterable[Module] | None = None,
                 param_init_fn: Callable[[Module], None] | None = None,
                 device_id: int | device | None = None, sync_module_states: bool = False,
                 forward_prefetch: bool = False, limit_all_gathers: bool = True,
                 use_orig_params: bool = False, ignored_states: Iterable[Any] | None = None,
                 device_mesh: DeviceMesh | None = None) -> None:
        raise NotImplementedError(
            "torch.distributed.fsdp.FullyShardedDataParallel: sharding a module's parameters "
            "across ranks (FSDP1) is not emulated by fake_torch (one process, forward only)")
