"""The op modules: each builds outputs and sends its numpy kernel through the one door."""

# Tensor first, whichever module is imported first: _tensor imports every op module at its
# bottom, and they (through _common) need the Tensor class already defined.
import fake_torch._tensor  # noqa: F401
