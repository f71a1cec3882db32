"""karpathy/minGPT (written against commit 37baab7): mingpt/model.py, unchanged.

--write saves the state dict of a 'gpt-nano' GPT (minGPT's own config table: 3 layers, 3
heads, 48 wide) over a 64-token vocabulary (torch.save; minGPT has no loader of its own
besides from_pretrained's Hugging Face download). The run builds GPT(config), loads the state
dict (torch.load(map_location=device), load_state_dict), and calls GPT.generate with
do_sample=False (greedy: topk(k=1) of the softmax). Each decode step is one GPT.forward over
the whole sequence (no KV cache). minGPT never compiles; the compile mode compiles
GPT.forward in place (`GPT.forward = torch.compile(GPT.forward)`, as one decorates a method).

Logits: GPT.forward (compiled in compile mode) over the generated sequence: every position's
logits, the rows that predicted the generated tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import common

VOCAB, BLOCK = 64, 32
PROMPT = [3, 14, 15, 9, 26, 5, 35, 8]
NEW_TOKENS = 8


def _config() -> Any:
    from mingpt.model import GPT  # type: ignore[import-not-found]

    config = GPT.get_default_config()
    config.model_type, config.vocab_size, config.block_size = "gpt-nano", VOCAB, BLOCK
    return config


def write(torch: Any, ckpt: Path) -> None:
    from mingpt.model import GPT

    state = common.randomize(torch, GPT(_config()).state_dict())
    ckpt.mkdir(parents=True, exist_ok=True)
    torch.save(state, ckpt / "model.pt")


def run(torch: Any, args: Any) -> None:
    from mingpt.model import GPT

    device = common.device_for(args.torch)
    model = GPT(_config())
    model.load_state_dict(torch.load(args.ckpt / "model.pt", map_location=device))
    model.to(device).eval()
    if args.mode != "eager":
        GPT.forward = torch.compile(GPT.forward)
    launches = common.Launches(torch)
    prompt = torch.tensor([PROMPT], dtype=torch.long, device=device)
    with torch.no_grad():
        with launches.patched(GPT, "forward", "decode_step"):
            seq = model.generate(prompt, NEW_TOKENS, do_sample=False)
        logits = model(seq)[0][0, len(PROMPT) - 1:-1]
    common.write_results(args.json, torch, args.mode, seq.tolist(), logits, launches)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    common.on_path(args.src)
    write(torch, args.ckpt) if args.write else run(torch, args)


if __name__ == "__main__":
    main()
