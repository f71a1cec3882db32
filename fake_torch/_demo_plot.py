"""`demo --plot FILE.png`: launches per decode step by mode and batch size, as grouped bars.

matplotlib is an optional extra (`pip install 'fake_torch[plot]'`)."""

from __future__ import annotations

import importlib.util
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fake_torch._demo import Row


def require_matplotlib() -> bool:
    """True when matplotlib imports; else one line on stderr saying how to install it."""
    if importlib.util.find_spec("matplotlib") is not None:
        return True
    print("fake_torch demo: --plot needs matplotlib: pip install 'fake_torch[plot]' "
          "(or pip install matplotlib)", file=sys.stderr)
    return False


def plot_launches(rows: list[Row], path: str) -> None:
    """Bars of launches per step (log scale): one group per batch size, one bar per mode."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    modes = list(dict.fromkeys(r.mode for r in rows))
    sizes = list(dict.fromkeys(r.bs for r in rows))
    launches = {(r.mode, r.bs): r.launches for r in rows}
    width = 0.8 / len(modes)
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=100)
    for i, mode in enumerate(modes):
        xs = [j + (i - (len(modes) - 1) / 2) * width for j in range(len(sizes))]
        heights = [launches[mode, bs] for bs in sizes]
        bars = ax.bar(xs, heights, width, label=mode)
        ax.bar_label(bars, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylim(1, 20 * max(launches.values()))  # headroom for the legend
    ax.set_xticks(range(len(sizes)), [f"batch {bs}" for bs in sizes])
    ax.set_ylabel("launches per decode step")
    ax.set_title("example Llama, one decode step on the simulated cuda device")
    ax.legend(fontsize=8, ncols=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
