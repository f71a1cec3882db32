"""torch.cuda.amp: the deprecated cuda-only spellings of torch.amp."""

from fake_torch.cuda.amp.autocast_mode import autocast, custom_bwd, custom_fwd
from fake_torch.cuda.amp.common import amp_definitely_not_available
from fake_torch.cuda.amp.grad_scaler import GradScaler

__all__ = [
           "GradScaler",
           "amp_definitely_not_available",
           "autocast",
           "custom_bwd",
           "custom_fwd",
]
