"""torch.backends.mha: whether nn.MultiheadAttention (and nn.TransformerEncoder) may take the
fused fast path (torch._native_multi_head_attention) when its conditions hold."""

_is_fastpath_enabled: bool = True


def get_fastpath_enabled() -> bool:
    """Whether the fast path is enabled (it still runs only where its conditions hold)."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    """Enable or disable the fast path."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value


__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]
