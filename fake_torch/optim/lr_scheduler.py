"""torch.optim.lr_scheduler: torch 2.13's schedulers with torch's constructor signatures, each
refused when constructed. A scheduler steps an optimizer's learning rate, and no optimizer can
be constructed here (they need autograd, which fake_torch does not emulate)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, NoReturn

from fake_torch.optim.optimizer import Optimizer

Lambda = Callable[[int], float] | list[Callable[[int], float]]


def _refuse(name: str) -> NoReturn:
    raise NotImplementedError(f"torch.optim.lr_scheduler.{name}: learning-rate schedulers step "
                              "an optimizer, and optimizers need autograd, which fake_torch "
                              "does not emulate")


class LRScheduler:
    """Base class of the schedulers; constructing one raises NotImplementedError."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _refuse("LRScheduler")


class LambdaLR(LRScheduler):
    """lr = initial lr * lr_lambda(epoch)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Lambda, last_epoch: int = -1) -> None:
        _refuse("LambdaLR")


class MultiplicativeLR(LRScheduler):
    """lr *= lr_lambda(epoch) each step."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Lambda, last_epoch: int = -1) -> None:
        _refuse("MultiplicativeLR")


class StepLR(LRScheduler):
    """lr *= gamma every step_size epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        _refuse("StepLR")


class MultiStepLR(LRScheduler):
    """lr *= gamma at each milestone."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        _refuse("MultiStepLR")


class ConstantLR(LRScheduler):
    """lr * factor until total_iters."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        _refuse("ConstantLR")


class LinearLR(LRScheduler):
    """lr scaled linearly from start_factor to end_factor."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        _refuse("LinearLR")


class ExponentialLR(LRScheduler):
    """lr *= gamma each epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        _refuse("ExponentialLR")


class SequentialLR(LRScheduler):
    """Schedulers one after another, switching at the milestones."""

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int], last_epoch: int = -1) -> None:
        _refuse("SequentialLR")


class PolynomialLR(LRScheduler):
    """lr decayed by a polynomial of the given power."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        _refuse("PolynomialLR")


class CosineAnnealingLR(LRScheduler):
    """lr annealed along a cosine to eta_min."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        _refuse("CosineAnnealingLR")


class ChainedScheduler(LRScheduler):
    """Several schedulers stepped together."""

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        _refuse("ChainedScheduler")


class ReduceLROnPlateau(LRScheduler):
    """lr *= factor when a metric stops improving."""

    def __init__(self, optimizer: Optimizer, mode: Literal["min", "max"] = "min",
                 factor: float = 0.1, patience: int = 10, threshold: float = 1e-4,
                 threshold_mode: Literal["rel", "abs"] = "rel", cooldown: int = 0,
                 min_lr: list[float] | float = 0, eps: float = 1e-8) -> None:
        _refuse("ReduceLROnPlateau")


class CyclicLR(LRScheduler):
    """lr cycling between base_lr and max_lr."""

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None,
                 mode: Literal["triangular", "triangular2", "exp_range"] = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: Literal["cycle", "iterations"] = "cycle",
                 cycle_momentum: bool = True, base_momentum: float = 0.8,
                 max_momentum: float = 0.9, last_epoch: int = -1) -> None:
        _refuse("CyclicLR")


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing with warm restarts."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        _refuse("CosineAnnealingWarmRestarts")


class OneCycleLR(LRScheduler):
    """The 1cycle policy."""

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: Literal["cos", "linear"] = "cos",
                 cycle_momentum: bool = True, base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        _refuse("OneCycleLR")


__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
           "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau",
           "SequentialLR", "StepLR"]
