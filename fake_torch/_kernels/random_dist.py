"""More distributions: the in-place fills cauchy_, log_normal_, geometric_ and torch.poisson.
Each is ONE launch named as torch's aten op, drawing through the generator as every random op
does (random.py): a fresh (seed, offset) snapshot per eager draw, the graph's buffer inside a
capture. The Philox offset advances by 4 per draw (torch's CUDA kernels for a small tensor),
by 20 for poisson (torch's CUDA poisson asks for 20 whatever the size).
"""

from __future__ import annotations

from fake_torch._dtype import CPP_NAME, bool_
from fake_torch._generator import Generator, generator_for
from fake_torch._kernels import _common
from fake_torch._kernels import random_kernels as K
from fake_torch._kernels._elementwise import not_implemented, tensor_arg, written_rule
from fake_torch._kernels._random_common import draw, fmt
from fake_torch._kernels.pointwise_math import kernel_name
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import RANDOM, method, op
from fake_torch._tensor import Tensor

POISSON_INCREMENT = 20  # torch's CUDA poisson: philox_cuda_state(20)


@method(RANDOM)
def cauchy_(self: Tensor, median: float = 0, sigma: float = 1, *,
            generator: Generator | None = None) -> Tensor:
    """Fill in place from Cauchy(median, sigma)."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={fmt(sigma)}")
    if not self.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{CPP_NAME[self.dtype]}")
    return draw("cauchy_", K.cauchy_kernel, self, generator,
                params={"median": float(median), "sigma": float(sigma)})


@method(RANDOM)
def log_normal_(self: Tensor, mean: float = 1, std: float = 2, *,
                generator: Generator | None = None) -> Tensor:
    """Fill in place with exp(N(mean, std**2))."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={fmt(std)}")
    if not self.dtype.is_floating_point:
        raise not_implemented(kernel_name(self, "log_normal_cpu", "log_normal_cuda"),
                              self.dtype)
    return draw("log_normal_", K.log_normal_kernel, self, generator,
                params={"mean": float(mean), "std": float(std)})


@method(RANDOM)
def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill in place with the trial count of the first success, success probability p
    (integral dtypes too; their values wrap as a C cast does)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={fmt(p)}")
    if self.dtype is bool_:
        raise not_implemented(kernel_name(self, "geometric_cpu", "geometric_cuda"), bool_)
    return draw("geometric_", K.geometric_kernel, self, generator, params={"p": float(p)})


@op(RANDOM)
def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson(rate) samples for each rate in `input`, in input's dtype."""
    rates = tensor_arg(input, "poisson")
    if not rates.dtype.is_floating_point:
        raise not_implemented(kernel_name(rates, "poisson_cpu", "poisson_cuda"), rates.dtype)
    out = _common.new_tensor(rates.shape, rates.dtype, rates.device)
    philox, intra = generator_for(generator, rates.device).philox_args(POISSON_INCREMENT)
    _common.launch("poisson", K.poisson_kernel, out, (philox, rates), {"intra": intra})
    return out


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

register_meta("Tensor.cauchy_", "Tensor.log_normal_", "Tensor.geometric_")(written_rule)


@register_meta("torch.poisson")
def _poisson_rule(input: Tensor, generator: Generator | None = None) -> TensorMeta:
    return TensorMeta(tuple(input.shape), input.dtype, contiguous_strides(input.shape))
