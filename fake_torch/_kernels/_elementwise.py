"""The engine under every pointwise op: operand checks, torch's output layout, in-place rules,
torch-exact casts, and `map_kernel`, the one kernel that evaluates a numpy function into a buffer.

Dtype roles in one launch (TensorIterator's words):
  promo   the common dtype every tensor input is cast to first (torch's `common_dtype`);
  cdt     the dtype the math runs in: float32 for float16/bfloat16 (torch's `opmath`), else promo;
  out     the output buffer's dtype; the result is cast to it on store.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from fake_torch._dtype import (
    ALL_DTYPES,
    COMPLEX_DTYPES,
    FLOAT8_DTYPES,
    LIMITED_DTYPES,
    bfloat16,
    bool_,
    dtype,
    float16,
    float32,
    loaded_np,
)
from fake_torch._kernels._common import (
    broadcast_shapes,
    common_device,
    launch,
    mixed_devices_error,
    new_tensor,
    new_tensor_exact,
    result_type,
    scalar_dtype,
)
from fake_torch._kernels._float8_cast import FLOAT8_NP, PACKED_NP, cast_float8
from fake_torch._kernels._limited import CHECKED, COMPLEX, check_kernel, complex_not_emulated
from fake_torch._kernels._strides import (
    assert_no_internal_overlap,
    assert_no_partial_overlap,
    empty_strided,
    scalar_type_name,
)
from fake_torch._memory_format import contiguous_strides, is_contiguous
from fake_torch._meta_registrations import TensorMeta, register_kind
from fake_torch._opdef import POINTWISE
from fake_torch._simulated import _dispatch, _machine
from fake_torch._simulated._native_core import NATIVE
from fake_torch._sym import SymBool, SymFloat, SymInt, sym_max
from fake_torch._tensor import Scalar, Tensor
from fake_torch._torch_device import CPU, device

Operand = Tensor | Scalar
F = TypeVar("F", bound=Callable[..., None])
Size = Any  # an int, or a torch.SymInt when an output rule runs on symbolic sizes

# numpy's error-state variable and its quiet value, for the native core's ufunc kernels
# (`ufunc_kernel_of`): None without the native core or with another numpy layout
_QUIET: tuple[Any, Any] | None = None
try:  # numpy's error state is a context variable: setting it directly costs ~0.2us, errstate ~5us
    from numpy._core._ufunc_config import (  # type: ignore[attr-defined]
        _extobj_contextvar,
        _make_extobj,
    )

    # Silence numpy's floating-point warnings (torch has none): `token = enter_quiet()`, then
    # `exit_quiet(token)`. The context variable's own methods, not Python functions around
    # them: every kernel calls both, and a Python frame costs more than the call inside it.
    enter_quiet: Callable[[], Any] = functools.partial(_extobj_contextvar.set,
                                                       _make_extobj(all="ignore"))
    exit_quiet: Callable[[Any], None] = _extobj_contextvar.reset
    if NATIVE is not None:
        _QUIET = (_extobj_contextvar, _make_extobj(all="ignore"))
except ImportError:  # pragma: no cover - other numpy layouts
    def _enter_errstate() -> Any:
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def _exit_errstate(token: Any) -> None:
        token.__exit__(None, None, None)

    enter_quiet, exit_quiet = _enter_errstate, _exit_errstate


def quiet_call(f: Callable[[], None]) -> None:
    """Run f with numpy's floating-point warnings silenced."""
    token = enter_quiet()
    try:
        f()
    finally:
        exit_quiet(token)


# "Float", "Long", "ComplexFloat"
DTYPE_NAMES = {d: scalar_type_name(d) for d in ALL_DTYPES + LIMITED_DTYPES + COMPLEX_DTYPES}
_REDUCED = (float16, bfloat16)
_IN_FLOAT32 = frozenset((float16, bfloat16, *FLOAT8_DTYPES))


def opmath(dt: dtype) -> dtype:
    """The dtype torch does the arithmetic in: float32 for the 16-bit and 8-bit floats."""
    return float32 if dt in _IN_FLOAT32 else dt


