"""torch.amp.GradScaler: loss scaling for mixed-precision training. It scales a loss before
backward and unscales gradients before an optimizer step; fake_torch emulates neither
autograd nor optimizers, so constructing one says so."""

from __future__ import annotations

__all__ = ["GradScaler"]


class GradScaler:
    """torch.amp.GradScaler: not emulated (training only)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        raise NotImplementedError(
            "torch.amp.GradScaler: gradient scaling needs autograd (backward) and optimizers, "
            "which fake_torch does not emulate; autocast for inference is supported")
