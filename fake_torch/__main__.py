"""`python -m fake_torch COMMAND`: run torch scripts on fake_torch, measure it.

  demo [--plot FILE]     (the default) the example Llama's decode step through eager, CUDA
                         graph, piecewise, torch.compile and reduce-overhead: one table
  run [--report] SCRIPT [ARGS...]
                         run a torch script unchanged, with `import torch` meaning fake_torch
  api                    torch names fake_torch provides and lacks; signature differences
  api --corpus DIR [--json FILE]
                         the torch names and Tensor attributes a corpus of codebases (DIR's
                         subfolders) uses, and which of them fake_torch provides
  stubs                  regenerate stubs/, fake_torch presented to mypy as `torch`
  bench                  per-op eager time on tiny tensors: numpy vs fake_torch vs real torch;
                         the example Llama's decode step: eager vs CUDA-graph replay vs floor
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors (an unknown subcommand, a bad option) on one line."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _drop_raiser(exc: BaseException) -> None:
    """A missing name's error that fake_torch's module `__getattr__` or import finder raised
    loses those last frames, which python's own lookup error has not; so do the errors it
    chains to (`raise ... from`, an error raised while handling it)."""
    from fake_torch._missing_names import lookup_frames

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        error = todo.pop()
        if error is None or id(error) in seen:
            continue
        seen.add(id(error))
        todo += [error.__cause__, error.__context__]
        entries = []
        tb = error.__traceback__
        while tb is not None:
            entries.append(tb)
            tb = tb.tb_next
        frames = lookup_frames(error)
        if 0 < frames < len(entries) and all(
                e.tb_frame.f_code.co_filename.startswith(package) for e in entries[-frames:]):
            entries[-frames - 1].tb_next = None


def _print_uncaught(exc: BaseException, path: str) -> None:
    """What python does with an exception that leaves the script: `sys.excepthook` (the
    script's own if it set one), on the traceback from the script's first frame on (runpy's and
    ours left out; none for a SyntaxError in the script, as python shows it). Python's "Did you
    mean" hints come from there: 3.11 computes them in C, from the exception's `name` and `obj`
    and a NameError's last frame; 3.12+ in `traceback`; `traceback.print_exception` would lose
    3.11's."""
    tb = exc.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != path:
        tb = tb.tb_next
    exc.with_traceback(tb)
    _drop_raiser(exc)
    sys.excepthook(type(exc), exc, exc.__traceback__)


def _run(script: str, args: Sequence[str], report: bool = False) -> int:
    """Run `script` as `__main__` with fake_torch installed, as `python SCRIPT ARGS` would;
    with `report`, print the whole run's launch report afterwards (whatever the script reset)."""
    path = os.path.abspath(script)
    if not os.path.isfile(path):
        print(f"fake_torch run: can't open file {script!r}: no such file", file=sys.stderr)
        return 2
    from fake_torch._install import install

    install()
    from fake_torch._simulated._counter import LaunchCounter
    from fake_torch._tools._run_report import format_report, whole_run

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
        except BaseException as exc:  # the script's own error, printed as python prints it
            _print_uncaught(exc, path)
            return 1
    if report:
        print(f"\n{format_report(tally)}")
    return 0


def _bench(repeat: int, capture_layers: int) -> int:
    from fake_torch._tools._bench import run_bench
    from fake_torch._tools._bench_capture import run_capture_bench
    from fake_torch._tools._bench_graphs import run_graph_bench
    from fake_torch._tools._bench_meta import run_meta_bench

    run_bench(repeat=repeat)
    print()
    run_graph_bench(repeat=max(repeat, 7))  # it keeps medians: more rounds than best-of
    print()
    run_capture_bench(num_layers=capture_layers)
    print()
    run_meta_bench()
    return 0


def _scan_corpus(corpus: Path, json_file: Path | None, tests: Path,
                 baseline: Path | None) -> int:
    import json

    from fake_torch._tools import _api, _corpus_scan

    try:
        counted, uses = _corpus_scan.scan(corpus, tests)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    except ImportError:  # no real torch to read Tensor's attributes from
        print(_api.NO_TORCH, file=sys.stderr)
        return 2
    before = None if baseline is None else json.loads(baseline.read_text(encoding="utf-8"))
    print(_corpus_scan.render_markdown(counted, uses, baseline=before), end="")
    if json_file is not None:
        json_file.write_text(_corpus_scan.to_json(counted, uses), encoding="utf-8")
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
    api = commands.add_parser("api", help="which torch names fake_torch provides and lacks, "
                              "per module, and signature differences (Markdown)")
    api.add_argument("--corpus", metavar="DIR", type=Path,
                     help="instead: scan DIR's subfolders (one codebase each) for the torch "
                          "names and Tensor attributes they use, and which fake_torch provides")
    api.add_argument("--json", metavar="FILE", type=Path,
                     help="with --corpus: also write the scan's counts as JSON to FILE")
    api.add_argument("--baseline", metavar="FILE", type=Path,
                     help="with --corpus: compare with a scan --json wrote earlier (figures "
                          "before and now, names whose status changed)")
    api.add_argument("--tests", metavar="DIR", type=Path,
                     default=Path(__file__).resolve().parents[1] / "tests",
                     help="with --corpus: the tests whose oracle files mark a name tested "
                          "(default: the repository's tests/)")
    commands.add_parser("stubs", help="regenerate stubs/ (torch for mypy) from fake_torch")
    ns = parser.parse_args(argv)
    if ns.command in (None, "demo"):
        from fake_torch._tools._demo import main as demo_main

        return demo_main(getattr(ns, "plot", None))
    if ns.command == "run":
        return _run(ns.script, ns.args, ns.report)
    if ns.command == "api" and ns.corpus is not None:
        return _scan_corpus(ns.corpus, ns.json, ns.tests, ns.baseline)
    if ns.command in ("api", "stubs"):
        from fake_torch._tools import _api, _api_deviations, _stubgen

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
