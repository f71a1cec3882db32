"""torch.autograd.graph: hooks on the tensors autograd saves for backward."""

from __future__ import annotations

from types import TracebackType

__all__ = ["save_on_cpu"]


class save_on_cpu:
    """Inside the block, torch moves the tensors autograd saves for backward to (pinned) CPU
    memory and brings them back for backward. fake_torch keeps no autograd graph, so there is
    nothing saved and nothing to move: the block runs as it would without it (same launches,
    same memory)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        self.pin_memory = pin_memory
        self.device_type = device_type

    def __enter__(self) -> save_on_cpu:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None
