"""How torch's C++ errors spell dtypes and tensor types, for error texts that match torch's."""

from __future__ import annotations

from typing import Any

from fake_torch._dtype import dtype
from fake_torch._tensor import Tensor

_SCALAR_TYPE = {  # c10::ScalarType names: "not implemented for 'Long'", "torch.LongTensor"
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool",
}
_CPP_TYPE = {  # the C++ type names TORCH_CHECK prints for a dtype ("query.dtype: c10::Half")
    "float32": "float", "float64": "double", "float16": "c10::Half",
    "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
    "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
}


def _key(dt: dtype) -> str:
    return repr(dt).removeprefix("torch.")


def scalar_type_name(dt: dtype) -> str:
    return _SCALAR_TYPE[_key(dt)]


def cpp_type_name(dt: dtype) -> str:
    return _CPP_TYPE[_key(dt)]


def typename(obj: Any) -> str:
    """torch.typename: 'torch.FloatTensor', 'torch.cuda.HalfTensor', 'int', 'pkg.mod.Class'."""
    if isinstance(obj, Tensor):
        return f"torch.{'cuda.' if obj.is_cuda else ''}{scalar_type_name(obj.dtype)}Tensor"
    if hasattr(obj, "__qualname__"):
        module, qualname = getattr(obj, "__module__", "") or "", obj.__qualname__
    else:
        module, qualname = type(obj).__module__ or "", type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
