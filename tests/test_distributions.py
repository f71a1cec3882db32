"""torch.distributions against real torch CPU: constraints' checks, reprs and errors; the
Normal distribution's values (vLLM reads Normal(0, 1).icdf), validation errors and launches;
the names transformers imports refuse at construction; torch.erfinv's values."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from oracles import launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

VALUES = np.array([[-1.0, 0.0, 0.5, 1.0], [2.0, np.nan, 0.25, 0.25]], np.float32)
SQUARE = np.array([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 3.0], [0.0, 1.0]]], np.float32)

CONSTRAINTS = [
    "boolean", "real", "positive", "nonnegative", "unit_interval", "nonnegative_integer",
    "positive_integer", "simplex", "one_hot", "real_vector", "lower_triangular",
    "lower_cholesky", "square", "symmetric", "corr_cholesky",
]
FACTORIES: list[tuple[str, tuple[Any, ...]]] = [
    ("interval", (0.0, 1.0)), ("half_open_interval", (0, 1)), ("greater_than", (0.25,)),
    ("greater_than_eq", (0.25,)), ("less_than", (0.5,)), ("integer_interval", (0, 1)),
    ("multinomial", (2,)),
]


def _lib_value(lib: Any, a: np.ndarray) -> Any:
    return torch.from_numpy(a.copy()) if lib is torch else ft.tensor(a, device="cuda")


def _same(ours: Any, theirs: Any) -> None:
    np.testing.assert_array_equal(ours.cpu().numpy(), theirs.numpy())


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_singleton_checks_and_reprs(name: str) -> None:
    ours, theirs = getattr(ft.distributions.constraints, name), \
        getattr(torch.distributions.constraints, name)
    assert repr(ours) == repr(theirs)
    assert (ours.is_discrete, ours.event_dim) == (theirs.is_discrete, theirs.event_dim)
    value = SQUARE if ours.event_dim == 2 else VALUES
    _same(ours.check(_lib_value(ft, value)), theirs.check(_lib_value(torch, value)))


@pytest.mark.parametrize(("name", "args"), FACTORIES)
def test_parameterised_constraints(name: str, args: tuple[Any, ...]) -> None:
    ours = getattr(ft.distributions.constraints, name)(*args)
    theirs = getattr(torch.distributions.constraints, name)(*args)
    assert repr(ours) == repr(theirs)
    _same(ours.check(_lib_value(ft, VALUES)), theirs.check(_lib_value(torch, VALUES)))


def test_composite_constraints() -> None:
    for lib in (ft, torch):
        C = lib.distributions.constraints
        lib.made = [C.independent(C.positive, 2), C.cat([C.real, C.positive], dim=1,
                                                         lengths=[2, 2]),
                    C.stack([C.positive, C.real], dim=0),
                    C.MixtureSameFamilyConstraint(C.positive)]
    for ours, theirs in zip(ft.made, torch.made, strict=True):
        assert repr(ours) == repr(theirs)
        assert (ours.is_discrete, ours.event_dim) == (theirs.is_discrete, theirs.event_dim)
        _same(ours.check(_lib_value(ft, VALUES)), theirs.check(_lib_value(torch, VALUES)))
    del ft.made, torch.made


def test_dependent_and_errors() -> None:
    C, TC = ft.distributions.constraints, torch.distributions.constraints
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(ft.zeros(2))
    with pytest.raises(NotImplementedError):
        C.dependent.event_dim  # noqa: B018
    assert C.dependent(event_dim=1).event_dim == TC.dependent(event_dim=1).event_dim
    with pytest.raises(ValueError, match=r"Expected value.dim\(\) >= 2 but got 1"):
        C.independent(C.real, 2).check(ft.zeros(3))
    with pytest.raises(ValueError, match=r"Expected value.dim\(\) >= 2 but got 1"):
        TC.independent(TC.real, 2).check(torch.zeros(3))
    with pytest.raises(NotImplementedError, match=r"torch\.linalg\.cholesky_ex"):
        C.positive_definite.check(ft.eye(2))
    # a non-symmetric matrix answers False without the decomposition, as torch's does
    _same(C.positive_definite.check(ft.tensor(SQUARE)),
          TC.positive_definite.check(torch.from_numpy(SQUARE)))


def test_public_names_match_torch() -> None:
    C, TC = ft.distributions.constraints, torch.distributions.constraints
    assert sorted(C.__all__) == sorted(TC.__all__)
    for name in C.__all__:
        ours, theirs = getattr(C, name), getattr(TC, name)
        if isinstance(theirs, type):
            assert inspect.signature(ours).parameters.keys() == \
                inspect.signature(theirs).parameters.keys(), name


def test_normal_values_match_torch() -> None:
    loc = np.array([0.0, 1.0, -2.0], np.float32)
    scale = np.array([1.0, 0.5, 3.0], np.float32)
    x = np.array([0.3, 1.2, -5.0], np.float32)
    p = np.array([0.01, 0.5, 0.97], np.float32)
    ours = ft.distributions.Normal(ft.tensor(loc, device="cuda"), ft.tensor(scale,
                                                                           device="cuda"))
    theirs = torch.distributions.Normal(torch.from_numpy(loc), torch.from_numpy(scale))
    assert repr(ours) == repr(theirs)
    assert ours.batch_shape == tuple(theirs.batch_shape) and ours.has_rsample
    for meth, arg in (("log_prob", x), ("cdf", x), ("icdf", p)):
        np.testing.assert_allclose(getattr(ours, meth)(ft.tensor(arg, device="cuda")).cpu()
                                   .numpy(), getattr(theirs, meth)(torch.from_numpy(arg))
                                   .numpy(), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(ours.entropy().cpu().numpy(), theirs.entropy().numpy(),
                               rtol=1e-6)
    for prop in ("mean", "stddev", "variance", "mode"):
        _same(getattr(ours, prop), getattr(theirs, prop))
    assert tuple(ours.sample((5,)).shape) == tuple(theirs.sample((5,)).shape) == (5, 3)
    assert tuple(ours.rsample((2,)).shape) == (2, 3)
    assert tuple(ours.expand((4, 3)).batch_shape) == (4, 3)


def test_normal_as_vllm_uses_it() -> None:
    """vLLM's GeluAndMulSparse: Normal(0, 1).icdf(tensor(sparsity)).item()."""
    for s in (0.05, 0.5, 0.9, 0.999):
        ours = ft.distributions.normal.Normal(0, 1).icdf(ft.tensor(s, dtype=ft.float32))
        theirs = torch.distributions.normal.Normal(0, 1).icdf(torch.tensor(s))
        assert ours.item() == pytest.approx(theirs.item(), rel=1e-6, abs=1e-7)
    assert repr(ft.distributions.Normal(0, 1)) == repr(torch.distributions.Normal(0, 1))


