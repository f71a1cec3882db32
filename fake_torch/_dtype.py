"""torch dtypes over numpy dtypes (bfloat16 and the float8s from ml_dtypes), type promotion,
finfo/iinfo.

The complex dtypes exist as dtype objects (code reads them at import: `torch.complex64`,
`dtype.is_complex`, `to_complex()`), but no tensor can hold one: allocating a complex tensor
raises NotImplementedError (fake_torch._kernels._common.new_tensor_exact).

The "limited" dtypes (torch's float8s, float4_e2m1fn_x2, uint16/32/64) hold tensors that torch
creates, copies, casts, views and indexes, but computes on with only a few kernels; the rest
refuse them as torch does (fake_torch/_limited.py). torch promotes no float8 with any other
dtype and no uint16/32/64 with another integral one."""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import numpy as np


class dtype:
    """A torch dtype: `torch.float32`, `torch.bfloat16`, ... (compare with `is` or `==`)."""

    __slots__ = ("_category", "_name", "is_signed", "itemsize", "np")

    def __init__(self, name: str, np_dtype: Any, category: int, is_signed: bool,
                 itemsize: int = 0) -> None:
        self._name = name
        # `np` left unset: a complex dtype (no tensor can hold one); ml_dtypes' until loaded
        if np_dtype is not None:
            self.np: np.dtype[Any] = np.dtype(np_dtype)
        self._category = category  # 0 bool, 1 integral, 2 floating, 3 complex: the ladder
        self.is_signed = is_signed
        self.itemsize = itemsize or self.np.itemsize

    @property
    def is_floating_point(self) -> bool:
        return self._category == 2

    @property
    def is_complex(self) -> bool:
        return self._category == 3

    @property
    def abbr(self) -> str:
        """torch's short name: "f32", "bf16", "c64", "b8"."""
        return _ABBR[self]

    def to_real(self) -> dtype:
        """The real dtype of a complex one (complex64 -> float32); a real dtype itself."""
        return _REAL.get(self, self)

    def to_complex(self) -> dtype:
        """The complex dtype of a floating one (float32 -> complex64); a complex dtype itself."""
        found = _COMPLEX.get(self, self if self.is_complex else None)
        if found is None:
            raise RuntimeError(f"Unknown Complex ScalarType for {SCALAR_NAME[self]}")
        return found

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name

    def __getattr__(self, name: str) -> Any:
        """Only for an attribute not set: `np` of bfloat16 or a float8 before ml_dtypes is
        loaded. ml_dtypes is imported at the first use of one of its dtypes, not with
        fake_torch: its extension takes ~0.85 s to initialise (ml_dtypes 0.7), which every
        process paid at `import fake_torch` before, most never touching a bfloat16. (No numpy
        array of its types can exist before it is imported, so nothing needs them earlier.)"""
        if name == "np" and self._name in _ML_NAMES:
            return load_ml_dtypes()[self._name]
        raise AttributeError(f"'torch.dtype' object has no attribute '{name}'")


_ML_NP: dict[str, np.dtype[Any]] = {}  # ml dtype name -> numpy dtype, once ml_dtypes is loaded
FLOAT8_NP: set[np.dtype[Any]] = set()  # the float8s' numpy dtypes, once ml_dtypes is loaded
_ml_lock = threading.Lock()


def loaded_np(d: dtype) -> np.dtype[Any] | None:
    """d's numpy dtype, or None for one of ml_dtypes' while it is not loaded (no array can
    have that dtype yet): for checks of an array's dtype that must not load it."""
    return _ML_NP.get(d._name) if d._name in _ML_NAMES else d.np


