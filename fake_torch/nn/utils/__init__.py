"""torch.nn.utils: so far only `rnn.PackedSequence`, the class libraries import (fairscale)."""

from fake_torch.nn.utils import rnn as rnn

__all__ = ["rnn"]
