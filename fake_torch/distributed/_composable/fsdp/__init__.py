"""torch.distributed._composable.fsdp: the old import path of torch.distributed.fsdp's FSDP2
names."""

from fake_torch.distributed.fsdp import (
    CPUOffloadPolicy as CPUOffloadPolicy,
)
from fake_torch.distributed.fsdp import (
    MixedPrecisionPolicy as MixedPrecisionPolicy,
)
from fake_torch.distributed.fsdp import (
    OffloadPolicy as OffloadPolicy,
)
from fake_torch.distributed.fsdp import (
    fully_shard as fully_shard,
)
