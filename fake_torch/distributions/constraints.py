"""torch.distributions.constraints: the sets a distribution's parameters and samples live in.

Each constraint's `check(value)` answers elementwise with a bool tensor over value's batch
dims (the trailing `event_dim` dims are folded into one answer each), as torch's do; the
singletons (`real`, `positive`, `simplex`, ...) and the parameterised classes (`interval`,
`greater_than`, `integer_interval`, `independent`, `cat`, `stack`, ...) keep torch's names and
reprs. `positive_semidefinite` and `positive_definite` need an eigen / Cholesky decomposition
fake_torch does not emulate: their check raises NotImplementedError naming the torch API.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fake_torch._dtype import bool_, finfo
from fake_torch._factories import full
from fake_torch._kernels.join import cat as _cat
from fake_torch._kernels.join import stack as _stack
from fake_torch._kernels.reduction_stats import vector_norm
from fake_torch._tensor import Tensor

Bound = Any  # a Python number or a Tensor, compared elementwise with the value


class Constraint:
    """Base class: a region over which a variable is valid. `is_discrete` and `event_dim`
    (how many rightmost dims make one event) describe it; `check` tests values."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        """A bool tensor of value's batch shape: whether each event satisfies the
        constraint."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


def _bounds_repr(c: Constraint, *names: str) -> str:
    fields = ", ".join(f"{n}={getattr(c, n)}" for n in names)
    return f"{type(c).__name__[1:]}({fields})"


class _Dependent(Constraint):
    """A placeholder for a support that depends on other variables: it cannot be checked."""

    def __init__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return bool(self._is_discrete)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return int(self._event_dim)

    def __call__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> _Dependent:
        """A copy with `is_discrete` / `event_dim` set where given."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: object) -> bool:
    """Whether `constraint` is a `_Dependent` (its check cannot run)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose value is a dependent constraint, usable as a decorator."""

    def __init__(self, fn: Callable[..., Any] | None = None, *,
                 is_discrete: bool | None = NotImplemented,
                 event_dim: int | None = NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn: Callable[..., Any]) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete,
                                  event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """`base_constraint` with its rightmost `reinterpreted_batch_ndims` batch dims read as
    event dims: an event holds when every element of it does."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int):
            raise AssertionError("reinterpreted_batch_ndims must be an int, got "
                                 f"{type(reinterpreted_batch_ndims).__name__}")
        if reinterpreted_batch_ndims < 0:
            raise AssertionError("reinterpreted_batch_ndims must be non-negative, got "
                                 f"{reinterpreted_batch_ndims}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got "
                             f"{value.dim()}")
        return _fold(result, result.dim() - self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (f"{type(self).__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


def _fold(result: Tensor, keep: int) -> Tensor:
    """all() over every dim of `result` after its first `keep`."""
    folded: Tensor = result.reshape((*result.shape[:keep], -1)).all(-1)
    return folded


class MixtureSameFamilyConstraint(Constraint):
    """The component constraint of a MixtureSameFamily, checked with the mixture dim added
    back to the value."""

    def __init__(self, base_constraint: Constraint) -> None:
        if not isinstance(base_constraint, Constraint):
            raise AssertionError("base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got "
                             f"{value.dim()}")
        return _fold(result, value.dim() - self.event_dim)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_constraint!r})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = (value == 0) | (value == 1)
        return out


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        is_boolean = (value == 0) | (value == 1)
        out: Tensor = is_boolean.all(-1) & value.sum(-1).eq(1)
        return out


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Bound, upper_bound: Bound) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = (value % 1 == 0) & (self.lower_bound <= value) & \
            (value <= self.upper_bound)
        return out

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound", "upper_bound")


class _IntegerLessThan(Constraint):
    is_discrete = True

    def __init__(self, upper_bound: Bound) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = (value % 1 == 0) & (value <= self.upper_bound)
        return out

    def __repr__(self) -> str:
        return _bounds_repr(self, "upper_bound")


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound: Bound) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = (value % 1 == 0) & (value >= self.lower_bound)
        return out

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound")


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        out: Tensor = value == value  # False exactly at NaN
        return out


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Bound) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = self.lower_bound < value
        return out

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound")


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound: Bound) -> None:
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = self.lower_bound <= value
        return out

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound")


class _LessThan(Constraint):
    def __init__(self, upper_bound: Bound) -> None:
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = value < self.upper_bound
        return out

    def __repr__(self) -> str:
        return _bounds_repr(self, "upper_bound")


