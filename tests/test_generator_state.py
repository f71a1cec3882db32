"""Generator states shared between generators and driven by CUDA graphs: graphsafe_get_state,
graphsafe_set_state, clone_state and CUDAGraph.register_generator_state, as torch 2.13 has them.

The oracles: real torch's CPU generator (clone_state, and the errors of the graph-safe calls,
which only a CUDA generator supports), and the scenarios of torch's own test_cuda.py graph tests,
re-expressed here: switching states inside a capture, and the device memory each registered
state holds (two one-element int64 tensors) while any graph is registered with it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter
from fake_torch.cuda import CUDAGraph

pytestmark = pytest.mark.usefixtures("fresh_device")


def _np(t: torch.Tensor) -> np.ndarray:
    return np.asarray(t.numpy(force=True))


# --- the cpu generator, against real torch --------------------------------------------------------

def test_cpu_generators_clone_but_refuse_graph_safe_states_as_torch() -> None:
    real = pytest.importorskip("torch")
    for lib in (real, torch):
        g = lib.Generator().manual_seed(3)
        twin = g.clone_state()
        assert twin.initial_seed() == 3 and twin.device == lib.device("cpu")
        a, b = lib.rand(4, generator=g), lib.rand(4, generator=twin)
        np.testing.assert_array_equal(a.numpy(), b.numpy())  # the same stream, copied
        lib.rand(2, generator=g)
        c, d = lib.rand(2, generator=g), lib.rand(2, generator=twin)
        assert not np.array_equal(c.numpy(), d.numpy())  # ... and independent afterwards
    for call, error in [(lambda lib: lib.Generator().graphsafe_get_state(), NotImplementedError),
                        (lambda lib: lib.Generator().graphsafe_set_state(lib.Generator()),
                         NotImplementedError),
                        (lambda lib: lib.Generator().graphsafe_set_state(5), TypeError)]:
        with pytest.raises(error) as theirs:
            call(real)
        with pytest.raises(error) as ours:
            call(torch)
        assert str(ours.value) == str(theirs.value)


# --- cuda states: shared and cloned ---------------------------------------------------------------

def test_graphsafe_get_state_shares_the_state_and_clone_state_copies_it() -> None:
    g = torch.Generator(device="cuda").manual_seed(7)
    shared, copied = g.graphsafe_get_state(), g.clone_state()
    assert (shared.device, copied.device) == (torch.device("cuda", 0),) * 2
    torch.rand(3, device="cuda", generator=g)
    assert (g.get_offset(), shared.get_offset(), copied.get_offset()) == (4, 4, 0)
    torch.rand(3, device="cuda", generator=shared)  # a draw through either moves both
    assert g.get_offset() == 8
    g.graphsafe_set_state(copied)  # g now draws from the copy: offset 0, the seed kept
    assert (g.get_offset(), g.initial_seed()) == (0, 7)
    first = torch.rand(3, device="cuda", generator=g)
    np.testing.assert_array_equal(
        _np(first), _np(torch.rand(3, device="cuda", generator=torch.Generator("cuda")
                                   .manual_seed(7))))
    with pytest.raises(RuntimeError, match=r"^Expected a CUDA Generator$"):
        g.graphsafe_set_state(torch.Generator())


# --- states driven by graphs ---------------------------------------------------------------------

def test_switching_registered_states_inside_a_capture_replays_as_eager_draws() -> None:
    """torch's test_graphsafe_set_get_rng_state: a capture that draws once from a cloned state
    and twice from the original replays exactly what the same steps give eagerly, and moves
    both states' offsets as they move."""

    def states(gen: torch.Generator) -> tuple[torch.Generator, torch.Generator,
                                               torch.Generator]:
        torch.rand(1, device="cuda")
        gen.manual_seed(0)
        return gen, gen.graphsafe_get_state(), gen.clone_state()

    def steps(gen: torch.Generator, old: torch.Generator,
              new: torch.Generator) -> list[torch.Tensor]:
        gen.graphsafe_set_state(new)
        values = [torch.rand(5, device="cuda", generator=gen)]
        gen.graphsafe_set_state(old)
        return values + [torch.rand(5, device="cuda", generator=gen) for _ in range(2)]

    eager_states = states(torch.Generator(device="cuda"))
    graph_states = states(torch.cuda.default_generators[0])
    g = CUDAGraph()
    g.register_generator_state(graph_states[1])
    g.register_generator_state(graph_states[2])
    with torch.cuda.stream(torch.cuda.Stream()):
        g.capture_begin()
        graphed = steps(*graph_states)
        g.capture_end()
    for _ in range(3):
        eager = steps(*eager_states)
        g.replay()
        assert ([s.get_offset() for s in eager_states[1:]]
                == [s.get_offset() for s in graph_states[1:]])
        for a, b in zip(eager, graphed, strict=True):
            np.testing.assert_array_equal(_np(a), _np(b))


