"""torch.fx.experimental: symbolic shapes (the names torch.compile's users read)."""
