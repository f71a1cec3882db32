"""torch.layout, torch.strided and Tensor.layout, against real torch CPU; and safetensors'
save_file / load_file (which refuses any tensor whose `layout != torch.strided`) round
tripping through fake_torch as through torch."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from oracles import assert_same_error, outcome

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

NAMES = ["strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc",
         "jagged"]


@pytest.mark.parametrize("name", NAMES)
def test_layout_names_repr_and_type_as_torch(name: str) -> None:
    ours, theirs = getattr(ft, name), getattr(torch, name)
    assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
    assert isinstance(ours, ft.layout) and isinstance(theirs, torch.layout)
    assert pickle.loads(pickle.dumps(ours)) is ours
    assert (ours == ft.strided) == (theirs == torch.strided)


def test_layout_cannot_be_instantiated_as_torch() -> None:
    _, their_error = outcome(lambda: torch.layout())
    assert their_error is not None
    _, our_error = outcome(lambda: ft.layout())
    assert_same_error(our_error, their_error)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_tensor_layout_is_strided(device: str) -> None:
    x = ft.ones(2, 3, device=device).t()  # a non-contiguous view: still strided
    assert x.layout is ft.strided
    assert torch.ones(2, 3).t().layout is torch.strided


_ROUND_TRIP = """
import json, sys
{install}
import torch
from safetensors.torch import load_file, save_file

save_file({{"w": torch.arange(6.0).reshape(2, 3), "h": torch.ones(3, dtype=torch.float16),
           "i": torch.arange(4).to(torch.int32)}}, sys.argv[1])
out = load_file(sys.argv[1], device=sys.argv[2])
print(json.dumps(sorted((k, v.tolist(), str(v.dtype), str(v.device)) for k, v in out.items())))
"""


def _round_trip(fake: bool, path: Path, device: str) -> Any:
    """safetensors' save_file then load_file in a fresh interpreter (it imports torch: there,
    fake_torch installed as torch, or the real one)."""
    code = _ROUND_TRIP.format(install="import fake_torch; fake_torch.install()" if fake else "")
    root = str(Path(__file__).resolve().parents[1])
    env = os.environ | {"PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code, str(path), device], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def torch_round_trip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, bytes]:
    """The oracle, once for every device: real torch's round trip, and the file it wrote."""
    pytest.importorskip("safetensors")
    path = tmp_path_factory.mktemp("safetensors") / "theirs.safetensors"
    return _round_trip(False, path, "cpu"), path.read_bytes()


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_safetensors_save_file_load_file_as_torch(tmp_path: Path, device: str,
                                                  torch_round_trip: tuple[Any, bytes]) -> None:
    theirs, their_bytes = torch_round_trip
    ours = _round_trip(True, tmp_path / "ours.safetensors", device)
    assert [r[:3] for r in ours] == [r[:3] for r in theirs]
    assert {r[3] for r in ours} == {"cuda:0" if device == "cuda" else "cpu"}
    # the same file format: the bytes fake_torch wrote are the bytes torch wrote
    assert (tmp_path / "ours.safetensors").read_bytes() == their_bytes
