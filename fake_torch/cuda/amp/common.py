"""torch.cuda.amp.common."""

from __future__ import annotations

__all__ = ["amp_definitely_not_available"]


def amp_definitely_not_available() -> bool:
    """False: the simulated cuda device is always there."""
    return False
