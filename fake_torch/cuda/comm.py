"""torch.cuda.comm: copies between several GPUs. fake_torch simulates one device, so each
function refuses by name (fairscale imports the module)."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["broadcast", "broadcast_coalesced", "gather", "reduce_add", "reduce_add_coalesced",
           "scatter"]


def _refuse(name: str) -> NoReturn:
    raise NotImplementedError(f"torch.cuda.comm.{name} is not emulated by fake_torch (it "
                              "simulates one device)")


def broadcast(*args: Any, **kwargs: Any) -> NoReturn:
    _refuse("broadcast")


def broadcast_coalesced(*args: Any, **kwargs: Any) -> NoReturn:
    _refuse("broadcast_coalesced")


def gather(*args: Any, **kwargs: Any) -> NoReturn:
    _refuse("gather")


def reduce_add(*args: Any, **kwargs: Any) -> NoReturn:
    _refuse("reduce_add")


def reduce_add_coalesced(*args: Any, **kwargs: Any) -> NoReturn:
    _refuse("reduce_add_coalesced")


def scatter(*args: Any, **kwargs: Any) -> NoReturn:
    _refuse("scatter")
