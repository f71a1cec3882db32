"""What torch reports about how it was built: torch.compiled_with_cxx11_abi()."""

from __future__ import annotations

from fake_torch import _C


def compiled_with_cxx11_abi() -> bool:
    """Whether torch was built with _GLIBCXX_USE_CXX11_ABI=1 (torch 2.13's Linux wheels were:
    True), which extension builds read to pick their ABI flag."""
    return _C._GLIBCXX_USE_CXX11_ABI
