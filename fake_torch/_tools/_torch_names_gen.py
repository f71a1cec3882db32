"""Regenerate fake_torch/_torch_names.json from the real torch installed here:

    python -m fake_torch._tools._torch_names_gen

It records torch's module names (every module whose dotted name has no private part after
`torch`, and the private `torch._X` packages directly under torch), and, for each torch module
that fake_torch mirrors (fake_torch's own module tree read as torch's), the public attribute
names of that torch module (after importing it) and its submodules. fake_torch._torch_names
reads the file to tell a torch API fake_torch lacks from a name torch does not have either.
Run it with the torch version fake_torch targets; the file records that version.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import warnings
from pathlib import Path

_OUT = Path(__file__).resolve().parents[1] / "_torch_names.json"


def _tree(root: str, prefix: str) -> list[str]:
    """Every module under the package folder `root`, dotted from `prefix` (read from the file
    system: nothing is imported)."""
    found = []
    for info in pkgutil.iter_modules([root]):
        name = prefix + info.name
        found.append(name)
        if info.ispkg:
            found += _tree(os.path.join(root, info.name), name + ".")
    return found


def _listed(module: str) -> bool:
    """Public torch modules, and torch's private packages one level down (torch._dynamo)."""
    parts = module.split(".")[1:]
    return all(not p.startswith("_") for p in parts) or len(parts) == 1


def _torch_owned(value: object) -> bool:
    """Not an import from outside torch (`os`, `Callable`, `dataclass` in torch's modules)."""
    if isinstance(value, type(sys)):
        return value.__name__.split(".")[0] == "torch"
    owner = getattr(value, "__module__", None)
    return not isinstance(owner, str) or owner.split(".")[0] in ("torch", "builtins")


def generate() -> dict[str, object]:
    import torch

    import fake_torch

    modules = sorted(m for m in _tree(os.path.dirname(torch.__file__), "torch.") if _listed(m))
    mirrored = ["torch"] + [t for m in _tree(os.path.dirname(fake_torch.__file__), "fake_torch.")
                            if _listed(t := "torch" + m[len("fake_torch"):])]
    attributes: dict[str, list[str]] = {}
    with warnings.catch_warnings():  # deprecated torch modules warn when imported
        warnings.simplefilter("ignore")
        for name in mirrored:
            try:
                module = importlib.import_module(name)
            except Exception:  # not a torch module, or one that needs what is not installed
                continue
            names = {n for n in dir(module) if not n.startswith("_")
                     and _torch_owned(getattr(module, n, None))}
            names |= {m[len(name) + 1:] for m in modules
                      if m.startswith(name + ".") and "." not in m[len(name) + 1:]}
            attributes[name] = sorted(names)
    return {"torch_version": torch.__version__.split("+")[0], "modules": modules,
            "attributes": attributes}


def main() -> int:
    data = generate()
    attributes = data.pop("attributes")
    assert isinstance(attributes, dict)
    lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(attributes.items())]
    text = json.dumps(data, indent=1, sort_keys=True)  # a module's names on one line each
    _OUT.write_text(text[:-2] + ',\n "attributes": {\n  ' + ",\n  ".join(lines) + "\n }\n}\n",
                    encoding="utf-8")
    print(f"wrote {_OUT}: torch {data['torch_version']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
