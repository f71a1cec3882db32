"""`python -m fake_torch demo`: the CUDA-graph story of the example Llama in one table.

The model of examples/llama.py (its small default config) decodes greedily on the simulated
"cuda" device, the same prompts five ways, at each batch size:

  eager            every kernel is one launch
  cuda graph       examples/cuda_graph_runner.py (nano-vllm): graphs of sizes 1, 2, 4, 8 captured
                   up front; a batch replays the smallest that holds it, padded
  piecewise        torch.compile with a backend that splits at attention and replays each piece
                   between attention calls as a CUDA graph per batch size (vLLM's way)
  compile          torch.compile: inductor fuses pointwise and reduction ops
  reduce-overhead  torch.compile(mode="reduce-overhead"): the compiled graph as one CUDA graph

Each way runs STEPS decode steps (warmup, capture, replay) after a prefill; the table shows the
last step's launches, its simulated time (CUDA events around the step, the device idle before
it) and the fraction of that time some kernel ran (GPU busy), the CUDA graphs captured so far,
the memory their pools hold, the tokens computed (padded) against the tokens needed, and whether
every step's logits and tokens equal eager's. Footnotes under it say why a padded CUDA-graph
step launches once more (the padding rows' memset) and why piecewise pads nothing.

Times are the cost model's (fake_torch/_simulated/_cost.py) on the simulated GPU: the H200 unless
the FAKE_TORCH_GPU environment variable names another (fake_torch/_simulated/_gpus.py). They are
deterministic: the same table every run. With --plot, a second table and figure give the step time
against batch size, up to where graphs stop paying off (fake_torch/_tools/_demo_time.py).
"""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

BATCH_SIZES = (1, 3, 8)
MODES = ("eager", "cuda graph", "piecewise", "compile", "reduce-overhead")
STEPS = 3  # warmup, capture, replay
PROMPT_LEN = 5
NOTE_WIDTH = 100  # the footnotes' lines
LOGITS_ATOL = 1e-4  # a padded batch changes the matmul's shape, so its float sums may differ

Step = Callable[[Any, Any], Any]  # (token ids [bs], positions [bs]) -> logits [bs, V]


@dataclass
class Row:
    """One mode at one batch size."""

    mode: str
    bs: int
    launches: int  # of the last decode step
    step_ms: float  # the last decode step's simulated time (CUDA events), in milliseconds
    busy: float  # the fraction of step_ms some kernel ran on the simulated device
    graphs: int  # CUDA graphs this mode captured so far
    pool_bytes: int  # memory_reserved() this mode holds, after empty_cache()
    padded: int  # rows the step computed
    equal: bool  # every step's logits allclose and tokens equal to eager's


def _examples() -> tuple[ModuleType, ModuleType]:
    """examples/llama.py and examples/cuda_graph_runner.py, imported with torch = fake_torch."""
    from fake_torch._install import install

    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        folder = root / "examples"
        if (folder / "llama.py").is_file():
            break
    else:
        raise FileNotFoundError("examples/llama.py not found: run the demo from the "
                                "repository root")
    install()
    sys.path.insert(0, str(folder))  # the runner imports `llama` as the examples do
    return importlib.import_module("llama"), importlib.import_module("cuda_graph_runner")


def _progress(msg: str) -> None:
    print(f"demo: {msg}", file=sys.stderr, flush=True)


@contextmanager
def _count_captures() -> Iterator[list[int]]:
    """Counts torch.cuda.CUDAGraph captures while open (torch keeps no such count)."""
    from fake_torch.cuda.graphs import CUDAGraph

    count = [0]
    capture_end = CUDAGraph.capture_end

    def counted(self: CUDAGraph) -> None:
        capture_end(self)
        count[0] += 1

    CUDAGraph.capture_end = counted  # type: ignore[method-assign]
    try:
        yield count
    finally:
        CUDAGraph.capture_end = capture_end  # type: ignore[method-assign]


def _make_step(mode: str, model: Any, runner_mod: ModuleType, max_bs: int
               ) -> tuple[Step, Callable[[int], int]]:
    """The decode step of `mode`, and the rows it computes for a batch of bs."""
    import fake_torch as torch
    from fake_torch._compile import compile
    from fake_torch._tools._demo_piecewise import PiecewiseBackend

    def unpadded(bs: int) -> int:
        return bs

    if mode == "eager":
        return (lambda ids, pos: model(ids[:, None], pos[:, None])), unpadded
    if mode == "cuda graph":
        runner = runner_mod.CudaGraphRunner(model, max_bs)
        _progress(f"capturing cuda graphs of sizes {runner.graph_bs}")
        runner.capture_cudagraph()

        def padded(bs: int) -> int:
            size: int | None = runner.graph_size_for(bs)
            return bs if size is None else size

        return runner.run_model, padded
    backend: Any = PiecewiseBackend() if mode == "piecewise" else "inductor"
    compiled = compile(model, backend=backend,
                       mode="reduce-overhead" if mode == "reduce-overhead" else None)

    def step(ids: Any, pos: Any) -> Any:
        torch.compiler.cudagraph_mark_step_begin()
        return compiled(ids[:, None], pos[:, None])

    return step, unpadded


