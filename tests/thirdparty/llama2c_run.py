"""karpathy/llama2.c (written against commit 350e04f) through its own sample.py, unchanged.

--write saves a tiny Llama 2 (grouped-query attention: 4 query heads, 2 KV heads; the Llama 2
tokenizer's 32000 tokens, the repo's tokenizer.model) as train.py saves it: ckpt.pt holding
'model' (with the '_orig_mod.' prefix of a compiled model), 'model_args' and 'config'. The run
executes sample.py itself from the checkout: torch.load(map_location=device), Transformer(),
load_state_dict(strict=False), torch.compile(model) when --compile=True, the sentencepiece
tokenizer, and model.generate with temperature=0.0 (greedy: topk(k=1)). Each decode step is
one Transformer.forward over the whole sequence (no KV cache), output on the last position.

Logits: the model sample.py built (compiled in compile mode), called on each prefix of the
sampled sequence: the last-position logits that generate saw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import common

CONFIG = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=32000, multiple_of=32,
              max_seq_len=32, dropout=0.0)
PROMPT = "Once upon a time"
NEW_TOKENS = 8


def write(torch: Any, ckpt: Path) -> None:
    from model import ModelArgs, Transformer  # type: ignore[import-not-found]

    model = Transformer(ModelArgs(**CONFIG))
    state = common.randomize(torch, model.state_dict())
    ckpt.mkdir(parents=True, exist_ok=True)
    torch.save({"model": {"_orig_mod." + k: v for k, v in state.items()},
                "model_args": CONFIG, "iter_num": 0, "best_val_loss": 1e9,
                "config": {"vocab_source": "llama2", "vocab_size": 32000}}, ckpt / "ckpt.pt")


def run(torch: Any, args: Any) -> None:
    import model as llama2c

    launches = common.Launches(torch)
    argv = [f"--checkpoint={args.ckpt / 'ckpt.pt'}", f"--start={PROMPT}", "--num_samples=1",
            f"--max_new_tokens={NEW_TOKENS}", "--temperature=0.0",
            f"--device={common.device_for(args.torch)}", "--dtype=float32",
            f"--compile={args.mode != 'eager'}"]
    with launches.patched(llama2c.Transformer, "forward", "decode_step"):
        ran, printed = common.run_script(args.src, "sample.py", argv)
    model, seq = ran["model"], ran["y"]
    prompt_len = ran["x"].shape[1]
    with torch.no_grad():
        logits = torch.cat([model(seq[:, :t])[:, -1] for t in range(prompt_len, seq.shape[1])])
    common.write_results(args.json, torch, args.mode, seq.tolist(), logits, launches,
                         printed=printed)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    common.on_path(args.src)
    write(torch, args.ckpt) if args.write else run(torch, args)


if __name__ == "__main__":
    main()
