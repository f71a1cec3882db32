"""Pointwise ops, comparisons and casts: the public names of the modules that implement them.

  arith.py           add, sub, rsub, mul, pow, lerp
  division.py        div (and its rounding modes), true_divide, floor_divide, remainder
  pointwise_math.py  exp, log, sqrt, sigmoid, relu, silu, gelu, sign, rounding
  clamp.py           clamp and friends, minimum, maximum
  compare.py         eq..ge, logical_*, bitwise_*, isnan/isinf/isfinite, where
  closeness.py       isclose, allclose, equal
  cast.py            Tensor.to and friends, copy_, fill_, zero_, result_type
  operators.py       the Python operators (x + 1, 1 - x, x == y, ...)
  _elementwise.py    the engine they share (promotion, output layout, in-place checks, kernel)

Tensor methods reach every function here as `_pointwise.<name>` (operators as
`_pointwise.operators.<name>`), including the ones torch has only as methods (add_, to, ...),
which stay out of `__all__`.
"""

# ruff: noqa: F405 - __all__ below lists the star-imported names

from __future__ import annotations

from fake_torch._kernels import operators as operators  # reached as _pointwise.operators.<name>
from fake_torch._kernels.arith import *  # noqa: F403
from fake_torch._kernels.arith import add_ as add_
from fake_torch._kernels.arith import lerp_ as lerp_
from fake_torch._kernels.arith import mul_ as mul_
from fake_torch._kernels.arith import pow_ as pow_
from fake_torch._kernels.arith import sub_ as sub_
from fake_torch._kernels.cast import *  # noqa: F403
from fake_torch._kernels.cast import bfloat16_ as bfloat16_
from fake_torch._kernels.cast import byte as byte
from fake_torch._kernels.cast import char as char
from fake_torch._kernels.cast import copy_ as copy_
from fake_torch._kernels.cast import cpu as cpu
from fake_torch._kernels.cast import cuda as cuda
from fake_torch._kernels.cast import double as double
from fake_torch._kernels.cast import half as half
from fake_torch._kernels.cast import long as long
from fake_torch._kernels.cast import short as short
from fake_torch._kernels.cast import tensor_to as tensor_to
from fake_torch._kernels.cast import to as to
from fake_torch._kernels.cast import type_as as type_as
from fake_torch._kernels.clamp import *  # noqa: F403
from fake_torch._kernels.closeness import *  # noqa: F403
from fake_torch._kernels.compare import *  # noqa: F403
from fake_torch._kernels.compare import bitwise_and_ as bitwise_and_
from fake_torch._kernels.compare import bitwise_not_ as bitwise_not_
from fake_torch._kernels.compare import bitwise_or_ as bitwise_or_
from fake_torch._kernels.compare import bitwise_xor_ as bitwise_xor_
from fake_torch._kernels.compare import eq_ as eq_
from fake_torch._kernels.compare import ge_ as ge_
from fake_torch._kernels.compare import gt_ as gt_
from fake_torch._kernels.compare import le_ as le_
from fake_torch._kernels.compare import logical_and_ as logical_and_
from fake_torch._kernels.compare import logical_not_ as logical_not_
from fake_torch._kernels.compare import logical_or_ as logical_or_
from fake_torch._kernels.compare import logical_xor_ as logical_xor_
from fake_torch._kernels.compare import lt_ as lt_
from fake_torch._kernels.compare import ne_ as ne_
from fake_torch._kernels.division import *  # noqa: F403
from fake_torch._kernels.division import div_ as div_
from fake_torch._kernels.division import floor_divide_ as floor_divide_
from fake_torch._kernels.division import remainder_ as remainder_
from fake_torch._kernels.division import true_divide_ as true_divide_
from fake_torch._kernels.pointwise_math import *  # noqa: F403
from fake_torch._kernels.pointwise_math import gelu as gelu
from fake_torch._kernels.pointwise_math import sign_ as sign_
from fake_torch._kernels.pointwise_math import silu as silu

# the union of the modules' __all__, spelled out so that type checkers see every re-export
__all__ = [
    "abs", "abs_", "add", "allclose", "bitwise_and", "bitwise_left_shift", "bitwise_not",
    "bitwise_or", "bitwise_right_shift", "bitwise_xor", "can_cast", "ceil", "ceil_", "clamp",
    "clamp_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_", "clip", "clip_", "cos",
    "cos_", "div", "divide", "eq", "equal", "erf", "erf_", "exp", "exp_", "fill_", "fix",
    "floor", "floor_", "floor_divide", "ge", "greater", "greater_equal", "gt",
    "is_floating_point", "is_tensor", "isclose", "isfinite", "isinf", "isnan", "le", "lerp",
    "less", "less_equal", "log", "log1p", "log1p_", "log_", "logical_and", "logical_not",
    "logical_or", "logical_xor", "lt", "maximum", "minimum", "mul", "multiply", "ne", "neg",
    "neg_", "not_equal", "numel", "positive", "pow", "reciprocal", "reciprocal_", "relu",
    "relu_", "remainder", "result_type", "round", "round_", "rsqrt", "rsqrt_", "rsub",
    "scalar_tensor", "sigmoid", "sigmoid_", "sign", "sin", "sin_", "sqrt", "sqrt_", "square",
    "square_", "sub", "subtract", "tanh", "tanh_", "true_divide", "trunc", "trunc_", "where",
    "zero_",
]