class _Interval(Constraint):
    def __init__(self, lower_bound: Bound, upper_bound: Bound) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = (self.lower_bound <= value) & (value <= self.upper_bound)
        return out

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound", "upper_bound")


class _HalfOpenInterval(Constraint):
    def __init__(self, lower_bound: Bound, upper_bound: Bound) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = (self.lower_bound <= value) & (value < self.upper_bound)
        return out

    def __repr__(self) -> str:
        return _bounds_repr(self, "lower_bound", "upper_bound")


class _Simplex(Constraint):
    """Non-negative vectors (last dim) summing to 1 within 1e-6."""

    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        out: Tensor = (value >= 0).all(dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)
        return out


class _Multinomial(Constraint):
    """Non-negative integer counts whose total is at most `upper_bound` (torch checks this
    weaker condition, not equality)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Bound) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Tensor) -> Tensor:
        out: Tensor = (x >= 0).all(dim=-1) & (x.sum(dim=-1) <= self.upper_bound)
        return out


def _is_lower_triangular(value: Tensor) -> Tensor:
    same: Tensor = value.tril() == value
    out: Tensor = same.view((*value.shape[:-2], -1)).min(-1)[0]
    return out


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return _is_lower_triangular(value)


class _LowerCholesky(Constraint):
    """Lower-triangular with a positive diagonal."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).min(-1)[0]
        out: Tensor = _is_lower_triangular(value) & positive_diagonal
        return out


class _CorrCholesky(Constraint):
    """A lower Cholesky factor whose rows have unit length (within 10 eps per column)."""

    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        tol = finfo(value.dtype).eps * value.size(-1) * 10
        row_norm = vector_norm(value.detach(), dim=-1)
        unit_rows = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        out: Tensor = _LowerCholesky().check(value) & unit_rows
        return out


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=bool_,
                    device=value.device)


class _Symmetric(_Square):
    """Square and equal to its transpose (isclose, atol 1e-6)."""

    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if not square.all():
            return square
        out: Tensor = value.isclose(value.mT, atol=1e-6).all(-2).all(-1)
        return out


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        raise NotImplementedError("torch.distributions.constraints.positive_semidefinite.check "
                                  "needs torch.linalg.eigvalsh, which fake_torch does not "
                                  "emulate")


class _PositiveDefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        raise NotImplementedError("torch.distributions.constraints.positive_definite.check "
                                  "needs torch.linalg.cholesky_ex, which fake_torch does not "
                                  "emulate")


def _check_cseq(cseq: Sequence[Constraint]) -> list[Constraint]:
    if not all(isinstance(c, Constraint) for c in cseq):
        raise AssertionError("All elements of cseq must be Constraint instances")
    return list(cseq)


class _Cat(Constraint):
    """Constraints applied to consecutive slices of `lengths[i]` along `dim` (as torch.cat
    joins them)."""

    def __init__(self, cseq: Sequence[Constraint], dim: int = 0,
                 lengths: Sequence[int] | None = None) -> None:
        self.cseq = _check_cseq(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq "
                                 f"({len(self.cseq)})")
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        if not -value.dim() <= self.dim < value.dim():
            raise AssertionError(f"dim {self.dim} out of range for value with {value.dim()} "
                                 "dimensions")
        checks, start = [], 0
        for constraint, length in zip(self.cseq, self.lengths, strict=True):
            checks.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        out: Tensor = _cat(checks, self.dim)
        return out


class _Stack(Constraint):
    """Constraint i applied to slice i along `dim` (as torch.stack joins them)."""

    def __init__(self, cseq: Sequence[Constraint], dim: int = 0) -> None:
        self.cseq = _check_cseq(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value: Tensor) -> Tensor:
        if not -value.dim() <= self.dim < value.dim():
            raise AssertionError(f"dim {self.dim} out of range for value with {value.dim()} "
                                 "dimensions")
        parts = [value.select(self.dim, i) for i in range(value.size(self.dim))]
        out: Tensor = _stack([c.check(v) for v, c in zip(parts, self.cseq, strict=True)],
                            self.dim)
        return out


# the public names, as torch binds them: singletons and parameterised classes
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack

__all__ = [
    "Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky",
    "dependent", "dependent_property", "greater_than", "greater_than_eq", "half_open_interval",
    "independent", "integer_interval", "interval", "is_dependent", "less_than",
    "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer",
    "one_hot", "positive", "positive_definite", "positive_integer", "positive_semidefinite",
    "real", "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]
