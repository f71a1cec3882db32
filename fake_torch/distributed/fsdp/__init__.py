"""torch.distributed.fsdp (FSDP2's policies and `fully_shard`): the policies are torch's
dataclasses, so configuration code can build them; sharding a module across processes is not
emulated, so `fully_shard` raises NotImplementedError when called."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fake_torch._dtype import dtype
from fake_torch.distributed.device_mesh import DeviceMesh

__all__ = ["CPUOffloadPolicy", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard"]


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
