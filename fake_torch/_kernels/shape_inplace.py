"""The in-place view ops: unsqueeze_, squeeze_, transpose_, t_, swapdims_, swapaxes_ and
as_strided_. Each rewrites the tensor's own sizes and strides (its storage, dtype and device
stay; other views of the storage keep theirs) and launches nothing, as in torch.

Each takes its checks and its new geometry from the out-of-place view of the same name, then
adopts that view's numpy array as its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from fake_torch._kernels import expand, shape
from fake_torch._kernels.expand import as_strided
from fake_torch._kernels.shape import squeeze, t, transpose, unsqueeze
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import VIEW, method
from fake_torch._tensor import Tensor

# Each rule is its out-of-place view's: the in-place op returns self, laid out as that view.
register_meta("Tensor.unsqueeze_")(shape._unsqueeze_rule)
register_meta("Tensor.squeeze_")(shape._squeeze_rule)
register_meta("Tensor.transpose_", "Tensor.swapdims_", "Tensor.swapaxes_")(shape._transpose_rule)
register_meta("Tensor.as_strided_")(expand._as_strided_rule)


def _adopt(self: Tensor, view: Tensor) -> Tensor:
    """self takes view's geometry (a view of self's own storage) and is returned, in an array
    object of its own (the CUDA sanitizer tells references to memory apart by their arrays)."""
    self._a = view._a.view()
    return self


@method(VIEW)
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """A size-1 dim inserted at `dim`, in place."""
    return _adopt(self, unsqueeze(self, dim))


@method(VIEW)
def squeeze_(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Size-1 dims dropped (all of them, or those named in `dim`), in place."""
    return _adopt(self, squeeze(self, dim))


@method(VIEW)
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """dim0 and dim1 swapped, in place."""
    return _adopt(self, transpose(self, dim0, dim1))


@method(VIEW)
def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return _adopt(self, transpose(self, dim0, dim1))


@method(VIEW)
def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return _adopt(self, transpose(self, axis0, axis1))


@method(VIEW)
def t_(self: Tensor) -> Tensor:
    """A matrix transposed in place (0-D and 1-D tensors stay); torch's error beyond 2-D."""
    _t_checked(self)
    return _adopt(self, t(self))


@register_meta("Tensor.t_")
def _t__rule(self: Tensor) -> TensorMeta:
    return shape._t_rule(_t_checked(self))


def _t_checked(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    return self


@method(VIEW)
def as_strided_(self: Tensor, size: Sequence[int], stride: Sequence[int],
                storage_offset: int | None = None) -> Tensor:
    """Explicit sizes, strides and (storage-absolute) offset over the same storage, in place."""
    return _adopt(self, as_strided(self, size, stride, storage_offset))
