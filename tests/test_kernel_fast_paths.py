"""The kernels' fast paths against their general paths: the same bytes (NaN payloads, -0.0 and
-inf included), the same launches.

- an int repeat_interleave copies each contiguous last-axis row as one item (`copy_rows`);
- one integer tensor index gathers with `np.take` into the output, no temporary;
- the fused attention's safe softmax works in the scores' own buffer.

The general paths are numpy's own (`np.repeat`, fancy indexing) or, for the softmax, its former
out-of-place formula, written here as the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import launches

import fake_torch as ft
from fake_torch._kernels.advanced_index import _index_kernel
from fake_torch._kernels.join import _repeat_int_kernel, copy_rows
from fake_torch.nn._fused_kernels import attention_kernel, safe_softmax

# NaN and inf inputs: numpy's warnings about them are expected here
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# float32 bit patterns a capture's pool holds (all-ones NaN) or arithmetic makes (-NaN, -0.0)
_SPECIALS = np.array([0xFFFFFFFF, 0x7FC00001, 0xFFC00000, 0x80000000, 0xFF800000, 0x7F800000,
                      0x00000001], dtype=np.uint32).view(np.float32)


def _values(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    """Random values of `dtype`; float32 with special bit patterns sprinkled in."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    if a.dtype == np.float32 and a.size:
        flat = a.reshape(-1)
        at = rng.integers(0, a.size, size=max(1, a.size // 4))
        flat[at] = _SPECIALS[rng.integers(0, len(_SPECIALS), size=at.size)]
    return a


def _same_bytes(ours: np.ndarray, ref: np.ndarray) -> None:
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    assert np.ascontiguousarray(ours).tobytes() == np.ascontiguousarray(ref).tobytes()


# --- repeat_interleave (int repeats): copy_rows ---------------------------------------------

@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=1, max_size=4), seed=st.integers(0, 2**16),
       repeats=st.integers(0, 3), data=st.data(),
       dtype=st.sampled_from([np.float32, np.float64, np.int64, np.float16, np.bool_]))
def test_repeat_int_kernel_is_np_repeat_byte_for_byte(shape: list[int], seed: int, repeats: int,
                                                      data: Any, dtype: Any) -> None:
    """Any layout of the source (a permutation of a contiguous array, so rows may or may not
    be contiguous) and any axis: the bytes np.repeat gives."""
    perm = data.draw(st.permutations(range(len(shape))))
    axis = data.draw(st.integers(0, len(shape) - 1))
    src = _values(tuple(shape), dtype, seed).transpose(perm)
    out_shape = list(src.shape)
    out_shape[axis] *= repeats
    out = np.full(out_shape, 7, dtype)
    _repeat_int_kernel(out, src, repeats=repeats, axis=axis)
    _same_bytes(out, np.repeat(src, repeats, axis=axis))


def test_copy_rows_takes_the_row_path_only_where_rows_are_contiguous() -> None:
    """A decode step's GQA key ([N, KVH, S, D] transposed, repeated for H heads): rows of D
    move as items; a strided last axis or a broadcast one goes numpy's general way."""
    base = _values((6, 32, 2, 16), np.float32, 1)
    src = base.transpose(0, 2, 1, 3)[:, :, None]  # [N, KVH, 1, S, D]
    out = np.empty((6, 2, 2, 32, 16), np.float32)
    copy_rows(out, src)
    _same_bytes(out, np.broadcast_to(src, out.shape))
    strided = base[..., ::2]  # last axis not contiguous
    out2 = np.empty(strided.shape, np.float32)
    copy_rows(out2, strided)
    _same_bytes(out2, strided)
    row = base[:, :, :1, :1]  # a broadcast last axis (size 1 into 16)
    out3 = np.empty((6, 32, 1, 16), np.float32)
    copy_rows(out3, row)
    _same_bytes(out3, np.broadcast_to(row, out3.shape))


def test_repeat_interleave_int_still_launches_one_clone() -> None:
    x = ft.randn(4, 8, 2, 16, device="cuda").transpose(1, 2)
    with launches() as names:
        y = x.repeat_interleave(2, dim=1)
    assert names == ["clone"]
    _same_bytes(y.cpu().numpy(), np.repeat(x.cpu().numpy(), 2, axis=1))


