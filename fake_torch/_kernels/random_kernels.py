"""The random kernels. Each reads its stream from `philox`, a uint64 buffer (seed, offset), plus
`intra`, an offset baked into the launch (non-zero only inside a captured graph), so a draw is a
pure function of (seed, offset + intra) and a graph replay re-reads the buffer it was given.

Numbers come from numpy's Philox with key = seed and the draw's offset in the counter's high
128 bits: a draw consumes the low counter words, so two draws never overlap however much each
one consumes. Values are computed in float64 and rounded once into the output's dtype.
"""

from __future__ import annotations

import numpy as np

from fake_torch._dtype import bfloat16, dtype, float16, float32


def _rng(philox: np.ndarray, intra: int) -> np.random.Generator:
    offset = int(philox[1]) + intra
    return np.random.Generator(np.random.Philox(key=int(philox[0]), counter=offset << 128))


def mantissa_digits(dt: dtype) -> int:
    """Bits of precision of a float dtype (torch's std::numeric_limits<T>::digits)."""
    return {float16: 11, bfloat16: 8, float32: 24}.get(dt, 53)


def _unit(rng: np.random.Generator, shape: tuple[int, ...], digits: int) -> np.ndarray:
    """Uniform on [0, 1) with `digits` random bits, so it stays below 1 in the target dtype."""
    bits = rng.integers(0, 1 << digits, size=shape, dtype=np.uint64)
    return bits.astype(np.float64) * 2.0 ** -digits


def uniform_kernel(out: np.ndarray, philox: np.ndarray, *, intra: int, low: float, high: float,
                   digits: int) -> None:
    x = (_unit(_rng(philox, intra), out.shape, digits) * (high - low) + low).astype(out.dtype)
    out[...] = np.where(x == high, np.asarray(low, out.dtype), x)  # rounding may reach `high`


