"""torch.linalg: the vector norm, matmul and cholesky, with LinAlgError (the rest of
torch.linalg is not emulated)."""

from __future__ import annotations

from fake_torch._kernels import linalg as _linalg
from fake_torch._kernels import linalg_cholesky as _linalg_cholesky
from fake_torch._kernels.reduction_stats import vector_norm as vector_norm
from fake_torch._opdef import COMPOSITE, exports, op

LinAlgError = _linalg_cholesky._LinAlgError
matmul = op(COMPOSITE, namespace="torch.linalg", aten=())(_linalg.matmul)

globals().update(exports("torch.linalg"))  # the public entries, over the implementations
__all__ = sorted([*exports("torch.linalg"), "LinAlgError"])
