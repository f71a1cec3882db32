"""Views that read an element more than once: torch.meshgrid (coordinate grids, stride-0 dims)
and Tensor.unfold (sliding windows). No launches, as in torch, where both are views.
"""

from __future__ import annotations

import warnings
from typing import Any

from fake_torch._kernels._common import common_device
from fake_torch._kernels._strides import (
    Geometry,
    geometry,
    infer_size,
    numel,
    view_from,
    view_meta,
    view_strides,
)
from fake_torch._kernels.expand import expand, expand_geometry
from fake_torch._kernels.shape import view
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, VIEW, method, op
from fake_torch._tensor import Tensor, wrap_dim

_warned: list[bool] = []


@op(COMPOSITE)
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """One grid per 0-d or 1-d input, each expanded to every input's length: with "ij" the
    k-th input varies along dim k; with "xy" the first two dims swap (x along columns)."""
    grids, swap = _meshgrid_args(tensors, indexing)
    shape = [t.numel() for _, t in grids]
    out = []
    for k, (_, t) in enumerate(grids):
        lined = [1] * len(grids)
        lined[k] = -1
        out.append(expand(view(t, *lined), *shape))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


@register_meta("torch.meshgrid")
def _meshgrid_rule(*tensors: Any, indexing: str | None = None) -> tuple[TensorMeta, ...]:
    """Each grid: its input viewed along its own dim, expanded (stride 0) along the others."""
    grids, swap = _meshgrid_args(tensors, indexing)
    shape = tuple(numel(t.shape) for _, t in grids)
    out = []
    for k, (i, t) in enumerate(grids):
        lined = [1] * len(grids)
        lined[k] = -1
        sizes = infer_size(lined, numel(t.shape))
        strides = view_strides(tuple(t.shape), tuple(t.stride()), sizes)
        assert strides is not None  # (a 0-D or 1-D tensor views as any such line)
        out.append(view_meta(t, expand_geometry(t, (shape,), (sizes, strides,
                                                              t.storage_offset())), i))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def _meshgrid_args(tensors: tuple[Any, ...], indexing: str | None
                   ) -> tuple[list[tuple[int, Tensor]], bool]:
    """meshgrid's checks: its inputs (each with its position among the call's tensors), in
    grid order, and whether "xy" swapped the first two."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        if not _warned:  # once a process, as torch's TORCH_WARN_ONCE
            _warned.append(True)
            warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                          "the indexing argument.", UserWarning, stacklevel=3)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    grids = list(enumerate(tensors))
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    common_device(*tensors)
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    swap = indexing == "xy" and len(grids) >= 2
    if swap:  # "xy" is "ij" with the first two inputs (and outputs) swapped
        grids[0], grids[1] = grids[1], grids[0]
    return grids, swap


@method(VIEW)
def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of `size` elements along `dimension`, `step` apart: that dim's size becomes
    the window count and a new last dim of `size` walks each window."""
    return view_from(self, unfold_geometry(self, dimension, size, step))


@register_meta("Tensor.unfold")
def _unfold_rule(self: Tensor, dimension: int, size: int, step: int) -> TensorMeta:
    return view_meta(self, unfold_geometry(self, dimension, size, step))


def unfold_geometry(self: Tensor, dimension: int, size: int, step: int) -> Geometry:
    d = wrap_dim(dimension, max(self.dim(), 1))
    max_size = self.shape[d] if self.dim() else 1
    if size > max_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {max_size} but size "
                           f"is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    g = geometry(self)
    shape, strides = list(g[0]), list(g[1])
    inner = strides[d] if self.dim() else 1
    if self.dim():
        shape[d] = (shape[d] - size) // step + 1
        strides[d] = strides[d] * step
    return (*shape, size), (*strides, inner), g[2]
