"""torch.distributed.constants: the default process-group timeouts, as a CUDA build of torch
2.13 has them (c10d's kProcessGroupDefaultTimeout, 30 minutes; ProcessGroupNCCL's
kProcessGroupNCCLDefaultTimeout, 10 minutes)."""

from __future__ import annotations

from datetime import timedelta

__all__ = ["default_pg_nccl_timeout", "default_pg_timeout"]

default_pg_timeout: timedelta = timedelta(minutes=30)
default_pg_nccl_timeout: timedelta | None = timedelta(minutes=10)
