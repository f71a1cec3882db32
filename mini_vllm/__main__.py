"""`python -m mini_vllm`: the Phase 05 story in one table, counted in launches."""

from __future__ import annotations

import numpy as np

from mini_vllm.cudagraph import (
    GraphRunner,
    LaunchCounter,
    Op,
    PiecewiseGraphRunner,
    elementwise,
    fuse_elementwise,
    run_eager,
)

NUM_CALLS = 100
HIDDEN = 16


def toy_model() -> list[Op]:
    """Six ops of a toy layer: four pointwise ops around two dense ones; op 3 plays attention."""
    w = np.random.default_rng(0).standard_normal((HIDDEN, HIDDEN)) / HIDDEN
    return [
        elementwise(lambda x: x * 0.5),  # scale
        elementwise(lambda x: x + 1.0),  # bias
        lambda x: x @ w,  # a projection (GEMM, not fusable)
        lambda x: x - x.mean(axis=-1, keepdims=True),  # "attention": runs eagerly when piecewise
        elementwise(np.tanh),  # activation
        elementwise(lambda x: x * 2.0),  # output scale
    ]


def _launches(run: object, calls: int) -> int:
    assert callable(run)
    x = np.ones((4, HIDDEN))
    LaunchCounter.reset()
    for _ in range(calls):
        run(x)
    return LaunchCounter.n


def _graphs_captured(capture_sizes: list[int] | None) -> int:
    runner = GraphRunner(toy_model(), capture_sizes=capture_sizes)
    for batch in range(1, 9):
        runner(np.ones((batch, HIDDEN)))
    return runner.num_captured


def main() -> None:
    ops = toy_model()
    fused = fuse_elementwise(ops)
    not_attention = lambda i: i != 3  # noqa: E731
    rows = [
        ("eager", f"{len(ops)} per call", _launches(lambda x: run_eager(ops, x), NUM_CALLS)),
        ("graph", f"{len(ops)} at capture, then 1", _launches(GraphRunner(ops), NUM_CALLS)),
        ("piecewise (attention eager)", "capture, then 3 per call",
         _launches(PiecewiseGraphRunner(ops, not_attention), NUM_CALLS)),
        ("fused, eager", f"{len(fused)} per call", _launches(lambda x: run_eager(fused, x),
                                                             NUM_CALLS)),
    ]
    print(f"Phase 05: launches over {NUM_CALLS} calls of a {len(ops)}-op toy model, batch 4\n")
    print(f"{'mode':<30}{'cost':<26}{'launches':>9}")
    for mode, cost, n in rows:
        print(f"{mode:<30}{cost:<26}{n:>9}")
    print("\ngraphs captured across batches 1..8")
    print(f"{'without padding':<30}{_graphs_captured(None):>9}")
    print(f"{'capture_sizes=[1, 2, 4, 8]':<30}{_graphs_captured([1, 2, 4, 8]):>9}")


if __name__ == "__main__":
    main()
