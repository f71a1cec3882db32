"""torch.isin: is each element among the test elements? Launched as CUDA torch 2.13 launches
it (aten/src/ATen/native/TensorCompare.cpp, isin_Tensor_Tensor_out, which the CPU and CUDA
builds share; the CUDA default kernel is native/cuda/TensorCompare.cpp):

  Tensor, Tensor  nothing for an empty `elements`; when test_elements has fewer than
                  int(10 * numel(elements) ** 0.145) elements (numpy's heuristic), the default
                  path: `fill_` (the output, with `invert`), then
                  `out.copy_(elements.unsqueeze(-1).eq(test.view(1, ..., -1)).any(-1))`
                  (ne/all with invert): fill_, eq, any, copy_ = 4 launches (4 kernels on an
                  H200, torch 2.11, 64 elements against 8). Otherwise the sorting path:
                  `_unique` of both sides (each a host sync: its size is data; skipped with
                  assume_unique, which ravels instead), cat, a stable sort, eq of neighbours
                  copied into a mask, the mask's last element set, index_copy_ back into
                  the original order, then index (or a slice) and copy_ into the output:
                  10 launches here, where the GPU runs 44 kernels (64 against 4096), since
                  each of _unique and sort is several kernels there and one op here.
  Tensor, Scalar  one `eq` (`ne` with invert) into the output.
  Scalar, Tensor  the scalar becomes a tensor on test_elements' device (`scalar_tensor`, one
                  launch), then the Tensor, Tensor path.
bool and complex inputs are refused as torch refuses them; other dtypes promote as eq does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fake_torch._dtype import CPP_NAME, SCALAR_NAME, bool_, complex128, dtype, float64, int64
from fake_torch._kernels import _common
from fake_torch._kernels._elementwise import is_number
from fake_torch._kernels.advanced_index import index_tensor
from fake_torch._kernels.cast import _got, copy_, fill_, scalar_tensor
from fake_torch._kernels.compare import eq, ne
from fake_torch._kernels.index_ops import index_copy_
from fake_torch._kernels.join import cat
from fake_torch._kernels.reduction import all as all_
from fake_torch._kernels.reduction import any as any_
from fake_torch._kernels.reduction_sort import sort
from fake_torch._kernels.shape import contiguous, unsqueeze, view
from fake_torch._kernels.split import slice_dim
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_calls import call_rule
from fake_torch._meta_registrations import Output, TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, DATA_DEPENDENT, aten_op, op
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Number, Tensor

aten_op("_unique", DATA_DEPENDENT)  # the sorting path's deduplication: its size is data


@op(COMPOSITE)
def isin(elements: Tensor | Number, test_elements: Tensor | Number, *,
         assume_unique: bool = False, invert: bool = False,
         out: Tensor | None = None) -> Tensor:
    """A bool tensor shaped like `elements`: True where the element is in `test_elements`
    (False with invert=True). One of the two may be a Python scalar."""
    _check_args(elements, test_elements, assume_unique, invert)
    for value in (elements, test_elements):
        _check_dtype(value.dtype if isinstance(value, Tensor) else _scalar_dtype(value))
    if not isinstance(test_elements, Tensor):  # Tensor, Scalar: eq_out / ne_out
        assert isinstance(elements, Tensor)
        return (ne if invert else eq)(elements, test_elements, out=_out(out, elements.shape))
    if not isinstance(elements, Tensor):  # Scalar, Tensor: a tensor of the scalar first
        elements = scalar_tensor(elements, dtype=_scalar_dtype(elements),
                                 device=test_elements.device)
    result = _out(out, elements.shape)
    if result is None:
        result = _common.new_tensor(elements.shape, bool_, elements.device)
    if elements.numel() == 0:
        return result
    if test_elements.numel() < int(10.0 * math.pow(elements.numel(), 0.145)):
        fill_(result, invert)  # default path: the cross product of both sides
        trailing = [1] * elements.dim() + [-1]
        hits = (ne if invert else eq)(unsqueeze(elements, -1), view(test_elements, *trailing))
        copy_(result, (all_ if invert else any_)(hits, -1))
    else:
        _isin_sorting(elements, test_elements, assume_unique, invert, result)
    return result


def _isin_sorting(elements: Tensor, test_elements: Tensor, assume_unique: bool, invert: bool,
                  result: Tensor) -> None:
    """Sort both sides together (stably: an element before an equal test element); an element
    is found when its sorted neighbour equals it."""
    order: Tensor | None = None
    if assume_unique:
        flat, test_flat = _ravel(elements), _ravel(test_elements)
    else:
        flat, order = _unique(elements, return_inverse=True)
        test_flat, _ = _unique(test_elements, return_inverse=False)
    values, sorted_order = sort(cat([flat, test_flat]), 0, stable=True)
    n = values.shape[0]
    duplicate = _common.new_tensor((n,), bool_, values.device)
    later, earlier = slice_dim(values, 0, 1, None), slice_dim(values, 0, 0, n - 1)
    copy_(slice_dim(duplicate, 0, 0, n - 1), (ne if invert else eq)(later, earlier))
    fill_(slice_dim(duplicate, 0, n - 1, n), invert)  # index_put_({-1}, invert)
    mask = _common.new_tensor((n,), bool_, values.device)
    index_copy_(mask, 0, sorted_order, duplicate)
    if order is None:
        copy_(result, view(slice_dim(mask, 0, 0, elements.numel()), *result.shape))
    else:
        copy_(result, index_tensor(mask, [order]))


def _unique(t: Tensor, *, return_inverse: bool) -> tuple[Tensor, Tensor]:
    """aten::_unique as CUDA runs it (sorted whatever `sorted` says; NaNs stay distinct):
    the host waits to learn how many values there are, then one launch writes them and, with
    return_inverse, each element's position among them."""
    if t.is_cuda:
        _dispatch.host_sync("_unique", reads=(t._a,))
    count = len(_distinct(t._a))
    values = _common.new_tensor((count,), t.dtype, t.device)
    inverse = _common.new_tensor(t.shape if return_inverse else (0,), int64, t.device)
    _common.launch("_unique", _unique_kernel, [values, inverse], (t,))
    return values, inverse


