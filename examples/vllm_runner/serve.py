"""Serve one token stream in every CUDA graph mode and print what each mode paid.

    python -m fake_torch run examples/vllm_serve.py [--max-num-seqs 8] [--requests 12]

Each mode gets a fresh runner over the same weights: capture (largest first, one pool), then the
same mixed prefill/decode steps. The table gives, per mode, the launches of an average step
(decode-only and mixed steps apart), the graphs captured, the memory their pool reserved and the
most of it in use at once during capture, the padding waste (padding tokens / tokens computed),
the steps too large for any graph (run eagerly, unpadded), and whether every sampled token equals
eager's (an uncompiled model, no graphs); it exits non-zero if one does not.
The step table after it shows what the dispatcher did with each step in each mode.
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from llama import LlamaConfig

from vllm_runner.config import AttentionCGSupport, CompilationConfig, CUDAGraphMode
from vllm_runner.counter import compilation_counter
from vllm_runner.model import FlatLlama
from vllm_runner.runner import ModelRunner, StepRecord
from vllm_runner.scheduler import Request, Scheduler, make_requests

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
    runner.capture_model()
    scheduler = Scheduler(requests, config.max_num_seqs, max_num_batched_tokens,
                          model.cfg.max_seq_len)
    logits: list[torch.Tensor] = []
    while scheduler.has_work():
        batch = scheduler.schedule()
        if not batch.reqs:
            continue  # nothing has arrived yet
        sampled, step_logits = runner.execute_model(batch)
        logits.append(step_logits.cpu())
        scheduler.update(batch, sampled)
    return ServeResult(label or runner.config.cudagraph_mode.name,
                       {r.req_id: r.output for r in requests}, logits, runner.records,
                       runner.num_graphs, runner.graph_pool_bytes, runner.graph_peak_bytes,
                       compilation_counter.num_eager_steps - eager_steps)


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
    print(format_steps(results))
    differ = [res.label for res in results if res.outputs != eager.outputs]
    if differ:
        raise SystemExit(f"vllm_serve: {', '.join(differ)} sampled other tokens than eager")


if __name__ == "__main__":
    main()
