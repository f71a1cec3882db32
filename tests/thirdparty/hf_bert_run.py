"""Hugging Face transformers (written against transformers 5.25.0, installed with pip): the
encoder BertForMaskedLM (absolute and token-type embeddings, post-LayerNorm blocks, gelu, a
padding mask over the keys) through from_pretrained and its forward, unchanged.

--write saves a tiny random model with save_pretrained. The run loads it with
from_pretrained(dtype=float32) onto the device and calls the model on STEPS batches of two
padded sequences (input_ids + attention_mask, the second one shorter): eagerly, under
torch.compile(model) or torch.compile(model, mode="reduce-overhead"). "tokens" are the argmax
predictions at every position, "logits" the masked-LM logits of the last batch; each forward
after the first two counts as a step (under reduce-overhead the CUDA graph trees warm up on
the first call and record on the second, as torch's do).
"""

from __future__ import annotations

from typing import Any

import common
import hf_llama_run

ARCH = "BertForMaskedLM"
CONFIG = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
              num_attention_heads=4, max_position_embeddings=64)
STEPS = 6
LENGTH = 12


def batch(torch: Any, step: int, device: str) -> dict[str, Any]:
    """Two sequences of LENGTH tokens, the second padded after 7: different ids each step."""
    ids = [[(7 * step + 5 * i + 3 * j) % 120 + 2 for j in range(LENGTH)] for i in range(2)]
    mask = [[1] * LENGTH, [1] * 7 + [0] * (LENGTH - 7)]
    return {"input_ids": torch.tensor(ids, device=device),
            "attention_mask": torch.tensor(mask, device=device)}


def run(torch: Any, args: Any, arch: str = ARCH) -> None:
    _, model_cls = hf_llama_run._classes(arch)
    device = common.device_for(args.torch)
    model = model_cls.from_pretrained(args.ckpt, dtype=torch.float32).to(device).eval()
    if args.mode != "eager":
        model = torch.compile(model, mode=None if args.mode == "compile" else args.mode)
    launches = common.Launches(torch)
    forward = launches.wrap(model, "step")
    tokens, logits = [], None
    with torch.no_grad():
        for step in range(STEPS):
            logits = forward(**batch(torch, step, device)).logits  # [2, LENGTH, vocab]
            tokens.append(logits.argmax(-1).tolist())
    steps = launches.calls.pop("step", [])
    launches.calls.update(first=steps[:2], decode_step=steps[2:])
    assert logits is not None
    common.write_results(args.json, torch, args.mode, tokens, logits.flatten(0, 1), launches)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    if args.write:
        hf_llama_run.write(torch, args.ckpt, ARCH, CONFIG)
    else:
        run(torch, args)


if __name__ == "__main__":
    main()
