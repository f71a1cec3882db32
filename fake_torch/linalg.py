"""torch.linalg: the vector norm and matmul (the rest of torch.linalg is not emulated)."""

from __future__ import annotations

from fake_torch._kernels.linalg import matmul
from fake_torch._kernels.reduction_stats import vector_norm

__all__ = ["matmul", "vector_norm"]
