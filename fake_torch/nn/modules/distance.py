"""CosineSimilarity and PairwiseDistance: F.cosine_similarity / F.pairwise_distance as modules."""

from __future__ import annotations

from fake_torch._tensor import Tensor
from fake_torch.nn import functional as F
from fake_torch.nn.modules.module import Module


class PairwiseDistance(Module):
    """The p-norm of x1 - x2 + eps over the last dim; `norm` holds p, as torch names it."""

    norm: float
    eps: float
    keepdim: bool

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity of x1 and x2 along dim, each norm floored at eps."""

    dim: int
    eps: float

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


__all__ = ["CosineSimilarity", "PairwiseDistance"]