# --- one integer index: np.take ----------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), seed=st.integers(0, 2**16),
       data=st.data(), dtype=st.sampled_from([np.float32, np.int64, np.float16, np.bool_]))
def test_one_integer_index_gathers_as_fancy_indexing(shape: list[int], seed: int, data: Any,
                                                     dtype: Any) -> None:
    """x[..., idx, ...] with idx of any shape (0-dim included) and negative entries: the bytes
    numpy's fancy indexing gives."""
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx_shape = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    idx = np.random.default_rng(seed).integers(-n, n, size=idx_shape)
    src = _values(tuple(shape), dtype, seed)
    spec = (-1,) * axis + (0,)
    key = (slice(None),) * axis + (idx,)
    ref = src[key]
    out = np.full(ref.shape, 3, dtype)
    _index_kernel(out, src, idx, spec=spec, u8=(), checks=((0, axis, axis),))
    _same_bytes(out, ref)


def test_index_launches_one_index_and_checks_bounds() -> None:
    cache = ft.randn(2, 9, 4, 2, 3, device="cuda")
    rows = ft.tensor([3, -1, 0, 8, 3], device="cuda")
    with launches() as names:
        got = cache[0][rows]
    assert names == ["index"]
    _same_bytes(got.cpu().numpy(), cache.cpu().numpy()[0][rows.cpu().numpy()])
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 0 with size 9"):
        ft.randn(9, 2)[ft.tensor([0, 9])]
    with pytest.raises(IndexError, match="index -10 is out of bounds"):
        ft.randn(9, 2)[ft.tensor([-10])]


# --- the fused attention's safe softmax, in place ------------------------------------------------

def _reference_safe_softmax(s: np.ndarray, axis: int) -> np.ndarray:
    """safe_softmax as it was written out of place (the former implementation)."""
    m = s.max(axis=axis, keepdims=True)
    finite = np.isfinite(m)
    e: np.ndarray = np.exp(s - (m if finite.all() else np.where(finite, m, m.dtype.type(0))))
    total = e.sum(axis=axis, keepdims=True)
    positive = total > 0
    if positive.all():
        e /= total
        return e
    out: np.ndarray = np.divide(e, total, out=np.zeros_like(e), where=positive)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("masked_rows", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_safe_softmax_in_place_is_the_out_of_place_formula(dtype: Any, masked_rows: bool,
                                                           seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = _values((7, 4, 3, 33), np.float32, seed).astype(dtype)
    s[rng.random(s.shape) < 0.3] = -np.inf  # masked keys
    if masked_rows:
        s[2, 1] = -np.inf  # whole rows masked: zeros
    ref = _reference_safe_softmax(s.copy(), -1)
    _same_bytes(safe_softmax(s.copy(), -1), ref)


def test_attention_kernel_bits_at_a_decode_step_with_garbage_inputs() -> None:
    """The toy's eager attention during capture: q, k, v read from a graph pool (all-ones NaN
    bytes among values), an additive -inf mask; the kernel's bytes are those of the
    out-of-place softmax between the same two matmuls."""
    n, h, s, d = 9, 4, 32, 16
    q = _values((n, h, 1, d), np.float32, 3)
    k = _values((n, h, s, d), np.float32, 4)
    v = _values((n, h, s, d), np.float32, 5)
    visible = np.arange(s) <= np.random.default_rng(6).integers(0, s, n)[:, None]
    mask = np.broadcast_to(np.where(visible, 0.0, -np.inf).astype(np.float32)[:, None, None],
                           (n, h, 1, s))
    out = np.empty((n, 1, h, d), np.float32).transpose(0, 2, 1, 3)
    attention_kernel(out, q, k, v, mask, None, scale=0.25, is_causal=False, groups=1,
                     dropout_p=0.0, intra=0)
    scores = q @ np.swapaxes(k, -1, -2)
    scores *= np.float32(0.25)
    scores += mask
    _same_bytes(out, _reference_safe_softmax(scores, -1) @ v)
