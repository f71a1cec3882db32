"""Random sampling, discrete draws: randint, randint_like, random_, randperm and multinomial.
Each call is ONE launch named as torch's aten op (see random.py for the continuous ones).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from fake_torch import _factories
from fake_torch._dtype import CPP_NAME, SCALAR_NAME, bfloat16, bool_, dtype, float16, int64
from fake_torch._factories import like, like_meta
from fake_torch._generator import Generator
from fake_torch._kernels import _common
from fake_torch._kernels import random_kernels as K
from fake_torch._kernels._elementwise import written_rule
from fake_torch._kernels._random_common import (
    draw,
    finish,
    new,
    no_out,
    type_range,
)
from fake_torch._memory_format import contiguous_strides, memory_format
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, RANDOM, data_dependent, method, op
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike, canonical

_MAX_CATEGORIES = 1 << 24  # float32 represents every integer up to here


def _int(value: Any, fn: str, name: str, position: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def _int_range(out: Tensor, low: int, high: int) -> dict[str, int]:
    """torch's checks on a discrete range [low, high) for `out`'s dtype -> kernel params."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    lowest, highest = type_range(out.dtype)
    bounds = (("from", low), ("to - 1", high - 1))
    for name, v in bounds:
        if not lowest <= v <= highest:
            raise RuntimeError(f"{name} is out of bounds for {CPP_NAME[out.dtype]}")
    if out.dtype.is_floating_point:  # beyond 2**digits not every integer is representable
        digits = K.mantissa_digits(out.dtype)
        for name, v in bounds:
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {CPP_NAME[out.dtype]} can support discrete "
                              "uniform distribution only within this range. This warning will "
                              "become an error in version 1.7 release, please fix the code in "
                              "advance", UserWarning, stacklevel=4)
    return {"low": low, "high": high}


@op(POINTWISE, random=True)
def randint(*args: Any, size: Any = None, low: int | None = None, high: int | None = None,
            generator: Generator | None = None, out: Tensor | None = None,
            dtype: dtype | None = None, device: DeviceLike | None = None,
            requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.randint(low=0, high, size, *, ...): integers uniform on [low, high), int64 by
    default. Called as randint(high, size) or randint(low, high, size) (or by keyword)."""
    no_out(out, "randint")
    lo, hi, size = _randint_args(args, size, low, high)
    t = _common.new_tensor(_factories._sizes((size,), "randint"), dtype or int64,
                           canonical(device))
    draw("randint", K.randint_kernel, t, generator, params=_int_range(t, lo, hi))
    return finish(t, requires_grad)


def _randint_args(args: tuple[Any, ...], size: Any, low: int | None, high: int | None
                  ) -> tuple[int, int, Any]:
    """randint's (low, high, size) from its overloads: (high, size), (low, high, size)."""
    pos = list(args)
    if size is None and pos:
        size = pos.pop()
    if high is None and pos:
        high = pos.pop()
    if low is None and pos:
        low = pos.pop()
    if pos or high is None or size is None:
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"randint() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n * (int high, tuple of ints size, ...)\n"
                        " * (int low, int high, tuple of ints size, ...)")
    lo = 0 if low is None else _int(low, "randint", "low", 1)
    hi = _int(high, "randint", "high", 1 if low is None else 2)
    return lo, hi, size


@op(POINTWISE, random=True)
def randint_like(input: Tensor, *args: int, low: int | None = None, high: int | None = None,
                 generator: Generator | None = None, dtype: dtype | None = None,
                 device: DeviceLike | None = None, requires_grad: bool = False,
                 memory_format: memory_format | None = None) -> Tensor:
    """torch.randint_like(input, low=0, high, *, ...): randint shaped like `input`."""
    pos = list(args)
    if high is None and pos:
        high = pos.pop()
    if low is None and pos:
        low = pos.pop()
    if pos or high is None:
        raise TypeError("randint_like() missing required argument 'high'")
    lo = 0 if low is None else _int(low, "randint_like", "low", 2)
    hi = _int(high, "randint_like", "high", 2 if low is None else 3)
    t = like(input, dtype, device, memory_format, "randint_like")
    draw("randint_like", K.randint_kernel, t, generator, params=_int_range(t, lo, hi))
    return finish(t, requires_grad)


