"""torch.einsum, ported step by step from torch's C++ `einsum` and `sumproduct_pair`, so it takes
the same views and launches the same kernels: a pairwise contraction is one `bmm` (plus a
`clone` where torch's reshape copies), a pure outer or elementwise product is one `mul`, dims
summed early are one `sum`, and a one-operand equation is a view (diagonal/permute) or one `sum`.

Operands contract left to right, which is torch's order when opt_einsum is absent or disabled
(`torch.backends.opt_einsum`); with opt_einsum installed torch may pick another order for three
or more operands, and launch a different sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from fake_torch import _opdef
from fake_torch._dtype import dtype, int64, result_type_of
from fake_torch._kernels import _linalg_views as v
from fake_torch._kernels._common import common_device
from fake_torch._kernels._elementwise import layout_of
from fake_torch._kernels._strides import view_strides
from fake_torch._kernels.reduction import sum as reduce_sum
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._tensor import Tensor

_LETTERS = 26
_ELLIPSIS = 2 * _LETTERS  # labels are 0..51: 'A'..'Z' then 'a'..'z'


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(subscript: int) -> str:
    return chr(subscript + ord("A")) if subscript < _LETTERS else chr(subscript - _LETTERS + 97)


@_opdef.op(_opdef.COMPOSITE)
def einsum(equation: str, *operands: Any) -> Tensor:
    """Sum of products over the labels in `equation`, e.g. "bhqd,bhkd->bhqk"."""
    ops = _operands(equation, operands)
    common_device(*ops)
    result: Tensor = _contract(equation, ops, _Eager)
    return result


def _operands(equation: Any, operands: tuple[Any, ...]) -> list[Any]:
    """einsum's argument checks: the operands, as a list (one list or tuple of them, too)."""
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise NotImplementedError("torch.einsum's sublist format (einsum(op1, sublist1, ...)) is "
                                  "not emulated by fake_torch; pass an equation string")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    return list(operands)


def _contract(equation: str, ops: list[Any], ns: Any) -> Any:
    """torch's einsum algorithm over `ops` (tensors, or `_Layout`s for the output rule), its
    views, products and sums taken by `ns` (`_Eager` runs them, `_Layouts` describes them):
    one algorithm, so the rule cannot drift from the kernel."""
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_inputs(lhs, len(ops))
    label_count = [0] * _ELLIPSIS
    ell_num_dim = 0
    for i, (op, labels) in enumerate(zip(ops, op_labels, strict=True)):
        n = sum(1 for s in labels if s != _ELLIPSIS)
        has_ellipsis = _ELLIPSIS in labels
        for s in labels:
            if s != _ELLIPSIS:
                label_count[s] += 1
        if has_ellipsis:
            ell_num_dim = max(ell_num_dim, op.dim() - n)
        if (n > op.dim()) if has_ellipsis else (n != op.dim()):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does "
                               f"not match the number of dimensions ({op.dim()}) for operand {i}"
                               + ("" if has_ellipsis else " and no ellipsis was given"))

    # Every operand is aligned to (output dims..., contracted dims...): label -> position.
    perm_index_of = [-1] * _ELLIPSIS
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:  # implicit output: the ellipsis, then labels seen once, alphabetically
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(_ELLIPSIS):
            if label_count[s] == 1:
                perm_index_of[s] = perm_index
                perm_index += 1
    else:
        perm_index, ell_index, ell_in_output = _parse_output(
            equation, arrow, label_count, perm_index_of, ell_num_dim)
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(_ELLIPSIS):
        if label_count[s] > 0 and perm_index_of[s] == -1:
            perm_index_of[s] = perm_index
            perm_index += 1

    aligned, dim_counts = _align(ns, ops, op_labels, perm_index_of, perm_index, ell_num_dim,
                                 ell_index)
    while len(aligned) > 1:
        a, b = aligned.pop(0), aligned.pop(0)
        sum_dims: list[int] = []
        a_sum: list[int] = []
        b_sum: list[int] = []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:  # sum several dims in one launch, as torch does
            a = ns.sum(a, a_sum, True)
        if b_sum:
            b = ns.sum(b, b_sum, True)
        aligned.insert(0, _sumproduct_pair(ns, a, b, sum_dims))

    result = aligned[0]
    if perm_index - out_num_dim > 0:
        if len(ops) > 1:  # the contracted dims are all size 1 by now: drop them by a view
            return ns.view(result, result.shape[:out_num_dim])
        return ns.sum(result, list(range(out_num_dim, perm_index)), False)
    return result


def _parse_inputs(lhs: str, num_ops: int) -> list[list[int]]:
    op_labels: list[list[int]] = [[] for _ in range(num_ops)]
    curr = 0
    ell_seen = False
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if ell_seen:
                raise RuntimeError(f"einsum(): found '.' for operand {curr} for which an "
                                   "ellipsis was already found")
            if lhs[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for operand {curr} that is not part "
                                   "of any ellipsis")
            op_labels[curr].append(_ELLIPSIS)
            ell_seen = True
            i += 2
        elif c == ",":
            curr += 1
            if curr >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            ell_seen = False
        elif c != " ":
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            op_labels[curr].append(_subscript(c))
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return op_labels


