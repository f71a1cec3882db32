"""torch._inductor.codecache: the cache keys other compilers fold into their own (vLLM hashes
the system and torch's source into its compile-cache key). fake_torch has no code cache; the
keys are computed as torch computes them, over fake_torch's own state, so they change when the
simulated GPU or fake_torch itself changes and stay the same from run to run."""

from __future__ import annotations

import functools
import hashlib
import json
import pathlib
from typing import Any


def _sha256_json(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode("utf-8")).hexdigest()


class CacheBase:
    """Of torch's CacheBase, the system description a cache key starts from."""

    @staticmethod
    def get_system() -> dict[str, Any]:
        """{"device": {"name"}, "version": {"triton", "cuda"}, "hash"}: the simulated GPU's
        name and the CUDA version fake_torch reports (no Triton: its version is None)."""
        from fake_torch import version
        from fake_torch.cuda import current_device, get_device_properties

        device = {"name": get_device_properties(current_device()).name}
        versions = {"triton": None, "cuda": version.cuda}
        return {"device": device, "version": versions,
                "hash": _sha256_json({"device": device, "version": versions})}


@functools.cache
def torch_key() -> bytes:
    """A digest of the library's Python source (torch hashes its own; this, fake_torch's)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.digest()


__all__ = ["CacheBase", "torch_key"]
