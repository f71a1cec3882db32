"""torch.distributed._symmetric_memory: buffers every GPU of a group maps (NVLink peer memory,
multicast). fake_torch simulates one GPU and no NVSwitch: the queries say so, and making or
rendezvousing a buffer raises NotImplementedError naming the API."""

from __future__ import annotations

from typing import Any

from fake_torch._tensor import Tensor

__all__ = ["empty", "is_nvshmem_available", "rendezvous"]


def _unsupported(api: str) -> NotImplementedError:
    return NotImplementedError(f"torch.distributed._symmetric_memory.{api}: symmetric memory "
                               "across GPUs is not emulated by fake_torch")


def empty(*size: Any, dtype: Any | None = None, device: Any | None = None) -> Tensor:
    """A tensor in symmetric memory (raises NotImplementedError)."""
    raise _unsupported("empty")


def rendezvous(tensor: Tensor, group: Any) -> Any:
    """Exchange a symmetric tensor's handles with the group (raises NotImplementedError)."""
    raise _unsupported("rendezvous")


def is_nvshmem_available() -> bool:
    """Whether NVSHMEM is built in: no."""
    return False
