"""torch.pixel_shuffle / pixel_unshuffle (torch.nn.functional's are the same functions), as
torch's CUDA build runs them (aten/src/ATen/native/PixelShuffle.cpp, math_pixel_shuffle): a
view splitting the channel (or spatial) dims, a permute, and one `clone` into the contiguous
result. (The CPU build has its own kernel, `pixel_shuffle`; nothing is counted there.)"""

from __future__ import annotations

from fake_torch._kernels.shape import clone
from fake_torch._memory_format import contiguous_format, contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Tensor


def _check(name: str, input: Tensor, factor: int, what: str) -> None:
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


@op(COMPOSITE)
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    r = upscale_factor
    batch, c, h, w = _shuffle_dims(input, r)
    n = len(batch)
    split = input.reshape(*batch, c // (r * r), r, r, h, w)
    order = [*range(n), n, n + 3, n + 1, n + 4, n + 2]  # (oc, h, r, w, r)
    shuffled = clone(split.permute(*order), memory_format=contiguous_format)  # always copies
    return shuffled.view(*batch, c // (r * r), h * r, w * r)


@register_meta("torch.pixel_shuffle")
def _pixel_shuffle_rule(input: Tensor, upscale_factor: int) -> TensorMeta:
    """A contiguous copy (the permuted split, cloned), viewed as the output's shape."""
    r = upscale_factor
    batch, c, h, w = _shuffle_dims(input, r)
    shape = (*batch, c // (r * r), h * r, w * r)
    return TensorMeta(shape, input.dtype, contiguous_strides(shape))


def _shuffle_dims(input: Tensor, r: int) -> tuple[list[int], int, int, int]:
    """pixel_shuffle's checks; input's batch dims, channels, height and width."""
    _check("pixel_shuffle", input, r, "upscale_factor")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return batch, c, h, w


@op(COMPOSITE)
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W)."""
    r = downscale_factor
    batch, c, h, w = _unshuffle_dims(input, r)
    n = len(batch)
    split = input.reshape(*batch, c, h // r, r, w // r, r)
    order = [*range(n), n, n + 2, n + 4, n + 1, n + 3]  # (c, r, r, oh, ow)
    shuffled = clone(split.permute(*order), memory_format=contiguous_format)
    return shuffled.view(*batch, c * r * r, h // r, w // r)


@register_meta("torch.pixel_unshuffle")
def _pixel_unshuffle_rule(input: Tensor, downscale_factor: int) -> TensorMeta:
    r = downscale_factor
    batch, c, h, w = _unshuffle_dims(input, r)
    shape = (*batch, c * r * r, h // r, w // r)
    return TensorMeta(shape, input.dtype, contiguous_strides(shape))


def _unshuffle_dims(input: Tensor, r: int) -> tuple[list[int], int, int, int]:
    _check("pixel_unshuffle", input, r, "downscale_factor")
    *batch, c, h, w = input.shape
    for dim, size, where in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {dim} to be divisible by "
                               f"downscale_factor, but input.size({where})={size} is not "
                               f"divisible by {r}")
    return batch, c, h, w
