"""torch.einsum's output rule (fake_torch/_kernels/linalg_einsum.py `_einsum_rule`): the shape,
dtype, strides, storage offset and aliasing it describes, against what the fake kernel returns
and what real torch 2.13 returns for the same equation and operands. torch.compile needs the
rule once a size is symbolic (mamba-minimal's selective scan, tests/dynamic_cases.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import fake_torch
from fake_torch import _meta_registrations as rules
from fake_torch._meta_calls import call_rule

torch: Any = pytest.importorskip("torch")

# (equation, operand shapes; a shape with "T" is the transpose of that shape's tensor)
CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bld,dn->bldn", [(2, 5, 4), (4, 3)]),  # outer product: one mul
    ("bld,bln,bld->bldn", [(1, 5, 4), (1, 5, 3), (1, 5, 4)]),
    ("bdn,bn->bd", [(2, 4, 3), (2, 3)]),  # bmm, then a view dropping the summed dim
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]),
    ("ij->ji", [(3, 4)]),  # a view of the operand
    ("ii->i", [(4, 4)]),  # its diagonal, a view
    ("iij->ji", [(3, 3, 2)]),
    ("ij->j", [(3, 4)]),  # one sum
    ("ij->", [(3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ijk", [(2, 3, 4)]),  # implicit output
    ("bij,bjk", [(2, 3, 4), (2, 4, 5)]),
    ("ab,cd->abcd", [(2, 1), (1, 3)]),
]


def _operands(L: Any, shapes: list[tuple[int, ...]], transposed: bool) -> list[Any]:
    rng = np.random.default_rng(0)
    out = []
    for shape in shapes:
        a = rng.standard_normal(shape).astype(np.float32)
        t = L.tensor(a)
        if transposed and len(shape) == 2:  # the same values, laid out column-major
            t = L.tensor(np.ascontiguousarray(a.T)).t()
        out.append(t)
    return out


def _layout(t: Any, inputs: list[Any]) -> tuple[Any, ...]:
    alias = tuple(i for i, x in enumerate(inputs)
                  if x.untyped_storage().data_ptr() == t.untyped_storage().data_ptr())
    return (tuple(t.shape), str(t.dtype).split(".")[-1], _strides(t.shape, t.stride()),
            t.storage_offset(), alias)


def _strides(shape: Any, strides: Any) -> tuple[Any, ...]:
    """The strides that address elements: a size-1 dim's stride never does, and torch's
    einsum leaves some of them as its internal views made them (ab,cd->abcd's (2, 1, 1, 3) is
    (3, 1, 3, 1)), where fake_torch's are row-major's (3, 3, 3, 1)."""
    return tuple(None if n == 1 else s for n, s in zip(shape, strides, strict=True))


@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
@pytest.mark.parametrize(("equation", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_rule_describes_what_the_kernel_and_torch_return(equation: str,
                                                         shapes: list[tuple[int, ...]],
                                                         transposed: bool) -> None:
    real_in = _operands(torch, shapes, transposed)
    real = _layout(torch.einsum(equation, *real_in), real_in)
    fake_in = _operands(fake_torch, shapes, transposed)
    kernel = fake_torch.einsum(equation, *fake_in)
    np.testing.assert_allclose(np.asarray(kernel.tolist()),
                               np.asarray(torch.einsum(equation, *real_in).tolist()),
                               rtol=1e-5, atol=1e-5)
    described = call_rule("torch.einsum", equation, *fake_in)
    assert isinstance(described, rules.TensorMeta)
    alias = () if described.alias is None else (described.alias,)
    assert tuple(described.stride) == tuple(kernel.stride())
    assert (tuple(described.shape), str(described.dtype).split(".")[-1],
            _strides(described.shape, described.stride), described.storage_offset, alias) \
        == _layout(kernel, fake_in) == real


def test_rule_runs_the_kernels_checks() -> None:
    x = fake_torch.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"einsum\(\): the number of subscripts in the "
                                           r"equation \(3\) does not match"):
        call_rule("torch.einsum", "ijk->i", x)
    with pytest.raises(RuntimeError) as real:
        torch.einsum("ijk->i", torch.zeros(3, 4))
    assert str(real.value).startswith("einsum(): the number of subscripts in the equation (3)")
