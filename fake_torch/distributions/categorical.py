"""torch.distributions.Categorical: K events with probabilities `probs` (normalised to sum to 1)
or log-probabilities `logits` (normalised by their logsumexp), batched over the leading dims.
Whisper samples its tokens at temperature > 0 with `Categorical(logits=...).sample()`.

The other parameterisation is derived on first use and kept, as torch's lazy properties are:
probs = softmax(logits), logits = log(probs clamped into (0, 1)). Sampling is torch.multinomial
with replacement over the rows; log_prob gathers from the logits. The ops are torch's, so the
launches are the ones torch's Python code makes.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

from fake_torch._dtype import finfo, int64
from fake_torch._factories import arange, full
from fake_torch._kernels.expand import broadcast_tensors
from fake_torch._kernels.logsumexp import logsumexp
from fake_torch._kernels.sampling import multinomial
from fake_torch._tensor import Size, Tensor
from fake_torch.distributions import constraints
from fake_torch.distributions.distribution import Distribution


class Categorical(Distribution):
    """A categorical distribution over {0, ..., K-1}, given `probs` or `logits` (not both)."""

    arg_constraints = {"probs": constraints.simplex,  # noqa: RUF012
                       "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            assert logits is not None
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logsumexp(logits, -1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = Size(self._param.size()[:-1]) if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = type(self).__new__(type(self)) if _instance is None else _instance
        batch_shape = Size(batch_shape)
        param_shape = Size((*batch_shape, self._num_events))
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self._num_events - 1)

    @cached_property
    def logits(self) -> Tensor:
        eps = finfo(self.probs.dtype).eps  # torch's clamp_probs: into (0, 1)
        out: Tensor = self.probs.clamp(min=eps, max=1 - eps).log()
        return out

    @cached_property
    def probs(self) -> Tensor:
        out: Tensor = self.logits.softmax(-1)
        return out

    @property
    def param_shape(self) -> Size:
        return Size(self._param.size())

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self) -> Tensor:
        out: Tensor = self.probs.argmax(dim=-1)
        return out

    @property
    def variance(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    def sample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        """Indices drawn by multinomial with replacement: sample_shape + batch_shape."""
        sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        out: Tensor = samples_2d.reshape(self._extended_shape(sample_shape))
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        out: Tensor = log_pmf.gather(-1, value[..., :1]).squeeze(-1)
        return out

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        out: Tensor = -(logits * self.probs).sum(-1)
        return out

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events, dtype=int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1, *self._batch_shape))
        return values
