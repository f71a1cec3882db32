"""repr/str of tensors against real torch's printer, character for character.

cpu tensors: our repr must equal torch's repr of the same values. cuda tensors: real torch (a CPU
build) cannot make one, so the expected text is torch's own printer body plus torch's own suffix
layout (`torch._tensor_str._add_suffixes`) with `device='cuda:0'` first, as torch prints it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from oracles import NoHostSync

import fake_torch as ft
from fake_torch._repr import get_printoptions, printoptions, set_printoptions
from fake_torch._simulated import _dispatch

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

_rng = np.random.default_rng(1234)
_INF, _NAN = float("inf"), float("nan")

# (label, numpy values, dtype name)
CASES: list[tuple[str, Any, str]] = [
    ("fixed", [1.5, 2.0, 3.0], "float32"),
    ("integral floats", [1.0, 2.0, 3.0], "float32"),
    ("negative integral", [-1.0, 20.0, 300.0], "float32"),
    ("negatives align", [-1.25, 2.5, -30.125], "float32"),
    ("small -> sci", [1e-5, 1.0], "float32"),
    ("large -> sci", [1e9, 1.0], "float32"),
    ("wide ratio -> sci", [1.0, 2000.5], "float32"),
    ("integral sci", [1.0, 1e10], "float32"),
    ("nan inf", [_NAN, _INF, -_INF, 1.5], "float32"),
    ("nan inf integral", [_NAN, _INF, 2.0], "float32"),
    ("all nonfinite", [_NAN, _INF], "float32"),
    ("zeros", [0.0, 0.0], "float32"),
    ("negative zero", [-0.0, 1.0], "float32"),
    ("0-d float", 2.5, "float32"),
    ("0-d negative zero", -0.0, "float32"),
    ("0-d tiny", 1e-10, "float32"),
    ("0-d int", -7, "int64"),
    ("0-d bool", True, "bool"),
    ("0-d float16", 0.1, "float16"),
    ("float64", [0.1, 0.2, 1.0 / 3.0], "float64"),
    ("float16", [0.1, -65504.0, 3.0], "float16"),
    ("bfloat16", [0.1, 1.0 / 3.0, -2.5], "bfloat16"),
    ("int64", [1, -20, 300], "int64"),
    ("int32", [1, -20, 300], "int32"),
    ("int8", [-128, 0, 127], "int8"),
    ("uint8", [0, 7, 255], "uint8"),
    ("bool", [True, False, True], "bool"),
    ("bool 2-d", [[True, False], [False, False]], "bool"),
    ("int 2-d", [[1, 2, 3], [40, 50, 60]], "int64"),
    ("3-d", _rng.standard_normal((2, 3, 4)), "float32"),
    ("4-d", _rng.standard_normal((2, 2, 2, 2)), "float32"),
    ("wraps 1-d", _rng.standard_normal(30), "float32"),
    ("wraps 2-d", _rng.standard_normal((3, 30)), "float32"),
    ("wraps ints", np.arange(-5, 45) * 1_000_003, "int64"),
    ("summarized 1-d", np.arange(1001.0), "float32"),
    ("summarized 2-d", _rng.standard_normal((100, 100)), "float32"),
    ("summarized 3-d int", np.arange(2000).reshape(20, 10, 10), "int64"),
    ("summarized narrow rows", _rng.standard_normal((500, 3)), "float32"),
    ("summarized bool", _rng.random(1500) > 0.5, "bool"),
    ("summarized float16", _rng.standard_normal(1200), "float16"),
    ("exactly threshold", np.arange(1000.0), "float32"),
    ("random fixed-width", _rng.uniform(-100, 100, 12), "float32"),
    ("empty 1-d", np.zeros(0), "float32"),
    ("empty 2-d", np.zeros((2, 0)), "float32"),
    ("empty int", np.zeros(0), "int64"),
    ("empty bool", np.zeros((0, 3)), "bool"),
    ("empty float64", np.zeros((0, 3)), "float64"),
]


def _pair(values: Any, dtype_name: str) -> tuple[ft.Tensor, Any]:
    """The same values as a fake_torch cpu tensor and a real torch tensor."""
    a = np.asarray(values, dtype=np.float64 if dtype_name != "bool" else np.bool_)
    if dtype_name == "bfloat16":  # both round float32 -> bfloat16 to nearest even
        ours = ft.from_numpy(a.astype(np.float32).astype(ml_dtypes.bfloat16))
        theirs = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
        return ours, theirs
    host = a.astype(dtype_name)
    return ft.from_numpy(host.copy()), torch.from_numpy(host.copy())


@pytest.fixture(autouse=True)
def _default_print_options() -> Iterator[None]:
    yield
    set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize(("label", "values", "dtype_name"), CASES, ids=[c[0] for c in CASES])
def test_cpu_repr_equals_torch(label: str, values: Any, dtype_name: str) -> None:
    ours, theirs = _pair(values, dtype_name)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


def _torch_cuda_repr(t: Any) -> str:
    """What real torch prints for `t` living on cuda:0 (same body, device suffix first)."""
    ts = torch._tensor_str
    body = ts._tensor_str(t, 7) if t.numel() else "[]"
    suffixes = ["device='cuda:0'"]
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype != torch.get_default_dtype():
            suffixes.append(f"dtype={t.dtype}")
    elif t.dtype not in (torch.get_default_dtype(), torch.int64, torch.bool):
        suffixes.append(f"dtype={t.dtype}")
    return str(ts._add_suffixes("tensor(" + body, suffixes, 7, force_newline=False))


@pytest.mark.parametrize("label", ["fixed", "float16", "int32", "bool 2-d", "wraps 2-d",
                                   "summarized 2-d", "empty int", "empty 2-d", "0-d float"])
def test_cuda_repr_body_and_suffix(label: str) -> None:
    _, values, dtype_name = next(c for c in CASES if c[0] == label)
    ours, theirs = _pair(values, dtype_name)
    on_cuda = ft.tensor(ours.numpy(), device="cuda")
    text = repr(on_cuda)
    assert text == _torch_cuda_repr(theirs)
    assert "device='cuda:0'" in text


def test_long_suffixes_wrap_like_torch() -> None:
    ours, theirs = _pair(_rng.standard_normal(7), "float16")  # 7 * 9 chars: suffix wraps
    assert repr(ft.tensor(ours.numpy(), device="cuda")) == _torch_cuda_repr(theirs)


def test_requires_grad_suffix() -> None:
    assert repr(ft.ones(2, requires_grad=True)) == repr(torch.ones(2, requires_grad=True))
    assert repr(ft.ones(2, dtype=ft.float64, requires_grad=True)) == \
        repr(torch.ones(2, dtype=torch.float64, requires_grad=True))


def test_default_dtype_suffix_follows_set_default_dtype() -> None:
    ours, theirs = _pair([0.5, 1.5], "float64")
    ours32, theirs32 = _pair([0.5, 1.5], "float32")
    ft.set_default_dtype(ft.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert repr(ours) == repr(theirs)
        assert repr(ours32) == repr(theirs32)
    finally:
        ft.set_default_dtype(ft.float32)
        torch.set_default_dtype(torch.float32)


OPTIONS: list[dict[str, Any]] = [
    {"precision": 2},
    {"precision": 8},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"linewidth": 40},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
    {"edgeitems": 0, "threshold": 3},
]


@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
@pytest.mark.parametrize("label", ["fixed", "small -> sci", "3-d", "wraps 1-d", "summarized 2-d",
                                   "wraps ints", "integral floats"])
def test_printoptions_match_torch(options: dict[str, Any], label: str) -> None:
    _, values, dtype_name = next(c for c in CASES if c[0] == label)
    ours, theirs = _pair(values, dtype_name)
    set_printoptions(**options)
    torch.set_printoptions(**options)
    assert repr(ours) == repr(theirs)


def test_printoptions_context_restores() -> None:
    before = get_printoptions()
    with printoptions(precision=1):
        assert repr(ft.tensor([1.25])) == "tensor([1.2])"
    assert get_printoptions() == before
    assert repr(ft.tensor([1.25])) == "tensor([1.2500])"


def test_printing_cuda_is_a_host_sync_and_launches_nothing() -> None:
    t = ft.tensor([1.0, 2.0], device="cuda")
    ft.LaunchCounter.reset()
    assert repr(t).endswith("device='cuda:0')")
    assert ft.LaunchCounter.n == 0
    with _dispatch.push_mode(NoHostSync()):
        assert repr(ft.tensor([1.0]).numpy()) is not None  # cpu: no sync needed
        with pytest.raises(RuntimeError, match="host sync: repr"):
            repr(t)


def test_top_level_set_printoptions() -> None:
    """torch.set_printoptions at the package top level (fake_torch/__init__.py imports it)."""
    assert ft.set_printoptions is set_printoptions  # type: ignore[attr-defined]


@pytest.mark.parametrize(("value", "spec"), [(1.5, ".2f"), (1.5, ""), (3, "d"), (3, ">4"),
                                             (True, ""), ([1.5], ""), ([[1, 2]], "")])
def test_format_is_torchs(value: Any, spec: str) -> None:
    """Tensor.__format__: a 0-d tensor formats its element (`f"{loss:.3f}"`), any other tensor
    as object does (its str, for an empty spec only)."""
    assert format(ft.tensor(value), spec) == format(torch.tensor(value), spec)
    assert f"{ft.nn.Parameter(ft.tensor(1.5))}" == f"{torch.nn.Parameter(torch.tensor(1.5))}"


def test_format_with_a_spec_of_a_tensor_of_many_elements_raises_torchs_error() -> None:
    for lib in (ft, torch):
        with pytest.raises(TypeError, match=r"^unsupported format string passed to "
                                            r"Tensor\.__format__$"):
            format(lib.tensor([1.5]), ".2f")
