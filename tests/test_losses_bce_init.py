"""binary_cross_entropy_with_logits and nn.BCEWithLogitsLoss against real torch CPU: values
(weight, pos_weight, each reduction), launches as torch's dispatcher records them, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from oracles import launches, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

_rng = np.random.default_rng(3)
ARRAYS = {"X": (_rng.standard_normal((4, 3)) * 4).astype(np.float32),
          "T": _rng.random((4, 3)).astype(np.float32),
          "W": _rng.random(3).astype(np.float32),
          "PW": (_rng.random(3) * 3).astype(np.float32)}

CASES: list[dict[str, Any]] = [
    {}, {"weight": "W"}, {"pos_weight": "PW"}, {"weight": "W", "pos_weight": "PW"},
    {"reduction": "none", "pos_weight": "PW"}, {"reduction": "sum", "weight": "W"},
]


def _t(lib: Any, name: str) -> Any:
    a = ARRAYS[name]
    return torch.from_numpy(a.copy()) if lib is torch else ft.tensor(a, device="cuda")


def _kwargs(lib: Any, case: dict[str, Any]) -> dict[str, Any]:
    return {k: (_t(lib, v) if k != "reduction" else v) for k, v in case.items()}


@pytest.mark.parametrize("case", CASES)
def test_bce_with_logits_values_and_launches(case: dict[str, Any]) -> None:
    x, t, kw = _t(ft, "X"), _t(ft, "T"), _kwargs(ft, case)  # the uploads launch copies
    with launches() as ours_ops:
        ours = ft.nn.functional.binary_cross_entropy_with_logits(x, t, **kw)
    tx, tt, tkw = _t(torch, "X"), _t(torch, "T"), _kwargs(torch, case)
    with torch_launches(cuda=True) as theirs_ops:
        theirs = torch.nn.functional.binary_cross_entropy_with_logits(tx, tt, **tkw)
    assert ours_ops == theirs_ops == ["binary_cross_entropy_with_logits"]
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=2e-6, atol=1e-6)


def test_bce_with_logits_module() -> None:
    ours = ft.nn.BCEWithLogitsLoss(pos_weight=_t(ft, "PW"), reduction="sum")
    theirs = torch.nn.BCEWithLogitsLoss(pos_weight=_t(torch, "PW"), reduction="sum")
    assert dict(ours.named_buffers()).keys() == dict(theirs.named_buffers()).keys()
    np.testing.assert_allclose(ours(_t(ft, "X"), _t(ft, "T")).item(),
                               theirs(_t(torch, "X"), _t(torch, "T")).item(), rtol=2e-6)


def test_bce_with_logits_errors() -> None:
    def err(lib: Any, fn: Any) -> tuple[type, str]:
        with pytest.raises(Exception) as e:
            fn(lib)
        return type(e.value), str(e.value).splitlines()[0]

    programs = [
        lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.zeros(2, 3), L.zeros(3)),
        lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.zeros(2, 3),
                                                                   L.zeros(2, 3),
                                                                   weight=L.ones(4)),
        lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.zeros(3), L.zeros(3),
                                                                   pos_weight=L.ones(2, 3)),
        lambda L: L.nn.functional.binary_cross_entropy_with_logits(L.zeros(3), L.zeros(3),
                                                                   reduction="avg"),
    ]
    for program in programs:
        assert err(ft, program) == err(torch, program)


# --- nn.init.orthogonal_ ------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 2)])
def test_orthogonal_is_orthogonal_and_launches_as_torch(shape: tuple[int, ...]) -> None:
    w = ft.empty(*shape, device="cuda")
    with launches() as ops:
        assert ft.nn.init.orthogonal_(w, gain=2.0) is w
    a = w.cpu().numpy().reshape(shape[0], -1).astype(np.float64)
    gram = a @ a.T if a.shape[0] <= a.shape[1] else a.T @ a  # gain^2 * I on the short side
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)
    with torch_launches(cuda=True) as theirs:
        torch.nn.init.orthogonal_(torch.empty(*shape), gain=2.0)
    assert ops == [op for op in theirs if op != "new_empty"]  # (an allocation: no kernel)


def test_orthogonal_errors_and_empty_tensors_as_torch() -> None:
    for mod in (ft, torch):
        with pytest.raises(ValueError, match=r"^Only tensors with 2 or more dimensions are "
                                             r"supported$"):
            mod.nn.init.orthogonal_(mod.empty(3))
        empty = mod.empty(0, 3)
        assert mod.nn.init.orthogonal_(empty) is empty


# --- nn.init.sparse_ ----------------------------------------------------------------------------

def test_sparse_zeroes_the_same_share_of_each_column_as_torch() -> None:
    w = ft.empty(5, 3, device="cuda")
    with launches() as ops:
        assert ft.nn.init.sparse_(w, 0.4, std=0.5) is w
    ours = (w.cpu().numpy() == 0).sum(axis=0)
    theirs = (torch.nn.init.sparse_(torch.empty(5, 3), 0.4, std=0.5).numpy() == 0).sum(axis=0)
    np.testing.assert_array_equal(ours, theirs)  # ceil(0.4 * 5) = 2 per column
    with torch_launches(cuda=True) as torch_ops:
        torch.nn.init.sparse_(torch.empty(5, 3), 0.4, std=0.5)
    # torch.randperm(rows) runs on the host (the default device): no kernel on a GPU
    assert ops == [op for op in torch_ops if op != "randperm"]
    for mod in (ft, torch):
        with pytest.raises(ValueError, match=r"^Only tensors with 2 dimensions are supported$"):
            mod.nn.init.sparse_(mod.empty(2, 2, 2), 0.5)
