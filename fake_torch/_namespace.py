"""The torch namespace itself (the root package, fake_torch/__init__.py), for the few modules
below it that name things by their public path: the targets fx prints (`torch.add`), the `torch`
of the code fx generates, a pattern's repr, what a spawned process imports. The root package
gathers every layer's names, so no layer may import it (fake_torch/_tools/_layers.py); it
registers itself here when its import has finished."""

from __future__ import annotations

from types import ModuleType

_torch: ModuleType | None = None


def register(namespace: ModuleType) -> None:
    """Called once, at the end of fake_torch/__init__.py."""
    global _torch
    _torch = namespace


def torch() -> ModuleType:
    """`import torch`: the fake_torch package, once its import has finished."""
    if _torch is None:
        raise RuntimeError("fake_torch's namespace was used before `import fake_torch` finished")
    return _torch
