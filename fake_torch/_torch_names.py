"""Which names real torch has, read from _torch_names.json (written from torch itself by
`python -m fake_torch._tools._torch_names_gen`), so that fake_torch can say "torch has this,
fake_torch does not provide it" without torch installed. Loaded on first use (a missing name),
never at import."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any


@functools.cache
def _data() -> dict[str, Any]:
    text = Path(__file__).with_name("_torch_names.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@functools.cache
def _modules() -> frozenset[str]:
    return frozenset(_data()["modules"])


@functools.cache
def _attributes(module: str) -> frozenset[str]:
    return frozenset(_data()["attributes"].get(module, ()))


def torch_version() -> str:
    """The torch version the names were read from ('2.13.0')."""
    version: str = _data()["torch_version"]
    return version


def torch_has_module(name: str) -> bool:
    """`name` ('torch.fft') is a module of torch (public, or a private package right under
    torch)."""
    return name in _modules()


def torch_has_attribute(module: str, name: str) -> bool:
    """torch's module `module` ('torch') has the public attribute or submodule `name`."""
    return name in _attributes(module) or f"{module}.{name}" in _modules()


def not_provided(qualname: str) -> str:
    """The sentence that says a torch API is missing here: 'torch.fft is a torch 2.13 API that
    fake_torch does not provide'."""
    major_minor = ".".join(torch_version().split(".")[:2])
    return f"{qualname} is a torch {major_minor} API that fake_torch does not provide"