def not_implemented(kernel: str, dt: dtype) -> NotImplementedError:
    """torch's error for a dtype a kernel was not compiled for."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{DTYPE_NAMES[dt]}'")


def can_cast(from_: dtype, to: dtype) -> bool:
    """torch.can_cast: no complex -> real, no float -> integral, no non-bool -> bool."""
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    return not (from_ is not bool_ and to is bool_)


def device_error(*devices: device) -> RuntimeError:
    """TensorIterator's error for operands on two devices (`devices` in operand order, outputs
    first): the first non-cpu device is the common one, the first other device is named."""
    return mixed_devices_error(devices)


# --- operands ---------------------------------------------------------------------------------

def operand(x: Any, fn: str, arg: str, pos: int) -> Operand:
    """A Tensor or Python number; numpy scalars become Python numbers; else torch's TypeError."""
    if isinstance(x, (Tensor, bool, int, float, complex)):
        return x
    if isinstance(x, (np.bool_, np.integer, np.floating, np.complexfloating)):
        return x.item()
    raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                    f"{type(x).__name__}")


def tensor_arg(x: Any, fn: str, arg: str = "input", pos: int = 1) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def is_number(x: object) -> bool:
    """A Python or numpy scalar, or a symbolic one (a SymInt: a rule's size operand)."""
    return isinstance(x, (bool, int, float, complex, np.bool_, np.integer, np.floating,
                          np.complexfloating, SymInt, SymFloat, SymBool))


_PLAIN = (int, float, bool, complex)


