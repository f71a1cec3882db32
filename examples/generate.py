"""Generate a few tokens with the example Llama: prefill a prompt batch, then decode step by step.

    python examples/generate.py                     # real torch
    python -m fake_torch run examples/generate.py   # fake_torch, on its simulated "cuda"

On fake_torch it also prints how many kernels each decode step would launch on a GPU: the
number CUDA graphs exist to cut down.
"""

from __future__ import annotations

import argparse

import torch
from llama import Llama, LlamaConfig, decode_step, prefill


@torch.inference_mode()
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--prompt-len", type=int, default=5)
    parser.add_argument("--new-tokens", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=0.0, help="0 means greedy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    counter = getattr(torch, "LaunchCounter", None)  # only fake_torch counts launches
    torch.manual_seed(args.seed)
    cfg = LlamaConfig()
    model = Llama(cfg).to(device).eval()
    model.allocate_kv_cache(args.batch)
    prompt = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt_len), device=device)
    print(f"device {device}, batch {args.batch}, prompt {prompt.tolist()}")

    _, tokens, positions = prefill(model, prompt, args.temperature)
    generated = [tokens]
    for step in range(args.new_tokens - 1):
        if counter is not None:
            counter.reset()
        _, tokens, positions = decode_step(model, tokens, positions, args.temperature)
        generated.append(tokens)
        if counter is not None:
            print(f"decode step {step}: {counter.n} launches")
    print("generated", torch.stack(generated, dim=1).tolist())


if __name__ == "__main__":
    main()
