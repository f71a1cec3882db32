"""The losses (torch.nn.functional and the nn modules), forward only, against real torch CPU:
values, launches as torch's dispatcher records them (`torch_launches(cuda=True)` vs
`launches()` on fake_torch's cuda device), errors and warnings; `.backward()` on a loss raises
NotImplementedError (no autograd)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft
from fake_torch.nn import functional as F

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
TF = torch.nn.functional

_rng = np.random.default_rng(0)
X = _rng.standard_normal((4, 5)).astype(np.float32)
Y = _rng.standard_normal((4, 5)).astype(np.float32)
T = np.array([0, 2, 1, 4])
T_IGNORED = np.array([0, -100, 1, 4])
W = _rng.random(5).astype(np.float32)
X3 = _rng.standard_normal((2, 5, 3)).astype(np.float32)
T3 = _rng.integers(0, 5, (2, 3))
X4 = _rng.standard_normal((2, 5, 3, 2)).astype(np.float32)
T4 = _rng.integers(0, 5, (2, 3, 2))
X5 = _rng.standard_normal((2, 5, 3, 2, 2)).astype(np.float32)
T5 = _rng.integers(0, 5, (2, 3, 2, 2))


class Lib:
    """One library's view of the test data: `lib.t("X")` is array X as a tensor (fake_torch's
    on its cuda device), `lib.F` its functional module."""

    def __init__(self, lib: Any, dtype: str = "float32") -> None:
        self.lib, self.dtype = lib, dtype
        self.F = TF if lib is torch else F
        self.nn = lib.nn

    def t(self, name: str) -> Any:
        a = globals()[name]
        if self.lib is torch:
            t = torch.from_numpy(a.copy())
            return t.to(getattr(torch, self.dtype)) if a.dtype.kind == "f" else t
        if a.dtype.kind == "f":
            a = a.astype(ml_dtypes.bfloat16 if self.dtype == "bfloat16" else self.dtype)
        return ft.tensor(a, device="cuda")


PROGRAMS: dict[str, Callable[[Lib], Any]] = {
    "mse": lambda L: L.F.mse_loss(L.t("X"), L.t("Y")),
    "mse_sum": lambda L: L.F.mse_loss(L.t("X"), L.t("Y"), reduction="sum"),
    "mse_none": lambda L: L.F.mse_loss(L.t("X"), L.t("Y"), reduction="none"),
    "mse_weight": lambda L: L.F.mse_loss(L.t("X"), L.t("Y"), weight=L.t("Y").abs()),
    "mse_legacy": lambda L: L.F.mse_loss(L.t("X"), L.t("Y"), size_average=False),
    "l1": lambda L: L.F.l1_loss(L.t("X"), L.t("Y")),
    "l1_none": lambda L: L.F.l1_loss(L.t("X"), L.t("Y"), reduction="none"),
    "l1_sum_weight": lambda L: L.F.l1_loss(L.t("X"), L.t("Y"), reduction="sum",
                                           weight=L.t("Y").abs()),
    "smooth_l1": lambda L: L.F.smooth_l1_loss(L.t("X"), L.t("Y")),
    "smooth_l1_beta": lambda L: L.F.smooth_l1_loss(L.t("X"), L.t("Y"), beta=0.3,
                                                   reduction="none"),
    "smooth_l1_beta0": lambda L: L.F.smooth_l1_loss(L.t("X"), L.t("Y"), beta=0.0),
    "huber": lambda L: L.F.huber_loss(L.t("X"), L.t("Y"), delta=0.5),
    "huber_weight": lambda L: L.F.huber_loss(L.t("X"), L.t("Y"), weight=L.t("Y").abs()),
    "nll": lambda L: L.F.nll_loss(L.t("X"), L.t("T")),
    "nll_none": lambda L: L.F.nll_loss(L.t("X"), L.t("T"), reduction="none"),
    "nll_weight_sum": lambda L: L.F.nll_loss(L.t("X"), L.t("T"), L.t("W"), reduction="sum"),
    "nll_ignored": lambda L: L.F.nll_loss(L.t("X"), L.t("T_IGNORED"), L.t("W")),
    "nll_ignore_index": lambda L: L.F.nll_loss(L.t("X"), L.t("T"), ignore_index=2),
    "nll_1d": lambda L: L.F.nll_loss(L.t("X")[0], L.t("T")[1]),
    "nll_3d": lambda L: L.F.nll_loss(L.t("X3"), L.t("T3")),
    "nll_3d_none": lambda L: L.F.nll_loss(L.t("X3"), L.t("T3"), reduction="none"),
    "nll_3d_strided": lambda L: L.F.nll_loss(L.t("X3").transpose(0, 2).transpose(0, 2)
                                             [:, :, ::2], L.t("T3")[:, ::2]),
    "nll_4d": lambda L: L.F.nll_loss(L.t("X4"), L.t("T4"), L.t("W")),
    "nll_5d_none": lambda L: L.F.nll_loss(L.t("X5"), L.t("T5"), reduction="none"),
    "ce": lambda L: L.F.cross_entropy(L.t("X"), L.t("T")),
    "ce_none": lambda L: L.F.cross_entropy(L.t("X"), L.t("T"), reduction="none"),
    "ce_weight_ignored": lambda L: L.F.cross_entropy(L.t("X"), L.t("T_IGNORED"), L.t("W")),
    "ce_1d": lambda L: L.F.cross_entropy(L.t("X")[0], L.t("T")[2]),
    "ce_3d": lambda L: L.F.cross_entropy(L.t("X3"), L.t("T3")),
    "ce_4d_sum": lambda L: L.F.cross_entropy(L.t("X4"), L.t("T4"), reduction="sum"),
    "ce_smooth": lambda L: L.F.cross_entropy(L.t("X"), L.t("T"), label_smoothing=0.1),
    "ce_smooth_ignored": lambda L: L.F.cross_entropy(L.t("X"), L.t("T_IGNORED"),
                                                     label_smoothing=0.2),
    "ce_smooth_sum": lambda L: L.F.cross_entropy(L.t("X"), L.t("T"), label_smoothing=0.1,
                                                 reduction="sum"),
    "ce_smooth_none_weight": lambda L: L.F.cross_entropy(L.t("X"), L.t("T_IGNORED"),
                                                         L.t("W"), label_smoothing=0.3,
                                                         reduction="none"),
    "ce_smooth_3d": lambda L: L.F.cross_entropy(L.t("X3"), L.t("T3"), label_smoothing=0.1),
    "ce_probs": lambda L: L.F.cross_entropy(L.t("X"), L.t("Y").softmax(1)),
    "ce_probs_smooth_weight": lambda L: L.F.cross_entropy(L.t("X"), L.t("Y").softmax(1),
                                                          L.t("W"), label_smoothing=0.25),
    "ce_probs_none": lambda L: L.F.cross_entropy(L.t("X3"), L.t("X3").softmax(1),
                                                 reduction="none"),
    "ce_negative_smoothing": lambda L: L.F.cross_entropy(L.t("X"), L.t("T"),
                                                         label_smoothing=-0.5),
    "MSELoss": lambda L: L.nn.MSELoss(reduction="sum")(L.t("X"), L.t("Y")),
    "L1Loss": lambda L: L.nn.L1Loss()(L.t("X"), L.t("Y")),
    "SmoothL1Loss": lambda L: L.nn.SmoothL1Loss(beta=0.5)(L.t("X"), L.t("Y")),
    "HuberLoss": lambda L: L.nn.HuberLoss(delta=2.0)(L.t("X"), L.t("Y")),
    "NLLLoss": lambda L: L.nn.NLLLoss(ignore_index=4)(L.t("X"), L.t("T")),
    "CrossEntropyLoss": lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.1)(L.t("X"),
                                                                          L.t("T")),
}


_DROPS_WEIGHT_UNDER_A_MODE = {"l1_sum_weight"}


def _values(x: Any) -> np.ndarray:
    if isinstance(x, ft.Tensor):
        return np.asarray(x.numpy(force=True), dtype=np.float64)
    return x.detach().double().numpy()


def _run(name: str, dtype: str = "float32") -> tuple[Any, list[str], Any, list[str]]:
    program = PROGRAMS[name]
    theirs_lib, ours_lib = Lib(torch, dtype), Lib(ft, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy arguments' deprecation warning
        # values from plain torch, and ops without cuda=True's TorchFunctionMode (which only
        # fuses the norms) where it matters: under a TorchFunctionMode, torch 2.13's l1_loss
        # hands itself to the mode without its `weight` and computes the unweighted loss
        theirs = program(theirs_lib)
        with torch_launches(cuda=name not in _DROPS_WEIGHT_UNDER_A_MODE) as expected:
            program(theirs_lib)
        with launches() as got:
            ours = program(ours_lib)
    return ours, got, theirs, expected


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_and_launches_match_torch(name: str) -> None:
    ours, got, theirs, expected = _run(name)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert repr(ours.dtype) == repr(theirs.dtype)
    np.testing.assert_allclose(_values(ours), _values(theirs), rtol=2e-6, atol=2e-6)
    # on fake_torch's cuda the test data is copied host-to-device inside the block
    assert [n for n in got if n != "copy_"] == [n for n in expected if n != "copy_"]


def test_cross_entropy_launches_what_eager_torch_launches() -> None:
    _, got, _, _ = _run("ce")
    assert got.count("copy_") == 2 and [n for n in got if n != "copy_"] == [
        "_log_softmax", "nll_loss_forward"]


def test_weighted_smoothed_mean_gathers_weights_with_masked_select() -> None:
    """torch's eager kernel (its profiler, torch 2.13 CPU) takes the kept targets' weights
    with masked_select (a host sync, on a GPU too); under a TorchDispatchMode torch treats
    tensors as subclass-like and takes masked_fill + gather instead, so the oracle cannot
    record this path: the eager ops are written down."""
    x, t, w = (Lib(ft).t(n) for n in ("X", "T_IGNORED", "W"))
    with launches() as got:
        ours = F.cross_entropy(x, t, w, label_smoothing=0.1)
    theirs = TF.cross_entropy(*(Lib(torch).t(n) for n in ("X", "T_IGNORED", "W")),
                              label_smoothing=0.1)
    np.testing.assert_allclose(_values(ours), _values(theirs), rtol=2e-6)
    assert got == ["_log_softmax", "nll_loss_forward", "mul", "sum", "neg", "eq", "masked_fill_",
                   "bitwise_not", "masked_select", "gather", "sum", "sum", "div", "mul", "mul",
                   "add"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", ["mse", "smooth_l1", "huber", "l1_none", "nll", "ce",
                                  "ce_smooth", "ce_probs"])
def test_other_float_dtypes(name: str, dtype: str) -> None:
    ours, _, theirs, _ = _run(name, dtype)
    assert repr(ours.dtype) == repr(theirs.dtype)
    tol = {"float16": 2e-3, "bfloat16": 2e-2, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(_values(ours), _values(theirs), rtol=tol, atol=tol)


def test_edge_values_match_torch() -> None:
    """Empty means are nan, empty sums 0; a batch whose targets are all ignored has mean nan
    and sum 0; ignored targets contribute 0."""
    cases: list[Callable[[Any, Any], Any]] = [
        lambda T, F_: F_.mse_loss(T.ones(0), T.ones(0)),
        lambda T, F_: F_.mse_loss(T.ones(0), T.ones(0), reduction="sum"),
        lambda T, F_: F_.nll_loss(T.zeros(2, 3), T.full((2,), -100)),
        lambda T, F_: F_.nll_loss(T.zeros(2, 3), T.full((2,), -100), reduction="sum"),
        lambda T, F_: F_.nll_loss(T.ones(2, 3), T.tensor([0, 3]), ignore_index=3,
                                  reduction="none"),
        lambda T, F_: F_.cross_entropy(T.ones(0, 5), T.ones(0, dtype=T.int64)),
        lambda T, F_: F_.cross_entropy(T.ones(0, 5), T.ones(0, 5)),
        lambda T, F_: F_.cross_entropy(T.ones(2, 5), T.full((2,), -100), label_smoothing=0.2),
        lambda T, F_: F_.mse_loss(T.ones(2, 3), T.ones(2, 3, dtype=T.int64)),
        lambda T, F_: F_.mse_loss(T.ones(2, 3), T.ones(2, 3, dtype=T.float64)),
        lambda T, F_: F_.nll_loss(T.zeros(2, 3), T.tensor([0, 2], dtype=T.uint8)),
    ]
    for case in cases:
        theirs, ours = case(torch, TF), case(ft, F)
        assert repr(ours.dtype) == repr(theirs.dtype) and ours.shape == theirs.shape
        np.testing.assert_allclose(_values(ours), _values(theirs), rtol=1e-6)


def test_broadcasting_target_warns_like_torch() -> None:
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[5\]\)\) that is "
                                         r"different to the input size"):
        got = F.mse_loss(Lib(ft).t("X"), Lib(ft).t("Y")[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = TF.mse_loss(Lib(torch).t("X"), Lib(torch).t("Y")[0])
    np.testing.assert_allclose(_values(got), _values(expected), rtol=1e-6)


def test_legacy_reduction_arguments_warn_and_map_like_torch() -> None:
    for size_average, reduce, expected in ((False, None, "sum"), (None, False, "none"),
                                           (True, True, "mean")):
        with pytest.warns(UserWarning, match=f"please use reduction='{expected}' instead"):
            ours = ft.nn.NLLLoss(size_average=size_average, reduce=reduce)
        with pytest.warns(UserWarning, match=f"please use reduction='{expected}' instead"):
            theirs = torch.nn.NLLLoss(size_average=size_average, reduce=reduce)
        assert ours.reduction == theirs.reduction == expected


def test_loss_modules_hold_weight_as_a_buffer() -> None:
    w = ft.rand(5)
    ce = ft.nn.CrossEntropyLoss(weight=w, ignore_index=1, label_smoothing=0.2)
    theirs = torch.nn.CrossEntropyLoss(weight=torch.rand(5))
    assert list(ce.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert (ce.ignore_index, ce.label_smoothing, ce.reduction) == (1, 0.2, "mean")
    assert ce.to("cuda").weight.is_cuda  # a buffer moves with the module
    assert ft.nn.NLLLoss().weight is None and list(ft.nn.MSELoss().state_dict()) == []
    with pytest.raises(TypeError, match="delta must be a float or int, got: <class 'str'>"):
        ft.nn.HuberLoss(delta="1")  # type: ignore[arg-type]


def test_backward_on_a_loss_raises_naming_torch_backward() -> None:
    loss = ft.nn.MSELoss()(ft.zeros(3, requires_grad=True), ft.ones(3))
    with pytest.raises(NotImplementedError, match=r"torch\.Tensor\.backward"):
        loss.backward()


ERRORS: dict[str, Callable[[Any], Any]] = {
    "bad_reduction": lambda T: T.nn.functional.mse_loss(T.ones(2), T.ones(2), reduction="x"),
    "mse_shapes": lambda T: T.nn.functional.mse_loss(T.ones(4, 5), T.ones(3)),
    "mse_long": lambda T: T.nn.functional.mse_loss(T.ones(2, dtype=T.int64),
                                                   T.ones(2, dtype=T.int64)),
    "mse_weight_size": lambda T: T.nn.functional.mse_loss(T.ones(2, 3), T.ones(2, 3),
                                                          weight=T.ones(3)),
    "l1_long": lambda T: T.nn.functional.l1_loss(T.ones(2, dtype=T.int64),
                                                 T.ones(2, dtype=T.int64)),
    "smooth_l1_long": lambda T: T.nn.functional.smooth_l1_loss(T.ones(2, dtype=T.int64),
                                                               T.ones(2, dtype=T.int64)),
    "smooth_l1_negative_beta": lambda T: T.nn.functional.smooth_l1_loss(T.ones(2), T.ones(2),
                                                                        beta=-1.0),
    "huber_zero_delta": lambda T: T.nn.functional.huber_loss(T.ones(2), T.ones(2), delta=0.0),
    "huber_long": lambda T: T.nn.functional.huber_loss(T.ones(2, dtype=T.int64),
                                                       T.ones(2, dtype=T.int64)),
    "nll_0d": lambda T: T.nn.functional.nll_loss(T.tensor(1.0), T.tensor(0)),
    "nll_batch": lambda T: T.nn.functional.nll_loss(T.ones(4, 5), T.tensor([0, 1, 2])),
    "nll_int_target": lambda T: T.nn.functional.nll_loss(T.ones(2, 5),
                                                         T.zeros(2, dtype=T.int32)),
    "nll_float_target": lambda T: T.nn.functional.nll_loss(T.ones(2, 5), T.zeros(2)),
    "nll_long_input": lambda T: T.nn.functional.nll_loss(T.ones(2, 5, dtype=T.int64),
                                                         T.zeros(2, dtype=T.int64)),
    "nll_out_of_bounds": lambda T: T.nn.functional.nll_loss(T.ones(2, 5), T.tensor([0, 5])),
    "nll_negative_target": lambda T: T.nn.functional.nll_loss(T.ones(2, 5), T.tensor([-1, 0])),
    "nll_weight_size": lambda T: T.nn.functional.nll_loss(T.ones(2, 5), T.tensor([0, 1]),
                                                          weight=T.ones(4)),
    "nll_weight_dtype": lambda T: T.nn.functional.nll_loss(T.ones(2, 5), T.tensor([0, 1]),
                                                           weight=T.ones(5, dtype=T.float64)),
    "nll_2d_target": lambda T: T.nn.functional.nll_loss(T.ones(2, 5), T.zeros(2, 2,
                                                                              dtype=T.int64)),
    "nll_3d_target_size": lambda T: T.nn.functional.nll_loss(T.ones(2, 5, 3),
                                                             T.zeros(2, 4, dtype=T.int64)),
    "nll_4d_target_dims": lambda T: T.nn.functional.nll_loss(T.ones(2, 5, 3, 2),
                                                             T.zeros(2, 3, dtype=T.int64)),
    "nll_4d_size": lambda T: T.nn.functional.nll_loss(T.ones(2, 5, 3, 2),
                                                      T.zeros(2, 4, 2, dtype=T.int64)),
    "nll_4d_weight": lambda T: T.nn.functional.nll_loss(T.ones(2, 5, 3, 2),
                                                        T.zeros(2, 3, 2, dtype=T.int64),
                                                        weight=T.ones(2)),
    "nll_4d_out_of_bounds": lambda T: T.nn.functional.nll_loss(T.ones(2, 5, 3, 2),
                                                               T.full((2, 3, 2), 7)),
    "ce_probs_long": lambda T: T.nn.functional.cross_entropy(T.ones(4, 5),
                                                             T.ones(4, 5, dtype=T.int64)),
    "ce_probs_ignore_index": lambda T: T.nn.functional.cross_entropy(T.ones(4, 5), T.ones(4, 5),
                                                                     ignore_index=1),
    "ce_probs_weight": lambda T: T.nn.functional.cross_entropy(T.ones(4, 5), T.ones(4, 5),
                                                               weight=T.ones(4)),
    "ce_smoothing_above_1": lambda T: T.nn.functional.cross_entropy(T.ones(4, 5),
                                                                    T.tensor([0, 1, 2, 3]),
                                                                    label_smoothing=2.0),
    "ce_probs_smoothing": lambda T: T.nn.functional.cross_entropy(T.ones(4, 5), T.ones(4, 5),
                                                                  label_smoothing=1.5),
    "ce_0d": lambda T: T.nn.functional.cross_entropy(T.tensor(1.0), T.tensor(0)),
    "ce_long_input": lambda T: T.nn.functional.cross_entropy(T.ones(4, 4, dtype=T.int64),
                                                             T.tensor([0, 1, 2, 3])),
    "ce_batch": lambda T: T.nn.functional.cross_entropy(T.ones(4, 5), T.tensor([0, 1, 2])),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert_raises_like_torch(ERRORS[name])
