"""torch.distributions.Normal: N(loc, scale**2), batched by broadcasting loc and scale.
Sampling draws with torch.normal (rsample: a standard normal_ fill scaled and shifted);
log_prob, cdf, icdf (erfinv) and entropy compose elementwise ops as torch's do."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from fake_torch._dtype import get_default_dtype
from fake_torch._factories import empty, tensor
from fake_torch._grad_mode import no_grad
from fake_torch._kernels.expand import broadcast_tensors
from fake_torch._kernels.random import normal
from fake_torch._tensor import Size, Tensor
from fake_torch.distributions import constraints
from fake_torch.distributions.distribution import Distribution


def broadcast_all(*values: Tensor | float) -> tuple[Tensor, ...]:
    """Numbers become tensors of the first tensor's dtype and device (the default dtype when
    all are numbers); then all broadcast to one shape."""
    if not all(isinstance(v, Tensor | Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dt = like.dtype if like is not None else get_default_dtype()
    dev = like.device if like is not None else None
    ts = [v if isinstance(v, Tensor) else tensor(v, dtype=dt, device=dev) for v in values]
    return tuple(broadcast_tensors(*ts))


class Normal(Distribution):
    """The normal (Gaussian) distribution with mean `loc` and standard deviation `scale`."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}  # noqa: RUF012
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, Number) and isinstance(scale, Number)
        batch_shape = Size() if both_numbers else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        out: Tensor = self.stddev.pow(2)
        return out

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        with no_grad():
            out: Tensor = normal(self.loc.expand(shape), self.scale.expand(shape))
        return out

    def rsample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        shape = self._extended_shape(sample_shape)
        eps = empty(shape, dtype=self.loc.dtype, device=self.loc.device).normal_()
        out: Tensor = self.loc + eps * self.scale
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        out: Tensor = (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                       - math.log(math.sqrt(2 * math.pi)))
        return out

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        out: Tensor = 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal()
                                  / math.sqrt(2)).erf())
        return out

    def icdf(self, value: Tensor) -> Tensor:
        out: Tensor = self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)
        return out

    def entropy(self) -> Tensor:
        out: Tensor = 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
        return out
