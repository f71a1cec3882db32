"""The sanitizer: each silent CUDA-graph hazard is an error that names the fix when it is on
(`torch.cuda._sanitizer.enable_cuda_sanitizer()` or TORCH_CUDA_SANITIZER=1), and off by default
the same code is silent — and wrong exactly where a GPU would be wrong.

Also `check_input_liveness=True`, torch's own check for a freed captured input, which works
without the sanitizer and raises torch's text.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fake_torch as torch
from fake_torch.cuda import CUDAGraph, _sanitizer

pytestmark = pytest.mark.usefixtures("fresh_device")

NEVER_REPLAYED = "Call g.replay() before reading the graph's outputs."
DEAD_INPUT = "CUDA graph replay detected 1 dead tensor(s)."
COPY_IN_PLACE = "copy new values into it with static_input.copy_(new) instead of rebinding it."
CLOBBERED = "replay them in the order they were captured, or .clone() the output"


def _np(t: torch.Tensor) -> np.ndarray:
    return t.numpy(force=True)


# --- 1. reading a capture's output before any replay ------------------------------------------

def _capture_double(x: torch.Tensor) -> tuple[CUDAGraph, torch.Tensor]:
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
    return g, y


def test_reading_before_replay_raises_with_the_fix(sanitizer: None) -> None:
    x = torch.ones(3, device="cuda")  # kept alive: the graph reads it at every replay
    g, y = _capture_double(x)
    with pytest.raises(RuntimeError, match=r"^fake_torch sanitizer: .*never replayed") as info:
        y.tolist()
    assert NEVER_REPLAYED in str(info.value)
    with pytest.raises(RuntimeError, match="never replayed"):  # through an eager kernel too
        (y + 1).sum().item()
    g.replay()
    assert y.tolist() == [2.0, 2.0, 2.0]
    assert (y + 1).sum().item() == 9.0


def test_reading_before_replay_is_silent_garbage_by_default(no_sanitizer: None) -> None:
    _, y = _capture_double(torch.ones(3, device="cuda"))
    assert np.isnan(_np(y)).all()  # what a GPU gives: whatever the memory held
    assert np.isnan((y + 1).sum().item())


def test_turning_the_sanitizer_on_after_capture_still_catches_the_read() -> None:
    was_on = _sanitizer.is_enabled()
    _sanitizer.disable_cuda_sanitizer()
    _, y = _capture_double(torch.ones(3, device="cuda"))
    _sanitizer.enable_cuda_sanitizer()
    try:
        with pytest.raises(RuntimeError, match="never replayed"):
            _np(y)
    finally:
        if not was_on:
            _sanitizer.disable_cuda_sanitizer()


# --- 2. a captured input freed since capture --------------------------------------------------

def _capture_on_a_temporary() -> tuple[CUDAGraph, torch.Tensor, int]:
    tmp = torch.full((4,), 1.0, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = tmp * 2
    address = tmp.data_ptr()
    del tmp  # the graph still reads this address at every replay
    return g, y, address


def test_a_freed_captured_input_raises_with_the_fix(sanitizer: None) -> None:
    g, _, _ = _capture_on_a_temporary()
    with pytest.raises(RuntimeError, match="^" + re.escape(DEAD_INPUT)) as info:
        g.replay()
    assert COPY_IN_PLACE in str(info.value)


def test_a_freed_captured_input_silently_reads_its_successor_by_default(
        no_sanitizer: None) -> None:
    g, y, address = _capture_on_a_temporary()
    other = torch.full((4,), 7.0, device="cuda")  # the cache hands out the freed block again
    assert other.data_ptr() == address
    g.replay()
    np.testing.assert_array_equal(_np(y), [14.0] * 4)  # computed on someone else's tensor


def test_check_input_liveness_raises_torchs_error_without_the_sanitizer(
        no_sanitizer: None) -> None:
    tmp = torch.full((4,), 1.0, device="cuda")
    kept = torch.full((4,), 2.0, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g, check_input_liveness=True):
        y = tmp * kept
    g.replay()  # both inputs alive: fine
    np.testing.assert_array_equal(_np(y), [2.0] * 4)
    del tmp
    with pytest.raises(RuntimeError, match=r"^CUDA graph replay detected 1 dead tensor\(s\)\."):
        g.replay()
    raw = CUDAGraph()  # the raw call takes the flag too
    side = torch.cuda.Stream()
    tmp2 = torch.ones(2, device="cuda")
    with torch.cuda.stream(side):
        raw.capture_begin(check_input_liveness=True)
        z = tmp2 + 1
        raw.capture_end()
    del tmp2
    with pytest.raises(RuntimeError, match=r"^CUDA graph replay detected 1 dead tensor\(s\)\."):
        raw.replay()
    del z


def test_inputs_made_by_the_capture_itself_are_not_inputs(sanitizer: None) -> None:
    x = torch.ones(2, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g, check_input_liveness=True):
        t = x * 3
        y = t + 1
        del t  # a temporary of the graph, not a captured input
    g.replay()
    np.testing.assert_array_equal(_np(y), [4.0, 4.0])


# --- 3. a replay order that clobbers a live buffer of a graph sharing the pool -----------------

def _three_graphs_sharing_a_pool(x: torch.Tensor
                                 ) -> tuple[list[CUDAGraph], list[torch.Tensor]]:
    """g3's output lands in the block g2's intermediate freed (see test_cuda_memory.py)."""
    pool = torch.cuda.graph_pool_handle()
    g1, g2, g3 = CUDAGraph(), CUDAGraph(), CUDAGraph()
    with torch.cuda.graph(g1, pool=pool):
        o1 = x + 1
    with torch.cuda.graph(g2, pool=pool):
        o2 = (o1 * 2) + 1
    with torch.cuda.graph(g3, pool=pool):
        o3 = x * 10
    return [g1, g2, g3], [o1, o2, o3]


def test_a_replay_that_clobbers_another_graphs_output_makes_reading_it_raise(
        sanitizer: None) -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], device="cuda")
    (g1, g2, g3), (o1, o2, o3) = _three_graphs_sharing_a_pool(x)
    for g in (g1, g2, g3):  # capture order: every output readable
        g.replay()
    assert [o.tolist() for o in (o1, o2, o3)] == [
        [2.0, 3.0, 4.0, 5.0], [5.0, 7.0, 9.0, 11.0], [10.0, 20.0, 30.0, 40.0]]
    for g in (g1, g3, g2):  # g2's intermediate overwrites o3
        g.replay()
    assert o2.tolist() == [5.0, 7.0, 9.0, 11.0]
    with pytest.raises(RuntimeError, match=r"^fake_torch sanitizer: .*overwrote") as info:
        o3.tolist()
    assert CLOBBERED in str(info.value)
    g3.replay()  # replaying its own graph makes o3 valid again
    assert o3.tolist() == [10.0, 20.0, 30.0, 40.0]


def test_the_same_clobber_is_silent_and_wrong_by_default(no_sanitizer: None) -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], device="cuda")
    (g1, g2, g3), (_, _, o3) = _three_graphs_sharing_a_pool(x)
    for g in (g1, g3, g2):
        g.replay()
    assert o3.tolist() == [4.0, 6.0, 8.0, 10.0]  # g2's (x + 1) * 2, not x * 10


def test_a_correct_runner_raises_nothing(sanitizer: None) -> None:
    """The intended pattern — capture largest first into one pool, copy inputs in, replay, read
    the output before the next replay — never trips the sanitizer."""
    static_x = torch.zeros(8, 4, device="cuda")
    pool = torch.cuda.graph_pool_handle()
    graphs: dict[int, tuple[CUDAGraph, torch.Tensor]] = {}
    for bs in (8, 4, 2, 1):
        g = CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            out = (static_x[:bs] * 2 - 1).relu() + 1
        graphs[bs] = (g, out)
    rng = np.random.default_rng(0)
    for bs in (3, 1, 8, 2, 5, 4):
        padded = min(s for s in graphs if s >= bs)
        g, out = graphs[padded]
        x = rng.standard_normal((bs, 4)).astype(np.float32)
        static_x[:bs].copy_(torch.tensor(x, device="cuda"))
        g.replay()
        np.testing.assert_allclose(_np(out[:bs]), np.maximum(x * 2 - 1, 0) + 1, rtol=1e-6)


# --- switching it on: the environment variable -------------------------------------------------

SCRIPT = textwrap.dedent("""
    import fake_torch as torch
    x = torch.ones(2, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
    print("enabled" if torch.cuda._sanitizer.is_enabled() else "disabled")
    try:
        print(y.tolist())
    except RuntimeError as e:
        print("raised:", str(e)[:len("fake_torch sanitizer:")])
""")


@pytest.mark.parametrize(("value", "expected"), [
    ("1", ["enabled", "raised: fake_torch sanitizer:"]),
    ("0", ["disabled", "[nan, nan]"]),
    (None, ["disabled", "[nan, nan]"]),
])
def test_the_environment_variable_turns_it_on(value: str | None, expected: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_CUDA_SANITIZER"}
    if value is not None:
        env["TORCH_CUDA_SANITIZER"] = value
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected
