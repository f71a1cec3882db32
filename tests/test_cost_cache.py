"""kernel_ns looks a heavy kernel's duration up by (op, shapes, dtypes): the lookup must give
what computing it gives, for every spec (oracle: kernel_ns(..., lookup=False), the roofline
computed afresh)."""

from __future__ import annotations

import numpy as np
import pytest

from fake_torch._simulated import _cost, _gpus


def _arrays(*shapes: tuple[int, ...], dtype: type = np.float32) -> list[np.ndarray]:
    return [np.zeros(s, dtype) for s in shapes]


CASES = [
    ("mm", _arrays((64, 32)), _arrays((64, 128), (128, 32))),
    ("mm", _arrays((64, 32), dtype=np.float16), _arrays((64, 128), (128, 32), dtype=np.float16)),
    ("bmm", _arrays((2, 3, 5)), _arrays((2, 3, 4), (2, 4, 5))),
    ("addmm", _arrays((8, 64)), _arrays((8, 64), (8, 32), (32, 64))),
    ("cudnn_convolution", _arrays((1, 4, 6, 6)), _arrays((1, 3, 8, 8), (4, 3, 3, 3))),
]


@pytest.mark.parametrize("gpu", ["H200", "A100", "L4"])
def test_looked_up_duration_is_the_computed_one(gpu: str) -> None:
    saved = _gpus._current
    try:
        _gpus.select(gpu)
        for op, outs, inputs in CASES:
            fresh = _cost.kernel_ns(op, "kernel", outs, inputs, {}, lookup=False)
            assert _cost.kernel_ns(op, "kernel", outs, inputs, {}) == fresh  # stored
            assert _cost.kernel_ns(op, "kernel", outs, inputs, {}) == fresh  # looked up
        # the same shapes with a 1.0 scalar between: the same key, the same duration
        op, outs, inputs = CASES[3]
        assert _cost.kernel_ns(op, "kernel", outs, [*inputs, 1.0], {}) == _cost.kernel_ns(
            op, "kernel", outs, inputs, {}, lookup=False)
    finally:
        _gpus._current = saved


def test_another_spec_forgets_the_durations() -> None:
    saved = _gpus._current
    op, outs, inputs = CASES[0][0], _arrays((4096, 4096)), _arrays((4096, 4096), (4096, 4096))
    try:
        _gpus.select("H200")
        h200 = _cost.kernel_ns(op, "kernel", outs, inputs, {})
        _gpus.select("L4")
        l4 = _cost.kernel_ns(op, "kernel", outs, inputs, {})
        assert l4 == _cost.kernel_ns(op, "kernel", outs, inputs, {}, lookup=False)
        assert l4 > h200  # a compute-bound matmul: the L4's peak is lower
    finally:
        _gpus._current = saved
