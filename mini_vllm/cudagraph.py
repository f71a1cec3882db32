"""Phase 05 mini-build: CUDA-graph capture & replay, simulated on numpy.

We do not time anything; we count launches. `LaunchCounter` stands in for the CPU cost of
launching one GPU kernel. Eager pays one launch per op on every call; a graph replay pays one
launch for all of its ops. That single number is the whole point of CUDA graphs.

The two constraints a graph imposes, and the win, are marked in `GraphRunner.__call__`:
  - Constraint 1: a graph is specialised to the shape (and dtype) it was captured with.
  - Constraint 2: new inputs must be copied into the graph's static input buffer.
  - The win: a replay costs one launch, whatever the number of ops inside.
"""

from __future__ import annotations

import bisect
import itertools
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
    for op in _check_ops(ops):
        x = op(x)
        LaunchCounter.bump(1)
    return x


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
        self.ops = _check_ops(ops)
        self.capture_sizes = None if capture_sizes is None else _check_capture_sizes(capture_sizes)
        self.entries: dict[tuple[tuple[int, ...], np.dtype], GraphEntry] = {}
        self.num_eager_fallbacks = 0

    @property
    def num_captured(self) -> int:
        """Number of graphs captured so far (one per distinct input shape and dtype)."""
        return len(self.entries)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = _check_input(x)
        if self.capture_sizes is None:
            return self._capture_or_replay(x)
        if x.ndim == 0:
            raise ValueError("GraphRunner with capture_sizes pads axis 0, so it needs an input "
                             "with a batch dimension; got a 0-d array")
        batch = x.shape[0]
        size = self._padded_batch(batch)
        if size is None:  # above the largest capture size: run eagerly, as vLLM does
            self.num_eager_fallbacks += 1
            return run_eager(self.ops, x)
        padded = np.zeros((size, *x.shape[1:]), dtype=x.dtype)  # padding rows are zeros
        padded[:batch] = x
        return self._capture_or_replay(padded)[:batch]

    def _padded_batch(self, batch: int) -> int | None:
        """The smallest capture size >= batch, or None when batch is above them all."""
        assert self.capture_sizes is not None
        i = bisect.bisect_left(self.capture_sizes, batch)
        return self.capture_sizes[i] if i < len(self.capture_sizes) else None

    def _capture_or_replay(self, x: np.ndarray) -> np.ndarray:
        entry = self.entries.get((x.shape, x.dtype))  # Constraint 1: one graph per shape (+dtype)
        if entry is None:
            return self.capture(x).output.copy()
        np.copyto(entry.static_input, x)  # Constraint 2: the new input must land in the buffer
        return self.replay(entry).copy()  # a copy: the next replay overwrites entry.output

    def capture(self, x: np.ndarray) -> GraphEntry:
        """Capture: copy x into a new static buffer and run the ops once (one launch each)."""
        static_input = x.copy()
        output = np.array(run_eager(self.ops, static_input), copy=True)
        if self.capture_sizes is not None and (output.ndim == 0 or output.shape[0] != x.shape[0]):
            raise ValueError(f"padding needs ops that keep the batch dimension: a batch of "
                             f"{x.shape[0]} gave an output of shape {output.shape}")
        entry = GraphEntry(x.shape, static_input, output, len(self.ops))
        self.entries[(x.shape, x.dtype)] = entry
        return entry

    def replay(self, entry: GraphEntry) -> np.ndarray:
        """Replay: recompute the ops FROM entry.static_input into entry.output, as one launch."""
        np.copyto(entry.output, _compute(self.ops, entry.static_input))
        LaunchCounter.bump(1)  # the win: one launch for the whole graph
        return entry.output


