"""torch.distributed.tensor._utils: the helper transformers imports; it needs a DeviceMesh,
which fake_torch does not build."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_torch.distributed.device_mesh import DeviceMesh
from fake_torch.distributed.tensor.placement_types import Placement

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(
        global_shape: Any, mesh: DeviceMesh, placements: Sequence[Placement],
        skip_offset: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """This rank's shard shape and offset in the global tensor (raises NotImplementedError)."""
    raise NotImplementedError(
        "torch.distributed.tensor._utils.compute_local_shape_and_global_offset: device meshes "
        "are not emulated by fake_torch")
