"""torch._functorch._aot_autograd: AOTAutograd's internals (fake_torch has no AOTAutograd:
only the names other libraries import are here)."""
