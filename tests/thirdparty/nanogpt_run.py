"""karpathy/nanoGPT (written against commit 3adf61e) through its own sample.py, unchanged.

--write saves a tiny character-level GPT the way nanoGPT's train.py does (ckpt.pt holding
'model' with the '_orig_mod.' prefix a compiled model leaves, 'model_args', 'config') and the
dataset's meta.pkl. The run executes sample.py itself (runpy, from the checkout, its
configurator.py reading our --key=value overrides): torch.load(map_location=device), GPT(),
load_state_dict, torch.compile(model) when --compile=True, and model.generate with top_k=1
(greedy: softmax over one finite logit, multinomial has one choice). Each decode step is one
GPT.forward over the whole sequence (nanoGPT keeps no KV cache).

Logits: after sampling, the model sample.py built (compiled in compile mode) is called on each
prefix of the sampled sequence; its last-position logits are the ones generate saw.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import common

CHARS = sorted(set("abcdefghijklmnopqrstuvwxyz0123456789 .,;:!?'-\n"))
CONFIG = dict(n_layer=2, n_head=2, n_embd=32, block_size=32, bias=True,
              vocab_size=len(CHARS), dropout=0.0)
PROMPT = "the quick brown fox"
NEW_TOKENS = 8


def write(torch: Any, ckpt: Path) -> None:
    from model import GPT, GPTConfig  # type: ignore[import-not-found]

    model = GPT(GPTConfig(**CONFIG))
    state = common.randomize(torch, model.state_dict())
    ckpt.mkdir(parents=True, exist_ok=True)
    (ckpt / "data").mkdir(exist_ok=True)
    with open(ckpt / "data" / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(CHARS), "stoi": {c: i for i, c in enumerate(CHARS)},
                     "itos": dict(enumerate(CHARS))}, f)
    torch.save({"model": {"_orig_mod." + k: v for k, v in state.items()},
                "model_args": CONFIG, "iter_num": 0, "best_val_loss": 1e9,
                # an absolute dataset path: sample.py's os.path.join('data', it) is it
                "config": {"dataset": str((ckpt / "data").resolve())}}, ckpt / "ckpt.pt")


def run(torch: Any, args: Any) -> None:
    import model as nanogpt

    launches = common.Launches(torch)
    argv = ["--init_from=resume", f"--out_dir={args.ckpt}",
            f"--device={common.device_for(args.torch)}", "--dtype=float32",
            f"--compile={args.mode != 'eager'}", f"--start={PROMPT}", "--num_samples=1",
            f"--max_new_tokens={NEW_TOKENS}", "--top_k=1", "--temperature=1.0"]
    with launches.patched(nanogpt.GPT, "forward", "decode_step"):
        ran, printed = common.run_script(args.src, "sample.py", argv)
    model, seq = ran["model"], ran["y"]
    with torch.no_grad():
        logits = torch.cat([model(seq[:, :t])[0][:, -1] for t in
                            range(len(PROMPT), seq.shape[1])])
    common.write_results(args.json, torch, args.mode, seq.tolist(), logits, launches,
                         printed=printed)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    common.on_path(args.src)
    write(torch, args.ckpt) if args.write else run(torch, args)


if __name__ == "__main__":
    main()
