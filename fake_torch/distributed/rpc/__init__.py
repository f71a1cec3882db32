"""torch.distributed.rpc: remote calls between processes. fake_torch runs one process and
emulates no RPC: is_available() is False, as on a torch build without it, so code that asks
first takes its other path (fairscale imports the module)."""

__all__ = ["is_available"]


def is_available() -> bool:
    return False
