"""Bad input to matrix products and torch.nn.functional, against torch CPU
(tests/bad_input.py: a silent result where torch raises fails, and so does another exception
class or first message line)."""

from __future__ import annotations

from typing import Any

import pytest
from bad_input import Program, check
from hypothesis import given, settings
from hypothesis import strategies as st


def _r(L: Any, *shape: int) -> Any:
    return L.ones(*shape)


def _F(L: Any) -> Any:
    return L.nn.functional


CASES: dict[str, Program] = {
    # matrix products
    "mm shapes": lambda L: L.mm(_r(L, 2, 3), _r(L, 2, 3)),
    "mm of 1d": lambda L: L.mm(_r(L, 3), _r(L, 3, 2)),
    "mm of 3d": lambda L: L.mm(_r(L, 2, 2, 2), _r(L, 2, 2)),
    "mm dtypes": lambda L: L.mm(_r(L, 2, 2), _r(L, 2, 2).double()),
    "mm of ints and floats": lambda L: L.mm(_r(L, 2, 2).long(), _r(L, 2, 2)),
    "bmm of 2d": lambda L: L.bmm(_r(L, 2, 2), _r(L, 2, 2)),
    "bmm batches": lambda L: L.bmm(_r(L, 2, 2, 3), _r(L, 3, 3, 2)),
    "bmm inner": lambda L: L.bmm(_r(L, 2, 2, 3), _r(L, 2, 2, 2)),
    "matmul of 0d": lambda L: L.matmul(L.ones(()), _r(L, 2)),
    "matmul shapes": lambda L: _r(L, 2, 3) @ _r(L, 4, 2),
    "matmul 1d sizes": lambda L: L.matmul(_r(L, 3), _r(L, 4)),
    "matmul batch mismatch": lambda L: L.matmul(_r(L, 2, 2, 3), _r(L, 3, 3, 2)),
    "matmul dtypes": lambda L: L.matmul(_r(L, 2, 2), _r(L, 2, 2).half()),
    "matmul a list": lambda L: L.matmul(_r(L, 2, 2), [[1.0]]),
    "dot of 2d": lambda L: L.dot(_r(L, 2, 2), _r(L, 2, 2)),
    "dot sizes": lambda L: L.dot(_r(L, 2), _r(L, 3)),
    "dot dtypes": lambda L: L.dot(_r(L, 2), _r(L, 2).double()),
    "mv shapes": lambda L: L.mv(_r(L, 2, 3), _r(L, 2)),
    "mv of 1d matrix": lambda L: L.mv(_r(L, 3), _r(L, 3)),
    "addmm shapes": lambda L: L.addmm(_r(L, 2, 2), _r(L, 2, 3), _r(L, 2, 2)),
    "addmm bias shape": lambda L: L.addmm(_r(L, 3, 3), _r(L, 2, 3), _r(L, 3, 2)),
    "baddbmm shapes": lambda L: L.baddbmm(_r(L, 2, 2, 2), _r(L, 2, 2, 3), _r(L, 2, 2, 2)),
    "outer of 2d": lambda L: L.outer(_r(L, 2, 2), _r(L, 2)),
    "einsum bad equation": lambda L: L.einsum("ij,jk->il", _r(L, 2, 2), _r(L, 2, 2)),
    "einsum operand count": lambda L: L.einsum("ij,jk->ik", _r(L, 2, 2)),
    "einsum sizes": lambda L: L.einsum("ij,jk->ik", _r(L, 2, 3), _r(L, 2, 2)),
    "linalg.vector_norm dim out of range": lambda L: L.linalg.vector_norm(_r(L, 2), dim=2),
    # linear and embeddings
    "linear shapes": lambda L: _F(L).linear(_r(L, 2, 3), _r(L, 4, 2)),
    "linear bias shape": lambda L: _F(L).linear(_r(L, 2, 3), _r(L, 4, 3), _r(L, 3)),
    "linear dtypes": lambda L: _F(L).linear(_r(L, 2, 3), _r(L, 4, 3).double()),
    "embedding index out of range": lambda L: _F(L).embedding(L.tensor([3]), _r(L, 3, 2)),
    "embedding negative index": lambda L: _F(L).embedding(L.tensor([-1]), _r(L, 3, 2)),
    "embedding float indices": lambda L: _F(L).embedding(L.tensor([0.0]), _r(L, 3, 2)),
    "embedding 1d weight": lambda L: _F(L).embedding(L.tensor([0]), _r(L, 3)),
    # activations and softmax
    "softmax dim out of range": lambda L: _F(L).softmax(_r(L, 2, 3), 2),
    "log_softmax of ints": lambda L: _F(L).log_softmax(L.ones(3, dtype=L.int64), 0),
    "gelu bad approximate": lambda L: _F(L).gelu(_r(L, 2), approximate="fast"),
    "relu of a list": lambda L: _F(L).relu([1.0]),
    "silu in place on a view of itself is fine": lambda L: _F(L).silu(_r(L, 2), inplace=True),
    "leaky_relu slope a string": lambda L: _F(L).leaky_relu(_r(L, 2), "a"),
    "hardtanh min above max": lambda L: _F(L).hardtanh(_r(L, 2), 1.0, -1.0),
    "dropout p above one": lambda L: _F(L).dropout(_r(L, 2), 1.5),
    "dropout p negative": lambda L: _F(L).dropout(_r(L, 2), -0.1),
    # normalisation
    "layer_norm shape": lambda L: _F(L).layer_norm(_r(L, 2, 3), (4,)),
    "layer_norm weight shape": lambda L: _F(L).layer_norm(_r(L, 2, 3), (3,), _r(L, 2)),
    "layer_norm shape an int": lambda L: _F(L).layer_norm(_r(L, 2, 3), 3),
    "rms_norm shape": lambda L: _F(L).rms_norm(_r(L, 2, 3), (2,)),
    "rms_norm weight shape": lambda L: _F(L).rms_norm(_r(L, 2, 3), (3,), _r(L, 4)),
    "batch_norm running stats shape": lambda L: _F(L).batch_norm(_r(L, 2, 3), _r(L, 2),
                                                                 _r(L, 2)),
    "normalize dim out of range": lambda L: _F(L).normalize(_r(L, 2, 3), dim=2),
    # losses
    "cross_entropy target shape": lambda L: _F(L).cross_entropy(_r(L, 2, 3), L.tensor([0])),
    "cross_entropy target class out of range": lambda L: _F(L).cross_entropy(
        _r(L, 2, 3), L.tensor([0, 3])),
    "cross_entropy float target shape": lambda L: _F(L).cross_entropy(_r(L, 2, 3), _r(L, 2)),
    "cross_entropy bad reduction": lambda L: _F(L).cross_entropy(_r(L, 2, 3), L.tensor([0, 1]),
                                                                 reduction="avg"),
    "nll_loss target out of range": lambda L: _F(L).nll_loss(_r(L, 2, 3), L.tensor([5, 0])),
    "nll_loss float target": lambda L: _F(L).nll_loss(_r(L, 2, 3), _r(L, 2)),
    "mse_loss bad reduction": lambda L: _F(L).mse_loss(_r(L, 2), _r(L, 2), reduction="x"),
    "l1_loss shapes": lambda L: _F(L).l1_loss(_r(L, 2), _r(L, 3)),
    # padding, pooling, convolution, attention
    "pad odd length": lambda L: _F(L).pad(_r(L, 2, 2), (1,)),
    "pad too long": lambda L: _F(L).pad(_r(L, 2), (1, 1, 1, 1)),
    "pad bad mode": lambda L: _F(L).pad(_r(L, 1, 2, 2), (1, 1), mode="wrap"),
    "pad reflect too wide": lambda L: _F(L).pad(_r(L, 1, 2, 2), (3, 3), mode="reflect"),
    "max_pool2d kernel too big": lambda L: _F(L).max_pool2d(_r(L, 1, 1, 2, 2), 3),
    "max_pool2d stride zero": lambda L: _F(L).max_pool2d(_r(L, 1, 1, 4, 4), 2, stride=0),
    "avg_pool2d pad too big": lambda L: _F(L).avg_pool2d(_r(L, 1, 1, 4, 4), 2, padding=2),
    "adaptive_avg_pool2d of 1d": lambda L: _F(L).adaptive_avg_pool2d(_r(L, 4), 2),
    "conv2d channels": lambda L: _F(L).conv2d(_r(L, 1, 3, 4, 4), _r(L, 2, 2, 3, 3)),
    "conv2d kernel too big": lambda L: _F(L).conv2d(_r(L, 1, 1, 2, 2), _r(L, 1, 1, 3, 3)),
    "conv2d of 2d": lambda L: _F(L).conv2d(_r(L, 4, 4), _r(L, 1, 1, 3, 3)),
    "conv1d groups": lambda L: _F(L).conv1d(_r(L, 1, 3, 5), _r(L, 2, 1, 3), groups=2),
    "conv2d bias shape": lambda L: _F(L).conv2d(_r(L, 1, 1, 4, 4), _r(L, 2, 1, 3, 3),
                                                _r(L, 3)),
    "sdpa shapes": lambda L: _F(L).scaled_dot_product_attention(_r(L, 1, 2, 4), _r(L, 1, 3, 5),
                                                                _r(L, 1, 3, 5)),
    "sdpa mask shape": lambda L: _F(L).scaled_dot_product_attention(
        _r(L, 1, 2, 4), _r(L, 1, 3, 4), _r(L, 1, 3, 4), attn_mask=L.ones(5, 5,
                                                                       dtype=L.bool)),
}


@pytest.mark.parametrize("program", CASES.values(), ids=CASES.keys())
def test_bad_linalg_and_functional_input_fails_as_torch(program: Program) -> None:
    check(program)


_shape = st.lists(st.integers(1, 3), min_size=0, max_size=4)


@settings(max_examples=100, deadline=None)
@given(a=_shape, b=_shape)
def test_matmul_over_random_shapes(a: list[int], b: list[int]) -> None:
    check(lambda L: L.matmul(L.ones(*a), L.ones(*b)))


@settings(max_examples=60, deadline=None)
@given(x=_shape, w=st.lists(st.integers(1, 3), min_size=1, max_size=3))
def test_linear_over_random_shapes(x: list[int], w: list[int]) -> None:
    check(lambda L: L.nn.functional.linear(L.ones(*x), L.ones(*w)))