def binary_operands(fname: str, input: Any, other: Any) -> tuple[Operand, Operand]:
    """(input, other) as Tensors or Python numbers; two numbers make `input` a 0-dim tensor."""
    if isinstance(input, Tensor) and (isinstance(other, Tensor) or type(other) in _PLAIN):
        return input, other
    a = operand(input, fname, "input", 1)
    b = operand(other, fname, "other", 2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = Tensor._make(np.array(a, dtype=scalar_dtype(a).np), CPU)
    return a, b


def error_tensor(*xs: Any) -> Tensor:
    """The operand whose device picks the kernel name quoted in a dtype error."""
    tensors = [x for x in xs if isinstance(x, Tensor)]
    return next((t for t in tensors if t.is_cuda), tensors[0])


def cast_scalar(to: Callable[[Any], Any], v: Any) -> Any:
    """`to(v)`, a Python scalar as a numpy scalar type, without numpy's warning for a value
    past the type's range: torch says nothing (1e40 as float32 is inf). The common case, a
    float into float64 or an in-range float into float32, skips the error-state switch."""
    if v.__class__ is float and (to is np.float64 or (to is np.float32 and -3e38 < v < 3e38)):
        return to(v)
    token = enter_quiet()
    try:
        return to(v)
    finally:
        exit_quiet(token)


def _scalar_value(v: Scalar, promo: dtype, cdt: dtype, unrounded: bool) -> Any:
    """A Python scalar as the numpy scalar the kernel computes with. torch casts it to the common
    dtype first (ints wrap: int8 + 1000 adds -24), except where it reads the value unrounded in
    float32 (`unrounded`; see `pointwise`'s opmath_arg)."""
    if unrounded or (promo is cdt and promo.is_floating_point):
        return cast_scalar(cdt.np.type, v)  # one rounding from the Python float
    try:
        rounded = cast_scalar(promo.np.type, v)
    except OverflowError:  # an int beyond the dtype: wrap like a C cast
        rounded = np.array(v).astype(promo.np)[()]
    return rounded if cdt is promo else cdt.np.type(rounded)


# --- layout: the strides torch gives a fresh output --------------------------------------------

def _output_perm(shape: tuple[int, ...], arrays: Sequence[np.ndarray]) -> list[int] | None:
    """`output_perm` of numpy arrays (the kernels' operands): row-major ones answer at once."""
    if len(shape) < 2 or all(a.flags.c_contiguous for a in arrays):
        return None
    return output_perm(shape, [(a.shape, a.strides) for a in arrays])


def output_perm(shape: Sequence[Size], operands: Sequence[tuple[Sequence[Size], Sequence[Size]]]
                ) -> list[int] | None:
    """TensorIterator's `reorder_dimensions`: the dim order (slowest first) that follows the
    inputs' memory layout, or None for plain row-major. `operands`: each input's (shape, byte
    strides), broadcast to `shape`. Plain arithmetic and comparisons on sizes and strides (the
    kernels' output buffers and the output rules lay out with this same code)."""
    ndim = len(shape)
    if ndim < 2:
        return None
    strides = []
    for a_shape, a_strides in operands:
        lead = ndim - len(a_shape)
        st = [0] * lead + [0 if _known(a_shape[i] == 1) and _known(shape[lead + i] != 1)
                           else a_strides[i] for i in range(len(a_shape))]
        strides.append(st)

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if _known(s0 == 0) or _known(s1 == 0):
                continue
            if _known(s0 < s1):
                return -1
            if _known(s0 > s1):
                return 1
            if _known(shape[d0] > shape[d1]):
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # fastest first, as torch sorts it
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    perm.reverse()
    return None if perm == list(range(ndim)) else perm


def _known(cond: Any) -> bool:
    """A comparison of sizes or strides; over SymInts, true only where known without a value
    (guard_or_false: an unbacked size takes the general path)."""
    return cond.node.guard_or_false("", 0) if isinstance(cond, SymBool) else bool(cond)


def perm_strides(shape: Sequence[Size], perm: Sequence[int]) -> tuple[Size, ...]:
    """Dense strides laying `shape` out in dim order `perm` (slowest first); a size-0 dim
    counts as 1."""
    strides: list[Size] = [0] * len(shape)
    acc: Size = 1
    for d in reversed(perm):
        strides[d] = acc
        acc *= sym_max(shape[d], 1) if isinstance(shape[d], SymInt) else max(shape[d], 1)
    return tuple(strides)


def new_output(shape: Sequence[int], dt: dtype, dev: device,
               like: Sequence[Tensor] = ()) -> Tensor:
    """A fresh output buffer laid out like torch's: following the inputs' memory order when they
    are not row-major (`x.t().exp()` is column-major, as in torch). No launch."""
    shape = tuple(shape)
    perm = _output_perm(shape, [t._a for t in like])
    if perm is None:
        return new_tensor(shape, dt, dev)
    return empty_strided(shape, perm_strides(shape, perm), dt, dev)


def check_out(out: Tensor, shape: tuple[int, ...], result: dtype,
              inputs: Sequence[Tensor]) -> None:
    """The checks torch makes before writing into an existing tensor (in-place ops, out=)."""
    check_out_meta(tuple(out._a.shape), out.dtype, shape, result)
    assert_no_internal_overlap(out)
    for t in inputs:
        assert_no_partial_overlap(out, t)


def check_out_meta(out_shape: tuple[Size, ...], out_dtype: dtype, shape: tuple[Size, ...],
                   result: dtype) -> None:
    """`check_out`'s questions of metadata: the result casts to out's dtype, out has the
    broadcast shape."""
    if not can_cast(result, out_dtype):
        raise RuntimeError(f"result type {DTYPE_NAMES[result]} can't be cast to the desired "
                           f"output type {DTYPE_NAMES[out_dtype]}")
    if out_shape != shape:
        raise RuntimeError(f"output with shape {list(out_shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")


# --- casts that round and wrap like torch ------------------------------------------------------

def cast_array(a: np.ndarray, to: np.dtype[Any]) -> np.ndarray:
    """`a` as dtype `to`, converted as torch converts (call inside a quiet numpy error state).
    numpy already matches torch bit for bit (bfloat16 via ml_dtypes) except float64 -> uint8,
    which torch takes through int64 (so -6.2e10 keeps its low byte instead of becoming 0), and
    bfloat16 -> integers, which torch takes through float32 (c10::BFloat16 widens to float
    first) while ml_dtypes >= 0.7 casts out-of-range values to 0. The float8s convert in
    fake_torch._kernels._float8_cast; float4_e2m1fn_x2's packed bytes convert to nothing."""
    if a.dtype == to:
        return a
    if a.dtype.kind == "c" and to.kind not in "cb":  # complex -> real keeps the real part
        a = a.real  # (numpy's own cast would warn; torch warned at the op, `warn_complex_cast`)
    if to in FLOAT8_NP or a.dtype in FLOAT8_NP or PACKED_NP in (to, a.dtype):
        if PACKED_NP in (to, a.dtype):
            raise NotImplementedError("\"copy_kernel\" not implemented for 'Float4_e2m1fn_x2'")
        a = cast_float8(a, to)  # type: ignore[assignment]  # not None: one side is a float8
        if a.dtype == to:
            return a
    if to.kind in "iu" and a.dtype == loaded_np(bfloat16):
        a = a.astype(np.float32)
    if to == np.uint8 and a.dtype == np.float64:
        wide = np.abs(a) < 2.0**63
        return np.where(wide, np.where(wide, a, 0).astype(np.int64).astype(np.uint8),
                        a.astype(np.uint8))
    return a.astype(to)


def warn_complex_cast(src: dtype, dst: dtype) -> None:
    """torch's warning for a copy that drops imaginary parts (to(), copy_ into a real tensor;
    torch warns once per process, TORCH_WARN_ONCE; Python's filters decide here)."""
    if src.is_complex and not dst.is_complex and dst is not bool_:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=_user_stacklevel())


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel() -> int:
    """The stacklevel of the first caller outside fake_torch (torch's C++ warnings name the
    Python line that called the op)."""
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and (frame.f_code.co_filename.startswith(_PACKAGE)
                                        or frame.f_code.co_filename.startswith("<fake_torch")):
        frame, level = frame.f_back, level + 1
    return level


