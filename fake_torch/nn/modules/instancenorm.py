"""InstanceNorm1d/2d/3d: batch norm's parameters and buffers (_NormBase), with torch's
defaults affine=False and track_running_stats=False; forward: F.instance_norm (see
fake_torch/nn/_instance_norm.py), an unbatched input as a batch of one. Not emulated: the
pre-0.4 checkpoint fix-up torch's _load_from_state_dict makes (dropping running stats a
state_dict carries for a module that does not track them)."""

from __future__ import annotations

import warnings

from fake_torch._dtype import dtype
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.nn import functional as F
from fake_torch.nn.modules.batchnorm import _NormBase


class _InstanceNorm(_NormBase):
    """Normalises each (sample, channel) over its positions."""

    _no_batch_dim: int  # the dims of an unbatched input

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 device: DeviceLike | None = None, dtype: dtype | None = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _get_no_batch_dim(self) -> int:
        return self._no_batch_dim

    def _check_input_dim(self, input: Tensor) -> None:
        n = self._no_batch_dim
        if input.dim() not in (n, n + 1):
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        if input.dim() == self._get_no_batch_dim():
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L)."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W)."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W)."""

    _no_batch_dim = 4


__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
