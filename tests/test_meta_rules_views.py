"""The view, extern and composite ops' output rules on more calls than meta_samples' one each:
indexing of every kind, reshapes that must copy, views of views at offsets, 0-D and empty
tensors. The kernel on the cpu is the oracle (as in tests/test_meta_rules.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_meta_ops import describe
from test_meta_rules import _described

import fake_torch
from fake_torch import _meta_registrations as rules
from fake_torch import _opdef

# a rule runs its kernel's argument checks, warnings included, and the samples call deprecated
# forms on purpose (softmax without dim, dropout2d of a 2-D input, a loss over broadcast sizes)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

torch: Any = fake_torch  # (its namespace is filled at import: untyped here)


def _x() -> Any:
    return torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)


def _def(name: str) -> _opdef.OpDef:
    for d in _opdef.definitions():
        if rules.qualified_name(d) == name:
            return d
    raise LookupError(name)


CALLS: list[tuple[str, Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]]] = [
    ("Tensor.__getitem__", lambda: ((_x(), (0, slice(1, 3), None, Ellipsis)), {})),
    ("Tensor.__getitem__", lambda: ((_x(), (Ellipsis, 2)), {})),
    ("Tensor.__getitem__", lambda: ((_x(), (slice(None), slice(None, None, 2), -1)), {})),
    ("Tensor.__getitem__", lambda: ((_x(), slice(5, 9)), {})),  # empty, past the end
    ("Tensor.__getitem__", lambda: ((_x(), (slice(1, 2), 1)), {})),  # one element kept
    ("Tensor.__getitem__", lambda: ((_x(), Ellipsis), {})),
    ("Tensor.__getitem__", lambda: ((_x(), None), {})),
    ("Tensor.__getitem__", lambda: ((_x(), -1), {})),
    ("Tensor.__getitem__", lambda: ((_x(), (True, 0)), {})),
    ("Tensor.__getitem__", lambda: ((_x(), torch.tensor([0, 1, 1])), {})),
    ("Tensor.__getitem__", lambda: ((_x(), (slice(None), [0, 2])), {})),
    ("Tensor.__getitem__", lambda: ((_x(), (torch.tensor([0, 1]), slice(None),
                                            torch.tensor([[1], [2]]))), {})),
    ("Tensor.__getitem__", lambda: ((_x(), (Ellipsis, torch.tensor([1, 0]))), {})),
    ("torch.reshape", lambda: ((_x().transpose(1, 2), (2, -1)), {})),  # must copy
    ("torch.reshape", lambda: ((_x()[:, 1], (-1,)), {})),
    ("Tensor.view", lambda: ((_x()[:, :, 1:3], 2, 3, 2, 5), {})),
    ("Tensor.view", lambda: ((_x()[1], torch.int16), {})),
    ("Tensor.view", lambda: ((torch.arange(24.0).reshape(2, 3, 4)[1], torch.float64), {})),
    ("torch.flatten", lambda: ((_x().permute(3, 2, 1, 0), 1, 2), {})),
    ("torch.flatten", lambda: ((torch.tensor(1.0),), {})),
    ("torch.squeeze", lambda: ((_x()[:, :1, None], (1, 2)), {})),
    ("torch.unsqueeze", lambda: ((_x()[..., 2], -1), {})),
    ("torch.movedim", lambda: ((_x(), (0, 1), (3, 0)), {})),
    ("torch.narrow", lambda: ((_x()[1:], -1, -3, 2), {})),
    ("torch.chunk", lambda: ((_x(), 3, 2), {})),
    ("torch.split", lambda: ((_x()[:, 1:], 2, 2), {})),
    ("torch.tensor_split", lambda: ((_x(), (1, 3), 3), {})),
    ("torch.unbind", lambda: ((_x()[:, 2], 1), {})),
    ("Tensor.expand", lambda: ((_x()[:, :1], 3, 2, 3, 4, 5), {})),
    ("torch.broadcast_tensors", lambda: ((_x()[0, :, :1], _x()[1, 0]), {})),
    ("torch.diagonal", lambda: ((_x()[1:], -1, 3, 1), {})),
    ("torch.atleast_3d", lambda: ((torch.tensor(1.0), torch.ones(3), torch.ones(2, 3)), {})),
    ("Tensor.unfold", lambda: ((_x()[1], 2, 2, 1), {})),
    ("torch.meshgrid", lambda: ((_x()[0, 0, 1:, 2], torch.tensor(2.0), _x()[1, :, 0, 0]),
                                {"indexing": "xy"})),
    ("torch.meshgrid", lambda: (([_x()[0, 0, 0], _x()[1, 1, ::2, 1]],), {"indexing": "ij"})),
    ("Tensor.__setitem__", lambda: ((_x(), (slice(None), 1, torch.tensor([0, 2])), 1.5), {})),
    ("Tensor.__setitem__", lambda: ((_x(), _x() > 3, 0.0), {})),
    ("torch.hann_window", lambda: ((5,), {"periodic": True})),
    ("torch.hamming_window", lambda: ((1,), {})),
    ("torch.pixel_unshuffle", lambda: ((_x()[:, :, :, :4].transpose(2, 3), 2), {})),
]


@pytest.mark.parametrize("name,make", CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)])
def test_a_rule_describes_its_kernels_output(name: str, make: Callable[..., Any]) -> None:
    opdef = _def(name)
    args, kwargs = make()
    inputs = [t for a in args for t in (a if isinstance(a, (tuple, list)) else (a,))
              if isinstance(t, torch.Tensor)]
    expected = describe(opdef.impl(*args, **kwargs), inputs)
    args, kwargs = make()
    with torch.LaunchCounter.expect(0):
        got = rules.run_rule(opdef, args, kwargs)
    assert _described(got, inputs) == expected


def test_a_rule_refuses_what_needs_values() -> None:
    x = _x()
    with pytest.raises(NotImplementedError, match="bool mask"):
        rules.run_rule(_def("Tensor.__getitem__"), (x, x > 3), {})
    with pytest.raises(NotImplementedError, match="value"):
        rules.run_rule(_def("Tensor.__getitem__"), (x, torch.tensor(1)), {})


def test_an_assignments_rule_checks_as_its_kernel_does() -> None:
    x = _x()
    for index, value, error in ((7, 1.0, IndexError), (0, "a", TypeError),
                                ((0, 0, 0, 0, 0), 1.0, IndexError)):
        with pytest.raises(error) as kernel:
            x[index] = value
        with pytest.raises(error) as rule:
            rules.run_rule(_def("Tensor.__setitem__"), (x, index, value), {})
        assert str(rule.value) == str(kernel.value)


def _r(*shape: int) -> Any:
    return torch.randn(*shape)


PRODUCTS: list[tuple[str, Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]]] = [
    ("torch.matmul", lambda: ((_r(3), _r(3, 4)), {})),
    ("torch.matmul", lambda: ((_r(2, 5, 3), _r(3, 4)), {})),  # folded into one mm
    ("torch.matmul", lambda: ((_r(3, 5).t(), _r(2, 3, 4)), {})),  # transposed fold
    ("torch.matmul", lambda: ((_r(2, 1, 5, 3), _r(4, 3, 2)), {})),  # broadcast bmm
    ("torch.matmul", lambda: ((_r(2, 5, 3).transpose(0, 1), _r(3)), {})),
    ("torch.matmul", lambda: ((_r(2, 5, 3), _r(2, 3, 4)), {})),
    ("Tensor.__rmatmul__", lambda: ((_r(3, 4), _r(2, 3)), {})),
    ("torch.nn.functional.linear", lambda: ((_r(2, 5, 3), _r(4, 3), _r(4)), {})),
    ("torch.nn.functional.linear", lambda: ((_r(2, 5, 3).transpose(0, 1), _r(4, 3), _r(4)),
                                            {})),
    ("torch.nn.functional.linear", lambda: ((_r(5, 3), _r(4, 3)), {})),
    ("torch.nn.functional.linear", lambda: ((_r(3), _r(4, 3), _r(4)), {})),
    ("torch.nn.functional.scaled_dot_product_attention",
     lambda: ((_r(2, 3, 5, 8), _r(2, 3, 7, 8), _r(2, 3, 7, 4)), {})),
    ("torch.nn.functional.scaled_dot_product_attention",
     lambda: ((_r(2, 5, 3, 8).transpose(1, 2), _r(2, 3, 7, 8), _r(2, 3, 7, 8)),
              {"is_causal": True})),
    ("torch.nn.functional.scaled_dot_product_attention",
     lambda: ((_r(1, 4, 5, 8), _r(1, 2, 7, 8), _r(1, 2, 7, 8)), {"enable_gqa": True})),
    ("torch.nn.functional.scaled_dot_product_attention",
     lambda: ((_r(5, 8), _r(7, 8), _r(7, 6)), {"attn_mask": torch.ones(5, 7, dtype=torch.bool)})),
    ("torch.nn.functional.scaled_dot_product_attention",  # flash: laid out like the query
     lambda: ((_r(2, 5, 3, 8).half().transpose(1, 2), *(_r(2, 3, 7, 8).half(),) * 2), {})),
    ("torch.nn.functional.scaled_dot_product_attention",  # flash: the head dim padded
     lambda: ((*(_r(2, 3, 5, 6).half(),) * 3,), {})),
]


@pytest.mark.parametrize("name,make", PRODUCTS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(PRODUCTS)])
def test_a_products_rule_describes_its_output(name: str, make: Callable[..., Any]) -> None:
    test_a_rule_describes_its_kernels_output(name, make)


CONVS: list[tuple[str, Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]]] = [
    ("torch.conv2d", lambda: ((_r(2, 4, 7, 6), _r(6, 2, 3, 2), _r(6)),
                              {"stride": (2, 1), "padding": 1, "dilation": (1, 2), "groups": 2})),
    ("torch.conv2d", lambda: ((_r(4, 7, 6), _r(6, 4, 2, 2)), {"padding": "same"})),
    ("torch.conv1d", lambda: ((_r(2, 4, 9).transpose(1, 2).transpose(1, 2), _r(3, 4, 3)),
                              {"padding": "valid", "stride": 2})),
    ("torch.conv3d", lambda: ((_r(0, 2, 4, 4, 4), _r(3, 2, 2, 2, 2)), {})),
    ("torch.conv_transpose2d", lambda: ((_r(1, 4, 5, 5), _r(4, 3, 3, 3)),
                                        {"stride": 2, "output_padding": 1, "padding": 1})),
    ("torch.conv_transpose1d", lambda: ((_r(4, 5), _r(4, 1, 3)), {"groups": 2})),
]


@pytest.mark.parametrize("name,make", CONVS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONVS)])
def test_a_convolutions_rule_describes_its_output(name: str, make: Callable[..., Any]) -> None:
    test_a_rule_describes_its_kernels_output(name, make)


def test_a_convolutions_rule_refuses_as_its_kernel_does() -> None:
    x, w = _r(1, 4, 3, 3), _r(2, 4, 5, 5)
    with pytest.raises(RuntimeError) as kernel:
        torch.conv2d(x, w)
    with pytest.raises(RuntimeError) as rule:
        rules.run_rule(_def("torch.conv2d"), (x, w), {})
    assert str(rule.value) == str(kernel.value)


MORE: list[tuple[str, Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]]] = [
    ("torch.linalg.cholesky", lambda: ((torch.eye(3).expand(2, 3, 3) * 2,), {"upper": True})),
    ("torch.histc", lambda: ((_r(7),), {"bins": 4, "min": -1, "max": 1})),
    ("torch.repeat_interleave", lambda: ((_x()[:, 1], 2), {"dim": 1})),
    ("torch.repeat_interleave", lambda: ((_x().transpose(0, 3), 3), {})),
    ("torch.nn.functional.one_hot", lambda: ((torch.tensor([[0, 2], [1, 1]]).t(), 4), {})),
    ("torch.isin", lambda: ((_x()[0, 1].t(), torch.tensor([1.0, 7.0])), {"invert": True})),
    ("torch.nn.functional.instance_norm", lambda: ((_x().transpose(2, 3),),
                                                   {"weight": _r(3), "bias": _r(3)})),
    ("torch.nn.functional.interpolate", lambda: ((_x()[0], None, 1.7), {})),
    ("torch.nn.functional.interpolate", lambda: ((_x().transpose(2, 3), (3, 9)),
                                                 {"mode": "bilinear"})),
    ("torch.nn.functional.interpolate", lambda: ((_x()[:, :, None], None, (1.0, 0.5, 2.0)),
                                                 {"mode": "trilinear",
                                                  "recompute_scale_factor": True})),
    ("torch.nn.functional.upsample_bilinear", lambda: ((_x(),), {"scale_factor": 2})),
    ("torch.nn.functional.mse_loss", lambda: ((_x().transpose(0, 3), _r(5, 3, 4, 2)),
                                              {"reduction": "none"})),
    ("torch.nn.functional.huber_loss", lambda: ((_x(), _r(4, 5)), {"delta": 0.5})),
    ("torch.nn.functional.smooth_l1_loss", lambda: ((_x()[0], _x()[1].half()),
                                                    {"reduction": "sum"})),
    ("torch.nn.functional.binary_cross_entropy_with_logits",
     lambda: ((_x()[0].transpose(0, 2), _r(5, 4, 3)), {"pos_weight": _r(3),
                                                       "reduction": "none"})),
    ("torch.nn.functional.nll_loss", lambda: ((_x()[0, :, :, 1].t(), torch.tensor([0, 2, 1, 1])),
                                              {"reduction": "none"})),
    ("torch.nn.functional.nll_loss", lambda: ((_x(), torch.zeros(2, 4, 5, dtype=torch.int64)),
                                              {"weight": _r(3)})),
    ("torch.nn.functional.nll_loss", lambda: ((_x()[:, :, 1], torch.zeros(2, 5,
                                                                           dtype=torch.int64)),
                                              {"reduction": "none"})),
    ("torch.nn.functional.cross_entropy", lambda: ((_x()[0, :, 1], torch.tensor([0, 3, 1])),
                                                   {})),
    ("torch.nn.functional.cross_entropy", lambda: ((_x(), torch.ones(2, 4, 5,
                                                                     dtype=torch.int64)),
                                                   {"reduction": "none"})),
]


@pytest.mark.parametrize("name,make", MORE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(MORE)])
def test_more_rules_describe_their_outputs(name: str, make: Callable[..., Any]) -> None:
    test_a_rule_describes_its_kernels_output(name, make)


# composites whose rules call the rules of pointwise and reduction ops (those come with the
# pointwise/reduction kinds' rules; until they are registered, these skip)
DELEGATING: list[tuple[str, str, Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]]] = [
    ("Tensor.__add__", "torch.add", lambda: ((_x()[:, 1:], _x()[0, 1:, :, :1]), {})),
    ("Tensor.__rpow__", "torch.pow", lambda: ((_x().transpose(1, 3), 2), {})),
    ("Tensor.__iadd__", "Tensor.add_", lambda: ((_x()[1], 1.5), {})),
    ("torch.nn.functional.softmax", "torch.softmax", lambda: ((_x().permute(2, 0, 3, 1), -1),
                                                             {})),
    ("torch.nn.functional.softmin", "torch.softmax", lambda: ((_x()[:, ::2].transpose(0, 3), 1),
                                                             {})),
    ("torch.logsumexp", "torch.amax", lambda: ((_x()[..., 1:].transpose(0, 2), (1, 3)), {})),
    ("torch.logsumexp", "torch.amax", lambda: ((torch.ones(2, 3, dtype=torch.int32), 0, True),
                                               {})),
    ("torch.isfinite", "torch.eq", lambda: ((_x()[:, 1:].transpose(1, 2),), {})),
    ("torch.isfinite", "torch.eq", lambda: ((torch.ones(3, 2, dtype=torch.int64).t(),), {})),
    ("torch.nn.functional.softsign", "torch.div", lambda: ((_x().transpose(0, 1),), {})),
    ("torch.nn.functional.tanhshrink", "torch.tanh", lambda: ((_x()[:, :, 1],), {})),
    ("torch.tile", "Tensor.repeat", lambda: ((_x()[0], (2,)), {})),
    ("Tensor.__rtruediv__", "torch.div", lambda: ((_x()[:, 1:].transpose(0, 2), 2), {})),
    ("Tensor.__rtruediv__", "torch.div",
     lambda: ((torch.ones(3, 2, dtype=torch.int32).t(), torch.ones(3, dtype=torch.float64)), {})),
    ("torch.nn.functional.dropout2d", "torch.mul", lambda: ((_x().transpose(1, 3),), {})),
    ("torch.nn.functional.dropout1d", "torch.mul", lambda: ((_x()[0, :, 1:].transpose(0, 1),),
                                                          {"inplace": True})),
    ("torch.nn.functional.dropout3d", "torch.mul", lambda: ((_x()[1, :, None],),
                                                          {"training": False})),
    ("torch.feature_dropout", "torch.mul", lambda: ((_x()[:, 1:], 1.0, True), {})),
    ("torch.nn.functional.dropout1d", "torch.mul", lambda: ((_x()[0, :, 1:].transpose(0, 1),),
                                                          {})),
    ("torch.isclose", "torch.eq", lambda: ((_x().transpose(0, 2), _x()[:1].transpose(0, 2)),
                                           {"equal_nan": True})),
    ("torch.isin", "torch.eq", lambda: ((_x()[:, ::2], 3.0), {})),
    ("torch.nn.functional.prelu", "torch.prelu", lambda: ((_x().transpose(1, 2), _r(4)), {})),
    ("torch.nn.functional.rrelu", "torch.rrelu", lambda: ((_x()[:, 1:],), {"training": True})),
    ("torch.nn.functional.normalize", "torch.norm", lambda: ((_x().transpose(0, 2),),
                                                             {"dim": -1})),
    ("torch.nn.functional.normalize", "torch.norm", lambda: ((_x()[:, 1:, ::2],), {"p": 1.0})),
    ("torch.hstack", "torch.cat", lambda: (([_x()[0, 0], _x()[1, 1].t().t()],), {})),
    ("torch.vstack", "torch.cat", lambda: (((_x()[0, 0], _x()[1, :, 1:].transpose(0, 1)[0]),),
                                           {})),
    ("torch.dstack", "torch.cat",
     lambda: (([_x()[0].transpose(0, 2), _x()[1].transpose(0, 2)[:, :, :2]],), {})),
    ("torch.nn.functional.cross_entropy", "torch.sum",
     lambda: ((_x().transpose(1, 3), _r(2, 5, 4, 3).softmax(1)), {"reduction": "none"})),
    ("torch.nn.functional.cross_entropy", "torch.sum", lambda: ((_x()[0], _r(3, 4, 5)), {})),
    ("torch.nn.functional.interpolate", "torch.nn.functional.adaptive_avg_pool2d",
     lambda: ((_x().transpose(1, 3), (2, 2)), {"mode": "area"})),
]


@pytest.mark.parametrize("name,callee,make", DELEGATING,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(DELEGATING)])
def test_a_composites_rule_describes_its_output(name: str, callee: str,
                                               make: Callable[..., Any]) -> None:
    if rules.rule_for(_def(callee)) is None:
        pytest.skip(f"{callee} has no output rule yet")
    test_a_rule_describes_its_kernels_output(name, make)
