"""torch names HuggingFace transformers 5.x needs that no other branch added, each against
real torch CPU: torch.histc (its MoE experts count the tokens routed to each expert), the
launches CUDA torch makes for it, and nn.Module's extra state (its weight loader compares
each name with torch.nn.modules.module._EXTRA_STATE_KEY_SUFFIX)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import (
    NP_DTYPE,
    assert_raises_like_torch,
    assert_same_error,
    assert_same_tensor,
    outcome,
    to_torch,
)

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

INF, NAN = float("inf"), float("nan")


def _x(lib: Any) -> Any:
    return lib.tensor([0.0, 1, 1, 3, 5, -1, 2.5, 0.75])


HISTC: list[tuple[str, Callable[[Any], Any]]] = [
    ("given range", lambda lib: lib.histc(_x(lib), bins=4, min=0, max=3)),
    ("data range", lambda lib: lib.histc(_x(lib), bins=4)),
    ("default bins", lambda lib: lib.histc(_x(lib))),
    ("one value", lambda lib: lib.histc(lib.tensor([2.0, 2.0]), bins=4)),
    ("empty", lambda lib: lib.histc(lib.tensor([]), bins=4)),
    ("2-D", lambda lib: lib.histc(_x(lib).reshape(2, 4), bins=3)),
    ("method positional", lambda lib: _x(lib).histc(3, 0, 3)),
    ("float bounds", lambda lib: _x(lib).histc(bins=3, min=0.5, max=2.75)),
    ("NaN not counted", lambda lib: lib.histc(lib.tensor([0.0, NAN, 1]), bins=2, min=0, max=1)),
    ("inf outside", lambda lib: lib.histc(lib.tensor([1.0, INF]), bins=3, min=0, max=2)),
    ("edges in float32", lambda lib: lib.histc(lib.tensor([0.1, 0.2, 0.3, 0.30000001, 0.7]),
                                                bins=10, min=0, max=1)),
    ("float64", lambda lib: lib.histc(_x(lib).double(), bins=3)),
    ("float16", lambda lib: lib.histc(_x(lib).half(), bins=3)),
    ("bfloat16", lambda lib: lib.histc(_x(lib).bfloat16(), bins=3)),
    # errors
    ("bins 0", lambda lib: lib.histc(_x(lib), bins=0)),
    ("bins -1", lambda lib: lib.histc(_x(lib), bins=-1)),
    ("bins float", lambda lib: lib.histc(_x(lib), bins=2.5)),
    ("min above max", lambda lib: lib.histc(_x(lib), bins=4, min=3, max=0)),
    ("infinite min", lambda lib: lib.histc(_x(lib), bins=4, min=-INF, max=1)),
    ("infinite data", lambda lib: lib.histc(lib.tensor([1.0, INF]), bins=3)),
    ("int64 on cpu", lambda lib: lib.histc(lib.tensor([1, 2]), bins=2)),
    ("bool", lambda lib: lib.histc(lib.tensor([True]), bins=2)),
]


@pytest.mark.parametrize("name,program", HISTC, ids=[c[0] for c in HISTC])
def test_histc_matches_torch(name: str, program: Callable[[Any], Any]) -> None:
    theirs, their_error = outcome(lambda: program(torch))
    ours, our_error = outcome(lambda: program(ft))
    assert_same_error(our_error, their_error)
    if their_error is None:
        assert_same_tensor(ours, theirs)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(-10, 10, width=32), max_size=40), st.integers(1, 12),
       st.sampled_from([(0.0, 0.0), (-5.0, 5.0), (0.0, 1.0), (-2.5, 7.25)]),
       st.sampled_from(["float32", "float64", "float16", "bfloat16"]))
def test_histc_counts_like_torch(values: list[float], bins: int,
                                 bounds: tuple[float, float], dtype: str) -> None:
    a = np.array(values, dtype=np.float64).astype(NP_DTYPE[dtype])
    lo, hi = bounds
    theirs = torch.histc(to_torch(a), bins=bins, min=lo, max=hi)
    ours = ft.histc(ft.from_numpy(a.copy()), bins=bins, min=lo, max=hi)
    assert_same_tensor(ours, theirs)


def test_histc_on_cuda_launches_a_memset_and_one_kernel_and_takes_integers() -> None:
    ids = ft.tensor([0, 1, 1, 3, 2, 0, 7], device="cuda").int()
    with ft.LaunchCounter.expect(2, zeros=1, histc=1):
        counts = ft.histc(ids, bins=4, min=0, max=3)  # transformers' MoE call: ints on cuda
    assert counts.dtype is ft.int32 and counts.tolist() == [2, 2, 1, 1]  # 7 is outside
    floats = ids.float()
    # min == max: the data's range first, each bound read back to the host (a sync)
    with ft.LaunchCounter.expect(6, zeros=1, min=1, max=1, _local_scalar_dense=2, histc=1):
        counts = ft.histc(floats, bins=4)
    assert counts.tolist() == torch.histc(torch.tensor(floats.tolist()), bins=4).tolist()
    with ft.LaunchCounter.expect(1, zeros=1):  # an empty input: the zeros only
        ft.histc(ft.empty(0, device="cuda"), bins=3)


# --- nn.Module extra state ---------------------------------------------------------------------

def _stateful(lib: Any) -> Any:
    """A model whose `inner` keeps a counter as extra state beside its Linear."""

    class Counter(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.count = 0

        def get_extra_state(self) -> Any:
            return {"count": self.count}

        def set_extra_state(self, state: Any) -> None:
            self.count = state["count"]

    model = lib.nn.Sequential(lib.nn.Linear(2, 2), Counter())
    model[1].count = 7
    return model


def test_extra_state_key_suffix_is_torchs() -> None:
    import fake_torch.nn.modules.module as ours

    assert ours._EXTRA_STATE_KEY_SUFFIX == torch.nn.modules.module._EXTRA_STATE_KEY_SUFFIX


def test_extra_state_is_saved_and_loaded_like_torch() -> None:
    for lib in (torch, ft):
        saved = _stateful(lib).state_dict()
        assert list(saved) == ["0.weight", "0.bias", "1._extra_state", "1.lin.weight",
                               "1.lin.bias"], lib  # a module's own state before its children's
        assert saved["1._extra_state"] == {"count": 7}
        fresh = _stateful(lib)
        fresh[1].count = 0
        assert repr(fresh.load_state_dict(saved)) == "<All keys matched successfully>"
        assert fresh[1].count == 7


EXTRA_STATE_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("missing, strict", lambda lib: _stateful(lib).load_state_dict(
        {k: v for k, v in _stateful(lib).state_dict().items() if "extra" not in k})),
    ("unexpected: no override", lambda lib: lib.nn.Linear(2, 2).load_state_dict(
        {**lib.nn.Linear(2, 2).state_dict(), "_extra_state": 1})),
    ("base get_extra_state", lambda lib: lib.nn.Linear(2, 2).get_extra_state()),
    ("base set_extra_state", lambda lib: lib.nn.Linear(2, 2).set_extra_state(1)),
]


@pytest.mark.parametrize("name,program", EXTRA_STATE_ERRORS, ids=[c[0] for c in EXTRA_STATE_ERRORS])
def test_extra_state_errors_match_torch(name: str, program: Callable[[Any], Any]) -> None:
    _, theirs = outcome(lambda: program(torch))
    _, ours = outcome(lambda: program(ft))
    assert theirs is not None
    assert_same_error(ours, theirs)
    assert str(ours) == str(theirs)


def test_extra_state_missing_is_reported_when_not_strict() -> None:
    for lib in (torch, ft):  # (load_state_dict asks every module for strict loading)
        model = _stateful(lib)
        partial = {k: v for k, v in model.state_dict().items() if "extra" not in k}
        result = _stateful(lib).load_state_dict({**partial, "1._extra_stat": 0}, strict=False)
        assert result.missing_keys == ["1._extra_state"], lib
        assert result.unexpected_keys == ["1._extra_stat"], lib


# --- mm(out=) ----------------------------------------------------------------------------------

def _mm_into(lib: Any, make_out: Callable[[Any], Any]) -> tuple[Any, Any, bool]:
    """transformers' grouped_mm fallback: one expert's rows of the product into a slice."""
    a = lib.arange(12.0).reshape(3, 4) / 7
    b = lib.arange(8.0).reshape(4, 2) - 3
    whole = lib.zeros(5, 2)
    out = make_out(whole)
    result = lib.mm(a, b, out=out)
    return whole, result, result is out


MM_OUTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("row slice", lambda whole: whole[1:4]),
    ("transposed", lambda whole: whole.new_zeros(2, 3).t()),
    ("strided rows", lambda whole: whole.new_zeros(6, 2)[::2]),
    ("strided columns", lambda whole: whole.new_zeros(3, 4)[:, ::2]),
]


@pytest.mark.parametrize("name,make_out", MM_OUTS, ids=[c[0] for c in MM_OUTS])
def test_mm_out_writes_into_out_like_torch(name: str, make_out: Callable[[Any], Any]) -> None:
    whole, result, same = _mm_into(ft, make_out)
    their_whole, theirs, their_same = _mm_into(torch, make_out)
    assert same and their_same
    np.testing.assert_allclose(result.numpy(), theirs.numpy(), rtol=1e-6)
    np.testing.assert_allclose(whole.numpy(), their_whole.numpy(), rtol=1e-6)  # rows outside
    # the slice stay zero


MM_OUT_ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("float64 out", lambda lib: lib.mm(lib.ones(2, 2), lib.ones(2, 2),
                                       out=lib.empty(2, 2, dtype=lib.float64))),
    ("int64 out", lambda lib: lib.mm(lib.ones(2, 2), lib.ones(2, 2),
                                     out=lib.empty(2, 2, dtype=lib.int64))),
]


@pytest.mark.parametrize("name,program", MM_OUT_ERRORS, ids=[c[0] for c in MM_OUT_ERRORS])
def test_mm_out_errors_match_torch(name: str, program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_mm_out_resizing_is_refused_by_name() -> None:
    with pytest.raises(NotImplementedError, match=r"torch\.mm\(\.\.\., out=\): resizing"):
        ft.mm(ft.ones(2, 2), ft.ones(2, 2), out=ft.empty(3, 2))


def test_mm_out_on_cuda_writes_in_place_or_stages_as_cublas_needs() -> None:
    a, b = ft.randn(3, 4, device="cuda"), ft.randn(4, 2, device="cuda")
    whole = ft.zeros(5, 2, device="cuda")
    with ft.LaunchCounter.expect(1, mm=1):  # row- or column-major: the GEMM writes it
        ft.mm(a, b, out=whole[1:4])
    column_major, strided = ft.zeros(2, 3, device="cuda").t(), ft.zeros(3, 4, device="cuda")
    with ft.LaunchCounter.expect(1, mm=1):
        ft.mm(a, b, out=column_major)
    with ft.LaunchCounter.expect(3, clone=1, mm=1, copy_=1):  # neither: staged contiguous
        ft.mm(a, b, out=strided[:, ::2])
    np.testing.assert_allclose(strided[:, ::2].cpu().numpy(), (a @ b).cpu().numpy())