# --- fused multiply-add -------------------------------------------------------------------------

def fma(x: Any, y: Any, z: Any) -> Any:
    """x * y + z rounded once, as torch's vectorized kernels (fmadd) compute it. float32 goes
    through float64 (the product is exact there); float64 uses Dekker's error-free product and
    sum; other dtypes compute plainly."""
    x, y, z = np.asarray(x), np.asarray(y), np.asarray(z)
    dt = np.result_type(x, y, z)
    if dt == np.float32:
        wide = x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)
        return wide.astype(np.float32)
    if dt != np.float64:
        return x * y + z
    p = x * y
    xh, xl = _split(x)
    yh, yl = _split(y)
    p_err = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    s = p + z
    bb = s - p
    s_err = (p - (s - bb)) + (z - bb)
    r = s + (s_err + p_err)
    return np.where(np.isfinite(r), r, p + z)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's split of a float64 into two halves of 26 bits."""
    c = 134217729.0 * a
    hi = c - (c - a)
    return hi, a - hi


# --- the kernel --------------------------------------------------------------------------------

Plan = tuple[tuple[np.dtype[Any], ...] | None, ...] | None


def map_kernel(out: np.ndarray, *xs: Any, fn: Callable[..., Any], plan: Plan, direct: bool,
               kw: dict[str, Any]) -> None:
    """out <- fn(*xs). `plan` lists, per input, the dtypes it is cast through before fn sees
    it (None: as it is; a None plan: no input needs a cast); the result is cast to out's dtype
    on store. `direct`: fn is a ufunc whose natural result dtype is out's, so it writes
    straight into out."""
    token = enter_quiet()
    try:
        args = xs if plan is None else [x if p is None else _cast_through(x, p)
                                        for x, p in zip(xs, plan, strict=True)]
        if direct:
            fn(*args, out=out, **kw)
        else:
            r = fn(*args, **kw)
            if r.__class__ is not np.ndarray:  # a ufunc over 0-dim arrays gives a scalar
                r = np.asarray(r)
            # (a plain store: np.copyto is a Python wrapper around the same copy)
            out[...] = r if r.dtype == out.dtype else cast_array(r, out.dtype)
    finally:
        exit_quiet(token)


def _cast_through(x: np.ndarray, dtypes: tuple[np.dtype[Any], ...]) -> np.ndarray:
    for dt in dtypes:
        x = cast_array(x, dt)
    return x


def _input_plan(op: str, x: Tensor, i: int, promo: dtype, cdt: dtype, keep: tuple[int, ...],
                raw: int | None) -> tuple[np.dtype[Any], ...] | None:
    """The casts one tensor input goes through: to the common dtype, then to the compute
    dtype; an unrounded scalar-like input (raw) straight to the compute dtype."""
    if i in keep:
        return None
    if x._dtype is not promo and x._dtype in COMPLEX and promo not in COMPLEX:
        # an op whose promotion forgot complex: numpy's cast would drop the imaginary part
        raise complex_not_emulated(op, x._dtype)
    if i == raw:
        return None if x._dtype is cdt else (cdt.np,)
    chain = () if x._dtype is promo else (promo.np,)
    return (*chain, cdt.np) if cdt is not promo else chain or None