def load_ml_dtypes() -> dict[str, np.dtype[Any]]:
    """Import ml_dtypes (once) and register its numpy dtypes: name -> numpy dtype."""
    with _ml_lock:
        if not _ML_NP:
            import ml_dtypes

            found = {d._name: np.dtype(getattr(ml_dtypes, d._name)) for d in _ML_DTYPES}
            for d in _ML_DTYPES:  # from now on a plain attribute, as every other dtype's
                d.np = found[d._name]
            _FROM_NP.update({found[d._name]: d for d in _ML_DTYPES})
            FLOAT8_NP.update(found[d._name] for d in FLOAT8_DTYPES)
            _ML_NP.update(found)  # (last: another thread reads _ML_NP without the lock)
    return _ML_NP


bool_ = dtype("bool", np.bool_, 0, False)
uint8 = dtype("uint8", np.uint8, 1, False)
int8 = dtype("int8", np.int8, 1, True)
int16 = dtype("int16", np.int16, 1, True)
int32 = dtype("int32", np.int32, 1, True)
int64 = dtype("int64", np.int64, 1, True)
float16 = dtype("float16", np.float16, 2, True)
bfloat16 = dtype("bfloat16", None, 2, True, itemsize=2)
float32 = dtype("float32", np.float32, 2, True)
float64 = dtype("float64", np.float64, 2, True)

float8_e4m3fn = dtype("float8_e4m3fn", None, 2, True, itemsize=1)
float8_e5m2 = dtype("float8_e5m2", None, 2, True, itemsize=1)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", None, 2, True, itemsize=1)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", None, 2, True, itemsize=1)
float8_e8m0fnu = dtype("float8_e8m0fnu", None, 2, False, itemsize=1)  # exponent only
# two float4 values packed in one byte: its tensors hold raw bytes (numpy void), never numbers
float4_e2m1fn_x2 = dtype("float4_e2m1fn_x2", "V1", 2, True)
uint16 = dtype("uint16", np.uint16, 1, False)
uint32 = dtype("uint32", np.uint32, 1, False)
uint64 = dtype("uint64", np.uint64, 1, False)

complex32 = dtype("complex32", None, 3, True, itemsize=4)  # numpy has no complex of halves
complex64 = dtype("complex64", np.complex64, 3, True)
complex128 = dtype("complex128", np.complex128, 3, True)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
COMPLEX_DTYPES = (complex32, complex64, complex128)  # complex32: no tensor holds one
FLOAT8_DTYPES = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
UNSIGNED_DTYPES = (uint16, uint32, uint64)  # torch's "barebones" unsigned types
LIMITED_DTYPES = (*FLOAT8_DTYPES, float4_e2m1fn_x2, *UNSIGNED_DTYPES)
_REAL = {complex32: float16, complex64: float32, complex128: float64}
_COMPLEX = {float16: complex32, bfloat16: complex64, float32: complex64, float64: complex128}
_ABBR = {bool_: "b8", uint8: "u8", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
         float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64", complex32: "c32",
         complex64: "c64", complex128: "c128", float8_e4m3fn: "f8e4m3fn",
         float8_e5m2: "f8e5m2", float8_e4m3fnuz: "f8e4m3fnuz", float8_e5m2fnuz: "f8e5m2fnuz",
         float8_e8m0fnu: "f8e8m0fnu", float4_e2m1fn_x2: "f4e2m1fnx2", uint16: "u16",
         uint32: "u32", uint64: "u64"}

# How torch's error messages spell a dtype: its c10::ScalarType ("not implemented for 'Long'",
# "torch.LongTensor") and its C++ element type ("expected dtype float but got double").
SCALAR_NAME = {bool_: "Bool", uint8: "Byte", int8: "Char", int16: "Short", int32: "Int",
               int64: "Long", float16: "Half", bfloat16: "BFloat16", float32: "Float",
               float64: "Double", complex32: "ComplexHalf", complex64: "ComplexFloat",
               complex128: "ComplexDouble", float8_e4m3fn: "Float8_e4m3fn",
               float8_e5m2: "Float8_e5m2", float8_e4m3fnuz: "Float8_e4m3fnuz",
               float8_e5m2fnuz: "Float8_e5m2fnuz", float8_e8m0fnu: "Float8_e8m0fnu",
               float4_e2m1fn_x2: "Float4_e2m1fn_x2", uint16: "UInt16", uint32: "UInt32",
               uint64: "UInt64"}
