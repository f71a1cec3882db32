"""The torch names a checkpoint's pickle refers to, and the fake_torch object behind each.

A torch.save pickle names globals by torch's paths (`torch._utils _rebuild_tensor_v2`, `torch
FloatStorage`, `torch float16`, `torch.nn.parameter Parameter`). Loading maps each to the
fake_torch object that does its job; saving writes the torch path for each fake_torch object,
so real torch loads what fake_torch saves whether fake_torch is imported as `fake_torch` or
installed as `torch`. `GLOBALS` is also the default allowlist of a weights_only load (the
torch globals torch's weights_only unpickler allows and fake_torch emulates); `NOT_EMULATED`
are the ones torch allows that fake_torch cannot rebuild (quantized, sparse, nested tensors).
"""

from __future__ import annotations

import codecs
import collections
import functools
from typing import Any

from fake_torch import _dtype, _legacy_types, _utils
from fake_torch._dtype import dtype as DType
from fake_torch._storage import UntypedStorage
from fake_torch._tensor import Size, Tensor
from fake_torch._torch_device import device
from fake_torch.nn import parameter
from fake_torch.storage import TypedStorage

FAKE = __name__.split(".")[0]  # this package's import name ("fake_torch")


class StorageType:
    """What a legacy storage class in a checkpoint (`torch.FloatStorage`) stands for: its dtype
    (torch.serialization.StorageType)."""

    def __init__(self, name: str) -> None:
        found = {v: k for k, v in _utils.STORAGE_TYPE_NAMES.items()}.get(name)
        if found is None:
            raise KeyError(f'pickle storage type "{name}" is not recognized')
        self._dtype = found
        self.name = name

    @property
    def dtype(self) -> DType:
        return self._dtype

    def __str__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


STORAGE_TYPES = {dt: StorageType(name) for dt, name in _utils.STORAGE_TYPE_NAMES.items()}

# rebuild functions and classes torch's weights_only load allows that fake_torch cannot rebuild
_UNSUPPORTED = ("torch._utils._rebuild_qtensor", "torch._utils._rebuild_sparse_tensor",
                "torch._utils._rebuild_nested_tensor", "torch._utils._rebuild_wrapper_subclass",
                "torch._utils._rebuild_device_tensor_from_numpy",
                "torch.serialization._get_layout", "torch.per_tensor_affine",
                "torch.per_tensor_symmetric", "torch.per_channel_affine",
                "torch.per_channel_symmetric", "torch.per_channel_affine_float_qparams",
                "torch.QInt8Storage", "torch.QInt32Storage", "torch.QUInt8Storage",
                "torch.QUInt4x2Storage", "torch.QUInt2x4Storage",
                "torch.nested._internal.nested_tensor.NestedTensor",
                "torch.nested._internal.nested_tensor._rebuild_njt",
                "torch.distributed.tensor.DTensor", "torch.distributed.device_mesh.DeviceMesh",
                "torch.distributed.tensor._dtensor_spec.DTensorSpec",
                "torch.distributed.tensor._dtensor_spec.TensorMeta",
                "torch.distributed.tensor.placement_types.Partial",
                "torch.distributed.tensor.placement_types.Replicate",
                "torch.distributed.tensor.placement_types.Shard")
NOT_EMULATED = frozenset(_UNSUPPORTED) | frozenset(
    n.replace("torch.", "torch.cuda.", 1) for n in _UNSUPPORTED if n.endswith("Storage"))


@functools.cache
def torch_globals() -> dict[str, Any]:
    """torch path -> fake_torch object, for every global torch's weights_only load allows and
    fake_torch emulates."""
    found: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "_codecs.encode": codecs.encode,  # bytes, pickled at protocol 2
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch.nn.parameter.Parameter": parameter.Parameter,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": device,
        "torch.storage.UntypedStorage": UntypedStorage,
        "torch.storage.TypedStorage": TypedStorage,
        "torch._utils._rebuild_tensor": _utils._rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _utils._rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _utils._rebuild_tensor_v3,
        "torch._utils._rebuild_meta_tensor_no_storage": _utils._rebuild_meta_tensor_no_storage,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor":
            _utils._rebuild_device_tensor_from_cpu_tensor,
        "torch._utils._rebuild_parameter": parameter._rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": parameter._rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _utils._rebuild_from_type_v2,
    }
    for value in vars(_dtype).values():
        if isinstance(value, DType):
            found[repr(value)] = value  # "torch.float16"
    for storage_type in STORAGE_TYPES.values():
        found[f"torch.{storage_type.name}"] = storage_type
        found[f"torch.cuda.{storage_type.name}"] = storage_type
    for name, cls in _legacy_types.CPU_TYPES.items():
        found[f"torch.{name}"] = cls
    for name, cls in _legacy_types.CUDA_TYPES.items():
        found[f"torch.cuda.{name}"] = cls
    return found


@functools.cache
def _saved_names() -> dict[int, tuple[str, str]]:
    """id(fake_torch object) -> (torch module, name) it is saved under (objects that live as
    long as the process: classes, functions, dtypes, storage types)."""
    names: dict[int, tuple[str, str]] = {}
    for path, obj in torch_globals().items():
        if not path.startswith("torch.") or (path.startswith("torch.cuda.") and
                                             "Storage" in path):
            continue  # stdlib names pickle writes itself; torch.FloatStorage on any device
        module, _, name = path.rpartition(".")
        names.setdefault(id(obj), (module, name))
    names[id(DType)] = ("torch", "dtype")  # (saved under torch's name; not on the allowlist)
    return names


def torch_name(obj: Any) -> tuple[str, str] | None:
    """(module, name) torch pickles `obj` under, for the objects whose torch path differs
    from their fake_torch one; None for any other object."""
    return _saved_names().get(id(obj))


def not_emulated(path: str) -> NotImplementedError:
    """The error for a torch global fake_torch cannot rebuild."""
    return NotImplementedError(f"torch.load: the checkpoint needs {path}, which fake_torch "
                               "does not emulate (quantized, sparse, nested tensors, DTensors "
                               "and torch.layout objects have no fake_torch counterpart)")
