"""torch.amp: autocast (mixed precision for inference) and GradScaler (training: not
emulated)."""

from fake_torch.amp.autocast_mode import _enter_autocast as _enter_autocast
from fake_torch.amp.autocast_mode import _exit_autocast as _exit_autocast
from fake_torch.amp.autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    is_autocast_available,
)
from fake_torch.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
