"""torch.optim.Optimizer: refused at construction. An optimizer steps parameters along their
`.grad`, which only autograd fills in; fake_torch does not emulate autograd (no tensor ever has
a gradient), so no optimizer can do anything and none pretends to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

from fake_torch._tensor import Tensor

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]


def refuse(name: str) -> NoReturn:
    """NotImplementedError naming the optimizer API that was called."""
    raise NotImplementedError(f"torch.optim.{name}: optimizers need autograd, which fake_torch "
                              "does not emulate")


class Optimizer:
    """Base class of the optimizers; constructing one (or a subclass calling its __init__)
    raises NotImplementedError."""

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        refuse("Optimizer")


__all__ = ["Optimizer"]
