"""fake_torch: a numpy package shaped like `torch` that counts every would-be GPU launch."""

# isort: off
# first, so that every submodule gets torch's errors for its missing names
from fake_torch import _missing_names as _missing_names
# isort: on
import sys as _sys
from math import e, inf, nan, pi

from fake_torch import _C as _C  # torch._C: _construct_storage_from_data_pointer
from fake_torch import _buffers as _buffers  # torch.asarray, torch.frombuffer
from fake_torch import _dynamo as _dynamo  # torch._dynamo (config, explain, reset)
from fake_torch import (
    _namespace,
    accelerator,
    amp,
    backends,
    compiler,
    cuda,
    distributed,
    distributions,
    fx,
    jit,
    library,
    linalg,
    multiprocessing,
    nn,
    optim,
    overrides,
    profiler,
    return_types,
    serialization,
    storage,
    testing,
    torch_version,
    types,
    utils,
    version,
)
from fake_torch import _tensor_new as _tensor_new  # Tensor.new_empty, new_zeros, ...
from fake_torch import _windows as _windows  # torch.hann_window, hamming_window
from fake_torch import autograd as autograd  # torch.autograd (forward only)
from fake_torch import cpu as cpu  # torch.cpu: torch.cuda's queries for the cpu device
from fake_torch import func as func  # torch.func.functional_call
from fake_torch import xpu as xpu  # torch.xpu: no XPU, as torch's CPU build
from fake_torch._build import compiled_with_cxx11_abi
from fake_torch._checks import _check as _check
from fake_torch._checks import _check_is_size as _check_is_size
from fake_torch._checks import _check_with as _check_with
from fake_torch._compile import compile
from fake_torch._default_tensor_type import set_default_tensor_type
from fake_torch._device_module import get_device_module
from fake_torch._dtype import (
    bfloat16,
    complex32,
    complex64,
    complex128,
    dtype,
    finfo,
    float4_e2m1fn_x2,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
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
    uint16,
    uint32,
    uint64,
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
from fake_torch._layout import (
    jagged,
    layout,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from fake_torch._legacy_types import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from fake_torch._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from fake_torch._opdef import exports as _exports
from fake_torch._ops import ops
from fake_torch._repr import set_printoptions
from fake_torch._simulated._allocator import OutOfMemoryError
from fake_torch._simulated._counter import LaunchCounter
from fake_torch._simulated._machine import AcceleratorError
from fake_torch._storage import UntypedStorage
from fake_torch._sym import (
    SymBool,
    SymFloat,
    SymInt,
    sym_float,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
    sym_sum,
)
from fake_torch._tags import Tag
from fake_torch._tensor import Size, Tensor
from fake_torch._threads import (
    get_num_interop_threads,
    get_num_threads,
    set_num_interop_threads,
    set_num_threads,
)
from fake_torch._torch_device import device
from fake_torch._torch_stream import Event, Stream
from fake_torch.amp import autocast
from fake_torch.amp._state import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
    set_autocast_gpu_dtype,
)
from fake_torch.backends.cuda import (
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)
from fake_torch.fx._symbolic_trace import _assert as _assert  # torch._assert
from fake_torch.serialization import load, save
from fake_torch.torch_version import __version__ as __version__
from fake_torch.utils._device import get_default_device, set_default_device

# torch's dtype aliases
cfloat = complex64
cdouble = complex128
chalf = complex32
half = float16
float = float32
double = float64
long = int64
int = int32
short = int16

__all__ = [
    "AcceleratorError",
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "Event",
    "FloatTensor",
    "Generator",
    "HalfTensor",
    "IntTensor",
    "LaunchCounter",
    "LongTensor",
    "OutOfMemoryError",
    "ShortTensor",
    "Size",
    "Stream",
    "SymBool",
    "SymFloat",
    "SymInt",
    "Tag",
    "Tensor",
    "UntypedStorage",
    "accelerator",
    "amp",
    "autocast",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "backends",
    "bfloat16",
    "bool",
    "broadcast_shapes",
    "can_cast",
    "cdouble",
    "cfloat",
    "chalf",
    "channels_last",
    "channels_last_3d",
    "clear_autocast_cache",
    "compile",
    "compiled_with_cxx11_abi",
    "compiler",
    "complex32",
    "complex64",
    "complex128",
    "contiguous_format",
    "cpu",
    "cuda",
    "default_generator",
    "device",
    "distributed",
    "distributions",
    "double",
    "dtype",
    "e",
    "enable_grad",
    "finfo",
    "float",
    "float4_e2m1fn_x2",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float16",
    "float32",
    "float64",
    "fx",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "get_default_device",
    "get_default_dtype",
    "get_device_module",
    "get_float32_matmul_precision",
    "get_num_interop_threads",
    "get_num_threads",
    "get_rng_state",
    "half",
    "iinfo",
    "inf",
    "inference_mode",
    "initial_seed",
    "install",
    "installed",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "is_floating_point",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_installed",
    "is_tensor",
    "jagged",
    "jit",
    "layout",
    "library",
    "linalg",
    "load",
    "long",
    "manual_seed",
    "memory_format",
    "multiprocessing",
    "nan",
    "nn",
    "no_grad",
    "numel",
    "ops",
    "optim",
    "overrides",
    "pi",
    "preserve_format",
    "profiler",
    "promote_types",
    "result_type",
    "return_types",
    "save",
    "seed",
    "serialization",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_gpu_dtype",
    "set_default_device",
    "set_default_dtype",
    "set_default_tensor_type",
    "set_float32_matmul_precision",
    "set_grad_enabled",
    "set_num_interop_threads",
    "set_num_threads",
    "set_printoptions",
    "set_rng_state",
    "short",
    "sparse_bsc",
    "sparse_bsr",
    "sparse_coo",
    "sparse_csc",
    "sparse_csr",
    "storage",
    "strided",
    "sym_float",
    "sym_int",
    "sym_ite",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sum",
    "testing",
    "torch_version",
    "types",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uninstall",
    "utils",
    "version",
]

# the ops, from their definitions (fake_torch._opdef): torch.add, torch.cat, torch.zeros, ...
# (their public entries, which go through __torch_function__)
globals().update(_exports("torch"))
__all__ += sorted(_exports("torch"))

# the lower layers that name things by their torch path reach this namespace through
# fake_torch/_namespace.py (imports point down: fake_torch/_tools/_layers.py)
_namespace.register(_sys.modules[__name__])

# submodules torch imports on first attribute access (`torch._inductor.config` after a bare
# `import torch`), as torch's module __getattr__ does; and ones torch imports with itself
# (`torch._guards`, ...), here on first access too
_LAZY_MODULES = frozenset({"_dynamo", "_inductor", "_guards", "_subclasses", "_logging",
                           "_functorch", "_prims_common"})


def __getattr__(name: str) -> object:
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    import sys

    return _missing_names.missing_attribute(sys.modules[__name__], name)
