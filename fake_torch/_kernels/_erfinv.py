"""erfinv over numpy arrays in float64: Giles' (2010) polynomial start, then two Newton steps
on erf (fake_torch._kernels._erf), which brings it to float64 accuracy; erfinv(+-1) = +-inf,
NaN outside [-1, 1]."""

from __future__ import annotations

import numpy as np

from fake_torch._kernels._erf import erf

_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
            -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefs: tuple[float, ...], w: np.ndarray) -> np.ndarray:
    p = np.full_like(w, coefs[0])
    for c in coefs[1:]:
        p = p * w + c
    return p


def erfinv(y: np.ndarray) -> np.ndarray:
    """The x with erf(x) = y, elementwise, in float64."""
    y = np.asarray(y, np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        x = np.where(w < 5.0, _horner(_CENTRAL, w - 2.5), _horner(_TAIL, np.sqrt(w) - 3.0)) * y
        for _ in range(2):  # Newton on erf(x) - y; erf' = 2/sqrt(pi) exp(-x^2)
            x = x - (erf(x) - y) / (2.0 / np.sqrt(np.pi) * np.exp(-x * x))
        x = np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), x)
        out: np.ndarray = np.where(np.abs(y) > 1.0, np.nan, x)
    return out
