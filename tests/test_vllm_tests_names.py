"""Names vLLM's own test files reach through their imports (tests/test_vllm_compile_tests.py),
against real torch 2.13 CPU: torch._inductor.utils.fresh_cache (vLLM's tests/conftest.py) and
torch.ops.load_library (vLLM's DeepGEMM import; refused here, as a compiled extension)."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

import pytest

import fake_torch as ft
from fake_torch._inductor import utils as ft_utils


def _fresh_cache_run(fresh_cache: Any, tmp: Path, delete: bool) -> dict[str, Any]:
    """What the block sees and what is left afterwards, in a form both libraries can match."""
    before = {k: os.environ.get(k) for k in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    entries: dict[str, int] = {}
    with fresh_cache(cache_entries=entries, dir=str(tmp), delete=delete):
        cache = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
        triton = Path(os.environ["TRITON_CACHE_DIR"])
        inside = {"in_dir": cache.parent == tmp, "exists": cache.is_dir(),
                  "triton": triton == cache / "triton", "triton_exists": triton.exists()}
        triton.mkdir()
        (triton / "kernel.bin").write_bytes(b"abc")
        (triton / "kernel.lock").write_bytes(b"")
    after = {k: os.environ.get(k) for k in before}
    return {"inside": inside, "entries": entries, "restored": after == before,
            "kept": cache.exists()}


@pytest.mark.parametrize("delete", [True, False])
def test_fresh_cache_is_torchs(tmp_path: Path, delete: bool) -> None:
    pytest.importorskip("torch")
    from torch._inductor import utils as torch_utils

    for name in ("ft", "torch"):
        (tmp_path / name).mkdir()
    ours = _fresh_cache_run(ft_utils.fresh_cache, tmp_path / "ft", delete)
    theirs = _fresh_cache_run(torch_utils.fresh_cache, tmp_path / "torch", delete)
    assert ours == theirs
    assert ours["entries"] == {"kernel.bin": 3} and ours["kept"] is (not delete)
    assert list(inspect.signature(ft_utils.fresh_cache).parameters) == \
        list(inspect.signature(torch_utils.fresh_cache).parameters)


def test_fresh_cache_refuses_a_filled_entries_dict(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from torch._inductor import utils as torch_utils

    for utils in (ft_utils, torch_utils):
        with pytest.raises(AssertionError, match="expected empty cache_entries dict"):
            with utils.fresh_cache(cache_entries={"x": 1}, dir=str(tmp_path)):
                pass


def test_load_library_is_refused_by_name(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    assert callable(torch.ops.load_library) and torch.ops.loaded_libraries == set()
    assert ft.ops.loaded_libraries == set()
    library = tmp_path / "_C.abi3.so"
    library.write_bytes(b"")
    with pytest.raises(NotImplementedError, match=r"^torch\.ops\.load_library is not emulated"):
        ft.ops.load_library(str(library))
    assert ft.ops.loaded_libraries == set()
