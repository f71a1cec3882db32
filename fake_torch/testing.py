"""torch.testing: `assert_close`, with torch's default tolerances and its failure messages.

A port of the comparison logic of torch/testing/_comparison.py for what fake_torch has: tensors,
Python numbers and bools, None, and (nested) sequences and mappings of them. Values are compared
on the host: a cuda tensor is read back (one device-to-host copy each).
"""

from __future__ import annotations

import cmath
import collections.abc
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from fake_torch._dtype import (
    bfloat16,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int64,
    promote_types,
)
from fake_torch._kernels._elementwise import cast_array
from fake_torch._kernels.closeness import isclose_np
from fake_torch._kernels.host import host_array
from fake_torch._tensor import Tensor

__all__ = ["assert_close"]

Msg = str | Callable[[str], str] | None

# {dtype: (rtol, atol)}; every other dtype compares exactly
_DTYPE_PRECISIONS = {
    float16: (0.001, 1e-5),
    bfloat16: (0.016, 1e-5),
    float32: (1.3e-6, 1e-5),
    float64: (1e-7, 1e-7),
}


class _ErrorMeta(Exception):
    """A comparison failure, raised as `type(msg)` once the user's `msg` is applied."""

    def __init__(self, type: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> None:
        super().__init__(msg)
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg: Msg = None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += ("\n\nThe failure occurred for item "
                              f"{''.join(str([item]) for item in self.id)}")
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """This pair type cannot compare these inputs; try the next one."""


def _default_tolerances(*dtypes: dtype) -> tuple[float, float]:
    rtols, atols = zip(*(_DTYPE_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes), strict=True)
    return max(rtols), max(atols)


def _tolerances(*dtypes: dtype, rtol: float | None, atol: float | None,
                id: tuple[Any, ...]) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        raise _ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                         f"omitted, but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None and atol is not None:
        return rtol, atol
    return _default_tolerances(*dtypes)


def _mismatch_msg(*, identifier: str, extra: str | None, abs_diff: Any,
                  abs_diff_idx: tuple[int, ...] | None, atol: float, rel_diff: Any,
                  rel_diff_idx: tuple[int, ...] | None, rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def diff_line(kind: str, diff: Any, idx: tuple[int, ...] | None, tol: float) -> str:
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_diff_idx, atol)
    msg += diff_line("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual: Any, expected: Any, *, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier="Scalars", extra=f"Expected {expected} but got {actual}.",
                         abs_diff=abs_diff, abs_diff_idx=None, atol=atol, rel_diff=rel_diff,
                         rel_diff_idx=None, rtol=rtol)


def _tensor_mismatch_msg(actual: np.ndarray, expected: np.ndarray, matches: np.ndarray, *,
                         rtol: float, atol: float) -> str:
    """Counts and the worst absolute / relative differences, computed in the tensors' dtype
    (integers in int64) as torch computes them."""
    total = matches.size
    mismatches = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    a, e = actual.ravel(), expected.ravel()
    with np.errstate(all="ignore"):
        if a.dtype.kind in "iub":  # int64 differences; their ratio in the default float dtype
            a, e = a.astype(np.int64), e.astype(np.int64)
            abs_diff = np.abs(a - e)
            abs_diff[matches.ravel()] = 0
            fdt = get_default_dtype().np
            rel_diff = abs_diff.astype(fdt) / np.abs(e).astype(fdt)
        else:
            abs_diff = np.abs(a - e)
            abs_diff[matches.ravel()] = 0
            rel_diff = abs_diff / np.abs(e)
    rel_diff[matches.ravel()] = 0

    def worst(d: np.ndarray) -> tuple[Any, tuple[int, ...]]:
        i = int(np.argmax(d))  # the first NaN, else the first maximum, as torch.max
        return d[i].item(), tuple(int(v) for v in np.unravel_index(i, matches.shape))

    abs_val, abs_idx = worst(abs_diff)
    rel_val, rel_idx = worst(rel_diff)
    return _mismatch_msg(identifier="Tensor-likes", extra=extra, abs_diff=abs_val,
                         abs_diff_idx=abs_idx, atol=atol, rel_diff=rel_val,
                         rel_diff_idx=rel_idx, rtol=rtol)


# --- pairs --------------------------------------------------------------------------------------

def _compare_none(actual: Any, expected: Any, id: tuple[Any, ...]) -> None:
    if not (actual is None and expected is None):
        raise _ErrorMeta(AssertionError, f"None mismatch: {actual} is not {expected}", id=id)


def _compare_bools(actual: Any, expected: Any, id: tuple[Any, ...]) -> None:
    a, e = (bool(v) for v in (actual, expected))
    if a is not e:
        raise _ErrorMeta(AssertionError, f"Booleans mismatch: {a} is not {e}", id=id)


_NUMBER_DTYPES = {int: int64, float: float64}


def _compare_numbers(a: Any, e: Any, id: tuple[Any, ...], *, rtol: float, atol: float,
                     equal_nan: bool, check_dtype: bool) -> None:
    if check_dtype and type(a) is not type(e):
        raise _ErrorMeta(AssertionError,
                         f"The (d)types do not match: {type(a)} != {type(e)}.", id=id)
    if a == e or (equal_nan and cmath.isnan(a) and cmath.isnan(e)):
        return
    abs_diff = abs(a - e)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(e):
        return
    raise _ErrorMeta(AssertionError, _scalar_mismatch_msg(a, e, rtol=rtol, atol=atol), id=id)


def _compare_tensors(actual: Tensor, expected: Tensor, id: tuple[Any, ...], *, rtol: float,
                     atol: float, equal_nan: bool, check_device: bool, check_dtype: bool,
                     check_stride: bool) -> None:
    def mismatch(attribute: str, a: Any, e: Any) -> NoReturn:
        raise _ErrorMeta(AssertionError, f"The values for attribute '{attribute}' do not "
                         f"match: {a} != {e}.", id=id)

    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype is not expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)

    common = promote_types(actual.dtype, expected.dtype).np
    a = cast_array(host_array(actual, "assert_close"), common)
    e = cast_array(host_array(expected, "assert_close"), common)
    with np.errstate(all="ignore"):
        matches = np.asarray(isclose_np(a, e, rtol, atol, equal_nan))
    if matches.all():
        return
    if actual.dim() == 0:
        msg = _scalar_mismatch_msg(a.item(), e.item(), rtol=rtol, atol=atol)
    else:
        msg = _tensor_mismatch_msg(a, e, matches, rtol=rtol, atol=atol)
    raise _ErrorMeta(AssertionError, msg, id=id)