def promote(a: Operand, b: Operand) -> dtype:
    """result_type(a, b), with the common cases answered without the full ladder."""
    if not isinstance(a, Tensor):
        return result_type(a, b)
    if isinstance(b, Tensor):
        if a._dtype is b._dtype:
            return a._dtype
    elif type(b) is float:
        if a._dtype.is_floating_point:
            return a._dtype
    elif type(b) is int and a._dtype is not bool_:
        return a._dtype
    return result_type(a, b)


def pointwise(op: str, fn: Callable[..., Any], operands: Sequence[Operand | None], *,
              promo: dtype, result: dtype, out: Tensor | None = None,
              bool_result: bool = False, opmath_arg: int | None = None,
              keep: tuple[int, ...] = (), kw: dict[str, Any] | None = None) -> Tensor:
    """Run `fn` elementwise over broadcast `operands` as ONE launch of `op`.

    promo: the common dtype; result: the dtype of a fresh output (torch's result type; an
    existing `out` must be castable from it); bool_result: fn returns bools (comparisons);
    opmath_arg: the operand mul/div/lerp read unrounded in float32 when the common dtype is
    float16/bfloat16 and it is a Python scalar or one element (torch's original_scalar_value);
    keep: operands passed to fn as they are (where's condition)."""
    if promo in CHECKED:
        check_kernel(op, promo, error_tensor(*operands))
    if kw is None and not keep:
        fast = _plain_pointwise(op, fn, operands, promo, bool_ if bool_result else promo,
                                result, out)
        if fast is not None:
            return fast
    tensors = [x for x in operands if isinstance(x, Tensor)]
    dev = tensors[0]._device
    if any(t._device is not dev for t in tensors):
        dev = common_device(*tensors)
    shape = tensors[0]._a.shape
    if any(t._a.shape != shape for t in tensors):
        shape = broadcast_shapes(*(t._a.shape for t in tensors))
    if out is None:
        res = new_output(shape, result, dev, tensors)
    else:
        if out.device != dev:
            raise device_error(out._device, dev)
        check_out(out, shape, result, tensors)
        res = out
    cdt = opmath(promo)
    unrounded = opmath_arg if promo in _REDUCED else None
    scalar_like = operands[unrounded] if unrounded is not None else None
    raw = unrounded if isinstance(scalar_like, Tensor) and scalar_like._a.size == 1 else None
    inputs: list[Any] = []
    plan: list[tuple[np.dtype[Any], ...] | None] = []
    for i, x in enumerate(operands):
        if isinstance(x, Tensor):
            inputs.append(x)
            plan.append(_input_plan(op, x, i, promo, cdt, keep, raw))
        else:
            inputs.append(x if x is None else _scalar_value(x, promo, cdt, i == unrounded))
            plan.append(None)
    natural = np.dtype(np.bool_) if bool_result else cdt.np
    direct = isinstance(fn, np.ufunc) and res._a.dtype == natural
    launch(op, map_kernel, res, inputs, {"fn": fn, "direct": direct, "kw": kw or {},
                                         "plan": tuple(plan) if any(plan) else None})
    return res


