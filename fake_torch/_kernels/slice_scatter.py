"""slice_scatter: a copy of input with one slice replaced by src (torch's aten::slice_scatter).

ATen's kernel is `out = input.clone(); out.slice(dim, start, end, step).copy_(src)`: two
launches on cuda (the clone, the copy into the slice), and the copy keeps input's layout
(clone's preserve_format). src must have the slice's size exactly; its dtype is cast by copy_.
"""

from __future__ import annotations

from fake_torch._kernels._strides import dense_strides_like
from fake_torch._kernels.shape import clone
from fake_torch._kernels.split import slice_bounds, slice_dim
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import POINTWISE, op
from fake_torch._sym import sym_index
from fake_torch._tensor import Tensor, wrap_dim


def _slice_size(input: Tensor, d: int, start: int | None, end: int | None,
                step: int) -> list[int]:
    """The size of input.slice(d, start, end, step)."""
    if input.dim() == 0:
        raise RuntimeError("slice() cannot be applied to a 0-dim tensor.")
    start = None if start is None else sym_index(start)
    end = None if end is None else sym_index(end)
    _, n = slice_bounds(input.shape[d], start, end, sym_index(step))
    return [n if k == d else s for k, s in enumerate(input.shape)]


def _check_src(input: Tensor, src: Tensor, dim: int, start: int | None, end: int | None,
               step: int) -> int:
    """slice_scatter's check: src's size is the slice's. The wrapped dim."""
    d = wrap_dim(dim, max(input.dim(), 1))
    want = _slice_size(input, d, start, end, step)
    if list(src.shape) != want:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {want}")
    return d


@op(POINTWISE, method=True)
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """input's values with input[..., start:end:step, ...] (along dim) replaced by src: a
    fresh tensor laid out as input. A "clone" launch, then a "copy_" into the slice."""
    d = _check_src(input, src, dim, start, end, step)
    out = clone(input)
    slice_dim(out, d, None if start is None else sym_index(start),
              None if end is None else sym_index(end), sym_index(step)).copy_(src)
    return out


@register_meta("torch.slice_scatter")
def _slice_scatter_rule(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                        end: int | None = None, step: int = 1) -> TensorMeta:
    _check_src(input, src, dim, start, end, step)
    return TensorMeta(tuple(input.shape), input.dtype,
                      dense_strides_like(tuple(input.shape), tuple(input.stride())))
