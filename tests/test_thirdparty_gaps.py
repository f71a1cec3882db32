"""Small gaps that third-party codebases hit (tests/test_thirdparty.py), each against real torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _fresh(code: str, fake: bool) -> str:
    """Run code in a fresh interpreter (import side effects), fake_torch installed or not."""
    prelude = "import fake_torch; fake_torch.install()\n" if fake else ""
    proc = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, check=True)
    return proc.stdout.strip()


def test_importing_dynamo_makes_functorch_config_an_attribute() -> None:
    # gpt-fast imports torch._dynamo.config and torch._inductor.config, then sets
    # torch._functorch.config.enable_autograd_cache: it is there because torch._dynamo loads it
    pytest.importorskip("torch")
    code = ("import torch\n"
            "import torch._dynamo.config\n"
            "print(torch._functorch.config.enable_autograd_cache)")
    assert _fresh(code, fake=True) == _fresh(code, fake=False) == "True"


def test_tensor_split_method_names_its_size_split_size() -> None:
    # mamba-minimal: x.split(split_size=[d, d], dim=-1); torch.split's keyword differs
    torch = pytest.importorskip("torch")
    import fake_torch

    for lib in (torch, fake_torch):
        x = lib.arange(6.0)
        assert [p.tolist() for p in x.split(split_size=[2, 4], dim=-1)] == [[0, 1], [2, 3, 4, 5]]
        assert [p.tolist() for p in x.split(split_size=4)] == [[0, 1, 2, 3], [4, 5]]
        assert [p.tolist() for p in lib.split(x, split_size_or_sections=[5, 1])] == \
               [[0, 1, 2, 3, 4], [5]]
        with pytest.raises(TypeError, match="unexpected keyword argument 'split_size'"):
            lib.split(x, split_size=[2, 4])
        with pytest.raises(TypeError, match="keyword argument 'split_size_or_sections'"):
            x.split(split_size_or_sections=[2, 4])


def test_utils_data_dataset_bases_subclass_as_in_torch() -> None:
    # llama2.c's tinystories.py subclasses torch.utils.data.IterableDataset at import
    torch = pytest.importorskip("torch")
    import fake_torch

    for lib in (torch, fake_torch):
        class Stream(lib.utils.data.IterableDataset):  # type: ignore[misc,name-defined]
            def __iter__(self):  # type: ignore[no-untyped-def]
                yield from range(3)

        class NoIter(lib.utils.data.IterableDataset):  # type: ignore[misc,name-defined]
            pass

        class Table(lib.utils.data.Dataset):  # type: ignore[misc,name-defined]
            pass

        assert list(Stream()) == [0, 1, 2]
        with pytest.raises(TypeError, match="Can't instantiate abstract class NoIter"):
            NoIter()
        with pytest.raises(NotImplementedError,
                           match="Subclasses of Dataset should implement __getitem__"):
            Table()[0]
        assert lib.utils.data.get_worker_info() is None
    with pytest.raises(NotImplementedError, match=r"torch\.utils\.data\.DataLoader"):
        fake_torch.utils.data.DataLoader(Stream())