def _plain_pointwise(op: str, fn: Callable[..., Any], operands: Sequence[Operand | None],
                     promo: dtype, natural: dtype, result: dtype,
                     out: Tensor | None) -> Tensor | None:
    """`pointwise` for its common case, or None when this is not it: tensors of ONE shape,
    dtype (`promo`) and device, with plain Python numbers beside them, computing in their own
    dtype (no 16-bit float) into an output of fn's natural dtype: a fresh row-major one, or
    an `out` (in-place ops) of that same shape, dtype and device that every input either is
    or shares no memory with. The general path would find no cast to plan, a row-major
    output and nothing for `check_out` to refuse: the same launch (a ufunc straight into the
    output, any other fn through `map_kernel`'s cast on store), without the ~15 calls it
    takes to find that out."""
    if promo in _IN_FLOAT32 or result is not natural:
        return None
    first: Tensor | None = None
    for x in operands:
        if x is None:
            return None
        if not isinstance(x, Tensor):
            continue
        if first is None:
            first = x
        elif x._a.shape != first._a.shape or x._device is not first._device:
            return None
        if x._dtype is not promo:
            return None
    assert first is not None, "a pointwise op has a tensor operand"
    if out is None:
        if first._a.ndim >= 2 and _output_perm(first._a.shape, [x._a for x in operands
                                                                if isinstance(x, Tensor)]):
            return None  # not row-major: the general path lays the output out like the inputs
        res = new_tensor_exact(first._a.shape, result, first._device)
    elif _plain_out(out, first, operands, result):
        res = out
    else:
        return None
    # numbers convert after the output exists, as in the general path (a number too big for
    # the dtype raises there with the block already taken). Every tensor is on the output's
    # device (no cpu scalar tensor to pass by value): their arrays go to the door as they are
    inputs = tuple([x._a if isinstance(x, Tensor)
                    else _scalar_value(x, promo, promo, False)  # type: ignore[arg-type]
                    for x in operands])  # (no None here: the loop above returned for one)
    params: dict[str, Any] | None
    if isinstance(fn, np.ufunc):  # the ufunc's own kernel, its arguments spelled out: no params
        n = len(inputs)
        kernel = _UFUNC_KERNELS.get((fn, n)) or ufunc_kernel_of(fn, n)
        params = None
    elif out is None and fn in _INTO:  # its steps straight into the fresh output
        kernel, params = _INTO[fn], None
    else:
        kernel, params = map_kernel, {"fn": fn, "direct": False, "kw": {}, "plan": None}
    dev = res._device
    on_cuda = dev.type == "cuda"
    if not on_cuda and dev.type == "meta":
        return res  # the output is laid out: nothing to run or count (fake_torch/_meta.py)
    if on_cuda and dev.index != _machine.MACHINE.thread.index:
        with _machine.device_guard(dev.index or 0):  # (c10's DeviceGuard: its stream)
            _dispatch.launch(op, kernel, (res._a,), inputs, params, on_cuda=True)
        return res
    _dispatch.launch(op, kernel, (res._a,), inputs, params, on_cuda=on_cuda)
    return res


# the dtypes `plain_binary` takes: those a ufunc computes in as they are (no 16-bit or 8-bit
# float: torch's opmath; no dtype whose kernels check_kernel vets; no bool, which sub refuses)
_PLAIN_DTYPES = frozenset(d for d in ALL_DTYPES if d not in _IN_FLOAT32 and d not in CHECKED
                          and d is not bool_)
_PLAIN_FLOATS = frozenset(d for d in _PLAIN_DTYPES if d.is_floating_point)


def plain_binary(op: str, kernel: Callable[..., None], a: Tensor, b: object) -> Tensor | None:
    """The commonest call of a binary ufunc op (`x + y`, `h * g`), or None when this is not it:
    `b` a tensor of a's dtype, shape and device (row-major when 2-d or more), or a Python float
    beside a float tensor, in a `_PLAIN_DTYPES` dtype, into a fresh output. What
    `pointwise` then does, in one call instead of six (the op, its operands' checks, the
    promotion, `_plain_pointwise`): a row-major output of that dtype and `kernel`
    (`ufunc_kernel_of(fn, 2)`, fetched once per op) launched into it, `b` as the numpy
    scalar of that dtype. The caller falls back to the op itself on None."""
    dt = a._dtype
    x = a._a
    if isinstance(b, Tensor):
        y: Any = b._a
        if (b._dtype is not dt or dt not in _PLAIN_DTYPES or b._device is not a._device
                or y.shape != x.shape
                or (x.ndim > 1 and not (x.flags.c_contiguous and y.flags.c_contiguous))):
            return None
    elif b.__class__ is float and dt in _PLAIN_FLOATS:
        if x.ndim > 1 and not x.flags.c_contiguous:
            return None
        y = cast_scalar(dt.np.type, b)
    else:
        return None
    dev = a._device
    res = new_tensor_exact(x.shape, dt, dev)
    on_cuda = dev.type == "cuda"
    if not on_cuda and dev.type == "cpu" and _dispatch.runs_cpu_kernels_now():
        # an eager cpu kernel that nobody checks: what the door does with it (counts nothing,
        # runs it now; an empty output runs nothing), without the door's calls
        if x.size:
            kernel(res._a, x, y)
        return res
    machine = _machine.MACHINE  # (one GPU: cuda:0 is current, no thread-local to read)
    if on_cuda and len(machine.devices) > 1 and dev.index != machine.thread.index:
        with _machine.device_guard(dev.index or 0):  # (c10's DeviceGuard: its stream)
            _dispatch.launch(op, kernel, (res._a,), (x, y), None, on_cuda=True)
    elif on_cuda or dev.type != "meta":  # on meta the output is all there is (_meta.py)
        _dispatch.launch(op, kernel, (res._a,), (x, y), None, on_cuda=on_cuda)
    return res


