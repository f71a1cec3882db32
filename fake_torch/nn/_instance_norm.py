"""torch.instance_norm and torch.nn.functional.instance_norm: torch's composite
(aten/src/ATen/native/Normalization.cpp), one batch norm over the input viewed (1, N * C, *):

  [`repeat` of weight, bias, running_mean, running_var to N * C, each given], [`clone` of a
  strided input], the batch norm's launch (see fake_torch/_kernels/batch_norm.py: cuDNN's or
  the native one), then, with use_input_stats, per running stat given one `mean` over the
  batch and one `copy_` back.
"""

from __future__ import annotations

from fake_torch._kernels.batch_norm import batch_norm
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Tensor
from fake_torch.backends import cudnn


@op(COMPOSITE, name="instance_norm")
def torch_instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """Normalise each (sample, channel) of (N, C, *) over its positions (use_input_stats), or
    by the running stats; those given are updated with the batch's mean of the per-sample
    stats."""
    _check_stats(use_input_stats, running_mean, running_var)
    b, c = input.shape[0], input.shape[1]
    weight_, bias_, mean_, var_ = (None if t is None else t.repeat(b)
                                   for t in (weight, bias, running_mean, running_var))
    x = input.contiguous().view(1, b * c, *input.shape[2:])
    out = batch_norm(x, mean_, var_, weight_, bias_, use_input_stats, momentum, eps)
    for stat, repeated in ((running_mean, mean_), (running_var, var_)):
        if use_input_stats and stat is not None and repeated is not None:  # eval: unchanged
            stat.copy_(repeated.view(b, c).mean(0, False))
    return out.view(input.shape)


@register_meta("torch.instance_norm")
def _instance_norm_rule(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                        running_mean: Tensor | None, running_var: Tensor | None,
                        use_input_stats: bool, momentum: float, eps: float,
                        cudnn_enabled: bool) -> TensorMeta:
    """The batch norm's output over the contiguous (1, N * C, *) view, viewed back: a fresh
    contiguous tensor of input's shape and dtype."""
    _check_stats(use_input_stats, running_mean, running_var)
    shape = tuple(input.shape)
    return TensorMeta(shape, input.dtype, contiguous_strides(shape))


def _check_stats(use_input_stats: bool, running_mean: Tensor | None,
                 running_var: Tensor | None) -> None:
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")


@op(COMPOSITE, namespace="torch.nn.functional")
def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                   running_var: Tensor | None = None, weight: Tensor | None = None,
                   bias: Tensor | None = None, use_input_stats: bool = True,
                   momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """F.instance_norm: torch's spatial-size check, then torch.instance_norm."""
    _check_spatial(input, use_input_stats)
    return torch_instance_norm(input, weight, bias, running_mean, running_var,
                               use_input_stats, momentum, eps, cudnn.enabled)


@register_meta("torch.nn.functional.instance_norm")
def _F_instance_norm_rule(input: Tensor, running_mean: Tensor | None = None,
                          running_var: Tensor | None = None, weight: Tensor | None = None,
                          bias: Tensor | None = None, use_input_stats: bool = True,
                          momentum: float = 0.1, eps: float = 1e-5) -> TensorMeta:
    _check_spatial(input, use_input_stats)
    return _instance_norm_rule(input, weight, bias, running_mean, running_var,
                               use_input_stats, momentum, eps, cudnn.enabled)


def _check_spatial(input: Tensor, use_input_stats: bool) -> None:
    if use_input_stats:
        count = 1
        for s in input.shape[2:]:
            count *= s
        if count == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.size()}")
