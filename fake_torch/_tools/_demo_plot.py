"""`demo --plot FILE.png`: launches per decode step by mode and batch size, as grouped bars;
and next to it, FILE_time.png: simulated step time against batch size
(fake_torch/_tools/_demo_time.py).

matplotlib is an optional extra (`pip install 'fake_torch[plot]'`)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fake_torch._tools._demo import Row
    from fake_torch._tools._demo_time import TimeCurve


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


def plot_time(curve: TimeCurve, path: str) -> None:
    """Two panels over batch size (log x): simulated ms per decode step by mode, and eager's
    time over each graph mode's with the SLACK line, each mode's crossover and the GPU-bound
    batch marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fake_torch._tools._demo_time import GRAPH_MODES, MODES, SLACK

    fig, (ax_ms, ax_ratio) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=100)
    colors = {mode: f"C{i}" for i, mode in enumerate(MODES)}
    for mode in MODES:
        ax_ms.plot(curve.batch_sizes, curve.ms[mode], "o-", color=colors[mode], label=mode)
    for mode in GRAPH_MODES:
        stop = curve.crossover(mode)
        label = f"eager / {mode}" + ("" if stop is None else
                                     f": under {SLACK}x from batch {stop}")
        ax_ratio.plot(curve.batch_sizes, curve.speedup(mode), "o-", color=colors[mode],
                      label=label)
        if stop is not None:  # ring the batch where the replay stops paying off
            ax_ratio.plot([stop], [curve.speedup(mode)[curve.batch_sizes.index(stop)]], "o",
                          markersize=14, markerfacecolor="none", color=colors[mode])
    top = max(max(curve.speedup(mode)) for mode in GRAPH_MODES)
    ax_ratio.set_ylim(0.9, 1.35 * top)  # headroom for the legend
    ax_ratio.axhline(SLACK, color="gray", linestyle="--", linewidth=1)
    ax_ratio.axhline(1.0, color="gray", linewidth=0.5)
    ax_ratio.text(curve.batch_sizes[0], SLACK, f" {SLACK}x: graphs stop paying off",
                  va="bottom", fontsize=7, color="gray")
    for ax in (ax_ms, ax_ratio):
        ax.axvline(curve.gpu_bound, color="black", linestyle="--", linewidth=0.8,
                   label=f"GPU-bound batch {curve.gpu_bound}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(curve.batch_sizes, [str(bs) for bs in curve.batch_sizes], fontsize=7)
        ax.minorticks_off()
        ax.set_xlabel("batch size (rows per decode step)")
        ax.legend(fontsize=7)
    ax_ms.set_ylabel("simulated ms per decode step")
    ax_ratio.set_ylabel("speedup over eager")
    title = (f"example Llama decode step on the simulated {curve.gpu}: "
             "CUDA graphs pay off while the host's launches bound the step")
    if curve.why:  # the curve's GPU is not the demo table's: say why where the reader looks
        title += "\n" + textwrap.fill(f"why the {curve.gpu}: {curve.why}", 110)
    fig.suptitle(title, fontsize=10 if not curve.why else 8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
