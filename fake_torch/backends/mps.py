"""torch.backends.mps: Apple's Metal backend, which fake_torch's simulated CUDA build lacks."""

__all__ = ["is_available", "is_built"]


def is_built() -> bool:
    """False: a CUDA build has no MPS support."""
    return False


def is_available() -> bool:
    """False: no MPS device."""
    return False
