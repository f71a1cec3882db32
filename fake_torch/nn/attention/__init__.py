"""torch.nn.attention: choosing scaled_dot_product_attention's backends (SDPBackend,
sdpa_kernel: fake_torch/backends/_sdp.py) and the flex_attention module (see there)."""

from fake_torch.backends._sdp import SDPBackend, sdpa_kernel

__all__ = ["SDPBackend", "sdpa_kernel"]
