# The native door (fake_torch/_simulated/_native_launch.c); fake_torch/_simulated/_dispatch.py
# `launch`, the pure Python it stands for, is its documentation.
from typing import Any

FOLD_AT: int

class Door:
    __wrapped__: Any
    def __init__(self, launch: Any, dispatch: dict[str, Any], machine: dict[str, Any],
                 cost: dict[str, Any], gpus: dict[str, Any], counter: type,
                 ndarray: type) -> None: ...
    def __call__(self, op: str, kernel: Any, outs: tuple[Any, ...], inputs: tuple[Any, ...],
                 params: dict[str, Any] | None = ..., *, on_cuda: bool, kind: str = ...,
                 source: Any = ...) -> None: ...
