"""torch.empty_strided against real torch."""

from __future__ import annotations

from typing import Any

import pytest

import fake_torch as ft


def test_empty_strided_matches_torch() -> None:
    """torch.empty_strided: the strides as given, storage just large enough (gaps included),
    the size/stride mismatch refused with torch's message."""
    torch = pytest.importorskip("torch")

    def program(L: Any) -> list[Any]:
        out: list[Any] = []
        for size, stride in [((2, 3), (1, 2)), ((2, 3), (8, 2)), ((0, 4), (4, 1)), ((), ())]:
            t = L.empty_strided(size, stride, dtype=L.float16)
            out.append((tuple(t.shape), t.stride(), t.untyped_storage().nbytes(), str(t.dtype)))
        try:
            L.empty_strided((2, 3), (1,))
        except RuntimeError as e:
            out.append(str(e))
        return out

    assert program(ft) == program(torch)