CPP_NAME = {bool_: "bool", uint8: "unsigned char", int8: "signed char", int16: "short int",
            int32: "int", int64: "long int", float16: "c10::Half", bfloat16: "c10::BFloat16",
            float32: "float", float64: "double", complex32: "c10::complex<c10::Half>",
            complex64: "c10::complex<float>", complex128: "c10::complex<double>",
            float8_e4m3fn: "c10::Float8_e4m3fn", float8_e5m2: "c10::Float8_e5m2",
            float8_e4m3fnuz: "c10::Float8_e4m3fnuz", float8_e5m2fnuz: "c10::Float8_e5m2fnuz",
            float8_e8m0fnu: "c10::Float8_e8m0fnu", float4_e2m1fn_x2: "c10::Float4_e2m1fn_x2",
            uint16: "uint16_t", uint32: "uint32_t", uint64: "uint64_t"}
_ML_DTYPES = (bfloat16, *FLOAT8_DTYPES)  # the dtypes ml_dtypes provides
_ML_NAMES = frozenset(d._name for d in _ML_DTYPES)
# numpy dtype -> torch dtype; ml_dtypes' types join when it is loaded (load_ml_dtypes)
_FROM_NP = {d.np: d for d in ALL_DTYPES + LIMITED_DTYPES + (complex64, complex128)
            if d not in _ML_DTYPES}
_ORDER = {d: i for i, d in enumerate(ALL_DTYPES + COMPLEX_DTYPES)}

_default_dtype = float32

# Python's number types, which torch's argument parser takes wherever a signature says
# `ScalarType` (THPPythonScalarType_Check): `float` is float64 there, never the default dtype.
PYTHON_TYPES: dict[type, dtype] = {int: int64, float: float64, bool: bool_, complex: complex128}


def dtype_arg(value: Any) -> Any:
    """A dtype argument as torch's argument parser reads it: Python's int, float, bool and
    complex become int64, float64, bool, complex128; anything else comes back as it was, for
    the caller's own check (and its error naming what it got)."""
    return PYTHON_TYPES.get(value, value) if value.__class__ is type else value


def dtype_param(value: Any, fn: str, name: str, pos: int) -> dtype:
    """A required positional dtype argument (`promote_types(type1, type2)`), with torch's
    argument parser's TypeError for anything else."""
    found = dtype_arg(value)
    if not isinstance(found, dtype):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be torch.dtype, not "
                        f"{type(value).__name__}")
    return found


def from_numpy_dtype(np_dtype: Any) -> dtype:
    """The torch dtype of a numpy dtype; TypeError for the ones torch does not have."""
    found = _FROM_NP.get(np_dtype) if isinstance(np_dtype, np.dtype) else None  # fast path
    if found is None:
        if not _ML_NP and "ml_dtypes" in sys.modules:  # (the caller's own bfloat16 array)
            load_ml_dtypes()
        found = _FROM_NP.get(np.dtype(np_dtype))
    if found is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype)}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool."
        )
    return found


def get_default_dtype() -> dtype:
    return _default_dtype


