"""Bad input to views, indexing and joins (view, reshape, permute, expand, narrow, indexing,
gather/scatter, flip/roll, split/chunk, cat/stack), against torch CPU (tests/bad_input.py: a
silent result where torch raises fails, and so does another exception class or first message
line)."""

from __future__ import annotations

from typing import Any

import pytest
from bad_input import Program, check
from hypothesis import given, settings
from hypothesis import strategies as st


def _x(L: Any) -> Any:
    return L.arange(6.0).reshape(2, 3)


def _i(L: Any, *values: int) -> Any:
    return L.tensor(list(values))


CASES: dict[str, Program] = {
    # view / reshape
    "view wrong numel": lambda L: _x(L).view(4),
    "view two -1": lambda L: _x(L).view(-1, -1),
    "view -1 not dividing": lambda L: _x(L).view(-1, 4),
    "view negative size": lambda L: _x(L).view(-2, 3),
    "view of a transpose": lambda L: _x(L).t().view(6),
    "view float size": lambda L: _x(L).view(2.0, 3),
    "view dtype of another size": lambda L: L.ones(3, dtype=L.int8).view(L.int32),
    "reshape wrong numel": lambda L: _x(L).reshape(5),
    "reshape two -1": lambda L: L.reshape(_x(L), (-1, -1)),
    "reshape string": lambda L: _x(L).reshape("a"),
    "view_as wrong numel": lambda L: _x(L).view_as(L.ones(4)),
    "flatten start after end": lambda L: L.ones(2, 3, 4).flatten(2, 1),
    "flatten dim out of range": lambda L: _x(L).flatten(0, 3),
    "unflatten wrong sizes": lambda L: _x(L).unflatten(1, (2, 2)),
    # dimension permutations
    "permute too few dims": lambda L: _x(L).permute(0),
    "permute repeated dim": lambda L: _x(L).permute(0, 0),
    "permute dim out of range": lambda L: L.permute(_x(L), (0, 2)),
    "transpose dim out of range": lambda L: _x(L).transpose(0, 2),
    "t of 3d": lambda L: L.ones(2, 2, 2).t(),
    "movedim repeated": lambda L: L.movedim(L.ones(2, 3, 4), (0, 1), (2, 2)),
    "movedim lengths": lambda L: L.movedim(L.ones(2, 3, 4), (0, 1), (2,)),
    "squeeze dim out of range": lambda L: _x(L).squeeze(2),
    "unsqueeze dim out of range": lambda L: _x(L).unsqueeze(4),
    "unsqueeze negative out of range": lambda L: L.unsqueeze(_x(L), -4),
    "diagonal same dims": lambda L: _x(L).diagonal(0, 0, 0),
    "tril of 1d": lambda L: L.tril(L.ones(3)),
    "triu of 0d": lambda L: L.ones(()).triu(),
    # expand / repeat
    "expand smaller": lambda L: _x(L).expand(3),
    "expand mismatch": lambda L: _x(L).expand(2, 4),
    "expand negative": lambda L: _x(L).expand(-2, 3),
    "expand -1 new leading": lambda L: _x(L).expand(-1, 2, 3),
    "expand_as mismatch": lambda L: _x(L).expand_as(L.ones(3, 3)),
    "repeat fewer dims": lambda L: _x(L).repeat(2),
    "repeat negative": lambda L: _x(L).repeat(-1, 1),
    "tile negative": lambda L: L.tile(_x(L), (-1,)),
    "broadcast_to smaller": lambda L: L.broadcast_to(_x(L), (3,)),
    "broadcast_tensors mismatch": lambda L: L.broadcast_tensors(L.ones(2), L.ones(3)),
    # narrow / select / slicing
    "narrow past the end": lambda L: _x(L).narrow(1, 2, 2),
    "narrow negative length": lambda L: _x(L).narrow(1, 0, -1),
    "narrow dim out of range": lambda L: _x(L).narrow(2, 0, 1),
    "select index out of range": lambda L: _x(L).select(0, 2),
    "select dim out of range": lambda L: L.select(_x(L), 3, 0),
    "index out of range": lambda L: _x(L)[2],
    "negative index out of range": lambda L: _x(L)[-3],
    "index too many dims": lambda L: _x(L)[0, 0, 0],
    "index with a float": lambda L: _x(L)[1.5],
    "index with a string": lambda L: _x(L)["a"],
    "slice step zero": lambda L: _x(L)[::0],
    "slice negative step": lambda L: _x(L)[::-1],
    "index of 0d": lambda L: L.ones(())[0],
    "two ellipses": lambda L: _x(L)[..., ...],
    # advanced indexing
    "index tensor out of range": lambda L: _x(L)[_i(L, 0, 2)],
    "index tensor of floats": lambda L: _x(L)[L.tensor([0.0])],
    "bool mask shape mismatch": lambda L: _x(L)[L.tensor([True, False, True])],
    "index list out of range": lambda L: _x(L)[[0, 5]],
    "setitem shape mismatch": lambda L: _x(L).__setitem__(0, L.ones(2)),
    "setitem index out of range": lambda L: _x(L).__setitem__(3, 1.0),
    "setitem a string": lambda L: _x(L).__setitem__(0, "a"),
    "index_select float index": lambda L: L.index_select(_x(L), 0, L.tensor([0.0])),
    "index_select dim out of range": lambda L: _x(L).index_select(2, _i(L, 0)),
    "index_select index out of range": lambda L: _x(L).index_select(0, _i(L, 5)),
    "index_select 2d index": lambda L: _x(L).index_select(0, L.zeros(1, 1, dtype=L.int64)),
    "gather float index": lambda L: L.gather(_x(L), 1, L.zeros(2, 1)),
    "gather dims mismatch": lambda L: L.gather(_x(L), 1, L.zeros(2, dtype=L.int64)),
    "gather index out of range": lambda L: _x(L).gather(1, L.full((2, 1), 3)),
    "scatter index out of range": lambda L: L.zeros(2, 3).scatter(1, L.full((2, 1), 5),
                                                                  1.0),
    "scatter src dtype": lambda L: L.zeros(2, 3).scatter(1, L.zeros(2, 1, dtype=L.int64),
                                                         L.ones(2, 1, dtype=L.int64)),
    "scatter_add float index": lambda L: L.zeros(3).scatter_add(0, L.zeros(2), L.ones(2)),
    "index_copy_ index out of range": lambda L: L.zeros(3).index_copy_(0, _i(L, 5),
                                                                       L.ones(1)),
    "index_fill_ index out of range": lambda L: L.zeros(3).index_fill_(0, _i(L, 3), 1.0),
    "index_fill half overflow": lambda L: L.zeros(3, dtype=L.float16).index_fill(
        0, _i(L, 0), 1e5),
    "index_put_ dtype": lambda L: L.zeros(3).index_put_((_i(L, 0),), L.ones(1,
                                                                            dtype=L.int64)),
    "take out of range": lambda L: L.take(_x(L), _i(L, 6)),
    "masked_select shapes": lambda L: L.masked_select(_x(L), L.ones(3, 2, dtype=L.bool)),
    "masked_fill non-bool mask": lambda L: _x(L).masked_fill(L.ones(2, 3), 0.0),
    "masked_fill 1d value": lambda L: _x(L).masked_fill(_x(L) > 0, L.ones(2)),
    "masked_fill half overflow": lambda L: L.zeros(2, dtype=L.float16).masked_fill(
        L.tensor([True, False]), 1e5),
    "masked_fill int8 overflow": lambda L: L.zeros(2, dtype=L.int8).masked_fill(
        L.tensor([True, False]), 300),
    "masked_fill_ mask grows": lambda L: L.zeros(3).masked_fill_(
        L.ones(2, 3, dtype=L.bool), 1.0),
    "where mask float": lambda L: L.where(_x(L), _x(L), 0.0),
    "nonzero of 0d is fine": lambda L: L.nonzero(L.ones(())),
    # flip / roll
    "flip repeated dims": lambda L: L.flip(_x(L), (0, 0)),
    "flip dim out of range": lambda L: L.flip(_x(L), (2,)),
    "flip keyword dims": lambda L: L.flip(_x(L), dims=(0,)),
    "flip method keyword dims": lambda L: _x(L).flip(dims=[1]),
    "flip no dims": lambda L: L.flip(_x(L)),
    "roll shifts and dims lengths": lambda L: L.roll(_x(L), (1, 2), (0,)),
    "roll dim out of range": lambda L: L.roll(_x(L), 1, 3),
    # split / chunk / unbind
    "chunk zero": lambda L: _x(L).chunk(0),
    "chunk negative": lambda L: L.chunk(_x(L), -1),
    "split sizes do not sum": lambda L: _x(L).split([1, 1], 1),
    "split size zero on nonempty": lambda L: L.split(_x(L), 0),
    "split negative size": lambda L: L.split(_x(L), [4, -1], 1),
    "split dim out of range": lambda L: _x(L).split(1, 2),
    "unbind dim out of range": lambda L: _x(L).unbind(2),
    "tensor_split zero sections": lambda L: L.tensor_split(_x(L), 0),
    # cat / stack
    "cat empty list": lambda L: L.cat([]),
    "cat shapes": lambda L: L.cat([L.ones(2, 3), L.ones(2, 2)]),
    "cat dim out of range": lambda L: L.cat([L.ones(2), L.ones(2)], 1),
    "cat zero-dim": lambda L: L.cat([L.ones(()), L.ones(())]),
    "cat ndim mismatch": lambda L: L.cat([L.ones(2, 3), L.ones(3)]),
    "cat a number": lambda L: L.cat([L.ones(2), 1.0]),
    "cat None": lambda L: L.cat(None),
    "cat a tensor, not a list": lambda L: L.cat(L.ones(2, 2)),
    "cat dim a string": lambda L: L.cat([L.ones(2)], dim="a"),
    "concat shapes": lambda L: L.concat([L.ones(1, 2), L.ones(1, 3)]),
    "stack shapes": lambda L: L.stack([L.ones(2), L.ones(3)]),
    "stack empty": lambda L: L.stack([]),
    "stack dim out of range": lambda L: L.stack([L.ones(2), L.ones(2)], 3),
    "stack a list of lists": lambda L: L.stack([[1.0], [2.0]]),
    "hstack empty": lambda L: L.hstack([]),
    "vstack shapes": lambda L: L.vstack([L.ones(2), L.ones(3)]),
    "cat with an empty 1d is fine": lambda L: L.cat([L.ones(2, 3), L.ones(0)]),
}


