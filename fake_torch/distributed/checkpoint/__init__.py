"""torch.distributed.checkpoint: only hf_storage's names (see there)."""