def set_default_dtype(d: dtype) -> None:
    global _default_dtype
    if not isinstance(d, dtype):  # (a Python type too: this one reads torch.dtype objects only)
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both promote to, by torch's table (not numpy's)."""
    if type1.__class__ is not dtype:  # (cheap when both are dtypes: ops promote all the time)
        type1 = dtype_param(type1, "promote_types", "type1", 1)
    if type2.__class__ is not dtype:
        type2 = dtype_param(type2, "promote_types", "type2", 2)
    if type1 is type2:
        return type1
    if type1 in LIMITED_DTYPES or type2 in LIMITED_DTYPES:
        return _promote_limited(type1, type2)
    if type1._category == 3 or type2._category == 3:  # the complex of the promoted real parts
        return promote_types(type1.to_real(), type2.to_real()).to_complex()
    if type1._category != type2._category:
        return type1 if type1._category > type2._category else type2
    pair = {type1, type2}
    if pair == {float16, bfloat16}:
        return float32
    if type1._category == 1 and uint8 in pair:  # uint8 with a signed int: the signed one wins,
        other = (pair - {uint8}).pop()  # except int8, which cannot hold 255
        return int16 if other is int8 else other
    return type1 if _ORDER[type1] > _ORDER[type2] else type2


def _promote_limited(type1: dtype, type2: dtype) -> dtype:
    """c10's checks before its promotion table: float8 promotes with nothing; uint16/32/64 only
    with a floating dtype (which wins); float4_e2m1fn_x2 is in no table at all."""
    if type1 in FLOAT8_DTYPES or type2 in FLOAT8_DTYPES:
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                           f"{SCALAR_NAME[type1]} and {SCALAR_NAME[type2]}")
    if type1 in UNSIGNED_DTYPES or type2 in UNSIGNED_DTYPES:
        for d in (type1, type2):
            if d.is_floating_point:
                return d
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {SCALAR_NAME[type1]} and {SCALAR_NAME[type2]}")
    raise RuntimeError("ix_a != -1 INTERNAL ASSERT FAILED: torch's promotion table has no "
                       f"{SCALAR_NAME[type1]} and {SCALAR_NAME[type2]}")


def result_type_of(operands: list[tuple[dtype, int]]) -> dtype:
    """torch.result_type for operands given as (dtype, tier): tier 2 a dimensioned tensor,
    1 a zero-dim tensor, 0 a Python scalar (whose dtype is bool_, int64 or the default float).

    A lower tier only matters when its category is higher than every higher tier's."""
    best: dict[int, dtype] = {}
    for d, tier in operands:
        best[tier] = promote_types(best[tier], d) if tier in best else d
    result: dtype | None = None
    for tier in (2, 1, 0):
        if tier not in best:
            continue
        d = best[tier]
        if result is None:
            result = d
        elif d._category > result._category:
            if tier == 0 and d._category == 2:
                d = _default_dtype  # a Python float promotes ints to the default dtype
            elif d._category == 3 and result._category == 2:
                d = result.to_complex()  # complex over a float keeps the float's precision
            result = d
    assert result is not None
    return result


_NUMPY_FLOATS = (np.float16, np.float32, np.float64)


class finfo:
    """Machine limits of a floating dtype, as torch.finfo reports them."""

    def __init__(self, type: dtype | None = None) -> None:
        d = (_default_dtype if type is None
             else dtype_param(type, "finfo", "type", 1).to_real())  # complex: its real part's
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        if d is float4_e2m1fn_x2:
            raise TypeError("bad argument type for built-in operation")
        info: Any = (np.finfo(d.np) if d.np.type in _NUMPY_FLOATS
                     else _ml_finfo(d.np))
        self.dtype = d._name
        self.bits = d.itemsize * 8
        # c10 gives float8_e5m2fnuz an epsilon of 2**-3, not its two mantissa bits' 2**-2
        self.eps = 0.125 if d is float8_e5m2fnuz else float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min) if d.is_signed else float(info.tiny)  # e8m0: no sign bit
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))  # 10**-decimal digits

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integral dtype, as torch.iinfo reports them."""

    def __init__(self, type: dtype) -> None:
        type = dtype_param(type, "iinfo", "type", 1)
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        if type is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(type.np)
        self.dtype = type._name
        self.bits = type.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _ml_finfo(np_dtype: np.dtype[Any]) -> Any:
    import ml_dtypes

    return ml_dtypes.finfo(np_dtype)  # type: ignore[no-untyped-call]
