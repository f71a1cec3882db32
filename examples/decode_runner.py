"""Decode the example Llama with CUDA graphs (nano-vllm / SGLang style), checked against eager.

    python -m fake_torch run examples/decode_runner.py [--max-bs 20] [--pool private]
    python examples/decode_runner.py                   # real torch: CPU, eager only, no counts

For every batch size 1..max_bs it prefills random prompts, then runs the same decode steps twice
from the same KV cache: eagerly, and through the runner (graph replay, padded to the smallest
captured size that holds the batch, or eager above the largest). It prints, per batch size, the
launches of one decode step each way (fake_torch counts them), the graph that served it, how
many graphs exist, and whether logits and greedy tokens equal eager's; first, the memory the
captures took.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch
from cuda_graph_runner import CudaGraphRunner
from llama import Llama, LlamaConfig, prefill

LOGITS_ATOL = 1e-4  # a padded batch changes the matmul's shape, so its float sums may differ


def _launches() -> int | None:
    """Launches since the last reset (None on real torch, which does not count them)."""
    counter = getattr(torch, "LaunchCounter", None)
    return None if counter is None else int(counter.n)


def _reset_launches() -> None:
    counter = getattr(torch, "LaunchCounter", None)
    if counter is not None:
        counter.reset()


def _decode(step: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], tokens: torch.Tensor,
            positions: torch.Tensor, num_steps: int
            ) -> tuple[list[torch.Tensor], list[torch.Tensor], list[int | None]]:
    """`num_steps` greedy decode steps with `step(ids [bs], positions [bs]) -> logits [bs, V]`:
    (logits of each step, tokens of each step, launches of each step)."""
    all_logits, all_tokens, launches = [], [], []
    for _ in range(num_steps):
        _reset_launches()
        logits = step(tokens, positions)
        launches.append(_launches())
        all_logits.append(logits.clone())  # a graph's output is overwritten by its next replay
        tokens = logits.argmax(dim=-1)
        all_tokens.append(tokens)
        positions = positions + 1
    return all_logits, all_tokens, launches


def _fmt_launches(launches: list[int | None]) -> str:
    if launches[0] is None:
        return "-"
    return ",".join(str(n) for n in dict.fromkeys(launches))  # "60", or each distinct count


@torch.inference_mode()
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-bs", type=int, default=20, help="largest batch (graphs <= it)")
    parser.add_argument("--pool", choices=("shared", "private"), default="shared",
                        help="capture into one shared pool (the real pattern) or one pool each")
    parser.add_argument("--prompt-len", type=int, default=5)
    parser.add_argument("--steps", type=int, default=3, help="decode steps per batch size")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    use_graphs = torch.cuda.is_available()
    device = "cuda" if use_graphs else "cpu"
    torch.manual_seed(args.seed)
    cfg = LlamaConfig()
    model = Llama(cfg).to(device).eval()
    model.allocate_kv_cache(args.max_bs)
    runner = CudaGraphRunner(model, args.max_bs, shared_pool=args.pool == "shared")

    if use_graphs:
        torch.cuda.empty_cache()
        reserved, allocated = torch.cuda.memory_reserved(), torch.cuda.memory_allocated()
        runner.capture_cudagraph()
        torch.cuda.empty_cache()  # what is left is held by the graphs' pools and outputs
        reserved = torch.cuda.memory_reserved() - reserved
        allocated = torch.cuda.memory_allocated() - allocated
        sizes = list(runner.graphs)  # in capture order
        kernels = [getattr(runner.graphs[bs], "num_kernels", "?") for bs in sizes]  # fake_torch
        print(f"captured {len(runner.graphs)} graphs {sizes} (capture order) into "
              f"{'one shared pool' if runner.shared_pool else 'a private pool each'}, "
              f"kernels inside {kernels}")
        print(f"pool memory: reserved {reserved} bytes ({reserved / 2**20:.2f} MiB), "
              f"allocated {allocated} bytes ({allocated / 2**10:.1f} KiB)")
    else:
        print(f"device {device}: no CUDA graphs, every step runs eagerly")

    print(f"{'bs':>3} {'path':>8} {'eager':>6} {'graph':>6} {'graphs':>6} "
          f"{'max|dlogits|':>12} {'tokens':>6} {'equal':>5}")
    for bs in range(1, args.max_bs + 1):
        prompt = torch.randint(0, cfg.vocab_size, (bs, args.prompt_len), device=device)
        _, tokens, positions = prefill(model, prompt)  # positions [bs, 1]
        assert model.kv_cache is not None
        cache = model.kv_cache.clone()  # both runs decode from this same cache
        eager = _decode(runner.forward, tokens, positions[:, 0], args.steps)
        model.kv_cache.copy_(cache)
        graph = _decode(runner.run_model, tokens, positions[:, 0], args.steps)
        size = runner.graph_size_for(bs)
        path = "eager" if size is None else f"cg{size}"
        diff = max(float((a - b).abs().max()) for a, b in zip(eager[0], graph[0], strict=True))
        same_tokens = all(bool(torch.equal(a, b)) for a, b in zip(eager[1], graph[1],
                                                                   strict=True))
        equal = same_tokens and diff <= LOGITS_ATOL
        print(f"{bs:>3} {path:>8} {_fmt_launches(eager[2]):>6} {_fmt_launches(graph[2]):>6} "
              f"{len(runner.graphs):>6} {diff:>12.2e} {'same' if same_tokens else 'DIFF':>6} "
              f"{'yes' if equal else 'NO':>5}")
    print(f"steps: {sum(runner.stats.num_graph_steps.values())} replayed "
          f"{dict(sorted(runner.stats.num_graph_steps.items()))}, "
          f"{runner.stats.num_eager_steps} eager (no captured graph holds the batch)")


if __name__ == "__main__":
    main()
