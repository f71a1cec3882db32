"""torch.cuda.amp.GradScaler: torch.amp.GradScaler("cuda", ...), not emulated."""

from __future__ import annotations

from fake_torch.amp.grad_scaler import GradScaler as _AmpGradScaler

__all__ = ["GradScaler"]


class GradScaler(_AmpGradScaler):
    """torch.cuda.amp.GradScaler: not emulated (training only)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
