"""Serve one token stream in every CUDA graph mode and print what each mode paid.

    python -m fake_torch run examples/vllm_serve.py [--max-num-seqs 8] [--requests 12]

Each mode gets a fresh runner over the same weights: capture (largest first, one pool), then the
same mixed prefill/decode steps. The table gives, per mode, the launches of an average step
(decode-only and mixed steps apart), the graphs captured, the memory their pool reserved and the
most of it in use at once during capture, the padding waste (padding tokens / tokens computed),
the steps too large for any graph (run eagerly, unpadded), and whether every sampled token equals
eager's (an uncompiled model, no graphs); it exits non-zero if one does not.
The times after it are CUDA events' (on fake_torch, the simulated GPU's:
fake_torch/_simulated/_cost.py): each mode's average step, decode-only and mixed steps apart, each
step timed from an idle device; and, as vLLM logs it, how long the capture phase took and the
memory its graphs hold. The step table last shows what the dispatcher did with each step in each
mode.
"""

from __future__ import annotations

import argparse
import copy
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch
from llama import LlamaConfig

from vllm_runner.config import AttentionCGSupport, CompilationConfig, CUDAGraphMode
from vllm_runner.counter import compilation_counter
from vllm_runner.model import FlatLlama
from vllm_runner.runner import ModelRunner, StepRecord
from vllm_runner.scheduler import Request, Scheduler, make_requests

T = TypeVar("T")
LOGITS_ATOL = 1e-4  # a padded step changes the matmuls' row counts, so float sums may differ


@dataclass
class ServeResult:
    label: str
    outputs: dict[int, list[int]]  # req_id -> sampled tokens
    logits: list[torch.Tensor]  # per step [num_reqs, V], on the host
    records: list[StepRecord]
    num_graphs: int
    graph_pool_bytes: int
    graph_peak_bytes: int
    num_eager_steps: int
    step_ms: list[float]  # each step's time between two CUDA events, the device idle before it
    capture_s: float  # the capture phase (warm-up, compile, captures), timed by CUDA events


def _simulated() -> bool:
    """Whether torch is fake_torch (its times are simulated), which counts launches."""
    return getattr(torch, "LaunchCounter", None) is not None


def _timed_ms(fn: Callable[[], T]) -> tuple[T, float]:
    """(fn(), the milliseconds between two CUDA events around it): on an idle stream an event
    completes when the host reaches it, so this times the host's work too (vLLM times its
    capture with the host's clock; on fake_torch that clock is simulated, and this reads it)."""
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    out = fn()
    end.record()
    torch.cuda.synchronize()
    return out, start.elapsed_time(end)


def serve(model: FlatLlama, requests: list[Request], config: CompilationConfig, *,
          compile: bool = True, label: str | None = None, max_num_batched_tokens: int = 64,
          attention_support: AttentionCGSupport = AttentionCGSupport.ALWAYS) -> ServeResult:
    """Capture, then run `requests` to completion with a fresh runner; `model` and `requests`
    are not changed (the runner works on copies)."""
    requests = copy.deepcopy(requests)
    weights = model
    model = FlatLlama(weights.cfg).to(weights.embed_tokens.weight.device).eval()
    model.load_state_dict(weights.state_dict())
    eager_steps = compilation_counter.num_eager_steps
    runner = ModelRunner(model, config, compile=compile,
                         max_num_batched_tokens=max_num_batched_tokens,
                         attention_support=attention_support)
    _, capture_ms = _timed_ms(runner.capture_model)
    scheduler = Scheduler(requests, config.max_num_seqs, max_num_batched_tokens,
                          model.cfg.max_seq_len)
    logits: list[torch.Tensor] = []
    step_ms: list[float] = []
    while scheduler.has_work():
        batch = scheduler.schedule()
        if not batch.reqs:
            continue  # nothing has arrived yet
        (sampled, step_logits), ms = _timed_ms(functools.partial(runner.execute_model, batch))
        step_ms.append(ms)
        logits.append(step_logits.cpu())
        scheduler.update(batch, sampled)
    return ServeResult(label or runner.config.cudagraph_mode.name,
                       {r.req_id: r.output for r in requests}, logits, runner.records,
                       runner.num_graphs, runner.graph_pool_bytes, runner.graph_peak_bytes,
                       compilation_counter.num_eager_steps - eager_steps, step_ms,
                       capture_ms / 1e3)


def _mean(values: list[int]) -> str:
    return f"{sum(values) / len(values):.1f}" if values else "-"


def format_table(results: list[ServeResult], reference: ServeResult) -> str:
    lines = [f"{'mode':<20} {'launches/step':>13} {'decode':>7} {'mixed':>7} {'graphs':>6} "
             f"{'pool MiB':>8} {'peak KiB':>8} {'padding':>9} {'eager':>5} {'max|dlogits|':>12} "
             f"{'tokens':>6}"]
    for res in results:
        launches = [r.launches for r in res.records]
        decode = [r.launches for r in res.records if r.uniform_decode]
        mixed = [r.launches for r in res.records if not r.uniform_decode]
        padded = sum(r.padded_tokens for r in res.records)
        waste = padded - sum(r.num_tokens for r in res.records)
        diff = max(float((a - b).abs().max())
                   for a, b in zip(res.logits, reference.logits, strict=True))
        same = "same" if res.outputs == reference.outputs else "DIFF"
        lines.append(f"{res.label:<20} {_mean(launches):>13} {_mean(decode):>7} "
                     f"{_mean(mixed):>7} {res.num_graphs:>6} "
                     f"{res.graph_pool_bytes / 2**20:>8.2f} {res.graph_peak_bytes / 2**10:>8.1f} "
                     f"{f'{waste}/{padded}':>9} {res.num_eager_steps:>5} {diff:>12.2e} "
                     f"{same:>6}")
    return "\n".join(lines)