def test_normal_validation_errors() -> None:
    def first_line(lib: Any, fn: Any) -> str:
        with pytest.raises(ValueError) as e:
            fn(lib)
        return str(e.value).splitlines()[0]

    def bad_scale(L: Any) -> Any:
        return L.distributions.Normal(L.zeros(2), -L.ones(2), validate_args=True)

    def bad_value(L: Any) -> Any:
        return L.distributions.Normal(0.0, 1.0, validate_args=True).log_prob(
            L.tensor([float("nan")]))

    assert first_line(ft, bad_scale) == first_line(torch, bad_scale)
    assert first_line(ft, bad_value) == first_line(torch, bad_value)
    ft.distributions.Normal(ft.zeros(2), -ft.ones(2), validate_args=False)  # no check


def test_normal_icdf_launches() -> None:
    """loc + scale * erfinv(2p - 1) * sqrt(2), as torch dispatches it."""
    from oracles import torch_launches

    d, td = ft.distributions.Normal(ft.zeros(3, device="cuda"), ft.ones(3, device="cuda")), \
        torch.distributions.Normal(torch.zeros(3), torch.ones(3))
    p, tp = ft.full((3,), 0.2, device="cuda"), torch.full((3,), 0.2)
    with launches() as ours:
        d.icdf(p)
    with torch_launches(cuda=True) as theirs:
        td.icdf(tp)
    assert ours == theirs


def test_refused_names() -> None:
    D, TD = ft.distributions, torch.distributions
    for name in ("AffineTransform", "Independent", "NegativeBinomial", "StudentT",
                 "TransformedDistribution"):
        assert inspect.signature(getattr(D, name)).parameters.keys() == \
            inspect.signature(getattr(TD, name)).parameters.keys()
    with pytest.raises(NotImplementedError, match=r"torch\.distributions\.StudentT"):
        D.StudentT(3.0)

    class Sub(D.TransformedDistribution):  # transformers subclasses it at import
        pass

    with pytest.raises(NotImplementedError, match="TransformedDistribution"):
        Sub(D.Normal(0.0, 1.0), [])


def test_erfinv_matches_torch() -> None:
    y = np.concatenate([np.linspace(-1, 1, 401), [1.5, -2.0, 0.9999999]]).astype(np.float32)
    ours = ft.erfinv(ft.tensor(y, device="cuda")).cpu().numpy()
    theirs = torch.erfinv(torch.from_numpy(y)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=2e-7)
    y64 = np.linspace(-0.999, 0.999, 301)
    np.testing.assert_allclose(ft.tensor(y64).erfinv().numpy(),
                               torch.from_numpy(y64).erfinv().numpy(), rtol=1e-13)
    t = ft.tensor(y, device="cuda")
    with ft.LaunchCounter.expect(1, erfinv_=1):
        t.erfinv_()
