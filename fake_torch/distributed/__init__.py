"""torch.distributed: ranks in local processes meeting through a store; see distributed_c10d."""

import sys

import fake_torch._C
from fake_torch.distributed import _c10d_bindings
from fake_torch.distributed import distributed_c10d as distributed_c10d
from fake_torch.distributed._file_store import FileStore
from fake_torch.distributed._store import (
    DistError,
    DistNetworkError,
    DistStoreError,
    HashStore,
)
from fake_torch.distributed._tcp_store import TCPStore
from fake_torch.distributed.distributed_c10d import *  # noqa: F403
from fake_torch.distributed.distributed_c10d import __all__ as _c10d_all
from fake_torch.distributed.rendezvous import register_rendezvous_handler, rendezvous

__all__ = ["DistError", "DistNetworkError", "DistStoreError", "FileStore", "HashStore", "TCPStore",
           "is_available", "register_rendezvous_handler", "rendezvous", *_c10d_all]

# torch._C._distributed_c10d: fake_torch._C is a module, not a package, so its c10d bindings
# are registered under that name here (after the import above has made them)
fake_torch._C._distributed_c10d = _c10d_bindings  # type: ignore[attr-defined]
sys.modules["fake_torch._C._distributed_c10d"] = _c10d_bindings


def is_available() -> bool:
    """True: fake_torch stands in for a build with torch.distributed."""
    return True