def _timed(step: Step, tokens: Any, positions: Any) -> tuple[Any, float, float]:
    """One step between two timing events, the device idle before it (torch.compile's
    tutorial loop): (logits, simulated milliseconds, fraction of them some kernel ran)."""
    import fake_torch as torch
    from fake_torch._simulated._timeline import TIMELINE

    torch.cuda.synchronize()
    busy_ns = TIMELINE.busy_ns
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    logits = step(tokens, positions)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end)
    return logits, ms, (TIMELINE.busy_ns - busy_ns) * 1e-6 / ms


def _decode(step: Step, tokens: Any, positions: Any
            ) -> tuple[list[Any], list[Any], int, float, float]:
    """STEPS greedy steps: (logits of each step on the host, tokens, and the last step's
    launches, simulated milliseconds and GPU-busy fraction)."""
    from fake_torch._simulated._counter import LaunchCounter

    all_logits, all_tokens = [], []
    for _ in range(STEPS):
        LaunchCounter.reset()
        logits, ms, busy = _timed(step, tokens, positions)
        launches = LaunchCounter.n
        all_logits.append(logits.cpu())  # a graph's output is overwritten by its next replay
        tokens = logits.argmax(dim=-1)
        all_tokens.append(tokens.cpu())
        positions = positions + 1
    return all_logits, all_tokens, launches, ms, busy


def demo_gpu() -> str:
    """The GPU the demo simulates: FAKE_TORCH_GPU's, else the default every command simulates
    (fake_torch/_simulated/_gpus.py's DEFAULT)."""
    from fake_torch._simulated import _gpus

    return os.environ.get("FAKE_TORCH_GPU") or _gpus.DEFAULT


def run_demo(batch_sizes: tuple[int, ...] = BATCH_SIZES, seed: int = 0,
             gpu: str | None = None) -> list[Row]:
    """Every mode at every batch size, compared with eager (progress on stderr), on the
    simulated `gpu` (default: demo_gpu()); the GPU simulated before comes back afterwards."""
    from fake_torch._simulated import _gpus
    from fake_torch.cuda import set_simulated_gpu

    saved = _gpus.current().key
    set_simulated_gpu(demo_gpu() if gpu is None else gpu)
    try:
        return _run_demo(batch_sizes, seed)
    finally:
        set_simulated_gpu(saved)


def _run_demo(batch_sizes: tuple[int, ...], seed: int) -> list[Row]:
    import fake_torch as torch
    from fake_torch._dynamo import reset
    from fake_torch._kernels.closeness import allclose, equal
    from fake_torch._kernels.sampling import randint

    llama, runner_mod = _examples()
    cfg = llama.LlamaConfig()
    torch.manual_seed(seed)
    model = llama.Llama(cfg).to("cuda").eval()
    max_bs = max(batch_sizes)
    model.allocate_kv_cache(max_bs)
    prompts = {bs: randint(0, cfg.vocab_size, (bs, PROMPT_LEN), device="cuda")
               for bs in batch_sizes}
    rows: list[Row] = []
    reference: dict[int, tuple[list[Any], list[Any]]] = {}
    with torch.inference_mode():
        for mode in MODES:
            reset()
            torch.cuda.empty_cache()
            reserved = torch.cuda.memory_reserved()
            with _count_captures() as captures:
                step, padded = _make_step(mode, model, runner_mod, max_bs)
                for bs in batch_sizes:
                    _progress(f"{mode}, batch {bs}")
                    _, tokens, positions = llama.prefill(model, prompts[bs])  # eager prefill
                    logits, toks, launches, ms, busy = _decode(step, tokens, positions[:, 0])
                    reference.setdefault(bs, (logits, toks))
                    ref_logits, ref_toks = reference[bs]
                    same = all(allclose(a, b, atol=LOGITS_ATOL)
                               for a, b in zip(logits, ref_logits, strict=True))
                    same = same and all(equal(a, b) for a, b in zip(toks, ref_toks, strict=True))
                    torch.cuda.empty_cache()
                    rows.append(Row(mode, bs, launches, ms, busy, captures[0],
                                    torch.cuda.memory_reserved() - reserved, padded(bs),
                                    bool(same)))
            del step, padded  # the mode's graphs and pools go before the next one's baseline
    reset()
    return rows