def _parse_output(equation: str, arrow: int, label_count: list[int], perm_index_of: list[int],
                  ell_num_dim: int) -> tuple[int, int, bool]:
    rhs = equation[arrow + 2:]
    perm_index = ell_index = 0
    ell_in_output = False
    i = 0
    while i < len(rhs):
        c = rhs[i]
        if c == ".":
            if ell_in_output:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if rhs[i:i + 3] != "...":
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            ell_index = perm_index
            perm_index += ell_num_dim
            ell_in_output = True
            i += 2
        elif c != " ":
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {arrow + 2 + i} "
                                   "in the equation string, subscripts must be in [a-zA-Z]")
            s = _subscript(c)
            if label_count[s] == 0 or perm_index_of[s] != -1:
                why = ("appears more than once in the output" if perm_index_of[s] != -1
                       else "does not appear in the equation for any input operand")
                raise RuntimeError(f"einsum(): output subscript {c} {why}")
            perm_index_of[s] = perm_index
            perm_index += 1
        i += 1
    return perm_index, ell_index, ell_in_output


def _align(ns: Any, ops: Sequence[Any], op_labels: Sequence[Sequence[int]],
           perm_index_of: list[int], perm_index: int, ell_num_dim: int,
           ell_index: int) -> tuple[list[Any], list[int]]:
    """Take diagonals of repeated labels, unsqueeze missing ones and permute every operand to
    the common (output..., contracted...) order; count the operands that are non-1 per dim."""
    label_size = [1] * _ELLIPSIS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    aligned: list[Any] = []
    for i, (operand, labels) in enumerate(zip(ops, op_labels, strict=True)):
        op = operand
        permutation = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                ndim = operand.dim() - (len(labels) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError("einsum(): operands do not broadcast with "
                                               "remapped shapes (original->remapped)")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_index_of[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(f"einsum(): subscript {_label(s)} has size {size} for "
                                           f"operand {i} which does not broadcast with "
                                           f"previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm_index_of[s]] += 1
                permutation[perm_index_of[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, moved to where the label first appeared
                prev = permutation[perm_index_of[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(f"einsum(): subscript {_label(s)} is repeated for operand "
                                       f"{i} but the sizes don't match, {op.shape[dim]} != "
                                       f"{op.shape[prev]}")
                op = ns.movedim(ns.diagonal_last(op, prev, dim), -1, prev)
        for k, val in enumerate(permutation):
            if val == -1:
                op = ns.unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        aligned.append(ns.permute(op, permutation))
    return aligned, dim_counts


def _sumproduct_pair(ns: Any, left: Any, right: Any, sum_dims: list[int]) -> Any:
    """left * right summed over `sum_dims` (kept as size 1): one `mul` when nothing is summed,
    else permute -> reshape (a `clone` where needed) -> one `bmm` -> view -> permute."""
    if not sum_dims:
        return ns.mul(left, right)

    ndim = left.dim()
    lro: list[int] = []
    lo: list[int] = []
    ro: list[int] = []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = ns.sum(left, [i], True)
            elif sr:
                right = ns.sum(right, [i], True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = [*(left.shape[d] for d in lro), *(left.shape[d] for d in lo),
                *(1 for _ in sum_dims), *(right.shape[d] for d in ro)]
    lperm = [*lro, *lo, *sum_dims, *ro]
    rperm = [*lro, *sum_dims, *ro, *lo]
    operm = [-1] * len(lperm)
    for pos, d in enumerate([*lro, *lo, *sum_dims, *ro]):
        operm[d] = pos
    a = ns.reshape(ns.permute(left, lperm), (lro_size, lo_size, sum_size))
    b = ns.reshape(ns.permute(right, rperm), (lro_size, sum_size, ro_size))
    return ns.permute(ns.view(ns.bmm(a, b), out_size), operm)


class _Eager:
    """The algorithm's steps run: views (no launch), `bmm`, `sum`, `mul` (one launch each)."""

    view = staticmethod(v.view)
    reshape = staticmethod(v.reshape)
    permute = staticmethod(v.permute)
    unsqueeze = staticmethod(v.unsqueeze)
    movedim = staticmethod(v.movedim)
    diagonal_last = staticmethod(v.diagonal_last)

    @staticmethod
    def bmm(a: Tensor, b: Tensor) -> Tensor:
        from fake_torch._kernels.linalg import bmm  # linalg imports this module

        return bmm(a, b)

    @staticmethod
    def sum(x: Tensor, dims: list[int], keepdim: bool) -> Tensor:
        return reduce_sum(x, dims, keepdim)

    @staticmethod
    def mul(a: Tensor, b: Tensor) -> Tensor:
        """The broadcast product of two aligned operands: torch.mul (one launch, laid out in
        its inputs' dim order, as TensorIterator lays out torch's)."""
        from fake_torch._kernels.arith import mul

        return mul(a, b)


# --- output rule --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """What the algorithm needs of a tensor: its sizes (ints or SymInts), strides, dtype, and
    for a view of operand `alias`, its storage offset."""

    shape: tuple[Any, ...]
    strides: tuple[Any, ...]
    dtype: dtype
    storage_offset: Any = 0
    alias: int | None = None

    def dim(self) -> int:
        return len(self.shape)

    def stride(self) -> tuple[Any, ...]:
        return self.strides


def _fresh(shape: Sequence[Any], dt: dtype) -> _Layout:
    """A new row-major buffer (what `new_tensor` allocates)."""
    return _Layout(tuple(shape), contiguous_strides(tuple(shape)), dt)


def _restrided(t: _Layout, shape: Sequence[Any], strides: Sequence[Any]) -> _Layout:
    return replace(t, shape=tuple(shape), strides=tuple(strides))


class _Layouts:
    """The algorithm's steps described: the views' strides as torch computes them, a fresh
    row-major buffer for each `bmm` and `sum` (reductions allocate row-major), `mul`'s laid
    out as its inputs."""

    @staticmethod
    def view(t: _Layout, shape: Sequence[Any]) -> _Layout:
        strides = view_strides(t.shape, t.strides, tuple(shape))
        assert strides is not None, f"view of {t.shape} as {tuple(shape)} needs a copy"
        return _restrided(t, shape, strides)

    @staticmethod
    def reshape(t: _Layout, shape: Sequence[Any]) -> _Layout:
        if t.shape == tuple(shape):
            return t
        strides = view_strides(t.shape, t.strides, tuple(shape))
        return _fresh(shape, t.dtype) if strides is None else _restrided(t, shape, strides)

    @staticmethod
    def permute(t: _Layout, dims: Sequence[int]) -> _Layout:
        return _restrided(t, [t.shape[d] for d in dims], [t.strides[d] for d in dims])

    @staticmethod
    def unsqueeze(t: _Layout, dim: int) -> _Layout:
        inner = t.shape[dim] * t.strides[dim] if dim < t.dim() else 1  # torch's unsqueeze
        return _restrided(t, (*t.shape[:dim], 1, *t.shape[dim:]),
                          (*t.strides[:dim], inner, *t.strides[dim:]))

    @staticmethod
    def movedim(t: _Layout, source: int, destination: int) -> _Layout:
        order = [d for d in range(t.dim()) if d != source % t.dim()]
        order.insert(destination % t.dim(), source % t.dim())
        return _Layouts.permute(t, order)

    @staticmethod
    def diagonal_last(t: _Layout, dim1: int, dim2: int) -> _Layout:
        keep = [d for d in range(t.dim()) if d not in (dim1, dim2)]
        return _restrided(t, (*(t.shape[d] for d in keep), t.shape[dim1]),
                          (*(t.strides[d] for d in keep), t.strides[dim1] + t.strides[dim2]))

    @staticmethod
    def bmm(a: _Layout, b: _Layout) -> _Layout:
        return _fresh((a.shape[0], a.shape[1], b.shape[2]), a.dtype)

    @staticmethod
    def sum(x: _Layout, dims: list[int], keepdim: bool) -> _Layout:
        shape = [1 if d in dims else n for d, n in enumerate(x.shape)
                 if keepdim or d not in dims]
        integral = not (x.dtype.is_floating_point or x.dtype.is_complex)
        return _fresh(shape, int64 if integral else x.dtype)  # as sum accumulates

    @staticmethod
    def mul(a: _Layout, b: _Layout) -> _Layout:
        dt = result_type_of([(a.dtype, 2 if a.dim() else 1), (b.dtype, 2 if b.dim() else 1)])
        shape = tuple(y if x == 1 else x for x, y in zip(a.shape, b.shape, strict=True))
        operands = [(t.shape, t.strides, t.dtype.itemsize) for t in (a, b)]
        return _Layout(shape, layout_of(shape, operands), dt)  # as torch.mul's kernel


@register_meta("torch.einsum")
def _einsum_rule(equation: str, *operands: Any) -> TensorMeta:
    """The kernel's own algorithm (`_contract`) over the operands' layouts: a fresh buffer
    from the last product or sum, seen through the views after it, or for a one-operand
    equation that sums nothing, a view of the operand."""
    ops = _operands(equation, operands)
    common_device(*ops)
    layouts = [_Layout(tuple(t.shape), tuple(t.stride()), t.dtype, t.storage_offset(), i)
               for i, t in enumerate(ops)]
    out: _Layout = _contract(equation, layouts, _Layouts)
    return TensorMeta(out.shape, out.dtype, out.strides,
                      out.storage_offset if out.alias is not None else 0, out.alias)
