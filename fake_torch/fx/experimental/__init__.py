"""torch.fx.experimental: symbolic shapes (the names torch.compile's users read) and the
symbolic-shapes config (`_config`, reached as an attribute, as in torch)."""

from fake_torch.fx.experimental import _config as _config
