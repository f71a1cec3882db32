"""torch.distributions, as far as vLLM, transformers and whisper use it: `constraints`
(complete), the `Distribution` base class, `Normal` (sampling, log_prob, cdf, icdf, entropy),
`Categorical` (sampling, log_prob, entropy, enumerate_support), and the names
transformers imports at module level, whose construction raises NotImplementedError."""

from __future__ import annotations

from fake_torch.distributions import constraints as constraints
from fake_torch.distributions import normal as normal
from fake_torch.distributions._refused import (
    AffineTransform,
    Independent,
    NegativeBinomial,
    StudentT,
    Transform,
    TransformedDistribution,
)
from fake_torch.distributions.categorical import Categorical
from fake_torch.distributions.distribution import Distribution
from fake_torch.distributions.normal import Normal

__all__ = [
    "AffineTransform", "Categorical", "Distribution", "Independent", "NegativeBinomial",
    "Normal", "StudentT", "Transform", "TransformedDistribution", "constraints",
]