class PiecewiseGraphRunner:
    """Split ops into runs of equal `is_capturable(i)`; graph the capturable runs, run the rest
    eagerly. This is vLLM's PIECEWISE mode: capture the dense layers, run attention eagerly."""

    def __init__(self, ops: Sequence[Op], is_capturable: Callable[[int], bool],
                 capture_sizes: Sequence[int] | None = None) -> None:
        ops = _check_ops(ops)
        flags = [_check_flag(is_capturable, i) for i in range(len(ops))]
        self.pieces: list[GraphRunner | list[Op]] = []
        for capturable, run in itertools.groupby(range(len(ops)), key=lambda i: flags[i]):
            piece_ops = [ops[i] for i in run]
            if capturable:
                self.pieces.append(GraphRunner(piece_ops, capture_sizes))
            else:
                self.pieces.append(piece_ops)

    @property
    def num_graphs(self) -> int:
        """How many pieces are capturable (the seed's name); each captures a graph per shape."""
        return sum(isinstance(p, GraphRunner) for p in self.pieces)

    @property
    def num_eager_fallbacks(self) -> int:
        """Calls of capturable pieces that ran eagerly because the batch was too large."""
        return sum(p.num_eager_fallbacks for p in self.pieces if isinstance(p, GraphRunner))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        for piece in self.pieces:  # thread x through the pieces in order
            x = piece(x) if isinstance(piece, GraphRunner) else run_eager(piece, x)
        return x


# --- Stretch 2: the torch.compile half of the story -------------------------------------------

@dataclass(frozen=True)
class ElementwiseOp:
    """An op marked elementwise; `parts` run in order as ONE kernel (one launch)."""

    parts: tuple[Op, ...]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        for part in self.parts:
            x = part(x)
        return x


def elementwise(fn: Op) -> ElementwiseOp:
    """Mark `fn` as elementwise, so `fuse_elementwise` may merge it with its neighbours."""
    if not callable(fn):
        raise TypeError(f"elementwise(fn): fn must be callable, got {type(fn).__name__}")
    return ElementwiseOp((fn,))


def fuse_elementwise(ops: Sequence[Op]) -> list[Op]:
    """A new op list where each maximal run of adjacent elementwise ops is one op."""
    fused: list[Op] = []
    for op in _check_ops(ops):
        if isinstance(op, ElementwiseOp) and fused and isinstance(fused[-1], ElementwiseOp):
            fused[-1] = ElementwiseOp(fused[-1].parts + op.parts)  # grow the current run
        else:
            fused.append(op)
    return fused


# --- helpers: compute without counting, and the checks on user input --------------------------

def _compute(ops: list[Op], x: np.ndarray) -> np.ndarray:
    """Run ops without counting: inside a replay the GPU, not the CPU, walks the kernels."""
    for op in ops:
        x = op(x)
    return x


def _check_ops(ops: Sequence[Op]) -> list[Op]:
    if isinstance(ops, (str, bytes)) or not isinstance(ops, Sequence):
        raise TypeError(f"ops must be a list of callables, got {type(ops).__name__}")
    if len(ops) == 0:
        raise ValueError("ops must be a non-empty list of callables, got an empty list")
    for i, op in enumerate(ops):
        if not callable(op):
            raise TypeError(f"ops[{i}] must be callable, got {type(op).__name__}")
    return list(ops)


def _check_input(x: np.ndarray) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a numpy.ndarray, got {type(x).__name__}")
    return x


def _check_flag(is_capturable: Callable[[int], bool], i: int) -> bool:
    flag = is_capturable(i)
    if not isinstance(flag, (bool, np.bool_)):
        raise TypeError(f"is_capturable({i}) must return a bool, got {type(flag).__name__}")
    return bool(flag)


def _check_capture_sizes(sizes: Sequence[int]) -> list[int]:
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence):
        raise TypeError(f"capture_sizes must be a list of ints, got {type(sizes).__name__}")
    if len(sizes) == 0:
        raise ValueError("capture_sizes must be a non-empty list of positive ints, got []")
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"capture_sizes must hold positive ints, got {s!r} in {list(sizes)}")
        if s <= 0:
            raise ValueError(f"capture_sizes must hold positive ints, got {s!r} in {list(sizes)}")
    return sorted({int(s) for s in sizes})  # any order, as vLLM's config: padding bisects them
