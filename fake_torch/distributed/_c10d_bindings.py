"""torch._C._distributed_c10d: the c10d bindings torch.distributed is built on, as far as code
outside torch reads them (vLLM: `Store` in annotations, `_register_process_group`,
`_SymmetricMemory.has_multicast_support`). fake_torch.distributed registers this module as
`fake_torch._C._distributed_c10d` (torch._C is a module here, not a package)."""

from __future__ import annotations

from typing import Any

from fake_torch.distributed._file_store import FileStore
from fake_torch.distributed._groups import ProcessGroup
from fake_torch.distributed._store import (
    DistError,
    DistNetworkError,
    DistStoreError,
    HashStore,
    PrefixStore,
    Store,
)
from fake_torch.distributed._tcp_store import TCPStore
from fake_torch.distributed.constants import default_pg_nccl_timeout, default_pg_timeout

__all__ = [
    "_DEFAULT_PG_NCCL_TIMEOUT",
    "_DEFAULT_PG_TIMEOUT",
    "DistError",
    "DistNetworkError",
    "DistStoreError",
    "FileStore",
    "HashStore",
    "PrefixStore",
    "Store",
    "TCPStore",
    "_SymmetricMemory",
    "_register_process_group",
    "_resolve_process_group",
    "_unregister_all_process_groups",
    "_unregister_process_group",
]

_DEFAULT_PG_TIMEOUT = default_pg_timeout
_DEFAULT_PG_NCCL_TIMEOUT = default_pg_nccl_timeout

_registry: dict[str, ProcessGroup] = {}  # c10d's process-group registry, by group name


def _register_process_group(group_name: str, group: ProcessGroup) -> None:
    """Register `group` under `group_name` (what `_resolve_process_group` finds)."""
    if group_name in _registry:
        raise RuntimeError(f"Process group name {group_name} is already registered")
    _registry[group_name] = group


def _resolve_process_group(group_name: str) -> ProcessGroup:
    """The group registered under `group_name`."""
    if group_name not in _registry:
        raise RuntimeError(f"Could not resolve the process group registered under the name "
                           f"{group_name}")
    return _registry[group_name]


def _unregister_process_group(group_name: str) -> None:
    """Forget `group_name`'s group (no error when none is registered)."""
    _registry.pop(group_name, None)


def _unregister_all_process_groups() -> None:
    """Forget every registered group."""
    _registry.clear()


class _SymmetricMemory:
    """c10d's symmetric memory handle. fake_torch simulates one GPU and no NVSwitch, so the
    queries say what such a machine has; making one raises (see
    torch.distributed._symmetric_memory)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("torch._C._distributed_c10d._SymmetricMemory: symmetric "
                                  "memory across GPUs is not emulated by fake_torch")

    @staticmethod
    def has_multicast_support(device_type: Any, device_idx: int) -> bool:
        """Whether the device can multicast (NVLS): no, a single simulated GPU has no
        NVSwitch."""
        return False
