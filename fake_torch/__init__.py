"""fake_torch: a numpy package shaped like `torch` that counts every would-be GPU launch."""

from fake_torch import _C as _C  # torch._C: _construct_storage_from_data_pointer
from fake_torch import _dynamo as _dynamo  # torch._dynamo (config, explain, reset)
from fake_torch import (
    compiler,
    cuda,
    fx,
    library,
    linalg,
    nn,
    overrides,
    profiler,
    return_types,
    testing,
)
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
from fake_torch._generator import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
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
from fake_torch._kernels.cast import can_cast, is_floating_point, is_tensor, numel, result_type
from fake_torch._kernels.expand import broadcast_shapes
from fake_torch._opdef import exports as _exports
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
    "Generator",
    "LaunchCounter",
    "OutOfMemoryError",
    "Size",
    "Tensor",
    "UntypedStorage",
    "bfloat16",
    "bool",
    "broadcast_shapes",
    "can_cast",
    "compile",
    "compiler",
    "cuda",
    "default_generator",
    "device",
    "double",
    "dtype",
    "enable_grad",
    "finfo",
    "float",
    "float16",
    "float32",
    "float64",
    "fx",
    "get_default_dtype",
    "get_rng_state",
    "half",
    "iinfo",
    "inference_mode",
    "initial_seed",
    "install",
    "installed",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_floating_point",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_installed",
    "is_tensor",
    "library",
    "linalg",
    "long",
    "manual_seed",
    "nn",
    "no_grad",
    "numel",
    "ops",
    "overrides",
    "profiler",
    "promote_types",
    "result_type",
    "return_types",
    "seed",
    "set_default_dtype",
    "set_grad_enabled",
    "set_printoptions",
    "set_rng_state",
    "short",
    "testing",
    "uint8",
    "uninstall",
]

# the ops, from their definitions (fake_torch._opdef): torch.add, torch.cat, torch.zeros, ...
# (their public entries, which go through __torch_function__)
globals().update(_exports("torch"))
__all__ += sorted(_exports("torch"))
