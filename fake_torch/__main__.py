"""`python -m fake_torch COMMAND`: run torch scripts on fake_torch, measure it.

  demo [--plot FILE]     (the default) the example Llama's decode step through eager, CUDA
                         graph, piecewise, torch.compile and reduce-overhead: one table
  run [--report] SCRIPT [ARGS...]
                         run a torch script unchanged, with `import torch` meaning fake_torch
  api                    torch names fake_torch provides and lacks; signature differences
  stubs                  regenerate stubs/, fake_torch presented to mypy as `torch`
  bench                  per-op eager time on tiny tensors: numpy vs fake_torch vs real torch;
                         the example Llama's decode step: eager vs CUDA-graph replay vs floor
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors (an unknown subcommand, a bad option) on one line."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _run(script: str, args: Sequence[str], report: bool = False) -> int:
    """Run `script` as `__main__` with fake_torch installed, as `python SCRIPT ARGS` would;
    with `report`, print the whole run's launch report afterwards (whatever the script reset)."""
    path = os.path.abspath(script)
    if not os.path.isfile(path):
        print(f"fake_torch run: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    from fake_torch._install import install

    install()
    from fake_torch._counter import LaunchCounter
    from fake_torch._run_report import format_report, whole_run

    LaunchCounter.reset()
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(path)  # as python does: the script's folder comes first
    with whole_run() as tally:
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit:  # the script ran to its exit: its report too
            if report:
                print(f"\n{format_report(tally)}")
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the script's own error: its traceback, without our frames
            tb = exc.__traceback__
            while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != path:
                tb = tb.tb_next
            traceback.print_exception(type(exc), exc, tb)  # tb None: a SyntaxError, as python
            return 1
    if report:
        print(f"\n{format_report(tally)}")
    return 0


def _bench(repeat: int, capture_layers: int) -> int:
    from fake_torch._bench import run_bench
    from fake_torch._bench_capture import run_capture_bench
    from fake_torch._bench_graphs import run_graph_bench
    from fake_torch._bench_meta import run_meta_bench

    run_bench(repeat=repeat)
    print()
    run_graph_bench(repeat=max(repeat, 7))  # it keeps medians: more rounds than best-of
    print()
    run_capture_bench(num_layers=capture_layers)
    print()
    run_meta_bench()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="python -m fake_torch", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser("demo", help="the example Llama through eager, CUDA graphs, "
                               "piecewise, compile, reduce-overhead: one table (the default)")
    demo.add_argument("--plot", metavar="FILE.png",
                      help="also draw launches per step, and step time vs batch size next to "
                           "it (needs matplotlib: '.[plot]')")
    run = commands.add_parser("run", help="run a torch script with fake_torch as torch")
    run.add_argument("--report", action="store_true",
                     help="print the whole run's launches afterwards, whatever the script's "
                          "LaunchCounter.reset() calls cleared: total, by kind, top ops")
    run.add_argument("script", help="the Python file to run as __main__")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    bench = commands.add_parser("bench", help="per-op eager time: numpy, fake_torch, torch; "
                                  "decode step: eager, graph replay, floor")
    bench.add_argument("--repeat", type=int, default=5, help="timing rounds; the best is kept")
    bench.add_argument("--capture-layers", type=int, default=32, metavar="N",
                       help="decoder layers of the toy whose capture at scale is timed "
                            "(default 32, the target's)")
    commands.add_parser("api", help="which torch names fake_torch provides and lacks, per "
                        "module, and signature differences (Markdown)")
    commands.add_parser("stubs", help="regenerate stubs/ (torch for mypy) from fake_torch")
    ns = parser.parse_args(argv)
    if ns.command in (None, "demo"):
        from fake_torch._demo import main as demo_main

        return demo_main(getattr(ns, "plot", None))
    if ns.command == "run":
        return _run(ns.script, ns.args, ns.report)
    if ns.command in ("api", "stubs"):
        from fake_torch import _api, _api_deviations, _stubgen

        if ns.command == "stubs":
            _stubgen.write_stubs(Path("stubs"))
            return 0
        reports = _api.compare_all()
        if not reports:  # no real torch (or `torch` is fake_torch itself): nothing to compare
            print(_api.NO_TORCH, file=sys.stderr)
            return 2
        print(_api.render_report(reports, _api_deviations.DEVIATIONS), end="")
        return 0
    return _bench(ns.repeat, ns.capture_layers)


if __name__ == "__main__":
    sys.exit(main())
