"""torch._inductor.runtime: what compiled code runs with (Triton kernel launchers)."""
