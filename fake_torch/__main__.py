"""`python -m fake_torch COMMAND`: run torch scripts on fake_torch, measure it.

  run SCRIPT [ARGS...]   run a torch script unchanged, with `import torch` meaning fake_torch
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


def _run(script: str, args: Sequence[str]) -> int:
    """Run `script` as `__main__` with fake_torch installed, as `python SCRIPT ARGS` would."""
    path = os.path.abspath(script)
    if not os.path.isfile(path):
        print(f"fake_torch run: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    from fake_torch._install import install

    install()
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(path)  # as python does: the script's folder comes first
    try:
        runpy.run_path(path, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:  # the script's own error: its traceback, without our frames
        tb = exc.__traceback__
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != path:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)  # tb None: a SyntaxError, as python
        return 1
    return 0


def _bench(repeat: int) -> int:
    from fake_torch._bench import run_bench
    from fake_torch._bench_graphs import run_graph_bench

    run_bench(repeat=repeat)
    print()
    run_graph_bench(repeat=max(repeat, 7))  # it keeps medians: more rounds than best-of
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fake_torch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run a torch script with fake_torch as torch")
    run.add_argument("script", help="the Python file to run as __main__")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    bench = commands.add_parser("bench", help="per-op eager time: numpy, fake_torch, torch; "
                                  "decode step: eager, graph replay, floor")
    bench.add_argument("--repeat", type=int, default=5, help="timing rounds; the best is kept")
    ns = parser.parse_args(argv)
    if ns.command == "run":
        return _run(ns.script, ns.args)
    return _bench(ns.repeat)


if __name__ == "__main__":
    sys.exit(main())