# fn -> a kernel `out <- fn(x)` that runs fn's ufuncs one by one in out itself: no temporaries,
# no copy on store. `_plain_pointwise` uses it for a fresh output (never for `out=` or in-place:
# out may be x, which the later steps still read), where the dtypes are fn's own, so each step
# rounds as fn's would: the same values, op for op.
_INTO: dict[Callable[..., Any], Callable[..., None]] = {}


def computes_into(fn: Callable[..., Any]) -> Callable[[F], F]:
    """Register the decorated kernel as `fn`'s, written into its output (see `_INTO`)."""
    def register(kernel: F) -> F:
        _INTO[fn] = kernel
        return kernel
    return register


def ufunc_kernel(out: np.ndarray, *xs: Any, fn: np.ufunc) -> None:
    """out <- fn(*xs), a ufunc writing straight into out (`map_kernel`'s plain case)."""
    token = enter_quiet()
    try:
        fn(*xs, out=out)
    finally:
        exit_quiet(token)


# (ufunc, number of inputs) -> its kernel: `ufunc_kernel` with fn bound and, for one to three
# inputs, the arguments named. Measured (callgrind, a 64-element add): 8.9k instructions a call
# through `ufunc_kernel(*args, **{"fn": fn})`, 7.0k this way (numpy's own add with out=: 4.0k,
# the error-state switch around it 1.6k).
_UFUNC_KERNELS: dict[tuple[np.ufunc, int], Callable[..., None]] = {}


def ufunc_kernel_of(fn: np.ufunc, n: int) -> Callable[..., None]:
    """The kernel `out <- fn(*xs)` for `n` inputs, as `ufunc_kernel` but called without params
    (made once per ufunc and arity)."""
    kernel = _UFUNC_KERNELS.get((fn, n))
    if kernel is not None:
        return kernel
    if _QUIET is not None and NATIVE is not None and n == fn.nin and 1 <= n <= 3:
        # the same kernel as native code (_native_ufunc.c): no Python frame, no method calls
        kernel = NATIVE.QuietUfunc(fn, *_QUIET, n)
    elif n == 1 == fn.nin:
        def kernel(out: np.ndarray, x: Any) -> None:
            token = enter_quiet()
            try:
                fn(x, out=out)
            finally:
                exit_quiet(token)
    elif n == 2 == fn.nin:
        def kernel(out: np.ndarray, x: Any, y: Any) -> None:
            token = enter_quiet()
            try:
                fn(x, y, out=out)
            finally:
                exit_quiet(token)
    elif n == 3 == fn.nin:
        def kernel(out: np.ndarray, x: Any, y: Any, z: Any) -> None:
            token = enter_quiet()
            try:
                fn(x, y, z, out=out)
            finally:
                exit_quiet(token)
    else:
        kernel = functools.partial(ufunc_kernel, fn=fn)
    _UFUNC_KERNELS[fn, n] = kernel
    return kernel


def _plain_out(out: Tensor, like: Tensor, operands: Sequence[Operand | None],
               result: dtype) -> bool:
    """Is `out` an output `check_out` would take without a question: `like`'s shape and
    device, the result dtype, row-major (no internal overlap), and each tensor input either
    `out` itself or apart from it in memory (no partial overlap)?"""
    a = out._a
    if (out._dtype is not result or out._device is not like._device or a.shape != like._a.shape
            or not a.flags.c_contiguous):
        return False
    return all(x._a is a or not np.may_share_memory(x._a, a)
               for x in operands if isinstance(x, Tensor))


