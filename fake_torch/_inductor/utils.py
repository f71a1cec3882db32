"""torch._inductor.utils: of it, `fresh_cache` (vLLM's test conftest imports it for a fixture).
fake_torch's compiler writes no cache files; the context manager still gives the block a fresh
temporary cache folder through the environment variables torch's caches read, as torch does."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def _set_env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


@contextlib.contextmanager
def fresh_cache(cache_entries: dict[str, Any] | None = None, dir: str | None = None,
                delete: bool = True) -> Iterator[None]:
    """A clean temporary cache folder for the block: TORCHINDUCTOR_CACHE_DIR names it and
    TRITON_CACHE_DIR its `triton` subfolder; `cache_entries` (an empty dict) receives the triton
    folder's files and sizes; the folder is removed afterwards unless `delete=False`."""
    # (torch first clears the functools caches its code cache registered: fake_torch has none)
    cache_dir = tempfile.mkdtemp(dir=dir)
    with _set_env("TORCHINDUCTOR_CACHE_DIR", cache_dir):
        triton_dir = os.path.join(cache_dir, "triton")
        with _set_env("TRITON_CACHE_DIR", triton_dir):
            yield
            if isinstance(cache_entries, dict):
                assert len(cache_entries) == 0, "expected empty cache_entries dict"
                if os.path.exists(triton_dir):
                    cache_entries.update(
                        {f: os.path.getsize(os.path.join(triton_dir, f))
                         for f in os.listdir(triton_dir) if ".lock" not in f})
    if delete:
        shutil.rmtree(cache_dir)