@pytest.mark.parametrize("program", CASES.values(), ids=CASES.keys())
def test_bad_view_index_and_join_input_fails_as_torch(program: Program) -> None:
    check(program)


@settings(max_examples=100, deadline=None)
@given(shape=st.lists(st.integers(-2, 7), min_size=0, max_size=3),
       op=st.sampled_from(["view", "reshape", "expand"]))
def test_views_over_random_target_shapes(shape: list[int], op: str) -> None:
    check(lambda L: getattr(L.arange(6.0).reshape(2, 3), op)(*shape))


@settings(max_examples=80, deadline=None)
@given(a=st.lists(st.integers(0, 3), min_size=1, max_size=3),
       b=st.lists(st.integers(0, 3), min_size=1, max_size=3),
       dim=st.integers(-4, 3), op=st.sampled_from(["cat", "stack"]))
def test_joins_over_random_shapes_and_dims(a: list[int], b: list[int], dim: int,
                                           op: str) -> None:
    check(lambda L: getattr(L, op)([L.ones(*a), L.ones(*b)], dim))


@settings(max_examples=80, deadline=None)
@given(index=st.one_of(st.integers(-4, 4), st.lists(st.integers(-4, 4), min_size=1,
                                                     max_size=3)),
       dim=st.integers(-3, 2))
def test_index_select_and_indexing_over_random_indices(index: int | list[int], dim: int) -> None:
    def program(L: Any) -> Any:
        x = L.arange(6.0).reshape(2, 3)
        if isinstance(index, int):
            return x.select(dim, index)
        return x.index_select(dim, L.tensor(index))

    check(program)
