"""The counts that teach: launches of one decode step of the example Llama, run eagerly, with
torch.compile (inductor fuses pointwise and reduction ops into Triton kernels) and with
mode="reduce-overhead" (the compiled graph replayed as ONE CUDA graph launch), and which eager
ops each fused kernel absorbed.

    python -m fake_torch run examples/compile_table.py [--batch 2]

fake_torch only: real torch neither counts launches nor compiles for a CPU-only machine's
"cuda". The model is compiled as a module, so its parameters, buffers and KV cache are static
(never copied into a CUDA graph); each step feeds it new tokens and positions, and the greedy
sampling (argmax) and `positions + 1` after it run eagerly.
"""

from __future__ import annotations

import argparse

import torch
from llama import Llama, LlamaConfig, decode_step, prefill

from fake_torch._inductor.report import StepCounts, format_table, measure


def decode_counts(batch: int = 2, prompt_len: int = 5, seed: int = 0) -> StepCounts:
    """Prefill random prompts, then measure one decode step each way."""
    torch.manual_seed(seed)
    cfg = LlamaConfig()
    model = Llama(cfg).to("cuda").eval()
    model.allocate_kv_cache(batch)
    prompt = torch.randint(0, cfg.vocab_size, (batch, prompt_len), device="cuda")
    with torch.inference_mode():
        _, tokens, positions = prefill(model, prompt)
        return measure(model, decode_step, tokens, positions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()
    counts = decode_counts(args.batch)
    print(format_table(counts, title=f"launches per decode step (batch {args.batch})"))


if __name__ == "__main__":
    main()
