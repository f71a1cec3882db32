"""torch.distributed for one process (world_size 1); see distributed_c10d."""

from fake_torch.distributed import distributed_c10d as distributed_c10d
from fake_torch.distributed.distributed_c10d import *  # noqa: F403
from fake_torch.distributed.distributed_c10d import __all__ as _c10d_all

__all__ = ["is_available", *_c10d_all]


def is_available() -> bool:
    """True: fake_torch stands in for a build with torch.distributed."""
    return True
