"""BatchNorm1d, BatchNorm2d and BatchNorm3d: per-channel normalisation with learnable weight
(ones) and bias (zeros), and running_mean (zeros), running_var (ones) and num_batches_tracked
(0, int64) buffers.

forward: in training (the default), one `add_` on num_batches_tracked, then F.batch_norm with
the batch's statistics, which updates the running ones in place (momentum=None: their
cumulative average, reading num_batches_tracked on the host, as torch does); in eval,
F.batch_norm with the running statistics. F.batch_norm is one `cudnn_batch_norm` on cuda (see
fake_torch/_kernels/batch_norm.py for when torch picks cuDNN), else one `native_batch_norm`.
"""

from __future__ import annotations

from fake_torch._dtype import dtype, int64
from fake_torch._factories import ones, public_entry, tensor, zeros
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.nn import functional as F
from fake_torch.nn.modules._affine import register_affine, reset_affine
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter

# torch.zeros, torch.ones, torch.tensor as torch's Python calls them: through the door (the
# default device's mode sees them)
torch_zeros, torch_ones, torch_tensor = public_entry(zeros), public_entry(ones), \
    public_entry(tensor)


class _NormBase(Module):
    """The parameters and running statistics batch norms share."""

    num_features: int
    eps: float
    momentum: float | None
    affine: bool
    track_running_stats: bool
    weight: Parameter | None
    bias: Parameter | None
    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 device: DeviceLike | None = None, dtype: dtype | None = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        register_affine(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean",
                                 torch_zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var",
                                 torch_ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 torch_tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.running_mean is not None and self.running_var is not None \
                and self.num_batches_tracked is not None:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        reset_affine(self.weight, self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """Normalises over every dim but 1 (the channels)."""

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average: a host read, as in torch
                factor = 1.0 / float(self.num_batches_tracked)
        # eval normalises with the running stats unless there are none
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
