"""Casts into and out of torch's float8 dtypes, rounded as c10 rounds them.

ml_dtypes holds the bits; its own casts differ from c10's in three places, fixed here:
float8_e4m3fn saturates at +-448 (inf too) where ml_dtypes makes NaN, float8_e5m2 spells NaN
0x7F/0xFF where ml_dtypes uses 0x7E/0xFE, and float8_e8m0fnu takes the float32 exponent bits
and rounds on the mantissa bits alone (sign ignored, zero becomes 2**-127). c10's float8
constructors take a float, so every source goes through float32 first; out of a float8, the
value widens to float32 exactly and converts from there."""

from __future__ import annotations

from typing import Any

import numpy as np

from fake_torch._dtype import FLOAT8_NP as FLOAT8_NP  # (filled when ml_dtypes is loaded)
from fake_torch._dtype import float8_e4m3fn, float8_e5m2, float8_e8m0fnu

PACKED_NP = np.dtype("V1")  # float4_e2m1fn_x2: raw bytes


def to_float8(a: np.ndarray, to: np.dtype[Any]) -> np.ndarray:
    """`a` (any real dtype) as float8 dtype `to`."""
    f = a.astype(np.float32)
    if to == float8_e4m3fn.np:
        return np.clip(f, -448.0, 448.0).astype(to)  # saturating; NaN stays NaN
    if to == float8_e5m2.np:
        out = f.astype(to)
        nan = np.isnan(f)
        if nan.any():
            bits = out.view(np.uint8)
            bits[nan] = np.where(np.signbit(f[nan]), 0xFF, 0x7F)
        return out
    if to == float8_e8m0fnu.np:
        return _to_e8m0(f)
    return f.astype(to)


def _to_e8m0(f: np.ndarray) -> np.ndarray:
    """The exponent byte of float32 `f`, rounded up when the mantissa is past half (or exactly
    half above the subnormals); NaN and inf (and a round-up past 2**127) give NaN, 0xFF."""
    bits = np.ascontiguousarray(f).view(np.uint32)
    exp = (bits >> 23) & 0xFF
    mant = bits & 0x7FFFFF
    up = (mant > 0x400000) | ((mant == 0x400000) & (exp != 0))
    byte = np.where(exp == 0xFF, 0xFF, exp + up).astype(np.uint8)
    return byte.view(float8_e8m0fnu.np)


def cast_float8(a: np.ndarray, to: np.dtype[Any]) -> np.ndarray | None:
    """`a` as `to` when either side is a float8 (None when neither is): float8 -> float8 and
    anything -> float8 by `to_float8`; float8 -> other through float32."""
    if to in FLOAT8_NP:
        return to_float8(a if a.dtype not in FLOAT8_NP else a.astype(np.float32), to)
    if a.dtype in FLOAT8_NP:
        return a.astype(np.float32)  # the caller converts on from float32
    return None
