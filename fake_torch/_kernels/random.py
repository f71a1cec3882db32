"""Random sampling, continuous draws: rand, randn, normal, bernoulli, the *_like forms and the
in-place fills uniform_, normal_, exponential_, bernoulli_. Discrete draws (randint, randperm,
random_, multinomial) live in sampling.py; the generator and seeding in _generator.py.

Each call is ONE launch named as torch's aten op; the generator hands the kernel its
(seed, offset) as a buffer read at run time, so a captured draw replays correctly.
"""

from __future__ import annotations

import math
from typing import Any

from fake_torch._dtype import CPP_NAME, SCALAR_NAME, dtype, finfo
from fake_torch._factories import like, like_meta, new_meta
from fake_torch._generator import Generator
from fake_torch._kernels import _common
from fake_torch._kernels import random_kernels as K
from fake_torch._kernels._elementwise import written_rule
from fake_torch._kernels._limited import complex_not_emulated
from fake_torch._kernels._random_common import (
    device_kernel,
    draw,
    finish,
    fmt,
    new,
    no_out,
    require_float,
    type_range,
)
from fake_torch._kernels.complex_ops import view_as_real
from fake_torch._memory_format import contiguous_strides, memory_format
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, RANDOM, method, op
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike

# --- uniform -----------------------------------------------------------------------------------


def _uniform(op: str, out: Tensor, low: float, high: float, generator: Generator | None) -> Tensor:
    if out.dtype.is_complex:  # torch draws both parts from U[low, high): its real view's draw
        _uniform(op, view_as_real(out), low, high, generator)
        return out
    require_float(out.dtype, "check_uniform_bounds")
    lowest, highest = type_range(out.dtype)
    for name, v in (("from", low), ("to", high)):
        if not lowest <= v <= highest:
            raise RuntimeError(f"{name} is out of bounds for {CPP_NAME[out.dtype]}")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={fmt(low)} > to={fmt(high)}")
    return draw(op, K.uniform_kernel, out, generator,
                params={"low": float(low), "high": float(high),
                        "digits": K.mantissa_digits(out.dtype)})


@op(POINTWISE, random=True)
def rand(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
         dtype: dtype | None = None, device: DeviceLike | None = None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Uniform samples on [0, 1)."""
    no_out(out, "rand")
    t = _uniform("rand", new(size, dtype, device, "rand"), 0.0, 1.0, generator)
    return finish(t, requires_grad)  # (after the kernel's dtype check, as torch's order)


@op(POINTWISE, random=True)
def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: dtype | None = None,
              device: DeviceLike | None = None, requires_grad: bool = False,
              memory_format: memory_format | None = None) -> Tensor:
    out = like(input, dtype, device, memory_format, "rand_like")
    t = _uniform("rand_like", out, 0.0, 1.0, generator)
    return finish(t, requires_grad)


@method(RANDOM)
def uniform_(input: Tensor, *args: float, generator: Generator | None = None,
             **kwargs: float) -> Tensor:
    """Tensor.uniform_(from=0, to=1, *, generator=None): fill in place from U[from, to).
    (Python cannot spell a parameter named `from`: pass it positionally or as **{"from": x}.)"""
    names = ("from", "to")
    for key in kwargs:
        if key not in names:
            raise TypeError(f"uniform_() got an unexpected keyword argument '{key}'")
    if len(args) > 2:
        raise TypeError(f"uniform_() takes at most 2 arguments ({len(args)} given)")
    bounds = {"from": 0.0, "to": 1.0, **dict(zip(names, args, strict=False)), **kwargs}
    return _uniform("uniform_", input, float(bounds["from"]), float(bounds["to"]), generator)


# --- normal ------------------------------------------------------------------------------------

def _normal_fill(op: str, out: Tensor, mean: float, std: float,
                 generator: Generator | None) -> Tensor:
    if out.dtype.is_complex:  # torch draws both parts with std / sqrt(2) (E|z|^2 = std^2)
        _normal_fill(op, view_as_real(out), mean, std / math.sqrt(2), generator)
        return out
    if out.numel():  # (torch's normal kernel returns before its dtype dispatch when empty)
        require_float(out.dtype, device_kernel("normal_kernel_{dev}", out.device))
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt(std)}")
    return draw(op, K.normal_kernel, out, generator, (float(mean), float(std)))


@op(POINTWISE, random=True)
def randn(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
          dtype: dtype | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Standard normal samples."""
    no_out(out, "randn")
    t = _normal_fill("randn", new(size, dtype, device, "randn"), 0.0, 1.0, generator)
    return finish(t, requires_grad)


@op(POINTWISE, random=True)
def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: dtype | None = None,
               device: DeviceLike | None = None, requires_grad: bool = False,
               memory_format: memory_format | None = None) -> Tensor:
    out = like(input, dtype, device, memory_format, "randn_like")
    return finish(_normal_fill("randn_like", out, 0.0, 1.0, generator), requires_grad)


@method(RANDOM)
def normal_(input: Tensor, mean: float = 0, std: float = 1, *,
            generator: Generator | None = None) -> Tensor:
    """Tensor.normal_: fill in place from N(mean, std**2)."""
    return _normal_fill("normal_", input, mean, std, generator)


