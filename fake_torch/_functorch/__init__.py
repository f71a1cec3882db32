"""torch._functorch: AOTAutograd's settings (fake_torch has no AOTAutograd; its backends get
the traced graph directly)."""
