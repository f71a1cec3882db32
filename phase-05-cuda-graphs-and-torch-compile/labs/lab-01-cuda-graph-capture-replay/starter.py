"""Lab 01 starter: CUDA-graph capture & replay, simulated on numpy.

Fill in every body that raises NotImplementedError, in the order of the steps (see README.md).
The public names and signatures match the reference, `mini_vllm/cudagraph.py`; the graded tests
in `test_lab01.py` run against this file with `LAB_TARGET=starter`.

Step 1 (LaunchCounter) is given: it is re-exported from fake_torch, so every launch you count
lands in the same global tally the tests read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from fake_torch import LaunchCounter

__all__ = [
    "ElementwiseOp",
    "GraphEntry",
    "GraphRunner",
    "LaunchCounter",
    "Op",
    "PiecewiseGraphRunner",
    "elementwise",
    "fuse_elementwise",
    "run_eager",
]

Op = Callable[[np.ndarray], np.ndarray]
"""One "kernel": an array in, an array out."""


def run_eager(ops: Sequence[Op], x: np.ndarray) -> np.ndarray:
    """Run `ops` over `x` one by one, paying one launch per op (the baseline)."""
    raise NotImplementedError(
        "Step 2 (run_eager): apply each op to x in order and call LaunchCounter.bump(1) after "
        "each one; return the final x")


@dataclass
class GraphEntry:
    """What one capture saw: the shape it is specialised to and its static buffers."""

    shape: tuple[int, ...]
    static_input: np.ndarray  # the fixed buffer every replay reads from
    output: np.ndarray  # the fixed buffer every replay writes into
    num_ops: int  # kernels inside the graph; a replay still costs one launch


class GraphRunner:
    """Capture once per input shape, replay forever after.

    With `capture_sizes` (any order, repeats allowed: e.g. [1, 2, 4, 8]) the batch dimension
    (axis 0) is zero-padded up to the smallest capture size that holds it, so batches 5..8 share
    the size-8 graph. A batch above the largest size runs eagerly, uncaptured, and is counted in
    `num_eager_fallbacks`. Padding assumes rows are independent (ops keep axis 0 row by row).
    """

    def __init__(self, ops: Sequence[Op], capture_sizes: Sequence[int] | None = None) -> None:
        raise NotImplementedError(
            "Step 3 (GraphRunner): keep the ops as a list, an empty dict of GraphEntry keyed by "
            "(x.shape, x.dtype), and num_eager_fallbacks = 0; Stretch 1 (padding) also keeps "
            "capture_sizes: None, or sorted(set(capture_sizes)), since they may come in any "
            "order")

    @property
    def num_captured(self) -> int:
        """Number of graphs captured so far (one per distinct input shape and dtype)."""
        raise NotImplementedError(
            "Step 3 (GraphRunner): num_captured is the number of entries captured so far")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError(
            "Step 3 (GraphRunner): look up the entry for (x.shape, x.dtype) (Constraint 1); on an "
            "unseen key capture(x) and return a copy of its output; on a seen key "
            "np.copyto(entry.static_input, x) (Constraint 2), then return a copy of replay(entry). "
            "Stretch 1 (padding): with capture_sizes, zero-pad axis 0 up to the smallest size "
            ">= the batch, run that, return out[:batch]; above the largest size, count "
            "num_eager_fallbacks += 1 and return run_eager(ops, x)")

    def capture(self, x: np.ndarray) -> GraphEntry:
        """Capture: copy x into a new static buffer and run the ops once (one launch each)."""
        raise NotImplementedError(
            "Step 3 (GraphRunner): on an unseen shape, copy x into a static buffer, run the ops "
            "eagerly from it (one launch each), keep a copy of the result as the output buffer, "
            "store GraphEntry(x.shape, static_input, output, len(ops)) under (x.shape, x.dtype) "
            "and return it")

    def replay(self, entry: GraphEntry) -> np.ndarray:
        """Replay: recompute the ops FROM entry.static_input into entry.output, as one launch."""
        raise NotImplementedError(
            "Step 3 (GraphRunner): recompute the ops from entry.static_input WITHOUT counting "
            "each op, np.copyto the result into entry.output, LaunchCounter.bump(1) once for the "
            "whole graph (the win), and return entry.output")


class PiecewiseGraphRunner:
    """Split ops into runs of equal `is_capturable(i)`; graph the capturable runs, run the rest
    eagerly. This is vLLM's PIECEWISE mode: capture the dense layers, run attention eagerly."""

    def __init__(self, ops: Sequence[Op], is_capturable: Callable[[int], bool],
                 capture_sizes: Sequence[int] | None = None) -> None:
        raise NotImplementedError(
            "Step 4 (PiecewiseGraphRunner): cut the ops into pieces, maximal runs of consecutive "
            "ops with the same is_capturable(i) (itertools.groupby); wrap each capturable piece "
            "in a GraphRunner(piece, capture_sizes) and keep each other piece as a plain list")

    @property
    def num_graphs(self) -> int:
        """How many pieces are capturable (the seed's name); each captures a graph per shape."""
        raise NotImplementedError(
            "Step 4 (PiecewiseGraphRunner): num_graphs counts the GraphRunner pieces (not the "
            "graphs they captured: those are their num_captured, summed)")

    @property
    def num_eager_fallbacks(self) -> int:
        """Calls of capturable pieces that ran eagerly because the batch was too large."""
        raise NotImplementedError(
            "Step 4 (PiecewiseGraphRunner): num_eager_fallbacks sums num_eager_fallbacks over "
            "the GraphRunner pieces (Stretch 1, padding)")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError(
            "Step 4 (PiecewiseGraphRunner): thread x through the pieces in order: call a "
            "GraphRunner piece, run_eager a plain op list")


# --- Stretch 2: the torch.compile half of the story -------------------------------------------

@dataclass(frozen=True)
class ElementwiseOp:
    """An op marked elementwise; `parts` run in order as ONE kernel (one launch)."""

    parts: tuple[Op, ...]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError(
            "Stretch 2 (fusion): apply each of self.parts to x in order and return the result; "
            "launches are counted by whoever runs this op, not here")


def elementwise(fn: Op) -> ElementwiseOp:
    """Mark `fn` as elementwise, so `fuse_elementwise` may merge it with its neighbours."""
    raise NotImplementedError(
        "Stretch 2 (fusion): wrap fn as ElementwiseOp((fn,)); raise TypeError if fn is not "
        "callable")


def fuse_elementwise(ops: Sequence[Op]) -> list[Op]:
    """A new op list where each maximal run of adjacent elementwise ops is one op."""
    raise NotImplementedError(
        "Stretch 2 (fusion): build a NEW list; when an ElementwiseOp follows an ElementwiseOp, "
        "replace the last one with ElementwiseOp(last.parts + op.parts), else append the op")