Check = Callable[[], None]


def _originate(actual: Any, expected: Any, id: tuple[Any, ...],
               options: dict[str, Any]) -> list[Check]:
    """Recurse through sequences and mappings into leaf comparisons, checking structure (and
    which pair type takes each leaf: None, bool, number, tensor) before comparing any value,
    as torch's originate_pairs does."""
    seq = collections.abc.Sequence
    if (isinstance(actual, seq) and not isinstance(actual, str)
            and isinstance(expected, seq) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _ErrorMeta(AssertionError, "The length of the sequences mismatch: "
                             f"{len(actual)} != {len(expected)}", id=id)
        return [check for i in range(len(actual))
                for check in _originate(actual[i], expected[i], (*id, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        a_keys, e_keys = set(actual), set(expected)
        if a_keys != e_keys:
            raise _ErrorMeta(AssertionError, "The keys of the mappings do not match:\n"
                             f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                             "Additional keys in the actual mapping: "
                             f"{sorted(a_keys - e_keys)}", id=id)
        try:
            keys: list[Any] = sorted(a_keys)
        except TypeError:
            keys = list(a_keys)
        return [check for key in keys
                for check in _originate(actual[key], expected[key], (*id, key), options)]
    return [_leaf(actual, expected, id, options)]


def _leaf(actual: Any, expected: Any, id: tuple[Any, ...], options: dict[str, Any]) -> Check:
    if actual is None or expected is None:
        return lambda: _compare_none(actual, expected, id)
    bools = (bool, np.bool_)
    if isinstance(actual, bools) and isinstance(expected, bools):
        return lambda: _compare_bools(actual, expected, id)
    numbers = (int, float, np.number)
    if (isinstance(actual, numbers) and isinstance(expected, numbers)
            and not isinstance(actual, bools) and not isinstance(expected, bools)):
        a = actual.item() if isinstance(actual, np.number) else actual
        e = expected.item() if isinstance(expected, np.number) else expected
        rtol, atol = _tolerances(*(_NUMBER_DTYPES.get(type(v), float64) for v in (a, e)),
                                 rtol=options["rtol"], atol=options["atol"], id=id)
        return lambda: _compare_numbers(a, e, id, rtol=rtol, atol=atol,
                                        equal_nan=options["equal_nan"],
                                        check_dtype=options["check_dtype"])
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if related and (options["allow_subclasses"] or type(actual) is type(expected)):
        ta, te = _as_tensor(actual), _as_tensor(expected)
        if ta is not None and te is not None:
            rtol, atol = _tolerances(ta.dtype, te.dtype, rtol=options["rtol"],
                                     atol=options["atol"], id=id)
            return lambda: _compare_tensors(
                ta, te, id, rtol=rtol, atol=atol, equal_nan=options["equal_nan"],
                check_device=options["check_device"], check_dtype=options["check_dtype"],
                check_stride=options["check_stride"])
    raise _ErrorMeta(TypeError, "No comparison pair was able to handle inputs of type "
                     f"{type(actual)} and {type(expected)}.", id=id)


def _as_tensor(value: Any) -> Tensor | None:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        from fake_torch._factories import as_tensor

        try:
            return as_tensor(value)
        except TypeError:
            return None
    return None


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg: Msg = None) -> None:
    """Assert `actual` and `expected` are close: |actual - expected| <= atol + rtol *
    |expected| elementwise, with torch's default tolerances per dtype when rtol/atol are
    omitted; shape, device and dtype must match (see the check_* flags). Raises torch's
    AssertionError ("Tensor-likes are not close! ...")."""
    __tracebackhide__ = True
    options = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol,
               "equal_nan": equal_nan, "check_device": check_device,
               "check_dtype": check_dtype, "check_stride": check_stride}
    try:
        checks = _originate(actual, expected, (), options)
    except _ErrorMeta as meta:  # a structural mismatch: torch ignores `msg` for these
        raise meta.to_error() from None
    for check in checks:
        try:
            check()
        except _ErrorMeta as meta:
            raise meta.to_error(msg) from None