def _distinct(a: np.ndarray) -> np.ndarray:
    return np.unique(a.reshape(-1), equal_nan=False)


def _unique_kernel(values: np.ndarray, inverse: np.ndarray, src: np.ndarray) -> None:
    found, where = np.unique(src.reshape(-1), return_inverse=True, equal_nan=False)
    values[...] = found
    if inverse.size:
        inverse[...] = where.reshape(inverse.shape)


def _ravel(t: Tensor) -> Tensor:
    """ATen's ravel: contiguous() (a clone of a strided tensor), then a 1-D view."""
    return view(contiguous(t), -1)


@register_meta("torch.isin")
def _isin_rule(elements: Tensor | Number, test_elements: Tensor | Number, *,
               assume_unique: bool = False, invert: bool = False,
               out: Tensor | None = None) -> Output:
    """Against a scalar: a comparison's output; else a fresh bool tensor of elements' shape."""
    _check_args(elements, test_elements, assume_unique, invert)
    for value in (elements, test_elements):
        _check_dtype(value.dtype if isinstance(value, Tensor) else _scalar_dtype(value))
    if out is not None:
        raise NotImplementedError("torch.isin(out=...): no output rule (writes `out`)")
    if not isinstance(test_elements, Tensor):
        return call_rule(ne if invert else eq, elements, test_elements)
    shape = tuple(elements.shape) if isinstance(elements, Tensor) else ()
    return TensorMeta(shape, bool_, contiguous_strides(shape))


def _out(out: Tensor | None, shape: tuple[int, ...]) -> Tensor | None:
    """out=: a bool tensor of the result's shape (torch resizes one of another shape, with a
    deprecation warning; that is not emulated)."""
    if out is None:
        return None
    if out.dtype is not bool_:
        raise RuntimeError("Expected out tensor to have dtype bool, but got "
                           f"{CPP_NAME[out.dtype]} instead")
    if tuple(out.shape) != tuple(shape):
        raise NotImplementedError("torch.isin(out=...) resizing an out tensor of another shape "
                                  "is not emulated by fake_torch")
    return out


def _scalar_dtype(value: Any) -> dtype:
    """The dtype c10::Scalar reports for a Python number."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return complex128 if isinstance(value, complex) else float64


def _check_dtype(dt: dtype) -> None:
    if dt is bool_ or dt.is_complex:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {SCALAR_NAME[dt]}")


def _check_args(elements: Any, test_elements: Any, assume_unique: Any, invert: Any) -> None:
    """torch's argument parser: a Tensor and a Tensor or a Scalar (either way round), two
    bools."""
    def scalar(v: Any) -> bool:
        return is_number(v) or isinstance(v, complex)

    ok = (isinstance(elements, Tensor) and (isinstance(test_elements, Tensor)
                                            or scalar(test_elements))) or (
        scalar(elements) and isinstance(test_elements, Tensor))
    if not (ok and isinstance(assume_unique, bool) and isinstance(invert, bool)):
        flags = {k: v for k, v in (("invert", invert), ("assume_unique", assume_unique))
                 if not isinstance(v, bool) or not ok}
        given = {k: v for k, v in flags.items() if v is not False}
        raise TypeError(
            f"isin() received an invalid combination of arguments - got "
            f"({_got((elements, test_elements), given)}), but expected one of:\n"
            " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)\n"
            " * (Tensor elements, Number test_element, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)\n"
            " * (Number element, Tensor test_elements, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)\n")