@method(RANDOM)
def random_(input: Tensor, *args: int | None, generator: Generator | None = None,
            **kwargs: int | None) -> Tensor:
    """Tensor.random_(from=0, to=None): integers uniform on [from, to) in place; with no `to`,
    up to the dtype's max (2**digits for floats, where every integer is still exact).
    Overloads as torch: random_(), random_(to), random_(from, to)."""
    for key in kwargs:
        if key not in ("from", "to"):
            raise TypeError(f"random_() got an unexpected keyword argument '{key}'")
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"random_kernel_{input.device.type}\" not implemented for "
                                  f"'{SCALAR_NAME[input.dtype]}'")
    if len(args) > 2 or ("from" in kwargs and "to" not in kwargs and len(args) < 1):
        raise TypeError("random_() received an invalid combination of arguments, but expected "
                        "one of: (*, torch.Generator generator), (int from, int to, *, ...), "
                        "(int to, *, ...)")
    if len(args) == 1 and not kwargs:  # random_(to)
        args = (0, args[0])
    bounds: dict[str, int | None] = {"from": 0, "to": None,
                                     **dict(zip(("from", "to"), args, strict=False)), **kwargs}
    lo = _int(bounds["from"], "random_", "from", 1)
    high = bounds["to"]
    if high is None:
        dt = input.dtype
        high = (1 << K.mantissa_digits(dt)) + 1 if dt.is_floating_point else \
            int(type_range(dt)[1]) + 1
    hi = _int(high, "random_", "to", 2)
    return draw("random_", K.randint_kernel, input, generator,
                params=_int_range(input, lo, hi))


@op(RANDOM)
def randperm(n: int, *, generator: Generator | None = None, out: Tensor | None = None,
             dtype: dtype | None = None, device: DeviceLike | None = None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of 0..n-1 (int64 by default)."""
    no_out(out, "randperm")
    n = _int(n, "randperm", "n", 1)
    dt = dtype or int64
    t = new((n,), dt, device, "randperm")
    if dt is bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if dt.is_floating_point and dt is not bfloat16:
        digits = K.mantissa_digits(dt)
        if n > (1 << digits) + 1:
            limit = "2049" if dt is float16 else f"2^{digits}+1"
            raise RuntimeError(f"n cannot be greater than {limit} for {SCALAR_NAME[dt]} type.")
    elif not dt.is_floating_point and n - 1 > type_range(dt)[1]:
        raise RuntimeError(f"value cannot be converted to type {dt.np.name}_t without overflow")
    draw("randperm", K.randperm_kernel, t, generator)
    return finish(t, requires_grad)


def _multinomial_shape(input: Tensor, num_samples: int, replacement: bool) -> tuple[Any, ...]:
    """multinomial's checks; its output shape: (num_samples,) or (rows, num_samples)."""
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{SCALAR_NAME[input.dtype]}")
    num_samples = _int(num_samples, "multinomial", "num_samples", 2)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = input.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_categories > _MAX_CATEGORIES:
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = (num_samples,) if input.dim() == 1 else (input.shape[0], num_samples)
    return shape


@op(RANDOM, method=True, graph_break=data_dependent("aten.multinomial.default"))
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None, out: Tensor | None = None) -> Tensor:
    """Sample category indices from the rows of `input` (unnormalised probabilities, 1-D or
    2-D): (n,) -> (num_samples,), (rows, n) -> (rows, num_samples), int64.

    As in torch, the fast path (no replacement, or one sample) first checks the probabilities
    on the host: a device-to-host read, so on cuda it synchronises and cannot be captured in a
    CUDA graph (sample with `probs / torch.empty_like(probs).exponential_()` + argmax instead).
    """
    no_out(out, "multinomial")
    shape = _multinomial_shape(input, num_samples, replacement)
    num_samples = shape[-1]
    result = _common.new_tensor(shape, int64, input.device)
    if result.numel() and (not replacement or num_samples == 1) and not result.is_meta:
        if input.is_cuda:
            _dispatch.host_sync("multinomial", reads=(input._a,))
        K.check_probabilities(input._a.astype(np.float64))
    return draw("multinomial", K.multinomial_kernel, result, generator, (input,),
                {"replacement": bool(replacement)})


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

@register_meta("torch.randint")
def _randint_rule(*args: Any, size: Any = None, low: int | None = None,
                  high: int | None = None, out: Tensor | None = None,
                  dtype: dtype | None = None, **kwargs: Any) -> TensorMeta:
    no_out(out, "randint")
    _, _, size = _randint_args(args, size, low, high)
    shape = _factories._sizes((size,), "randint")
    return TensorMeta(shape, dtype or int64, contiguous_strides(shape))


@register_meta("torch.randint_like")
def _randint_like_rule(input: Tensor, *args: int, dtype: dtype | None = None,
                       memory_format: memory_format | None = None,
                       **kwargs: Any) -> TensorMeta:
    return like_meta(input, dtype, memory_format, "randint_like")


register_meta("Tensor.random_")(written_rule)


@register_meta("torch.randperm")
def _randperm_rule(n: int, *, out: Tensor | None = None, dtype: dtype | None = None,
                   **kwargs: Any) -> TensorMeta:
    no_out(out, "randperm")
    return TensorMeta((_int(n, "randperm", "n", 1),), dtype or int64, (1,))


@register_meta("torch.multinomial")
def _multinomial_rule(input: Tensor, num_samples: int, replacement: bool = False, *,
                      generator: Generator | None = None,
                      out: Tensor | None = None) -> TensorMeta:
    """The sampled indices' shape, int64 (the probabilities' check on the host reads values,
    not asked here)."""
    no_out(out, "multinomial")
    shape = _multinomial_shape(input, num_samples, replacement)
    return TensorMeta(shape, int64, contiguous_strides(shape))
