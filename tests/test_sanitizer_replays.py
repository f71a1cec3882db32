"""The sanitizer's replay checks (fake_torch/cuda/_sanitizer_replays.py): a captured input the
program forgot to copy new values into, and a reference to a graph's output read after a later
replay overwrote it. Each raises, naming the fix, with the sanitizer on; with it off the same
code is silent and reads what a GPU would give.

The oracle is what a GPU does, written in numpy: a replay reads its captured input's memory
and writes its outputs in place (torch's CUDA semantics notes, "CUDA Graphs": "replay() ...
reads from and writes to the same memory addresses"). torch checks the second hazard itself
only under reduce-overhead ("Error: accessing tensor output of CUDAGraphs that has been
overwritten by a subsequent run", torch/_inductor/cudagraph_trees.py); make_graphed_callables
returns `o.detach()` of its static outputs at every call (torch/cuda/graphs.py), so its outputs
alias each other across calls.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import fake_torch as torch
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")

FORGOTTEN = "fake_torch sanitizer: "
COPY_FIX = "static_input.copy_(new) before g.replay()"
HELD = "which replay #2 has overwritten since"
CLONE_FIX = ".clone() the output before replaying again"


def _np(t: torch.Tensor) -> np.ndarray:
    return t.numpy(force=True)


def _linear_graph(static_x: torch.Tensor, w: torch.Tensor) -> tuple[CUDAGraph, torch.Tensor]:
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = static_x @ w
    return g, y


def _batches(n: int, shape: tuple[int, ...] = (4, 8)) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


# --- the forgotten copy -------------------------------------------------------------------------

def test_a_forgotten_copy_raises_naming_the_fix(sanitizer: None) -> None:
    static_x = torch.zeros(4, 8, device="cuda")
    w_np = _batches(1, (8, 8))[0]
    w = torch.tensor(w_np, device="cuda")  # kept alive: the graph reads it at every replay
    g, y = _linear_graph(static_x, w)
    a, b, c = _batches(3)
    for batch in (a, b):  # the runner's loop: copy in, replay
        static_x.copy_(torch.tensor(batch, device="cuda"))
        g.replay()
        np.testing.assert_allclose(_np(y), batch @ w_np, rtol=1e-5, atol=1e-5)
    x = torch.tensor(c, device="cuda")  # the next batch, never copied into static_x
    with pytest.raises(RuntimeError, match="^" + FORGOTTEN) as info:
        g.replay()
    message = str(info.value)
    assert "reads as a [4, 8] float32 tensor" in message and COPY_FIX in message
    static_x.copy_(x)  # the fix
    g.replay()
    np.testing.assert_allclose(_np(y), c @ w_np, rtol=1e-5, atol=1e-5)


def test_the_forgotten_copy_is_silent_and_stale_by_default(no_sanitizer: None) -> None:
    static_x = torch.zeros(4, 8, device="cuda")
    w_np = _batches(1, (8, 8))[0]
    w = torch.tensor(w_np, device="cuda")  # kept alive: the graph reads it at every replay
    g, y = _linear_graph(static_x, w)
    a, b = _batches(2)
    static_x.copy_(torch.tensor(a, device="cuda"))
    g.replay()
    static_x = torch.tensor(b, device="cuda")  # rebinding: the graph still reads the old buffer
    g.replay()
    np.testing.assert_allclose(_np(y), a @ w_np, rtol=1e-5, atol=1e-5)  # a's result, again


def test_weights_never_written_after_capture_are_not_inputs_to_refresh(sanitizer: None) -> None:
    """A (4, 4) weight and a (4, 4) batch: new batches of the weight's shape are written at
    every step, but the weight was never written after the capture: a constant, not a copy
    the program forgot."""
    static_x = torch.zeros(4, 4, device="cuda")
    w = torch.randn(4, 4, device="cuda")
    g, y = _linear_graph(static_x, w)
    for batch in _batches(4, (4, 4)):
        static_x.copy_(torch.tensor(batch, device="cuda"))
        g.replay()
    np.testing.assert_allclose(_np(y), batch @ _np(w), rtol=1e-5, atol=1e-5)


def test_an_input_the_graph_writes_itself_is_not_checked(sanitizer: None) -> None:
    step = torch.zeros(1, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        step.add_(1)  # the graph keeps its own counter
    step.fill_(10.0)
    for _ in range(3):
        torch.ones(1, device="cuda")  # another tensor of the counter's shape, written
        g.replay()
    assert step.item() == 13.0


def test_replaying_again_with_nothing_new_written_is_not_a_forgotten_copy(
        sanitizer: None) -> None:
    static_x = torch.zeros(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g, y = _linear_graph(static_x, w)
    static_x.copy_(torch.ones(4, 8, device="cuda"))
    for _ in range(3):  # a timing loop: the same input on purpose
        g.replay()
    assert np.isfinite(_np(y)).all()


def test_a_graph_reading_another_graphs_output_is_not_flagged(sanitizer: None) -> None:
    """Graphs in a chain (piecewise): the second reads the first's output, which only the
    first's replays write."""
    static_x = torch.zeros(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g1, h = _linear_graph(static_x, w)
    g2 = CUDAGraph()
    with torch.cuda.graph(g2):
        out = h.relu() * 2
    for batch in _batches(3):
        static_x.copy_(torch.tensor(batch, device="cuda"))
        g1.replay()
        torch.zeros(4, 8, device="cuda")  # eager work of the same shape between the pieces
        g2.replay()
    np.testing.assert_allclose(_np(out), np.maximum(_np(h), 0) * 2)


def test_graphs_sharing_one_static_buffer_for_several_batch_sizes(sanitizer: None) -> None:
    static_x = torch.zeros(8, 4, device="cuda")
    pool = torch.cuda.graph_pool_handle()
    graphs = {}
    for bs in (8, 4):
        g = CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            out = static_x[:bs] * 2
        graphs[bs] = (g, out)
    for bs in (4, 8, 4, 8, 4):
        x = torch.randn(bs, 4, device="cuda")
        static_x[:bs].copy_(x)
        g, out = graphs[bs]
        g.replay()
        np.testing.assert_allclose(_np(out), _np(x) * 2)
    x = torch.randn(4, 4, device="cuda")  # the next batch of 4, not copied in
    with pytest.raises(RuntimeError, match="reads as a \\[4, 4\\] float32 tensor"):
        graphs[4][0].replay()
    del x


# --- the forgotten copy, before the first replay ------------------------------------------------

FIRST = "would replay for the first time on a captured input it reads as a [4, 8] float32 tensor"

# the ways a runner makes its next batch: new data from the host or a random draw
NEW_BATCHES: dict[str, Callable[[np.ndarray], torch.Tensor]] = {
    "torch.tensor(host, device='cuda')": lambda a: torch.tensor(a, device="cuda"),
    "cpu.cuda()": lambda a: torch.tensor(a).cuda(),
    "cpu.to('cuda')": lambda a: torch.from_numpy(a).to("cuda"),
    "torch.randn": lambda a: torch.randn(*a.shape, device="cuda"),
    "torch.rand_like": lambda a: torch.rand_like(torch.zeros(*a.shape, device="cuda")),
}


@pytest.mark.parametrize("make", NEW_BATCHES.values(), ids=NEW_BATCHES.keys())
def test_a_copy_forgotten_before_the_first_replay_raises_naming_the_fix(
        sanitizer: None, make: Callable[[np.ndarray], torch.Tensor]) -> None:
    static_x = torch.zeros(4, 8, device="cuda")  # the runner's static input, filled per step
    w_np = _batches(1, (8, 8))[0]
    w = torch.tensor(w_np, device="cuda")
    g, y = _linear_graph(static_x, w)
    x = make(_batches(1)[0])  # the first batch, never copied into static_x
    with pytest.raises(RuntimeError, match="^" + FORGOTTEN) as info:
        g.replay()
    message = str(info.value)
    assert FIRST in message and COPY_FIX in message
    assert g.num_replays == 0  # refused: nothing ran, y was never written
    with pytest.raises(RuntimeError, match="never replayed"):
        y.tolist()
    static_x.copy_(x)  # the fix
    g.replay()
    np.testing.assert_allclose(_np(y), _np(x) @ w_np, rtol=1e-5, atol=1e-5)  # eager's values


def test_the_copy_forgotten_before_the_first_replay_is_silent_by_default(
        no_sanitizer: None) -> None:
    static_x = torch.zeros(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g, y = _linear_graph(static_x, w)
    x = torch.tensor(_batches(1)[0], device="cuda")
    g.replay()
    np.testing.assert_array_equal(_np(y), np.zeros((4, 8)))  # should be x @ w! (static_x's 0s)
    del x


def _replay_on_warm_up_values() -> None:
    """Capture, then replay at once on the values the input held at capture."""
    static_x = torch.randn(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g, y = _linear_graph(static_x, w)
    g.replay()
    np.testing.assert_allclose(_np(y), _np(static_x @ w), rtol=1e-5, atol=1e-5)


def _a_second_model_built_after_the_capture() -> None:
    """Parameters are never a batch: a second Linear(8, 8) made after the capture draws new
    (8, 8) data, the shape of the captured model's weight, which nothing refreshes."""
    lin = torch.nn.Linear(8, 8, device="cuda")
    static_x = torch.randn(4, 8, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = lin(static_x)
    reference = torch.nn.Linear(8, 8, device="cuda")
    g.replay()
    reference.load_state_dict(lin.state_dict())
    np.testing.assert_allclose(_np(y), _np(reference(static_x)), rtol=1e-5, atol=1e-5)


def _an_eager_reference_computed_before_the_replay() -> None:
    """Values computed on the device are not a new batch."""
    static_x = torch.randn(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g, y = _linear_graph(static_x, w)
    expected = static_x @ w
    g.replay()
    np.testing.assert_allclose(_np(y), _np(expected), rtol=1e-5, atol=1e-5)


def _batches_made_ahead_of_the_loop() -> None:
    """A constant input of the batch's shape, and every batch made before the first copy:
    the new data is for the input the loop refreshes."""
    static_x = torch.zeros(4, 8, device="cuda")
    scale = torch.randn(4, 8, device="cuda")  # a constant, not a Parameter
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = static_x * scale
    batches = [torch.randn(4, 8, device="cuda") for _ in range(3)]
    for x in batches:
        static_x.copy_(x)
        g.replay()
        np.testing.assert_allclose(_np(y), _np(x * scale))


def _a_fill_made_after_the_capture() -> None:
    """A fill is not new data (a buffer for results, not a batch)."""
    static_x = torch.randn(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g, y = _linear_graph(static_x, w)
    results = torch.zeros(4, 8, device="cuda")
    g.replay()
    results.copy_(y)
    np.testing.assert_allclose(_np(results), _np(static_x @ w), rtol=1e-5, atol=1e-5)


def _the_graph_s_own_counter() -> None:
    step = torch.zeros(4, 8, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        step.add_(1)
    torch.randn(4, 8, device="cuda")  # new data of the counter's shape
    g.replay()
    assert _np(step).tolist() == np.ones((4, 8)).tolist()


@pytest.mark.parametrize("program", [
    _replay_on_warm_up_values, _a_second_model_built_after_the_capture,
    _an_eager_reference_computed_before_the_replay, _batches_made_ahead_of_the_loop,
    _a_fill_made_after_the_capture, _the_graph_s_own_counter,
], ids=lambda f: f.__name__.strip("_"))
def test_a_first_replay_on_inputs_meant_to_be_as_captured_passes(
        sanitizer: None, program: Callable[[], None]) -> None:
    program()


def test_not_caught_a_new_batch_an_eager_kernel_already_read(sanitizer: None) -> None:
    """The first-replay rule needs new data nothing read: once an eager kernel read the
    forgotten batch (here an eager reference), the sanitizer cannot tell it from data meant
    for something else, and the replay runs on the old input as a GPU would."""
    static_x = torch.zeros(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g, y = _linear_graph(static_x, w)
    x = torch.randn(4, 8, device="cuda")
    expected = x @ w  # reads x
    g.replay()  # should have raised: static_x.copy_(x) was forgotten
    np.testing.assert_array_equal(_np(y), np.zeros((4, 8)))
    assert not np.array_equal(_np(expected), _np(y))


# --- a reference to an output, held across the next replay ---------------------------------------

def test_graphed_callable_outputs_held_across_the_next_call_raise(sanitizer: None) -> None:
    lin = torch.nn.Linear(8, 8, device="cuda")
    graphed = torch.cuda.make_graphed_callables(lin, (torch.randn(4, 8, device="cuda"),))
    a, b = (torch.tensor(x, device="cuda") for x in _batches(2))
    o1 = graphed(a)
    kept = o1.clone()  # the fix: a copy taken before the next call
    o2 = graphed(b)
    with pytest.raises(RuntimeError, match="^" + FORGOTTEN) as info:
        o1.tolist()  # o1 aliases o2's memory: it shows b's result now
    assert HELD in str(info.value) and CLONE_FIX in str(info.value)
    w, bias = _np(lin.weight), _np(lin.bias)
    np.testing.assert_allclose(_np(o2), _np(b) @ w.T + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(kept), _np(a) @ w.T + bias, rtol=1e-5, atol=1e-5)


def test_a_slice_taken_after_a_replay_is_stale_after_the_next(sanitizer: None) -> None:
    static_x = torch.zeros(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g, y = _linear_graph(static_x, w)
    static_x.copy_(torch.ones(4, 8, device="cuda"))
    g.replay()
    first = y[:2]  # "the first two rows of this step's output"
    static_x.copy_(torch.full((4, 8), 2.0, device="cuda"))
    g.replay()
    with pytest.raises(RuntimeError, match=HELD):
        first.tolist()
    with pytest.raises(RuntimeError, match=HELD):  # through an eager kernel, read on the host
        (first + 1).sum().item()
    with pytest.raises(RuntimeError, match=HELD):  # printed
        print(first)
    assert y[:2].tolist() == _np(y)[:2].tolist()  # a slice taken now, and the output itself
    assert np.isfinite(_np(y)).all()


def test_references_taken_before_the_first_replay_follow_the_graph(sanitizer: None) -> None:
    static_x = torch.zeros(4, 8, device="cuda")
    w = torch.randn(8, 8, device="cuda")
    g, y = _linear_graph(static_x, w)
    head = y[:1]  # set up once, read after every replay: the runner's own view of the output
    for batch in _batches(3):
        static_x.copy_(torch.tensor(batch, device="cuda"))
        g.replay()
        assert head.tolist() == _np(y)[:1].tolist()


def test_the_held_output_reads_the_next_replays_values_by_default(no_sanitizer: None) -> None:
    static_x = torch.zeros(2, 2, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = static_x * 10
    static_x.copy_(torch.ones(2, 2, device="cuda"))
    g.replay()
    first = y.detach()
    static_x.copy_(torch.full((2, 2), 3.0, device="cuda"))
    g.replay()
    assert first.tolist() == [[30.0, 30.0], [30.0, 30.0]]  # should be 10! (overwritten)
