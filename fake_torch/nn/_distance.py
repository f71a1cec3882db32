"""torch.nn.functional.cosine_similarity and pairwise_distance (torch's F functions are
torch.cosine_similarity and torch.pairwise_distance), as ATen's Distance.cpp composes them:

  cosine_similarity    [`_to_copy` of an integral input to the common float dtype], per input
                       `linalg_vector_norm` (keepdim) and a `clone`, one `scalar_tensor` of eps,
                       `clamp_min_` of each norm by it, `div` of each input by its norm, `mul`,
                       `sum` over dim
  pairwise_distance    `sub`, `add` of eps, then the p-norm over the last dim (torch's aten
                       `norm`; fake_torch's torch.norm launches it as `linalg_vector_norm`)
"""

from __future__ import annotations

from fake_torch._dtype import SCALAR_NAME
from fake_torch._kernels.cast import result_type, scalar_tensor
from fake_torch._kernels.reduction_stats import norm, vector_norm
from fake_torch._opdef import COMPOSITE, op
from fake_torch._tensor import Tensor


@op(COMPOSITE)
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Sum over dim of (x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps)), broadcasting."""
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{SCALAR_NAME[common]}")
    a = x1 if x1.dtype.is_floating_point else x1.to(common)
    b = x2 if x2.dtype.is_floating_point else x2.to(common)
    shape = _infer_size(tuple(a.shape), tuple(b.shape))  # expand_outplace: views
    a, b = a.broadcast_to(shape), b.broadcast_to(shape)
    norm_a = vector_norm(a, 2, dim, keepdim=True).clone()
    norm_b = vector_norm(b, 2, dim, keepdim=True).clone()
    floor = scalar_tensor(eps, dtype=norm_a.dtype, device=norm_a.device)
    norm_a.clamp_min_(floor)
    norm_b.clamp_min_(floor)
    out: Tensor = ((a / norm_a) * (b / norm_b)).sum(dim)
    return out


def _infer_size(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """ATen's infer_size: the broadcast shape, with its error naming the first clash from the
    right by its dim in the result."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for dim in range(n - 1, -1, -1):
        if a[dim] != b[dim] and 1 not in (a[dim], b[dim]):
            raise RuntimeError(f"The size of tensor a ({a[dim]}) must match the size of tensor "
                               f"b ({b[dim]}) at non-singleton dimension {dim}")
    return tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))


@op(COMPOSITE)
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dim (of the broadcast result)."""
    last = max(x1.dim(), x2.dim()) - 1
    return norm(x1 - x2 + eps, p, last, keepdim)
