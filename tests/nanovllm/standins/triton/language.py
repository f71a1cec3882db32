"""`triton.language` as far as a kernel's definition needs it: `tl.constexpr`, the annotation
of compile-time parameters, evaluated when the `def` runs. A kernel's body (tl.load,
tl.program_id, ...) never runs in this stand-in (see triton/__init__.py), so it has no more."""

from __future__ import annotations


class constexpr:  # triton's name
    """Marks a kernel parameter as a compile-time constant (only an annotation here)."""
