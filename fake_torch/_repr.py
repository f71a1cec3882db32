"""torch-style printing: `tensor([1.5000, 2.0000], device='cuda:0', dtype=torch.float16)`.

A port of torch/_tensor_str.py over numpy: one formatter per tensor picks the layout
(integral floats as "1.", fixed with `precision` decimals, or scientific when the range of the
non-zero finite values is wide), pads every element to a common width, and wraps rows at
`linewidth`; tensors over `threshold` elements show `edgeitems` at each end around "...".

Printing a cuda tensor reads device memory, so it is a host sync (illegal while capturing); like
torch's printer (which runs outside the dispatcher's modes) it counts no launches.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from fake_torch._dtype import (
    bool_,
    complex64,
    complex128,
    dtype,
    float64,
    get_default_dtype,
    int64,
)
from fake_torch._simulated import _dispatch

if TYPE_CHECKING:
    from fake_torch._tensor import Tensor


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch.set_printoptions: profile "default" | "short" | "full", then the given fields.
    As in torch, `sci_mode` is always reset (to automatic when not given)."""
    profiles = {"default": (4, 1000, 3), "short": (2, 1000, 2), "full": (4, math.inf, 3)}
    if profile is not None and profile in profiles:  # torch ignores an unknown profile
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems = profiles[profile]
        PRINT_OPTS.linewidth = 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments for set_printoptions."""
    return dataclasses.asdict(PRINT_OPTS)


@contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Change the print options inside the block only."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One layout for every element of a tensor (torch._tensor_str._Formatter)."""

    def __init__(self, a: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in a.ravel().tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = a.ravel()
        vals = vals[np.isfinite(vals) & (vals != 0)]
        if vals.size == 0:
            return
        absvals = np.abs(vals)
        lo, hi = float(absvals.min()), float(absvals.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                         if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        p = PRINT_OPTS.precision
        for v in vals.tolist():
            if self.sci_mode:
                width = len(f"{v:.{p}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1  # the "." that marks a float
            else:
                width = len(f"{v:.{p}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows: edgeitems from each end of every dim."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return a[tuple(slice(0, 0) for _ in a.shape)]
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) if a.shape[0] > 2 * e \
        else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


class _ComplexFormatter:
    """A complex element as torch prints it: the real part by a formatter of the real parts,
    then the imaginary part (by one of the imaginary parts) with its sign and a "j"."""

    def __init__(self, a: np.ndarray) -> None:
        self.real = _Formatter(a.real.astype(np.float64), True)
        self.imag = _Formatter(a.imag.astype(np.float64), True)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # + the "j"

    def format(self, value: Any) -> str:
        imag = (self.imag.format(value.imag) + "j").lstrip()
        sign = "" if imag[0] in "+-" else "+"  # (a negative zero prints its own "-")
        return self.real.format(value.real) + sign + imag


Formatter = _Formatter | _ComplexFormatter


def _vector_str(a: np.ndarray, indent: int, summarize: bool, fmt: Formatter) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = ([fmt.format(v) for v in a[:e].tolist()] + [" ..."] +
                [fmt.format(v) for v in a[-e:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(a: np.ndarray, indent: int, summarize: bool,
                               fmt: Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = ([_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt)
                   for i in range(e)] + ["..."] +
                  [_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt)
                   for i in range(a.shape[0] - e, a.shape[0])])
    else:
        slices = [_tensor_str_with_formatter(a[i], indent + 1, summarize, fmt)
                  for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(a: np.ndarray, floating: bool, indent: int) -> str:
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized(a) if summarize else a
    fmt: Formatter = (_ComplexFormatter(shown) if a.dtype.kind == "c"
                      else _Formatter(shown, floating))
    return _tensor_str_with_formatter(a, indent, summarize, fmt)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _default_complex() -> dtype:
    """The complex dtype torch's printer leaves unsaid: complex128 under a float64 default,
    else complex64."""
    return complex128 if get_default_dtype() is float64 else complex64


def _meta_suffixes(t: Tensor) -> list[str]:
    suffixes = [f"device='{t.device}'", f"size={tuple(t.shape)}"]
    if t.dtype is not get_default_dtype():
        suffixes.append(f"dtype={t.dtype!r}")
    if t.requires_grad:
        suffixes.append("requires_grad=True")
    return suffixes


def tensor_repr(t: Tensor) -> str:
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.is_cuda:  # torch prints the device when it is not the default (cpu) device
        _dispatch.host_sync("repr", reads=(t._a,))
        suffixes.append(f"device='{t.device}'")
    if t._device.type == "meta":  # no data to print: its size, and any dtype but the default
        return _add_suffixes(prefix + "...", _meta_suffixes(t), indent)
    floating = t.dtype.is_floating_point
    a = t._a.astype(np.float64) if floating else t._a  # float16/bfloat16 convert exactly
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not get_default_dtype():  # nothing to infer an int dtype from
            suffixes.append(f"dtype={t.dtype!r}")
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype not in (get_default_dtype(), _default_complex(), int64, bool_):
            suffixes.append(f"dtype={t.dtype!r}")
        tensor_str = _tensor_str(a, floating, indent)
    if t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + tensor_str, suffixes, indent)