def normal_kernel(out: np.ndarray, philox: np.ndarray, mean: np.ndarray | float,
                  std: np.ndarray | float, *, intra: int) -> None:
    """mean and std: Python floats, or arrays that broadcast to out.shape."""
    if isinstance(std, np.ndarray) and np.any(std.astype(np.float64) < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    z = _rng(philox, intra).standard_normal(out.shape)
    out[...] = z * np.asarray(std, np.float64) + np.asarray(mean, np.float64)


def exponential_kernel(out: np.ndarray, philox: np.ndarray, *, intra: int, lambd: float,
                       digits: int, eps: float) -> None:
    # torch's CUDA kernel: u in (0, 1], and log(u) is clamped to -eps/2 near 1, never 0
    u = 1.0 - _unit(_rng(philox, intra), out.shape, digits)
    log = np.where(u >= 1.0 - eps / 2, -eps / 2, np.log(u))
    out[...] = -1.0 / lambd * log


def randint_kernel(out: np.ndarray, philox: np.ndarray, *, intra: int, low: int,
                   high: int) -> None:
    """Integers uniform on [low, high); int64 covers every dtype's range."""
    out[...] = _rng(philox, intra).integers(low, high, size=out.shape, dtype=np.int64)


def randperm_kernel(out: np.ndarray, philox: np.ndarray, *, intra: int) -> None:
    out[...] = _rng(philox, intra).permutation(out.shape[0])


def bernoulli_kernel(out: np.ndarray, philox: np.ndarray, p: np.ndarray | float, *,
                     intra: int) -> None:
    """p: a Python float, or an array of probabilities that broadcasts to out.shape."""
    if isinstance(p, np.ndarray):
        pf = p.astype(np.float64)
        if not np.all((pf >= 0) & (pf <= 1)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")
        p = pf
    out[...] = _rng(philox, intra).random(out.shape) < p


def check_probabilities(p: np.ndarray) -> None:
    """The fast path's checks: torch reads them back on the host (a sync, even on cuda)."""
    if p.size and not (np.all(p < np.inf) and np.all(p >= 0)):  # NaN fails both
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(p.reshape(-1, p.shape[-1]).sum(-1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial_kernel(out: np.ndarray, philox: np.ndarray, probs: np.ndarray, *, intra: int,
                       replacement: bool) -> None:
    """probs (n,) or (rows, n) -> out (k,) or (rows, k) int64 category indices."""
    rows = out if out.ndim == 2 else out[None]
    p = probs.astype(np.float64).reshape(rows.shape[0], probs.shape[-1])
    rng = _rng(philox, intra)
    num_samples = rows.shape[1]
    if not replacement or num_samples == 1:
        # torch's fast path (Gumbel-max): the top-k of p / q with q ~ Exp(1); ties keep order
        q = rng.standard_exponential(p.shape)
        rows[...] = np.argsort(-(p / q), axis=-1, kind="stable")[:, :num_samples]
        return
    bad = ~(p >= 0) | ~np.isfinite(p)
    if bad.any():  # torch checks element by element, in order: sign first, then finiteness
        if not p.ravel()[np.argmax(bad.ravel())] >= 0:
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry < 0)")
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = "
                           "infinity or NaN)")
    totals = p.sum(-1, keepdims=True)
    if np.any(totals <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cdf = np.cumsum(p / totals, axis=-1)
    last = p.shape[1] - 1 - np.argmax(p[:, ::-1] > 0, axis=-1)  # last category with p > 0
    cdf[np.arange(p.shape[1]) >= last[:, None]] = 1.0  # u < 1 always lands on some p > 0
    u = rng.random(rows.shape)
    for r in range(rows.shape[0]):
        rows[r] = np.searchsorted(cdf[r], u[r], side="right")


def rrelu_kernel(out: np.ndarray, philox: np.ndarray, x: np.ndarray, *, intra: int,
                 lower: float, upper: float) -> None:
    """out = x where x > 0, else x * a with a ~ U(lower, upper) per element (torch's rrelu
    in training; computed in float64, rounded once)."""
    a = lower + (upper - lower) * _rng(philox, intra).random(x.shape)
    xf = x.astype(np.float64)
    out[...] = np.where(xf > 0, xf, xf * a)


def cauchy_kernel(out: np.ndarray, philox: np.ndarray, *, intra: int, median: float,
                  sigma: float) -> None:
    """median + sigma * tan(pi * (u - 1/2)), u ~ U(0, 1)."""
    u = _rng(philox, intra).random(out.shape)
    out[...] = median + sigma * np.tan(np.pi * (u - 0.5))


def log_normal_kernel(out: np.ndarray, philox: np.ndarray, *, intra: int, mean: float,
                      std: float) -> None:
    """exp(N(mean, std**2))."""
    out[...] = np.exp(mean + std * _rng(philox, intra).standard_normal(out.shape))


def geometric_kernel(out: np.ndarray, philox: np.ndarray, *, intra: int, p: float) -> None:
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...): ceil(log(u) /
    log(1 - p)) for u ~ U(0, 1]. Integral outputs wrap as a C cast does (uint8 included)."""
    u = 1.0 - _rng(philox, intra).random(out.shape)
    with np.errstate(divide="ignore"):
        k = np.maximum(np.ceil(np.log(u) / np.log1p(-p)), 1.0)
    if out.dtype.kind in "iu":
        k = np.minimum(k, 2.0**62).astype(np.int64)
    out[...] = k.astype(out.dtype, copy=False)


def poisson_kernel(out: np.ndarray, philox: np.ndarray, rates: np.ndarray, *,
                   intra: int) -> None:
    """Poisson(rate) per element. A negative or NaN rate raises torch's CPU error (a GPU
    would return garbage); an infinite rate gives inf (torch's is undefined)."""
    lam = rates.astype(np.float64)
    if np.any(~(lam >= 0)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    rng = _rng(philox, intra)
    exact = lam < 1e15  # numpy's sampler's range; beyond it the normal limit is exact enough
    draws = rng.poisson(np.where(exact, lam, 0.0)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        approx = np.round(lam + np.sqrt(lam) * rng.standard_normal(lam.shape))
    out[...] = np.where(exact, draws, np.where(np.isfinite(lam), approx, np.inf))
