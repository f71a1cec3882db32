"""torch.distributed._composable: the composable APIs' old home (see fsdp)."""
