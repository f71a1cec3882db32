"""torch.distributed.device_mesh: the names, so code that imports them (vLLM, transformers)
loads. A mesh lays ranks of a multi-process job out in n dimensions; fake_torch runs one process
and builds none: making one raises NotImplementedError naming the API."""

from __future__ import annotations

from typing import Any

__all__ = ["DeviceMesh", "init_device_mesh"]


def _unsupported(api: str) -> NotImplementedError:
    return NotImplementedError(f"{api}: device meshes (DTensor, FSDP2, tensor parallelism "
                               "across processes) are not emulated by fake_torch")


class DeviceMesh:
    """A device mesh (torch's constructor; making one raises NotImplementedError)."""

    def __init__(self, device_type: str, mesh: Any | None = None, *,
                 mesh_dim_names: tuple[str, ...] | None = None,
                 backend_override: tuple[tuple[str | None, Any | None], ...] | None = None,
                 _init_backend: bool = True, _rank: int | None = None,
                 _layout: Any | None = None, _rank_map: Any | None = None,
                 _root_mesh: DeviceMesh | None = None) -> None:
        raise _unsupported("torch.distributed.device_mesh.DeviceMesh")


def init_device_mesh(device_type: str, mesh_shape: tuple[int, ...], *,
                     mesh_dim_names: tuple[str, ...] | None = None,
                     backend_override: dict[int | str, Any] | None = None) -> DeviceMesh:
    """Make a DeviceMesh of `mesh_shape` (raises NotImplementedError)."""
    raise _unsupported("torch.distributed.device_mesh.init_device_mesh")
