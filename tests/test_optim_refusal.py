"""torch.optim and torch.optim.lr_scheduler: every optimizer and scheduler of torch 2.13 is there
with torch's constructor signature (tests/test_api_conformance.py compares them), and
constructing one raises NotImplementedError naming the API: optimizers need autograd, which
fake_torch does not emulate. Against real torch (CPU build): the names, and a misspelled keyword
is the same TypeError kind in both."""

from __future__ import annotations

import inspect

import pytest

import fake_torch as ft
from fake_torch import optim

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

OPTIMIZERS = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
              "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam"]


def test_every_torch_optimizer_class_is_present() -> None:
    theirs = {n for n in torch.optim.__all__ if inspect.isclass(getattr(torch.optim, n))}
    assert theirs == set(OPTIMIZERS)
    assert ft.optim is optim and set(OPTIMIZERS) <= set(optim.__all__)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_constructing_an_optimizer_raises_naming_it(name: str) -> None:
    params = list(ft.nn.Linear(2, 2).parameters())
    cls = getattr(optim, name)
    args = (params, {}) if name == "Optimizer" else (params,)
    with pytest.raises(NotImplementedError) as info:
        cls(*args)
    assert str(info.value) == (f"torch.optim.{name}: optimizers need autograd, which "
                               "fake_torch does not emulate")
    assert issubclass(cls, optim.Optimizer)


def test_the_tutorials_adam_call_is_refused_before_anything_runs() -> None:
    model = ft.nn.Linear(4, 2)
    with pytest.raises(NotImplementedError, match=r"^torch\.optim\.Adam: "):
        ft.optim.Adam(model.parameters())


def test_a_subclass_calling_optimizer_init_is_refused() -> None:
    class Mine(optim.Optimizer):
        def __init__(self, params: optim.optimizer.ParamsT) -> None:
            super().__init__(params, {"lr": 0.1})

    with pytest.raises(NotImplementedError, match=r"^torch\.optim\.Optimizer: "):
        Mine([])


def test_a_wrong_keyword_is_torchs_type_error_first() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'lr_rate'"):
        torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr_rate=0.1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'lr_rate'"):
        optim.SGD([], lr_rate=0.1)  # type: ignore[call-arg]


@pytest.mark.parametrize("name", torch.optim.lr_scheduler.__all__)
def test_every_scheduler_is_present_and_refused(name: str) -> None:
    cls = getattr(optim.lr_scheduler, name)
    params = inspect.signature(cls).parameters
    args = [None] * sum(p.default is inspect.Parameter.empty for p in params.values())
    with pytest.raises(NotImplementedError) as info:
        cls(*args)
    assert str(info.value).startswith(f"torch.optim.lr_scheduler.{name}: ")
    assert "autograd" in str(info.value)
