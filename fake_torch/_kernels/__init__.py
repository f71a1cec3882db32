"""The ops: each module defines its ops (fake_torch._opdef) and their numpy kernels; importing
this package imports them all, which puts every op in the registry and on Tensor."""

# Tensor first, whichever module is imported first: the op modules (through _common) need the
# Tensor class defined.
import fake_torch._tensor  # noqa: F401
from fake_torch._kernels import (  # noqa: F401
    activation,
    arith,
    batch_norm,
    cast,
    clamp,
    closeness,
    compare,
    conv,
    division,
    expand,
    host,
    index_ops,
    indexing,
    isin,
    join,
    linalg,
    linalg_cholesky,
    linalg_einsum,
    loss,
    masked,
    operators,
    pointwise_math,
    pooling,
    quantile,
    random,
    random_dist,
    reduction,
    reduction_scan,
    reduction_sort,
    reduction_stats,
    rnn,
    rnn_cudnn,
    sampling,
    shape,
    shape_inplace,
    split,
)