# --- output rules (fake_torch/_meta_registrations.py): the layout above, from metadata alone ---

def layout_like(shape: Sequence[Size], tensors: Sequence[Tensor]) -> tuple[Size, ...]:
    """The strides `new_output` gives a fresh output of `shape` over inputs `tensors`, from
    their shapes and strides alone: row-major when every input is (TensorIterator's fast
    path), else in the inputs' dim order."""
    return layout_of(shape, [(t.shape, t.stride(), t.dtype.itemsize) for t in tensors])


def layout_of(shape: Sequence[Size],
              operands: Sequence[tuple[Sequence[Size], Sequence[Size], int]]) -> tuple[Size, ...]:
    """`layout_like` of inputs given as (shape, strides, itemsize)."""
    if len(shape) >= 2 and not all(is_contiguous(s, st) for s, st, _ in operands):
        perm = output_perm(shape, [(s, tuple(x * size for x in st)) for s, st, size in operands])
        if perm is not None:
            return perm_strides(shape, perm)
    return contiguous_strides(shape)


def written_meta(out: Tensor, tensors: Sequence[Tensor]) -> TensorMeta:
    """`out` itself as the result (an in-place op's self, an `out=` argument, an op that hands
    back its input: `to` of nothing new): its own metadata, aliasing its position among the
    call's tensors (after `tensors` when not among them)."""
    at = next((i for i, t in enumerate(tensors) if t is out), len(tensors))
    return TensorMeta(tuple(out.shape), out.dtype, tuple(out.stride()), out.storage_offset(),
                      alias=at)


def elementwise_meta(operands: Sequence[Any], result: dtype,
                     out: Tensor | None = None) -> TensorMeta:
    """The output of a pointwise op over `operands` (tensors and numbers): the broadcast shape,
    `result` dtype, laid out like the tensor inputs; or `out`, which must have that shape."""
    tensors = [x for x in operands if isinstance(x, Tensor)]
    shape = broadcast_shapes(*(t.shape for t in tensors))
    if out is not None:
        check_out_meta(tuple(out.shape), out.dtype, shape, result)
        return written_meta(out, tensors)
    return TensorMeta(shape, result, layout_like(shape, tensors))


def inplace(rule: Callable[..., TensorMeta]) -> Callable[..., TensorMeta]:
    """The rule of `op_` from the rule of `op`: the same computation written into self."""
    def written(self: Tensor, *args: Any, **kwargs: Any) -> TensorMeta:
        return rule(self, *args, out=self, **kwargs)
    written.__qualname__ = f"inplace({rule.__qualname__})"
    return written


@register_kind(POINTWISE)
def pointwise_rule(*args: Any, out: Tensor | None = None, **kwargs: Any) -> TensorMeta:
    """A pointwise op's output: its tensors (and the numbers among its positional arguments)
    broadcast and type-promoted; ops that compute in another dtype have rules of their own."""
    operands = [a for a in args if isinstance(a, Tensor) or is_number(a)]
    operands += [a for a in kwargs.values() if isinstance(a, Tensor)]
    return elementwise_meta(operands, result_type(*operands), out)


def same_dtype_rule(input: Tensor, *args: Any, out: Tensor | None = None,
                    **kwargs: Any) -> TensorMeta:
    """An op of one tensor computing in its dtype (its numbers converted into it, never
    promoting it): leaky_relu, threshold, hardtanh, ..."""
    return elementwise_meta([input], input.dtype, out)


def written_rule(self: Tensor, *args: Any, **kwargs: Any) -> TensorMeta:
    """An op that writes its first argument and returns it (fill_, copy_, uniform_, ...)."""
    return written_meta(self, [self])


def maybe_inplace_meta(input: Tensor, inplace: bool) -> TensorMeta:
    """An activation with an `inplace` flag (F.leaky_relu, F.elu, ...): self written, else a
    fresh output in input's dtype laid out like it."""
    return written_meta(input, [input]) if inplace else elementwise_meta([input], input.dtype)
