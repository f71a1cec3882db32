"""torch.nn.functional.pad: 'constant' is one `constant_pad_nd` launch; 'reflect' and
'replicate' are one `reflection_padNd` / `replication_padNd` launch each; 'circular' is torch's
composite (_pad_circular): an empty output, one `copy_` of the input into its middle, then one
`copy_` per positive pad, wrapping the far side around (the last dim first)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_torch._kernels import conv as _conv
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, op
from fake_torch._tensor import Number, Tensor
from fake_torch.nn import _fused_kernels

_NON_CONSTANT = {"reflect": ("reflection", "reflect"), "replicate": ("replication", "edge")}
_SUPPORTED_DIMS = {1: (2, 3), 2: (3, 4), 3: (4, 5)}  # pads per side -> input dims torch accepts


@op(POINTWISE, namespace="torch.nn.functional",
    aten=("constant_pad_nd", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
          "replication_pad1d", "replication_pad2d", "replication_pad3d"))
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad the last len(pad)//2 dims; `pad` lists (left, right) pairs from the last dim back.
    Negative constant pads crop."""
    pads = _pads(input, pad, mode, value)
    if mode == "constant":
        return constant_pad_nd(input, pads, 0 if value is None else value)
    if mode == "circular":
        return _pad_circular(input, pads)
    return _non_constant_pad(input, pads, mode)


def _pads(input: Tensor, pad: Sequence[int], mode: str, value: float | None) -> list[int]:
    """pad's checks; its pads, (left, right) from the last dim back."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pads = [int(p) for p in pad]
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pads)} and input of "
                           f"dimension {input.dim()}")
    if mode == "constant":
        return pads
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    _check_non_constant_dims(input, pads)
    return pads


def constant_pad_nd(input: Tensor, pads: list[int], value: Number) -> Tensor:
    """torch.constant_pad_nd: one launch, even when every pad is zero (torch clones)."""
    shape, src, dst = _constant_plan(input, pads)
    out = new_tensor(shape, input.dtype, input.device)
    launch("constant_pad_nd", _fused_kernels.constant_pad_kernel, out, (input,),
           {"src": tuple(src), "dst": tuple(dst), "value": value})
    return out


_conv.constant_pad_nd = constant_pad_nd  # at::convolution's 'same' padding


def _constant_plan(input: Tensor, pads: list[int]) -> tuple[list[Any], list[slice], list[slice]]:
    """constant_pad_nd's output shape, and the input's (src) and output's (dst) kept parts."""
    shape = list(input.shape)
    src, dst = [slice(None)] * input.dim(), [slice(None)] * input.dim()
    for j in range(len(pads) // 2):
        d = input.dim() - 1 - j
        lo, hi = pads[2 * j], pads[2 * j + 1]
        start, kept = max(-lo, 0), shape[d]
        for cut in (lo, hi):  # torch narrows the input for each negative pad, in this order
            if cut < 0:
                kept += cut
                if kept < 0:
                    raise RuntimeError("narrow(): length must be non-negative.")
        src[d] = slice(start, start + kept)
        dst[d] = slice(max(lo, 0), max(lo, 0) + kept)
        shape[d] = kept + max(lo, 0) + max(hi, 0)
    return shape, src, dst


def _check_non_constant_dims(input: Tensor, pads: list[int]) -> None:
    if input.dim() not in _SUPPORTED_DIMS.get(len(pads) // 2, ()):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_circular(input: Tensor, pads: list[int]) -> Tensor:
    """torch's _pad_circular: pads (left, right) from the last dim back; a negative pad crops,
    a pad may not exceed its dim (one wrap at most)."""
    n = len(pads) // 2
    shape = _circular_shape(input, pads)
    out = input.new_empty(shape)
    middle, source = out, input  # the input (cropped by negative pads) into the middle
    for i in range(n):
        d = input.dim() - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        middle = middle.narrow(d, max(lo, 0), shape[d] - max(lo, 0) - max(hi, 0))
        source = source.narrow(d, max(-lo, 0), input.shape[d] - max(-lo, 0) - max(-hi, 0))
    middle.copy_(source)
    for i in range(n):  # the wraps, last dim first (corners are written again by later dims)
        d = input.dim() - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        if lo > 0:
            out.narrow(d, 0, lo).copy_(out.narrow(d, shape[d] - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(d, shape[d] - hi, hi).copy_(out.narrow(d, max(lo, 0), hi))
    return out


def _circular_shape(input: Tensor, pads: list[int]) -> list[Any]:
    """_pad_circular's checks and output shape."""
    shape = list(input.shape)
    for i in range(len(pads) // 2):
        d = input.dim() - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        if lo > shape[d] or hi > shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if shape[d] + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        shape[d] += lo + hi
    return shape


def _non_constant_pad(input: Tensor, pads: list[int], mode: str) -> Tensor:
    shape, widths = _non_constant_plan(input, pads, mode)
    prefix, np_mode = _NON_CONSTANT[mode]
    out = new_tensor(shape, input.dtype, input.device)
    launch(f"{prefix}_pad{len(pads) // 2}d", _fused_kernels.np_pad_kernel, out, (input,),
           {"widths": tuple(widths), "mode": np_mode})
    return out


def _non_constant_plan(input: Tensor, pads: list[int], mode: str
                       ) -> tuple[list[Any], list[tuple[int, int]]]:
    """reflect/replicate padding's checks, output shape and numpy pad widths."""
    n = len(pads) // 2
    if any(p < 0 for p in pads):
        raise NotImplementedError(f"torch.nn.functional.pad(mode='{mode}') with negative "
                                  "padding is not emulated by fake_torch")
    widths = [(0, 0)] * input.dim()
    shape = list(input.shape)
    for j in range(n):
        d = input.dim() - 1 - j
        lo, hi = pads[2 * j], pads[2 * j + 1]
        if mode == "reflect" and (lo >= shape[d] or hi >= shape[d]):
            raise RuntimeError("Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{d} of input {list(input.shape)}")
        widths[d] = (lo, hi)
        shape[d] += lo + hi
    return shape, widths


# --- output rule (fake_torch/_meta_registrations.py) ------------------------------------------

@register_meta("torch.nn.functional.pad")
def _pad_rule(input: Tensor, pad: Sequence[int], mode: str = "constant",
              value: float | None = None) -> TensorMeta:
    """A new row-major tensor of the padded shape."""
    pads = _pads(input, pad, mode, value)
    if mode == "constant":
        shape = _constant_plan(input, pads)[0]
    elif mode == "circular":
        shape = _circular_shape(input, pads)
    else:
        shape = _non_constant_plan(input, pads, mode)[0]
    return TensorMeta(tuple(shape), input.dtype, contiguous_strides(shape))
