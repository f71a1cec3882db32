"""torch.cuda.amp.autocast / custom_fwd / custom_bwd: torch.amp's, for "cuda", each with
torch's FutureWarning naming its replacement."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from typing_extensions import deprecated

from fake_torch import amp
from fake_torch._dtype import dtype, float16

__all__ = ["autocast", "custom_bwd", "custom_fwd"]

F = TypeVar("F", bound=Callable[..., Any])


@deprecated("`torch.cuda.amp.autocast(args...)` is deprecated. "
            "Please use `torch.amp.autocast('cuda', args...)` instead.", category=FutureWarning)
class autocast(amp.autocast):
    """torch.autocast("cuda", ...)."""

    if sys.version_info < (3, 13):  # `deprecated` hides the signature of __init__ before 3.13

        def __new__(cls, enabled: bool = True, dtype: dtype = float16,
                    cache_enabled: bool = True) -> autocast:
            return super().__new__(cls)

        def __init_subclass__(cls) -> None:
            pass

    def __init__(self, enabled: bool = True, dtype: dtype = float16,
                 cache_enabled: bool = True) -> None:
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


@deprecated("`torch.cuda.amp.custom_fwd(args...)` is deprecated. "
            "Please use `torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
            category=FutureWarning)
def custom_fwd(fwd: Callable[..., Any] | None = None, *,
               cast_inputs: dtype | None = None) -> Any:
    return functools.partial(amp.custom_fwd, device_type="cuda")(fwd=fwd,
                                                                 cast_inputs=cast_inputs)


@deprecated("`torch.cuda.amp.custom_bwd(args...)` is deprecated. "
            "Please use `torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
            category=FutureWarning)
def custom_bwd(bwd: Callable[..., Any]) -> Any:
    return functools.partial(amp.custom_bwd, device_type="cuda")(bwd)
