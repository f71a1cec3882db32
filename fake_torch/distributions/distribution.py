"""torch.distributions.Distribution: the base class, with torch's argument validation
(`validate_args`, on by default as under Python's __debug__), shapes, and repr. The moments and
the sampling / scoring methods raise NotImplementedError unless a subclass defines them, as in
torch."""

from __future__ import annotations

import functools
import warnings
from typing import Any

from fake_torch._tensor import Size, Tensor
from fake_torch.distributions import constraints


class Distribution:
    """A probability distribution over events of `event_shape`, batched over `batch_shape`."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made afterwards."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Size = Size(), event_shape: Size = Size(),  # noqa: B008
                 validate_args: bool | None = None) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                             functools.cached_property):
                    continue  # derived on first use (Categorical's other parameter), unchecked
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):  # a host read, as torch's
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of "
                                     f"shape {tuple(value.shape)}) of distribution {self!r} "
                                     f"to satisfy the constraint {constraint!r}, but found "
                                     f"invalid values:\n{value}")
        super().__init__()

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        raise NotImplementedError

    @property
    def support(self) -> Any:
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        out: Tensor = self.variance.sqrt()
        return out

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        raise NotImplementedError

    def sample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        raise NotImplementedError

    def rsample(self, sample_shape: Any = Size()) -> Tensor:  # noqa: B008
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning,
                      stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        out: Tensor = self.entropy().exp()
        return out

    def _extended_shape(self, sample_shape: Any = Size()) -> Size:  # noqa: B008
        """sample_shape + batch_shape + event_shape."""
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """torch's checks of a value to score: a Tensor, event_shape rightmost,
        broadcastable with batch_shape + event_shape, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.dim() - len(self._event_shape)
        if tuple(value.size()[start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), Size(tuple(self._batch_shape) +
                                               tuple(self._event_shape))
        for i, j in zip(reversed(actual), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support ({support!r}) "
                             f"of the distribution {self!r}, but found invalid values:\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        def shown(p: str) -> object:
            value = self.__dict__[p]
            if value.numel() != 1:
                return value.size()
            return value.item() if value.dim() == 0 else value  # a 0-dim shows its number

        args = ", ".join(f"{p}: {shown(p)}" for p in names)
        return f"{type(self).__name__}({args})"
