"""fake_torch: a numpy package shaped like `torch` that counts every would-be GPU launch."""

from fake_torch import _C as _C  # torch._C: _construct_storage_from_data_pointer
from fake_torch import _dynamo as _dynamo  # torch._dynamo (config, explain, reset)
from fake_torch import compiler, cuda, fx, library, linalg, nn, profiler, return_types, testing
from fake_torch._allocator import OutOfMemoryError
from fake_torch._compile import compile
from fake_torch._counter import LaunchCounter
from fake_torch._device import device
from fake_torch._dtype import (
    bfloat16,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from fake_torch._dtype import bool_ as bool
from fake_torch._factories import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from fake_torch._grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from fake_torch._install import install, installed, is_installed, uninstall
from fake_torch._kernels import indexing as _indexing_ops
from fake_torch._kernels import join as _join_ops
from fake_torch._kernels import linalg as _linalg_ops
from fake_torch._kernels import pointwise as _pointwise_ops
from fake_torch._kernels import random as _random_ops
from fake_torch._kernels import reduction as _reduction_ops
from fake_torch._kernels import shape as _shape_ops
from fake_torch._kernels.indexing import *  # noqa: F403
from fake_torch._kernels.join import *  # noqa: F403
from fake_torch._kernels.linalg import *  # noqa: F403
from fake_torch._kernels.pointwise import *  # noqa: F403
from fake_torch._kernels.random import *  # noqa: F403
from fake_torch._kernels.reduction import *  # noqa: F403
from fake_torch._kernels.shape import *  # noqa: F403
from fake_torch._ops import ops
from fake_torch._repr import set_printoptions
from fake_torch._storage import UntypedStorage
from fake_torch._tensor import Size, Tensor

# torch's dtype aliases
half = float16
float = float32
double = float64
long = int64
int = int32
short = int16

__all__ = [
    "LaunchCounter",
    "OutOfMemoryError",
    "Size",
    "Tensor",
    "UntypedStorage",
    "arange",
    "as_tensor",
    "bfloat16",
    "bool",
    "compile",
    "compiler",
    "cuda",
    "device",
    "double",
    "dtype",
    "empty",
    "empty_like",
    "enable_grad",
    "eye",
    "finfo",
    "float",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "full",
    "full_like",
    "fx",
    "get_default_dtype",
    "half",
    "iinfo",
    "inference_mode",
    "install",
    "installed",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_installed",
    "library",
    "linalg",
    "linspace",
    "long",
    "nn",
    "no_grad",
    "ones",
    "ones_like",
    "ops",
    "profiler",
    "promote_types",
    "return_types",
    "set_default_dtype",
    "set_grad_enabled",
    "set_printoptions",
    "short",
    "tensor",
    "testing",
    "uint8",
    "uninstall",
    "zeros",
    "zeros_like",
]

# the ops, so that `from torch import *` and the stubs (mypy) see them
__all__ += _indexing_ops.__all__
__all__ += _join_ops.__all__
__all__ += _linalg_ops.__all__
__all__ += _pointwise_ops.__all__
__all__ += _random_ops.__all__
__all__ += _reduction_ops.__all__
__all__ += _shape_ops.__all__
