"""pytorch-labs/gpt-fast (written against commit 32971d3): model.py and generate.py, unchanged.

--write saves a tiny Llama-style Transformer (grouped-query attention: 4 query heads share 2
KV heads) as <ckpt>/tiny/model.pth. The run does what generate.py's main() does, step by step:
  - _load_model: Transformer.from_name(folder name) under torch.device('meta'),
    torch.load(mmap=True, weights_only=True), load_state_dict(assign=True), .to(device);
  - compiled modes: decode_one_token = torch.compile(decode_one_token, fullgraph=True), with
    mode="reduce-overhead" as main() has it (or the default mode), then one warm-up generate
    (main()'s sample -1);
  - generate(): setup_caches (a static KV cache, complex rotary tables from torch.polar),
    prefill, then decode_one_token per token under sdp_kernel(math only), sampling with
    top_k=1 (greedy: one finite probability, so the exponential_ noise cannot change argmax).
The only addition is registering our tiny config in model.transformer_configs, the table
from_name() looks the checkpoint folder's name up in.

Logits: the loaded model, eagerly, over the whole generated sequence from position 0 (the
cache rewritten with the same values); the rows that predicted each generated token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import common

CONFIG = dict(block_size=64, vocab_size=96, n_layer=2, n_head=4, n_local_heads=2, dim=64,
              intermediate_size=128)
NAME = "tiny"  # the checkpoint's folder: from_name() reads the config from it
PROMPT = [1, 17, 5, 42, 8, 63, 29, 3]  # token ids (no tokenizer download)
NEW_TOKENS = 8


def write(torch: Any, ckpt: Path, config: dict[str, Any] = CONFIG) -> None:
    import model  # type: ignore[import-not-found]

    model.transformer_configs[NAME] = config
    state = common.randomize(torch, model.Transformer.from_name(NAME).state_dict())
    (ckpt / NAME).mkdir(parents=True, exist_ok=True)
    torch.save(state, ckpt / NAME / "model.pth")


def run(torch: Any, args: Any, config: dict[str, Any] = CONFIG,
        batch: dict[str, Any] | None = None, precision: str = "float32") -> None:
    """generate.py's main() on our checkpoint; `batch` holds generate()'s batch arguments
    (mixtral-moe's generate has none)."""
    import generate as gen  # type: ignore[import-not-found]
    import model

    model.transformer_configs[NAME] = config
    device = common.device_for(args.torch)
    net = gen._load_model(args.ckpt / NAME / "model.pth", device,
                          getattr(torch, precision), use_tp=False)
    launches = common.Launches(torch)
    if args.mode != "eager":
        options = {"mode": "reduce-overhead"} if args.mode == "reduce-overhead" else {}
        gen.decode_one_token = torch.compile(gen.decode_one_token, fullgraph=True, **options)
    gen.decode_one_token = launches.wrap(gen.decode_one_token, "decode_step")
    gen.prefill = launches.wrap(gen.prefill, "prefill")
    prompt = torch.tensor(PROMPT, dtype=torch.int, device=device)  # as encode_tokens makes it
    kwargs = dict(interactive=False, temperature=0.8, top_k=1,
                  **({"batch_size": 1, "draft_model": None} if batch is None else batch))
    torch.manual_seed(1234)
    for _warmup in range(args.mode != "eager"):  # main(): sample -1 compiles, untimed
        gen.generate(net, prompt, NEW_TOKENS, **kwargs)
        launches.calls.clear()
    seq = gen.generate(net, prompt, NEW_TOKENS, **kwargs)
    seq = seq[0] if isinstance(seq, tuple) else seq  # gpt-fast: (seq, stats); mixtral: seq
    seq = seq.view(1, -1)
    with torch.no_grad():
        positions = torch.arange(seq.shape[1], device=device)
        logits = net(seq, positions)[0, len(PROMPT) - 1:-1]
    common.write_results(args.json, torch, args.mode, seq.tolist(), logits, launches)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    common.on_path(args.src)
    write(torch, args.ckpt) if args.write else run(torch, args)


if __name__ == "__main__":
    main()
