"""torch.fx.experimental: symbolic shapes (the names torch.compile's users read) and the
symbolic-shapes config (`_config`, reached as an attribute, as in torch). Importing it makes
`torch.ops.aten.<name>.<overload>` answer the overloads make_fx records (`_aten_overloads`)."""

from fake_torch.fx.experimental import _aten_overloads as _aten_overloads
from fake_torch.fx.experimental import _config as _config
