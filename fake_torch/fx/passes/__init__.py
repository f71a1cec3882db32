"""torch.fx.passes: transformations of FX graphs (split_module)."""

from fake_torch.fx.passes import split_module

__all__ = ["split_module"]
