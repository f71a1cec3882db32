"""The distributions and transforms transformers imports by name (time_series_utils) that
fake_torch does not emulate: importing and subclassing them works; constructing one raises
NotImplementedError naming the torch API."""

from __future__ import annotations

from typing import Any, NoReturn

from fake_torch._tensor import Tensor
from fake_torch.distributions.distribution import Distribution


def _refuse(name: str) -> NoReturn:
    raise NotImplementedError(f"torch.distributions.{name} is not emulated by fake_torch")


class Transform:
    """Base of the invertible maps between distributions (not emulated)."""

    def __init__(self, cache_size: int = 0) -> None:
        _refuse(type(self).__name__)


class AffineTransform(Transform):
    """loc + scale * x (not emulated)."""

    def __init__(self, loc: Tensor | float, scale: Tensor | float, event_dim: int = 0,
                 cache_size: int = 0) -> None:
        _refuse("AffineTransform")


class Independent(Distribution):
    """Batch dims reinterpreted as event dims (not emulated)."""

    def __init__(self, base_distribution: Any, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        _refuse("Independent")


class TransformedDistribution(Distribution):
    """A base distribution pushed through transforms (not emulated)."""

    def __init__(self, base_distribution: Distribution, transforms: Transform | list[Transform],
                 validate_args: bool | None = None) -> None:
        _refuse("TransformedDistribution")


class NegativeBinomial(Distribution):
    """Failures before `total_count` successes (not emulated)."""

    def __init__(self, total_count: Tensor | float, probs: Tensor | None = None,
                 logits: Tensor | None = None, validate_args: bool | None = None) -> None:
        _refuse("NegativeBinomial")


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom (not emulated)."""

    def __init__(self, df: Tensor | float, loc: Tensor | float = 0.0,
                 scale: Tensor | float = 1.0, validate_args: bool | None = None) -> None:
        _refuse("StudentT")
