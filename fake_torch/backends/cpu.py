"""torch.backends.cpu: the CPU kernels' vector capability."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """"DEFAULT": fake_torch has no vectorised ATen CPU kernels (numpy picks its own SIMD)."""
    return "DEFAULT"