HEADER = ("mode", "bs", "launches/step", "ms/step", "GPU busy", "graphs", "pool KiB",
          "padded/real tokens", "equals eager")


def format_table(rows: list[Row], gpu: str | None = None) -> str:
    """The one table: a row per mode and batch size, on the simulated GPU named `gpu`."""
    lines = [f"{HEADER[0]:<16}{HEADER[1]:>4}{HEADER[2]:>15}{HEADER[3]:>9}{HEADER[4]:>10}"
             f"{HEADER[5]:>8}{HEADER[6]:>10}{HEADER[7]:>20}  {HEADER[8]}"]
    for r in rows:
        lines.append(f"{r.mode:<16}{r.bs:>4}{r.launches:>15}{r.step_ms:>9.4f}"
                     f"{f'{100 * r.busy:.0f}%':>10}{r.graphs:>8}"
                     f"{r.pool_bytes / 1024:>10.1f}{f'{r.padded}/{r.bs}':>20}  "
                     f"{'yes' if r.equal else 'NO'}")
    lines.append(f"launches/step, ms/step: the last of {STEPS} decode steps (warmup, capture, "
                 "replay); graphs: CUDA graphs captured so far;")
    lines.append("ms/step: simulated (CUDA events around the step); GPU busy: the share of it "
                 "some kernel ran, the rest the device waited for the host's launches;")
    lines.append("pool KiB: device memory the mode holds (memory_reserved after empty_cache); "
                 "padded/real: rows computed / rows needed")
    if gpu is not None:
        lines.append(f"simulated GPU: {gpu} (FAKE_TORCH_GPU=H200|H100|A100|L4 chooses; "
                     "costs: fake_torch/_simulated/_cost.py)")
    return "\n".join(lines + footnotes(rows))


def footnotes(rows: list[Row]) -> list[str]:
    """Why the rows that surprise differ: a padded CUDA-graph step launches once more, and
    piecewise pads nothing."""
    graph_rows = [r for r in rows if r.mode == "cuda graph"]
    exact = [r for r in graph_rows if r.padded == r.bs]
    notes = []
    for r in graph_rows:
        if r.padded == r.bs:
            continue
        compared = ""
        if exact and len({e.launches for e in exact}) == 1:
            many = len(exact) > 1
            compared = (f" where batch{'es' if many else ''} "
                        f"{' and '.join(str(e.bs) for e in exact)} take{'' if many else 's'} "
                        f"{exact[0].launches}")
        rows_padded = r.padded - r.bs
        notes.append(f"cuda graph at batch {r.bs}: {r.launches} launches{compared}. No "
                     f"graph holds {r.bs} rows, so the step replays the graph of {r.padded}: "
                     "besides copying the new ids and positions into the graph's static "
                     f"inputs, it zeroes the position{'s' if rows_padded > 1 else ''} of the "
                     f"{rows_padded} padding row{'s' if rows_padded > 1 else ''} (zero_, one "
                     "memset) before the replay.")
    if any(r.mode == "piecewise" for r in rows):
        notes.append("piecewise pads nothing: torch.compile captures its pieces for each "
                     "batch size it sees (a batch of 3 gets graphs of its own), and attention "
                     "runs eagerly between them on the real rows only.")
    return [textwrap.fill(note, NOTE_WIDTH, initial_indent="note: ", subsequent_indent="      ")
            for note in notes]


def time_plot_path(plot: str) -> Path:
    """Where --plot FILE puts the step time figure: next to FILE, as <stem>_time<suffix>."""
    path = Path(plot)
    return path.with_name(f"{path.stem}_time{path.suffix or '.png'}")


def main(plot: str | None = None) -> int:
    """Print the table; with `plot`, also draw launches per step to that PNG file, and step
    time against batch size (printed as a second table) next to it (time_plot_path)."""
    if plot is not None:
        from fake_torch._tools._demo_plot import require_matplotlib

        if not require_matplotlib():
            return 2
    from fake_torch._simulated import _gpus

    gpu = demo_gpu()
    rows = run_demo(gpu=gpu)
    print(format_table(rows, _gpus.lookup(gpu).name))
    if plot is not None:
        from fake_torch._tools._demo_plot import plot_launches

        plot_launches(rows, plot)
        print(f"plot written to {plot}")
        _plot_time(time_plot_path(plot))
    return 0 if all(r.equal for r in rows) else 1


def _plot_time(path: Path) -> None:
    """Step time against batch size (_demo_time.py): its table, then its figure."""
    from fake_torch._tools._demo_plot import plot_time
    from fake_torch._tools._demo_time import format_curve, time_curve

    llama, _ = _examples()
    curve = time_curve(llama, progress=_progress)
    print()
    print(format_curve(curve))
    plot_time(curve, str(path))
    print(f"plot written to {path}")