def _mean_ms(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "-"


def format_times(results: list[ServeResult]) -> str:
    """Per mode: the average step's time (all, decode-only, mixed), and vLLM's capture line."""
    clock = " (simulated)" if _simulated() else ""
    lines = [f"{'mode':<20} {'ms/step':>8} {'decode':>7} {'mixed':>7}   step times{clock}"]
    for res in results:
        decode = [ms for ms, r in zip(res.step_ms, res.records, strict=True) if r.uniform_decode]
        mixed = [ms for ms, r in zip(res.step_ms, res.records, strict=True)
                 if not r.uniform_decode]
        lines.append(f"{res.label:<20} {_mean_ms(res.step_ms):>8} {_mean_ms(decode):>7} "
                     f"{_mean_ms(mixed):>7}")
    for res in results:
        if res.num_graphs:
            lines.append(f"{res.label}: Graph capturing finished in {res.capture_s:.4f} secs"
                         f"{clock}, took {res.graph_pool_bytes / 2**30:.2f} GiB "
                         f"({res.graph_pool_bytes / 2**20:.2f} MiB)")
    return "\n".join(lines)


_SHORT = {CUDAGraphMode.NONE: "eager", CUDAGraphMode.PIECEWISE: "pw",
          CUDAGraphMode.FULL: "full"}


def format_steps(results: list[ServeResult]) -> str:
    """Per step: its tokens and requests, and per mode the runtime mode and padded size."""
    head = f"{'step':>4} {'tokens':>6} {'reqs':>4} {'kind':>6} " + " ".join(
        f"{res.label[:18]:>18}" for res in results)
    lines = [head]
    for i, first in enumerate(results[0].records):
        kind = "decode" if first.uniform_decode else "mixed"
        cells = []
        for res in results:
            r = res.records[i]
            pad = r.padded_tokens - r.num_tokens
            cells.append(f"{_SHORT[r.runtime_mode]} {r.padded_tokens}"
                         + (f" (+{pad})" if pad else ""))
        lines.append(f"{first.step:>4} {first.num_tokens:>6} {first.num_reqs:>4} {kind:>6} "
                     + " ".join(f"{c:>18}" for c in cells))
    return "\n".join(lines)


def run_all_modes(model: FlatLlama, requests: list[Request], max_num_seqs: int,
                  capture_sizes: list[int] | None = None, max_num_batched_tokens: int = 64,
                  weak_ref_outputs: bool = True,
                  attention_support: AttentionCGSupport = AttentionCGSupport.ALWAYS
                  ) -> tuple[ServeResult, list[ServeResult]]:
    """(eager reference, one result per mode) for the same model and requests."""
    def config(mode: CUDAGraphMode) -> CompilationConfig:
        return CompilationConfig(cudagraph_mode=mode, cudagraph_capture_sizes=capture_sizes,
                                 max_num_seqs=max_num_seqs,
                                 splitting_ops=["vllm_runner::attention"],
                                 weak_ref_outputs=weak_ref_outputs)

    eager = serve(model, requests, config(CUDAGraphMode.NONE), compile=False,
                  label="eager (no compile)", max_num_batched_tokens=max_num_batched_tokens)
    results = [serve(model, requests, config(mode), label=mode.name,
                     max_num_batched_tokens=max_num_batched_tokens,
                     attention_support=attention_support) for mode in CUDAGraphMode]
    return eager, results


@torch.inference_mode()
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-num-seqs", type=int, default=8)
    parser.add_argument("--capture-sizes", type=int, nargs="*", default=None,
                        help="default: vLLM's list up to 2 * max-num-seqs")
    parser.add_argument("--max-num-batched-tokens", type=int, default=64)
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hold-outputs", action="store_true",
                        help="graph wrappers keep their outputs alive (more pool memory)")
    parser.add_argument("--attention-support", choices=[s.name for s in AttentionCGSupport],
                        default="ALWAYS", help="how far attention can be captured")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("vllm_serve needs a CUDA device: run it as "
                         "`python -m fake_torch run examples/vllm_serve.py`")

    torch.manual_seed(args.seed)
    cfg = LlamaConfig(num_layers=args.layers)
    model = FlatLlama(cfg).cuda().eval()
    requests = make_requests(args.requests, cfg.vocab_size, args.seed)
    eager, results = run_all_modes(
        model, requests, args.max_num_seqs, args.capture_sizes, args.max_num_batched_tokens,
        not args.hold_outputs, AttentionCGSupport[args.attention_support])
    sizes = CompilationConfig(cudagraph_capture_sizes=args.capture_sizes,
                              max_num_seqs=args.max_num_seqs).capture_sizes
    print(f"{len(requests)} requests, {len(eager.records)} steps, max_num_seqs "
          f"{args.max_num_seqs}, capture sizes {sizes}, "
          f"{'outputs held' if args.hold_outputs else 'outputs weakly referenced'}")
    print(format_table([eager, *results], eager))
    print()
    print(f"{'simulated ' if _simulated() else ''}GPU: {torch.cuda.get_device_name()}")
    print(format_times([eager, *results]))
    print()
    print(format_steps(results))
    differ = [res.label for res in results if res.outputs != eager.outputs]
    if differ:
        raise SystemExit(f"vllm_serve: {', '.join(differ)} sampled other tokens than eager")


if __name__ == "__main__":
    main()
