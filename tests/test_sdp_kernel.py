"""torch.backends.cuda.sdp_kernel (deprecated in torch: a FutureWarning) and what it builds on,
torch.nn.attention.SDPBackend / sdpa_kernel, against real torch CPU (the flags are kept on a CPU
build too); and which kernel fake_torch's SDPA then launches."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from oracles import assert_raises_like_torch, launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


def _flags(lib: Any) -> tuple[bool, ...]:
    cuda = lib.backends.cuda
    return (cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(),
            cuda.math_sdp_enabled(), cuda.cudnn_sdp_enabled())


@pytest.fixture(autouse=True)
def _restore_flags() -> Iterator[None]:
    before = {lib: _flags(lib) for lib in (torch, ft)}
    yield
    for lib, flags in before.items():
        cuda = lib.backends.cuda
        for setter, on in zip((cuda.enable_flash_sdp, cuda.enable_mem_efficient_sdp,
                               cuda.enable_math_sdp, cuda.enable_cudnn_sdp), flags, strict=True):
            setter(on)


@pytest.mark.parametrize("kwargs", [
    {}, {"enable_flash": False}, {"enable_math": False, "enable_cudnn": False},
    {"enable_mem_efficient": False, "enable_flash": False}, {"enable_flash": 0},
    {"enable_flash": False, "enable_math": False, "enable_mem_efficient": False,
     "enable_cudnn": False},
])
def test_sdp_kernel_sets_the_flags_inside_and_restores_them(kwargs: dict[str, Any]) -> None:
    seen = []
    for lib in (torch, ft):
        lib.backends.cuda.enable_math_sdp(False)  # a non-default state to come back to
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            manager = lib.backends.cuda.sdp_kernel(**kwargs)
            assert [w.category for w in caught] == [FutureWarning]  # at the call
            with manager as context:
                inside = _flags(lib)
        seen.append((context, inside, _flags(lib), str(caught[0].message)))
    assert seen[0] == seen[1]
    assert seen[1][2] == (True, True, False, True)


def test_sdp_kernel_restores_after_an_exception() -> None:
    for lib in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError), lib.backends.cuda.sdp_kernel(enable_math=False):
                raise ValueError
        assert _flags(lib) == (True, True, True, True)


def test_signatures_and_names_are_torchs() -> None:
    def params(fn: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.default, p.kind) for p in inspect.signature(fn).parameters.values()]

    assert params(ft.backends.cuda.sdp_kernel) == params(torch.backends.cuda.sdp_kernel)
    assert params(ft.nn.attention.sdpa_kernel) == params(torch.nn.attention.sdpa_kernel)
    ours, theirs = ft.nn.attention.SDPBackend, torch.nn.attention.SDPBackend
    assert [(m, int(v)) for m, v in ours.__members__.items()] == [
        (m, int(v)) for m, v in theirs.__members__.items()]
    assert repr(ours.MATH) == repr(theirs.MATH) and str(ours(1)) == str(theirs(1))
    assert (ours.MATH == 0) is (theirs.MATH == 0) is False
    assert hash(ours.FLASH_ATTENTION) == hash(theirs.FLASH_ATTENTION)


@pytest.mark.parametrize("backends", [
    "MATH", ["MATH"], ["FLASH_ATTENTION", "MATH", "FLASH_ATTENTION"], [], ["CUDNN_ATTENTION"],
])
def test_sdpa_kernel_like_torch(backends: Any) -> None:
    seen = []
    for lib in (torch, ft):
        member = lib.nn.attention.SDPBackend
        chosen = (getattr(member, backends) if isinstance(backends, str)
                  else [getattr(member, b) for b in backends])
        with lib.nn.attention.sdpa_kernel(chosen) as context:
            inside = _flags(lib)
        seen.append((context, inside, _flags(lib)))
    assert seen[0] == seen[1]


def test_sdpa_kernel_refuses_what_torch_refuses() -> None:
    def program(lib: Any) -> None:
        with lib.nn.attention.sdpa_kernel("MATH"):
            pass

    assert_raises_like_torch(program)


def test_the_chosen_backends_decide_the_kernel() -> None:
    """fp16 on cuda: flash by default; efficient without flash; the math decomposition when
    set_priority puts math first; nothing left: torch's error."""
    q = ft.ones(1, 2, 4, 8, dtype=ft.float16, device="cuda")
    sdpa = ft.nn.functional.scaled_dot_product_attention
    B = ft.nn.attention.SDPBackend

    def kernels() -> list[str]:
        with launches() as names:
            sdpa(q, q, q)
        return names

    assert kernels() == ["_scaled_dot_product_flash_attention"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ft.backends.cuda.sdp_kernel(enable_flash=False):
            assert kernels() == ["_scaled_dot_product_efficient_attention"]
    with ft.nn.attention.sdpa_kernel([B.MATH, B.FLASH_ATTENTION], set_priority=True):
        assert "bmm" in kernels()
    assert kernels() == ["_scaled_dot_product_flash_attention"]  # the order came back
    with ft.nn.attention.sdpa_kernel([B.CUDNN_ATTENTION]):
        with pytest.raises(RuntimeError, match="No available kernel"):
            sdpa(q, q, q)