@op(POINTWISE, random=True)
def normal(mean: Tensor | float, std: Tensor | float = 1.0, size: Any = None, *,
           generator: Generator | None = None, out: Tensor | None = None,
           dtype: dtype | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.normal's four overloads: (Tensor, Tensor), (Tensor, float), (float, Tensor) and
    (float, float, size). Tensor mean and std broadcast; the output takes mean's dtype (std's
    when mean is a number)."""
    no_out(out, "normal")
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got "
                            "(float, float), but expected (float mean, float std, tuple of ints "
                            "size, *, torch.Generator generator = None, Tensor out = None, ...)")
        t = new((size,), dtype, device, "normal")
        return finish(_normal_fill("normal", t, float(mean), float(std), generator),
                      requires_grad)
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    dev = _common.common_device(*tensors)
    shape = _common.broadcast_shapes(*(x.shape for x in tensors))
    dt = tensors[0].dtype
    if dt.is_complex:
        raise complex_not_emulated("normal", dt)
    require_float(dt, device_kernel("normal_kernel_{dev}", dev))
    if not isinstance(std, Tensor) and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt(std)}")
    t = _common.new_tensor(shape, dt, dev)
    return draw("normal", K.normal_kernel, t, generator,
                (mean if isinstance(mean, Tensor) else float(mean),
                 std if isinstance(std, Tensor) else float(std)))


# --- exponential -------------------------------------------------------------------------------

@method(RANDOM)
def exponential_(input: Tensor, lambd: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Tensor.exponential_: fill in place from Exp(lambd); never exactly 0, as on cuda."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={fmt(lambd)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{SCALAR_NAME[input.dtype]}")
    return draw("exponential_", K.exponential_kernel, input, generator,
                params={"lambd": float(lambd), "digits": K.mantissa_digits(input.dtype),
                        "eps": finfo(input.dtype).eps})


# --- bernoulli ---------------------------------------------------------------------------------

@method(RANDOM)
def bernoulli_(input: Tensor, p: Tensor | float = 0.5, *,
               generator: Generator | None = None) -> Tensor:
    """Tensor.bernoulli_: each element 1 with probability p (a float, or a tensor that
    broadcasts to input), else 0."""
    if input.dtype.is_complex:  # (torch's dispatch names the kernel of p's kind)
        kind = "tensor_{dev}_self_" if isinstance(p, Tensor) else "scalar_{dev}_"
        raise NotImplementedError(f"\"{device_kernel('bernoulli_' + kind, input.device)}\" not "
                                  f"implemented for '{SCALAR_NAME[input.dtype]}'")
    if isinstance(p, Tensor):
        require_float(p.dtype, device_kernel("bernoulli_tensor_{dev}_p_", input.device))
        _common.common_device(input, p)
        if _common.broadcast_shapes(p.shape, input.shape) != tuple(input.shape):
            raise RuntimeError(f"expand: the shape of p {list(p.shape)} does not broadcast to "
                               f"the shape of self {list(input.shape)}")
        return draw("bernoulli_", K.bernoulli_kernel, input, generator, (p,))
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={fmt(p)}")
    return draw("bernoulli_", K.bernoulli_kernel, input, generator, (float(p),))


@op(POINTWISE, method=True, random=True)
def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None,
              out: Tensor | None = None) -> Tensor:
    """torch.bernoulli: 0/1 samples with probabilities `input` (or the constant p), in
    input's dtype."""
    no_out(out, "bernoulli")
    result = _common.new_tensor(input.shape, input.dtype, input.device)
    if p is not None:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={fmt(p)}")
        return draw("bernoulli", K.bernoulli_kernel, result, generator, (float(p),))
    require_float(input.dtype, device_kernel("bernoulli_tensor_{dev}_p_", input.device))
    return draw("bernoulli", K.bernoulli_kernel, result, generator, (input,))


# --- output rules (fake_torch/_meta_registrations.py) -----------------------------------------

def _sized_rule(fn: str) -> Any:
    def rule(*size: Any, out: Tensor | None = None, dtype: dtype | None = None,
             **kwargs: Any) -> TensorMeta:
        no_out(out, fn)
        return new_meta(size, dtype, fn)
    return rule


def _like_rule(fn: str) -> Any:
    def rule(input: Tensor, *, dtype: dtype | None = None,
             memory_format: memory_format | None = None, **kwargs: Any) -> TensorMeta:
        return like_meta(input, dtype, memory_format, fn)
    return rule


for _fn in ("rand", "randn"):
    register_meta(f"torch.{_fn}")(_sized_rule(_fn))
    register_meta(f"torch.{_fn}_like")(_like_rule(f"{_fn}_like"))
register_meta("Tensor.uniform_", "Tensor.normal_", "Tensor.exponential_",
              "Tensor.bernoulli_")(written_rule)


@register_meta("torch.normal")
def _normal_rule(mean: Tensor | float, std: Tensor | float = 1.0, size: Any = None, *,
                 out: Tensor | None = None, dtype: dtype | None = None,
                 **kwargs: Any) -> TensorMeta:
    """Numbers: a factory of `size`; tensors: their broadcast shape in the first's dtype,
    row-major."""
    no_out(out, "normal")
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        return new_meta((size,), dtype, "normal")
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    shape = _common.broadcast_shapes(*(x.shape for x in tensors))
    return TensorMeta(shape, tensors[0].dtype, contiguous_strides(shape))


@register_meta("torch.bernoulli")
def _bernoulli_rule(input: Tensor, p: float | None = None, *,
                    generator: Generator | None = None,
                    out: Tensor | None = None) -> TensorMeta:
    no_out(out, "bernoulli")
    return TensorMeta(tuple(input.shape), input.dtype, contiguous_strides(input.shape))
