"""torch-style printing: `tensor([1.5000, 2.0000], device='cuda:0', dtype=torch.float16)`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fake_torch._dtype import bool_, get_default_dtype, int64

if TYPE_CHECKING:
    from fake_torch._tensor import Tensor


def _format_floats(a: np.ndarray) -> tuple[str, int]:
    """torch's float layout: fixed with 4 decimals, or scientific when the range is wide."""
    finite = np.abs(a[np.isfinite(a)])
    nonzero = finite[finite != 0]
    if finite.size and np.all(finite == np.round(finite)) and finite.max(initial=0) < 1e8:
        return "int", 0  # all integral values print as "1.", "2."
    if nonzero.size and (nonzero.max() / nonzero.min() > 1000 or nonzero.max() > 1e8):
        return "sci", 4
    return "fixed", 4


def tensor_repr(t: Tensor) -> str:
    a = t._a.astype(np.float64) if t.dtype.is_floating_point else t._a
    suffix = []
    if t.is_cuda:
        suffix.append(f"device='{t.device}'")
    if t.numel() == 0 and t.dim() != 1:
        suffix.insert(0, f"size={tuple(t.shape)}")
    if t.dtype not in (get_default_dtype(), int64, bool_):
        suffix.append(f"dtype={t.dtype!r}")
    if t.dtype.is_floating_point:
        style, _ = _format_floats(a)
        if style == "int":
            fmt = {"float_kind": lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)}
        elif style == "sci":
            fmt = {"float_kind": lambda v: f"{v:.4e}"}
        else:
            fmt = {"float_kind": lambda v: f"{v:.4f}" if np.isfinite(v) else str(v)}
        body = np.array2string(a, separator=", ", formatter=fmt, prefix="tensor(",  # type: ignore[arg-type]
                               threshold=1000, edgeitems=3, max_line_width=80)
    elif t.dtype is bool_:
        body = np.array2string(a, separator=", ", prefix="tensor(", threshold=1000,
                               edgeitems=3, max_line_width=80)
        body = body.replace("True", " True").replace("  True", " True")
    else:
        body = np.array2string(a, separator=", ", prefix="tensor(", threshold=1000,
                               edgeitems=3, max_line_width=80)
    body = body.replace("...", "...") if t.dim() else body
    return f"tensor({body}" + "".join(f", {s}" for s in suffix) + ")"
