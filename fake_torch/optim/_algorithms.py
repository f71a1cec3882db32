"""torch 2.13's optimizers, each with torch's constructor signature (so a misspelled keyword
is torch's TypeError) and each refused when constructed: see fake_torch/optim/optimizer.py."""

from __future__ import annotations

from fake_torch._tensor import Tensor
from fake_torch.optim.optimizer import Optimizer, ParamsT, refuse

Betas = tuple[float | Tensor, float | Tensor]


class SGD(Optimizer):
    """Stochastic gradient descent (momentum, Nesterov, weight decay)."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0,
                 nesterov: bool = False, *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        refuse("SGD")


class Adam(Optimizer):
    """Adam: moment estimates of the gradient and its square."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, betas: Betas = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        refuse("Adam")


class AdamW(Optimizer):
    """Adam with decoupled weight decay."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, betas: Betas = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        refuse("AdamW")


class Adafactor(Optimizer):
    """Adafactor: factored second moments."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        refuse("Adafactor")


class Adagrad(Optimizer):
    """Adagrad: per-parameter rates from the sum of squared gradients."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        refuse("Adagrad")


class Adadelta(Optimizer):
    """Adadelta: Adagrad with running averages instead of sums."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        refuse("Adadelta")


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        refuse("Adamax")


class ASGD(Optimizer):
    """Averaged stochastic gradient descent."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        refuse("ASGD")


class NAdam(Optimizer):
    """Adam with Nesterov momentum."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        refuse("NAdam")


class RAdam(Optimizer):
    """Adam with the variance of its adaptive rate rectified."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        refuse("RAdam")


class RMSprop(Optimizer):
    """RMSprop: a running average of squared gradients."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        refuse("RMSprop")


class Rprop(Optimizer):
    """Resilient backpropagation: per-weight steps from gradient signs."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        refuse("Rprop")


class LBFGS(Optimizer):
    """Limited-memory BFGS (a closure re-evaluates the loss)."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        refuse("LBFGS")


class SparseAdam(Optimizer):
    """Adam for sparse gradients."""

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        refuse("SparseAdam")


class Muon(Optimizer):
    """Muon: orthogonalised momentum for 2-D parameters."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        refuse("Muon")


__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW",
           "Adamax", "Muon", "NAdam", "RAdam", "RMSprop", "Rprop", "SparseAdam"]
