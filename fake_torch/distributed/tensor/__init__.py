"""torch.distributed.tensor (DTensor): the placement types work as values
(tensor/placement_types.py); a DTensor needs a DeviceMesh, which fake_torch does not build
(device_mesh.py), so making or distributing one raises NotImplementedError naming the API.
`isinstance(t, DTensor)` is False for every tensor fake_torch makes, as it is in torch for a
tensor no DTensor API made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_torch._tensor import Tensor
from fake_torch.distributed.device_mesh import DeviceMesh
from fake_torch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "Partial", "Placement", "Replicate", "Shard", "distribute_tensor"]


def _unsupported(api: str) -> NotImplementedError:
    return NotImplementedError(f"{api}: DTensor (a tensor sharded over a device mesh of several "
                               "processes) is not emulated by fake_torch")


class DTensor(Tensor):
    """A tensor sharded over a DeviceMesh (torch's class; none can be made here)."""

    _torch_function_on_first_instance = True  # none is ever made: ops need not check for it

    def __new__(cls, *args: Any, **kwargs: Any) -> DTensor:
        raise _unsupported("torch.distributed.tensor.DTensor")

    @staticmethod
    def from_local(local_tensor: Tensor, device_mesh: DeviceMesh | None = None,
                   placements: Sequence[Placement] | None = None, *, run_check: bool = False,
                   shape: Any | None = None, stride: tuple[int, ...] | None = None,
                   grad_placements: Sequence[Placement] | None = None) -> DTensor:
        """A DTensor from each rank's local shard (raises NotImplementedError)."""
        raise _unsupported("torch.distributed.tensor.DTensor.from_local")


def distribute_tensor(tensor: Tensor, device_mesh: DeviceMesh | None = None,
                      placements: Sequence[Placement] | None = None, *,
                      src_data_rank: int | None = 0) -> DTensor:
    """Shard `tensor` over `device_mesh` (raises NotImplementedError)."""
    raise _unsupported("torch.distributed.tensor.distribute_tensor")