@pytest.mark.parametrize("num_graphs, num_states", [(1, 1), (3, 2), (10, 20)])
def test_each_registered_state_holds_two_blocks_while_a_graph_lives(
        num_graphs: int, num_states: int) -> None:
    """torch's test_memory_stats_of_multiple_generators_and_graphs: a state registered with
    any number of graphs holds two 512-byte blocks (its graph-side seed and offset); deleting
    the graphs gives them back."""

    def active() -> tuple[int, int]:
        stats = torch.cuda.memory_stats()
        return stats["active.all.current"], stats["active_bytes.all.current"]

    baseline = active()
    default = torch.cuda.default_generators[0]
    gens = [default.graphsafe_get_state()] + [default.clone_state()
                                              for _ in range(num_states - 1)]
    graphs = [CUDAGraph() for _ in range(num_graphs)]
    for graph in graphs:
        for gen in gens:
            graph.register_generator_state(gen)
        with torch.cuda.stream(torch.cuda.Stream()):
            graph.capture_begin()
            torch.rand(1, device="cuda")
            graph.capture_end()
        graph.replay()
    blocks, nbytes = active()  # (each rand's output died inside its capture)
    assert (blocks - baseline[0], nbytes - baseline[1]) == (2 * num_states, 1024 * num_states)
    del graph
    graphs.clear()
    torch.cuda.empty_cache()
    assert active() == baseline


def test_a_capture_prepares_each_state_and_a_drawing_replay_refreshes_it() -> None:
    """Two fill_ launches per registered state at capture_begin; before a replay, two more per
    state the graph drew from (none for a graph that draws nothing)."""
    x = torch.ones(4, device="cuda")
    plain, drawing = CUDAGraph(), CUDAGraph()
    LaunchCounter.reset()
    with torch.cuda.graph(plain):
        y = x + 1
    assert dict(LaunchCounter.by_op) == {"fill_": 2, "add": 1}
    extra = torch.cuda.default_generators[0].clone_state()
    drawing.register_generator_state(extra)
    LaunchCounter.reset()
    with torch.cuda.graph(drawing):
        z = torch.rand(4, device="cuda") + y
    assert dict(LaunchCounter.by_op) == {"fill_": 4, "rand": 1, "add": 1}
    LaunchCounter.reset()
    plain.replay()
    assert dict(LaunchCounter.by_op) == {"cudaGraphLaunch": 1}
    LaunchCounter.reset()
    drawing.replay()  # only the default state was drawn from: its seed and offset, refreshed
    assert dict(LaunchCounter.by_op) == {"fill_": 2, "cudaGraphLaunch": 1}
    assert np.isfinite(_np(z)).all()


def test_what_a_capture_forbids_a_generator() -> None:
    gen = torch.cuda.default_generators[0]
    unregistered = torch.Generator("cuda")
    with torch.cuda.graph(CUDAGraph()):
        with pytest.raises(RuntimeError, match="Cannot construct a new CUDAGeneratorImpl during "
                                               "CUDA graph capture"):
            torch.Generator("cuda")
        with pytest.raises(RuntimeError, match=re.escape(
                "Cannot register the state during capturing stage. during CUDA graph capture. "
                "If you need this call to be captured, please file an issue.")):
            torch.cuda.CUDAGraph().register_generator_state(gen)
        for call, what in [(gen.get_offset, "get_offset"), (gen.seed, "seed"),
                           (lambda: gen.set_offset(0), "set_offset")]:
            with pytest.raises(RuntimeError, match=f"Cannot call CUDAGeneratorImpl::{what} "
                                                   "during CUDA graph capture"):
                call()
        seed = gen.initial_seed()
        gen.manual_seed(seed)  # the same seed: allowed, a no-op
        with pytest.raises(RuntimeError, match="can be called during stream capture only if "
                                               "new seed is the same"):
            gen.manual_seed(seed + 1)
        torch.rand(1, device="cuda")  # the default state is registered: a graph draw
        with pytest.raises(RuntimeError, match="Attempt to increase offset for a CUDA generator "
                                               "not in capture mode"):
            torch.rand(1, device="cuda", generator=unregistered)
    with pytest.raises(RuntimeError, match=r"^Expected a CUDA Generator$"):
        CUDAGraph().register_generator_state(torch.Generator())
